"""A good build says nothing it need not (issue 49): no "no such anchor" line for the link to the
chapter's notebook, whose anchor is the theme's."""

from __future__ import annotations

from conftest import lily_trace


PAGE = """# Chapter

```attention
model: tiny
sentence: "Lily wanted to play with her"
layer: 1
head: 1
id: lily
```

=== "Code"

    [[python: grid]]
"""


def test_the_python_views_link_to_the_notebook_logs_no_missing_anchor(site_builder):
    built = site_builder({"ch.md": PAGE}, traces=[lily_trace()])
    assert built.returncode == 0, built.log[-2000:]
    page = (built.site / "ch.html").read_text(encoding="utf-8")
    assert 'href="#course-notebook"' in page and 'id="course-notebook"' in page  # the link, and the theme's anchor
    assert "no such anchor" not in built.log and "course-notebook" not in built.log, built.log


def test_a_sentence_the_model_reads_as_byte_tokens_gets_a_warning():
    """An emoji is no token of either model: four byte tokens that the figure shows as '�'; the
    author hears of it at the figure's line. A sentence of whole tokens says nothing."""
    import logging

    from generator.lessons.directives import parse_directive
    from generator.markdown.kept_errors import log, warn_byte_tokens

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    log.addHandler(handler)
    try:
        for model in ("tiny", "gpt2"):
            warn_byte_tokens(parse_directive("attention", f'model: {model}\nsentence: "Lily saw a \U0001F436"\nlayer: 1\nhead: 1', "content/a.md:3"))
        warn_byte_tokens(parse_directive("compare", 'model: tiny\nsentences: ["Lily wanted to play with her", "Ben wanted to play with her"]\nlayer: 1\nhead: 1', "content/a.md:9"))
    finally:
        log.removeHandler(handler)
    lines = [r.getMessage() for r in records]
    assert len(lines) == 2 and all(r.levelno == logging.WARNING for r in records), lines
    for model, line in zip(("tiny", "gpt2"), lines):
        assert line.startswith(f"content/a.md:3: attention: model {model} has no token for '\U0001F436' (U+1F436) in 'Lily saw a \U0001F436', "
                               "so it reads the bytes as tokens of their own, which the figure shows as '\ufffd'"), line


def test_the_build_writes_to_the_stderr_of_the_moment(monkeypatch):
    """The build's log handler and the downloads' lines go to sys.stderr as it is when they are
    written: a build in the same process after a test (or an editor) swapped stderr and closed
    it failed in its downloads step with "I/O operation on closed file"."""
    import ast
    import io
    import logging
    import sys
    from pathlib import Path

    from generator.site import publish

    publish.setup_logging()
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    logging.getLogger("mkdocs").warning("one")
    first.close()
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    logging.getLogger("mkdocs").warning("two")
    assert "two" in second.getvalue()
    # no function keeps the stream it found at import as a default argument
    root = Path(__file__).resolve().parents[1] / "generator"
    bound = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                    if ast.unparse(default) in ("sys.stderr", "sys.stdout"):
                        bound.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}")
    assert not bound, bound
