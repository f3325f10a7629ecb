"""How a lesson mistake leaves the Markdown extensions."""

from __future__ import annotations

from mkdocs.exceptions import BuildError
from pymdownx.superfences import SuperFencesException

from ..lessons.errors import LessonError


class CourseBuildError(LessonError, SuperFencesException, BuildError):
    """A LessonError raised through Markdown. SuperFences lets a SuperFencesException through (it
    turns any other exception into a silent code block), and MkDocs prints a BuildError's one
    line and stops, without a traceback. str() is `path:line: problem. Fix: remedy`."""

    def __init__(self, where: str, problem: str, fix: str):
        LessonError.__init__(self, where, problem, fix)
        self.message = LessonError.__str__(self)  # what click prints

    def __str__(self) -> str:
        return self.message


def reraise(exc: LessonError):
    raise CourseBuildError(exc.where, exc.problem, exc.fix) from None
