"""How a lesson mistake leaves the Markdown extensions."""

from __future__ import annotations

from mkdocs.exceptions import BuildError
from pymdownx.superfences import SuperFencesException

from ..lessons.errors import LessonError, LessonErrors, collected, shown_errors


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


class CourseBuildErrors(CourseBuildError, LessonErrors):
    """Several mistakes of one page (LessonErrors) raised through Markdown: one line each."""

    def __init__(self, errors: list[LessonError]):
        CourseBuildError.__init__(self, errors[0].where, errors[0].problem, errors[0].fix)
        self.all = list(errors)
        self.errors = shown_errors(self.all)
        self.message = "\n".join(str(e) for e in self.errors)


def raise_kept(errors: list[LessonError]) -> None:
    """Raise a page's mistakes kept so far (each once, in line order), if there are any."""
    error = collected(errors)
    if isinstance(error, LessonErrors):
        raise CourseBuildErrors(error.all)
    if error is not None:
        raise error if isinstance(error, CourseBuildError) else CourseBuildError(error.where, error.problem, error.fix)
