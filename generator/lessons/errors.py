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
