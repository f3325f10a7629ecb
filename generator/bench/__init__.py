"""`make bench`: figures, not tests.

    suite    the generator's own timings and sizes, against their budgets
    browser  course.js in Chromium from file://
    preview  the author's loop: `make serve`, a save, the page again
"""


def met(ok: bool) -> str:
    """The word every figure of `make bench` ends its target with."""
    return "met" if ok else "missed"
