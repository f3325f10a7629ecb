"""The page's warnings, said once its figures are rendered: a figure that names a head for a job
with no number on the page testing it is an error; figures whose traces, head scores or model are
missing are one warning line per kind, with their lessons' lines (the course extension registers
:class:`WarnPostprocessor` last but one)."""

from __future__ import annotations

import logging

from markdown.postprocessors import Postprocessor

from .. import render
from ..lessons.directives import PATTERN_ONLY
from ..render import templating
from .build_errors import CourseBuildError

log = logging.getLogger("mkdocs.plugins.generator")  # the course extension's logger


def where_list(wheres: list[str]) -> str:
    """'content/a.md:3, 9, 12' from ['content/a.md:9', 'content/a.md:3', ...], file by file."""
    by_file: dict[str, list[str]] = {}
    for w in wheres:
        path, _, line = w.rpartition(":") if w.rpartition(":")[2].isdigit() else (w, "", "")
        by_file.setdefault(path, [])
        if line and line not in by_file[path]:
            by_file[path].append(line)
    return "; ".join(f"{p}:{', '.join(sorted(ls, key=int))}" if ls else p for p, ls in by_file.items())


class WarnPostprocessor(Postprocessor):
    def __init__(self, md, ext):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        ctx = self.ext.state.ctx
        # toc runs this on each heading first; only the whole page holds its figures (`make check` draws none, and has them all rendered by then)
        untested = render.untested_jobs(ctx) if 'class="course-fig' in text or templating.NO_HTML.get() else []
        if untested:
            where, kind, label = untested[0]
            raise CourseBuildError(
                where, f"this figure names {label} for a job ({kind}), and no number on the page tests that job",
                f"add `{PATTERN_ONLY}: true` to the figure (it tells the reader the grid is only a pattern), or refer "
                f"to an ablation, attribution, patching or circuit figure's number about {label} on this page")
        # traces and head scores first, then model references, as the build has always listed them
        ordered = sorted(ctx.missing.items(), key=lambda kv: kv[0].what == kv[0].MODEL)
        for missing, wheres in ordered:
            log.warning(missing.warning(where_list(wheres), ctx.training_log_path))
        ctx.missing.clear()
        return text
