"""What a built site holds of content/: the pages, not the sources the build reads (the glossary's
YAML is read by the lesson extension and published only as the glossary page)."""

from __future__ import annotations

import zipfile

from catalogue import good_project  # noqa: F401 (fixture: a real build of a small course from the repository's mkdocs.yml)


def test_the_glossary_source_is_not_published(good_project):
    site = good_project / "site"
    assert (good_project / "content" / "glossary.yml").is_file()
    assert (site / "glossary.html").is_file() and "course-glossary" in (site / "glossary.html").read_text(encoding="utf-8")
    assert not list(site.rglob("*.yml")) and not list(site.rglob("*.yaml"))
    with zipfile.ZipFile(good_project / "downloads" / "course-offline.zip") as offline:
        assert not [n for n in offline.namelist() if n.endswith((".yml", ".yaml"))]
