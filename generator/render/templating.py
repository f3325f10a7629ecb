"""The Jinja2 environment of the figure templates (generator/render/templates/).

Autoescape is on, with the course's own escaping (format.esc: HTML escaping plus invisible bidi
and zero-width characters as character references), and undefined names raise (StrictUndefined).
Templates are written one element per line, indented for reading; the loader joins each template's
lines without their indentation, so a figure is one line of HTML (`{#- -#}` is not needed). Keep a
sentence on one line: a line break is not a space.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from . import format as fmt

TEMPLATES = Path(__file__).resolve().parent / "templates"


class _JoinedLines(FileSystemLoader):
    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        return "".join(line.strip() for line in source.splitlines()), filename, uptodate


def _finalize(value):
    return value if isinstance(value, Markup) else Markup(fmt.esc(value))


ENV = Environment(
    loader=_JoinedLines(TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    finalize=_finalize,
    keep_trailing_newline=False,
)
# The helpers templates call; each writes numbers and tokens exactly as course.js does.
ENV.globals.update({name: getattr(fmt, name) for name in ("tok", "token_label", "f2", "f3", "diff2", "vec2", "whole", "cell_style", "script_json", "caption_name")})


# `make check` reads every figure's numbers and references but needs none of their HTML: while
# this is True, render() writes nothing (about a third of a page's time is templates).
NO_HTML: ContextVar[bool] = ContextVar("NO_HTML", default=False)


def render(name: str, **values) -> str:
    """The HTML of template `name` with `values` ("" while NO_HTML is set)."""
    if NO_HTML.get():
        return ""
    return ENV.get_template(name).render(**values)


def html(fragment: str) -> Markup:
    """Mark HTML made by another template or helper as safe to insert as it is."""
    return Markup(fragment)
