"""`make bench`: figures, not tests.

    suite    the generator's own timings and sizes, against their budgets
    browser  course.js in Chromium from file://
    preview  the author's loop: `make serve`, a save, the page again
"""
