"""The one error for a lesson mistake, whatever finds it (directive, reference, glossary, front
matter). str() is one line: ``path:line: problem. Fix: remedy``."""

from __future__ import annotations


class LessonError(ValueError):
    def __init__(self, where: str, problem: str, fix: str):
        self.where, self.problem, self.fix = where, problem, fix
        stop = "" if problem.endswith("?") else "."  # "did you mean attention? Fix: ..."
        super().__init__(f"{where}: {problem}{stop} Fix: {fix}")


def fail(where: str, problem: str, fix: str):
    raise LessonError(where, problem, fix)
