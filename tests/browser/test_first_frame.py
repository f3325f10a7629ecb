"""The page before course.js runs, in the session's shared build of the real course: the head's
inline script sets html.course-js, so the first frames already hide each heatmap's table (behind
"Show as a table") and keep about its height free; when course.js does not run, the class comes
off again and the page is the no-JavaScript page; when Plotly does not load, course.js shows the
tables and keeps no gap. Layout and classes in Chromium, never time."""

from __future__ import annotations

import pytest

from .figure_ids import FIRST_HEATMAP, course_figure


pytestmark = [pytest.mark.browser, pytest.mark.slow]

COURSE_JS = "**/assets/generated/course.js"
PLOTLY = "**/assets/generated/plotly-cartesian.min.js"

# For every heatmap view: its table box's display, its plot host's min-height and height.
VIEWS_JS = """() => ({
  js: document.documentElement.classList.contains('course-js'),
  views: [...document.querySelectorAll('.course-fig .course-view')].map(v => {
    const box = v.querySelector(':scope > .course-table-wrap'), plot = v.querySelector(':scope > .course-plot');
    return {fig: v.closest('.course-fig').id, table: getComputedStyle(box).display, tableHeight: box.offsetHeight,
            minHeight: parseFloat(getComputedStyle(plot).minHeight) || 0, plotHeight: plot.offsetHeight,
            static: v.classList.contains('course-view-static'), toggle: !!v.querySelector('.course-table-toggle'),
            shown: v.getClientRects().length > 0};
  })
})"""

# Run before course.js, in the same script: what the first frames were laid out with. course.js
# runs right after the first heatmap, so the figures after it are read at DOMContentLoaded, just
# before course.js sets them up (a listener added before the page's scripts runs first).
RECORD = "window.__firstFrame = (" + VIEWS_JS + ")();\n"
RECORD_REST = """document.addEventListener('DOMContentLoaded', () => {
  const rest = (""" + VIEWS_JS + """)();
  window.__restFrame = {js: rest.js, views: rest.views.filter(v => !document.getElementById(v.fig).__course)};
});"""


def test_before_course_js_runs_the_tables_are_hidden_and_the_heatmaps_room_is_kept(course, server, open_site):
    w = open_site()

    def prepend(route):
        response = route.fetch()
        route.fulfill(response=response, body=RECORD + response.text())

    w.page.route(COURSE_JS, prepend)
    w.page.add_init_script(RECORD_REST)
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    w.goto(f"{server.base}/attention.html")
    first, rest = w.page.evaluate("window.__firstFrame"), w.page.evaluate("window.__restFrame")
    assert first["js"] and rest["js"], "the head's script did not set html.course-js before course.js"
    assert [v["fig"] for v in first["views"]] == [f1]
    assert len(rest["views"]) >= 3, "the figures after the first heatmap were set up before the page was parsed"
    first = {"js": True, "views": first["views"] + rest["views"]}
    for v in first["views"]:
        assert v["table"] == "none", f"{v['fig']}: its table is laid out before course.js runs"
        assert v["minHeight"] >= 220, f"{v['fig']}: no room kept for its heatmap before course.js runs"
    after = w.page.evaluate(VIEWS_JS)
    assert after["js"]
    assert all(v["toggle"] and not v["static"] and v["table"] == "none" for v in after["views"])
    # the room kept was about the heatmap's height: the first one (on screen) moved the page little
    drawn = w.page.evaluate(f"document.querySelector('#{f1} .course-plot').offsetHeight")
    assert abs(drawn - first["views"][0]["minHeight"]) < 0.35 * drawn
    assert w.errors == []


def test_without_course_js_the_class_comes_off_and_the_tables_are_the_figures(course, server, open_site):
    w = open_site()
    w.page.route(COURSE_JS, lambda route: route.abort())
    w.goto(f"{server.base}/attention.html", wait_painted=False)
    state = w.page.evaluate(VIEWS_JS)
    assert not state["js"], "html.course-js stayed on though course.js never ran"
    assert state["views"]
    for v in state["views"]:
        assert v["table"] != "none", f"{v['fig']}: its table is hidden without course.js"
        assert v["tableHeight"] > 50 or not v["shown"], f"{v['fig']}: its table is hidden without course.js"
        assert v["minHeight"] == 0, f"{v['fig']}: a gap is kept for a heatmap nobody will draw"


def test_without_plotly_course_js_shows_every_table_and_keeps_no_gap(course, server, open_site):
    w = open_site()
    w.page.route(PLOTLY, lambda route: route.abort())
    w.goto(f"{server.base}/attention.html", wait_painted=False)
    w.page.wait_for_function("window.course && course.figures.length > 0")
    state = w.page.evaluate(VIEWS_JS)
    assert state["js"] and state["views"]
    for v in state["views"]:
        assert v["static"] and not v["toggle"], f"{v['fig']}: a table toggle without a heatmap"
        assert v["table"] != "none", f"{v['fig']}: its table is hidden without Plotly"
        assert v["tableHeight"] > 50 or not v["shown"], f"{v['fig']}: its table is hidden without Plotly"
        assert v["minHeight"] == 0 and v["plotHeight"] == 0, f"{v['fig']}: a gap is kept for a heatmap nobody will draw"


# What the kept room shows: "Drawing the heatmap…", at full strength after a second of waiting.
PLACEHOLDER_JS = """() => [...document.querySelectorAll('.course-fig .course-view')].filter(v => v.getClientRects().length).map(v => {
  const plot = v.querySelector(':scope > .course-plot'), after = getComputedStyle(plot, '::before');
  return {fig: v.closest('.course-fig').id, text: after.content, opacity: parseFloat(after.opacity), height: plot.offsetHeight};
})"""

# Whether a fast page would flash the kept room's text, asked of its animation rather than of the
# clock (on a busy machine a second may pass before the page is read): the placeholder's fade-in,
# its delay, and its opacity at the animation's start (paused there, read, and played again from
# the start).
EARLY_JS = """() => [...document.querySelectorAll('.course-fig .course-view')].filter(v => v.getClientRects().length).map(v => {
  const plot = v.querySelector(':scope > .course-plot');
  const fades = document.getAnimations().filter(a => a.animationName === 'course-appear' && a.effect && a.effect.target === plot && a.effect.pseudoElement === '::before');
  fades.forEach(a => { a.pause(); a.currentTime = 0; });
  const out = {fig: v.closest('.course-fig').id, fades: fades.length, delay: fades.length ? fades[0].effect.getTiming().delay : null,
               opacity: parseFloat(getComputedStyle(plot, '::before').opacity)};
  fades.forEach(a => a.play());
  return out;
})"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_on_a_slow_network_the_kept_room_says_the_heatmap_is_coming(course, server, open_site, motion):
    w = open_site(reduced_motion=motion)
    # Plotly's 1.5 MB on a slow network: its request is held until the test lets it go, so the
    # page waits for it with the article parsed however busy the machine is. (Chrome's emulated
    # slow network, used before, once left the first heatmap unshown for a minute in the full suite.)
    held = []
    w.page.route(PLOTLY, lambda route: held.append(route))
    w.page.goto(f"{server.base}/attention.html", wait_until="commit")
    w.page.wait_for_selector("#" + course_figure(course, "attention.html", **FIRST_HEATMAP) + " .course-view")
    early = w.page.evaluate(EARLY_JS)
    assert early and all(v["fades"] == 1 and v["delay"] >= 500 and v["opacity"] < 0.5 for v in early), \
        f"shown at once, so a fast page would flash it: {early}"
    # its fade-in (a delay, then a fade) has run to the end, however long that took here
    w.page.wait_for_function("""() => !document.getAnimations().some(a => a.animationName === 'course-appear' && a.playState !== 'finished')""")
    waiting = w.page.evaluate(PLACEHOLDER_JS)
    assert waiting
    for v in waiting:
        assert "Drawing the heatmap" in v["text"] and v["opacity"] == 1 and v["height"] >= 220, v
    assert held, "the page never asked for Plotly"
    for route in held:
        route.continue_()
    w.page.wait_for_function("window.course && window.course.paintedAt !== null", timeout=60000)
    drawn = w.page.evaluate(PLACEHOLDER_JS)
    assert drawn[0]["text"] == "none", "the placeholder outlived the heatmap"
