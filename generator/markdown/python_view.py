"""A Code tab's Python view: a line `[[python: head scores]]` in a lesson becomes a Python code
block holding those cells of the chapter's notebook (generator/render/notebook_cells.py, STEPS),
and a sentence that links to the notebook (the link under the chapter's title, overrides/main.html),
so the page and the notebook show the same lines. The line keeps its indentation, so the block
sits in the tab the line is in."""

from __future__ import annotations

import re

from ..lessons.errors import LessonError
from ..render.notebook_cells import STEPS, step

MARK_RE = re.compile(r"^(\s*)\[\[python:([^\]]*)\]\]\s*$")
NOTEBOOK_ANCHOR = "course-notebook"  # the id of the notebook link under the chapter's title
LINK_LINE = f"These lines are cells of [this chapter's notebook](#{NOTEBOOK_ANCHOR}), which runs them on the trace files."


def expand(lines: list[str], shown: str, first_line: int = 1) -> list[str]:
    """The lines with every `[[python: …]]` line replaced by its code block and link; an unknown
    step is a LessonError naming the file and line."""
    out: list[str] = []
    for n, line in enumerate(lines):
        m = MARK_RE.match(line)
        if not m:
            out.append(line)
            continue
        indent, names = m.group(1), m.group(2).split()
        where = f"{shown}:{first_line + n}"
        if not names:
            raise LessonError(where, "[[python: …]] names no step", f"name one or more of: {', '.join(STEPS)}")
        for name in names:
            if name not in STEPS:
                raise LessonError(where, f"[[python: …]]: no notebook step {name!r}", f"use one of: {', '.join(STEPS)}")
        code = "\n\n".join(step(name) for name in names)
        out.append(f"{indent}```python")
        out.extend(f"{indent}{c}" if c else "" for c in code.split("\n"))
        out.append(f"{indent}```")
        out.append("")
        out.append(f"{indent}{LINK_LINE}")
    return out
