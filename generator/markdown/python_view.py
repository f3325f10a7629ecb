"""A Code tab's Python view: a line `[[python: head scores]]` in a lesson becomes a Python code
block holding those cells of the chapter's notebook (generator/notebooks/steps.py, STEPS),
and a sentence that links to the notebook (the link under the chapter's title, overrides/main.html),
so the page and the notebook show the same lines. The line keeps its indentation, so the block
sits in the tab the line is in.

A mark `{: .needs-traces }` right under the line marks the code block and the sentence both
(generator/markdown/needs_traces.py): where a page's traces are missing, so is that part of its
notebook, and the view goes with the passage above it that names the figure's numbers.

It runs after the fences and references are marked with their lines (course.py's
SourcePreprocessor), so the lines it adds move no error message's line number."""

from __future__ import annotations

from ..lessons.errors import LessonError
from .needs_traces import MARK, MARK_LINE_RE
from ..notebooks.steps import MARK_RE, STEPS, step

NOTEBOOK_ANCHOR = "course-notebook"  # the id of the notebook link under the chapter's title
# Raw HTML, not a Markdown link: the anchor is the theme's (overrides/main.html), which MkDocs'
# anchor check cannot see, so a Markdown link to it logged "no such anchor" on every build.
LINK_LINE = f'These lines are cells of <a href="#{NOTEBOOK_ANCHOR}">this chapter\'s notebook</a>, which runs them on the trace files.'


def expand(lines: list[str], shown: str, first_line: int = 1, marks: list[int] | None = None,
           numbers: list[int] | None = None) -> list[str]:
    """The lines with every `[[python: …]]` line replaced by its code block and link; an unknown
    step is a LessonError naming the file and line. A needs-traces mark under the line is copied
    under the code block too, and its line number appended to `marks`, so that the page's list of
    marks (needs_traces.check_marks) keeps one entry per marked passage. `numbers`, when given, is
    each line's number in the file (lines that an earlier step inserted share their neighbour's)."""
    out: list[str] = []
    for n, line in enumerate(lines):
        m = MARK_RE.match(line)
        if not m:
            out.append(line)
            continue
        indent, names = m.group(1), m.group(2).split()
        lineno = numbers[n] if numbers is not None else first_line + n
        where = f"{shown}:{lineno}"
        if not names:
            raise LessonError(where, "[[python: …]] names no step", f"name one or more of: {', '.join(STEPS)}")
        for name in names:
            if name not in STEPS:
                raise LessonError(where, f"[[python: …]]: no notebook step {name!r}", f"use one of: {', '.join(STEPS)}")
        code = "\n\n".join(step(name) for name in names)
        out.append(f"{indent}```python")
        out.extend(f"{indent}{c}" if c else "" for c in code.split("\n"))
        out.append(f"{indent}```")
        if n + 1 < len(lines) and MARK_LINE_RE.match(lines[n + 1]):
            out.append(f"{indent}{MARK}")
            if marks is not None:
                marks.append(lineno + 1)
        out.append("")
        out.append(f"{indent}{LINK_LINE}")
    return out
