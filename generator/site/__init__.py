"""The site stage, last before the command line:

    publish         `make site`: lessons checked, assets written, MkDocs run, the site moved into place
    build_log       the build's warnings, grouped, and STRICT
    downloads       the one-file chapters and the offline zip
    zensical_build  the same build with Zensical, Material's successor
    serve           `make serve`: the author's live preview, tracing on save
"""
