"""The Python-Markdown extensions that turn lessons into pages (listed under `markdown_extensions`
in mkdocs.yml, so MkDocs and Zensical both run them; they are not MkDocs plugins):

* ``generator.markdown.course``: figures (SuperFences custom fences), prose references, the
  missing-trace warnings, and math (``math.py``);
* ``generator.markdown.lesson``: glossary pop-ups, the glossary page, reading time.
"""
