"""course.js starts with the page's first heatmap: the course's scripts sit right after it
(generator/markdown/course.py marks the place, overrides/main.html fills it), so that heatmap is
set up while the rest of the chapter is still being parsed; every other figure is set up once
the page is parsed, and a link to a later figure still opens it as the link says. Order and
state in Chromium, on the session's shared build of the real course, never time."""

from __future__ import annotations

import pytest

from .figure_ids import FIRST_HEATMAP, REPEATED_WORDS, course_figure

pytestmark = [pytest.mark.browser, pytest.mark.slow]

COURSE_JS = "**/assets/generated/course.js"
# Run first in course.js: how much of the page the parser had reached.
RECORD = ("window.__atCourseJs = {state: document.readyState, figures: [...document.querySelectorAll('figure.course-fig')].map(f => f.id),"
          " footer: !!document.querySelector('footer')};\n")
# Figures course.js left alone (a pending figure has nothing to set up).
NOT_SET_UP = "[...document.querySelectorAll('figure.course-fig:not(.course-pending)')].filter(f => !f.__course).map(f => f.id)"


def record_course_js(w) -> None:
    def prepend(route):
        response = route.fetch()
        route.fulfill(response=response, body=RECORD + response.text())

    w.page.route(COURSE_JS, prepend)


def test_course_js_sets_up_the_first_heatmap_mid_parse_and_the_rest_once_parsed(course, server, open_site):
    w = open_site()
    record_course_js(w)
    first = course_figure(course, "attention.html", **FIRST_HEATMAP)
    w.goto(f"{server.base}/attention.html")
    at = w.page.evaluate("window.__atCourseJs")
    assert at == {"state": "loading", "figures": [first], "footer": False}, at
    inits = w.page.evaluate("performance.getEntriesByName('course:init').map(e => e.startTime)")
    dcl = w.page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventStart")
    assert len(inits) >= 2 and inits[0] < dcl <= inits[-1], (inits, dcl)
    w.page.wait_for_load_state("load")
    assert w.page.evaluate(NOT_SET_UP) == []
    kinds = w.page.evaluate("course.figures.map(f => f.el.getAttribute('data-kind'))")
    assert kinds.count("attention") >= 3 and kinds.count("compare") == 2 and "stepper" in kinds, kinds
    assert w.page.evaluate(f"document.querySelector('#{first} .course-plot .main-svg') !== null")
    assert w.errors == []


def test_a_page_whose_heatmaps_are_pending_runs_course_js_after_its_article(course, server, open_site):
    w = open_site()
    record_course_js(w)
    w.goto(f"{server.base}/gpt2.html", wait_painted=False)
    w.page.wait_for_function("window.course && course.figures !== undefined")
    at = w.page.evaluate("window.__atCourseJs")
    assert at["footer"] and len(at["figures"]) >= 3, at
    w.page.wait_for_load_state("load")
    assert w.page.evaluate(NOT_SET_UP) == []
    assert w.page.evaluate("document.querySelectorAll('figure.course-pending').length") >= 1
    assert w.errors == []


def test_a_link_to_a_later_figure_opens_it_as_the_link_says(course, server, open_site):
    w = open_site()
    fig = course_figure(course, "attention.html", **REPEATED_WORDS)  # a figure far down the page
    w.goto(f"{server.base}/attention.html#{fig}:layer=3,head=2,token=3")
    w.page.wait_for_function(f"document.querySelector('#{fig} select[data-control=layer]').value === '2'")
    state = w.page.evaluate("""(fig) => ['layer', 'head', 'token'].map(c =>
        document.querySelector('#' + fig + ' select[data-control=' + c + ']').value)""", fig)
    assert state == ["2", "1", "3"]
    top = w.page.evaluate(f"document.querySelector('#{fig}').getBoundingClientRect().top")
    assert -5 <= top < 200, f"the linked figure is not where the page opened: {top}"
    assert w.errors == []
