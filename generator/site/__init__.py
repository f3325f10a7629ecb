"""The site stage: the assets a build ships, the build itself (MkDocs or Zensical), its log, the
one-file downloads, and the author's live preview."""
