"""The one error for a lesson mistake, whatever finds it (directive, reference, glossary, front
matter). str() is one line: ``path:line: problem. Fix: remedy``."""

from __future__ import annotations

from typing import Any


class LessonError(ValueError):
    def __init__(self, where: str, problem: str, fix: str):
        self.where, self.problem, self.fix = where, problem, fix
        stop = "" if problem.endswith("?") else "."  # "did you mean attention? Fix: ..."
        super().__init__(f"{where}: {problem}{stop} Fix: {fix}")


def fail(where: str, problem: str, fix: str):
    raise LessonError(where, problem, fix)


def a_type(value: Any) -> str:
    """What a parsed YAML value is, in a reader's words: "a number", "text", "a list"."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "empty"
    return {list: "a list", dict: "a mapping"}.get(type(value), f"a {type(value).__name__}")


MAX_SHOWN = 10  # a page's mistakes shown at once; more would bury the first under the rest


class LessonErrors(LessonError):
    """Several mistakes of one page, found in one pass so that the author can fix them all before
    the next build. Its where/problem/fix are the first mistake's; `all` holds every mistake and
    `errors` those shown (shown_errors); str() is one line per shown mistake."""

    def __init__(self, errors: list[LessonError]):
        first = errors[0]
        super().__init__(first.where, first.problem, first.fix)
        self.all = list(errors)
        self.errors = shown_errors(self.all)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def _line_key(err: LessonError) -> tuple[str, float]:
    path, _, line = err.where.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (err.where, float("inf"))


def shown_errors(errors: list[LessonError]) -> list[LessonError]:
    """At most MAX_SHOWN mistakes: the first ones, and a line saying how many more there are."""
    if len(errors) <= MAX_SHOWN:
        return list(errors)
    more = len(errors) - MAX_SHOWN + 1
    path = _line_key(errors[0])[0]
    return errors[:MAX_SHOWN - 1] + [LessonError(path, f"and {more} more mistakes on this page", "correct the ones above; the next build shows the rest")]


def each_error(exc: LessonError) -> list[LessonError]:
    """Every mistake `exc` stands for: all of a LessonErrors', else itself."""
    return list(getattr(exc, "all", None) or [exc])


def collected(errors: list[LessonError]) -> LessonError | None:
    """One error for a page's mistakes: None for none, the mistake itself for one, else a
    LessonErrors of them in line order, each said once."""
    found = list({str(e): e for err in errors for e in each_error(err)}.values())
    if len(found) <= 1:
        return found[0] if found else None
    return LessonErrors(sorted(found, key=_line_key))


def error_lines(exc: BaseException) -> list[str]:
    """One line per mistake shown, as the terminal prints them."""
    return [str(e) for e in getattr(exc, "errors", None) or [exc]] if isinstance(exc, LessonError) else [str(exc)]
