"""The palette on a reader's first visit, in the session's shared build of the real course: the
page, and its one-file chapter, take the system's colour scheme before the first frame (Material's
bundle only picks it later, after the first heatmap was drawn), and the bundle writing the same
scheme again redraws no plot; a real switch still does. Attributes and draw counts, never time."""

from __future__ import annotations

import re

import pytest

from course_builds import settle
from generator.render.format import contrast_ratio

from .figure_ids import FIRST_HEATMAP, course_figure

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Before any page script: the body's scheme at every frame until the first heatmap is painted (and
# at that moment), every write of the attribute, and each Plotly draw with the plot it drew into.
RECORD = """
window.__frames = []; window.__writes = []; window.__draws = [];
(function frame() {  // a frame with something to see: the header (the one-file chapter's banner) is in
  if (document.querySelector('.md-header, .course-onefile-banner')) window.__frames.push(document.body.getAttribute('data-md-color-scheme'));
  if (!(window.course && window.course.paintedAt !== null)) requestAnimationFrame(frame);
})();
document.addEventListener('course:painted', () => {
  window.__atPaint = document.body.getAttribute('data-md-color-scheme');
});
const untilBody = new MutationObserver(() => {
  if (!document.body) return;
  untilBody.disconnect();
  new MutationObserver(rs => rs.forEach(r => window.__writes.push([r.oldValue, document.body.getAttribute(r.attributeName)])))
    .observe(document.body, {attributes: true, attributeOldValue: true, attributeFilter: ['data-md-color-scheme']});
});
untilBody.observe(document, {childList: true, subtree: true});
Object.defineProperty(window, 'Plotly', {configurable: true, get() { return undefined; }, set(p) {
  ['newPlot', 'react'].forEach(k => { const f = p[k];
    p[k] = function (div) { window.__draws.push((div.closest && div.closest('.course-fig') || {}).id); return f.apply(this, arguments); }; });
  Object.defineProperty(window, 'Plotly', {value: p, writable: true, configurable: true});
}});
"""
SCHEMES = [("light", "default"), ("dark", "slate")]


def first_visit(open_site, url: str, system: str, slow: float = 1):
    """A fresh context (nothing stored) with the system's colour scheme, the page painted; `slow`
    times slower CPU (a phone: more frames while the page is parsed)."""
    w = open_site(color_scheme=system)
    w.context.add_init_script(RECORD)
    if slow > 1:
        w.context.new_cdp_session(w.page).send("Emulation.setCPUThrottlingRate", {"rate": slow})
    w.goto(url)
    return w


@pytest.mark.parametrize("slow", [1, 4])
@pytest.mark.parametrize("system,scheme", SCHEMES)
def test_the_first_frame_already_has_the_systems_palette(course, server, open_site, system, scheme, slow):
    w = first_visit(open_site, f"{server.base}/attention.html", system, slow)
    frames = w.page.evaluate("window.__frames")
    assert frames and set(frames) == {scheme}, frames
    assert w.page.evaluate("window.__atPaint") == scheme
    # the first heatmap was drawn in that palette: its plot's background is the page's
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    bg = w.page.evaluate(f"document.querySelector('#{f1} .js-plotly-plot')._fullLayout.plot_bgcolor").replace(" ", "")
    assert (bg in ("#2e303e", "rgb(46,48,62)")) == (scheme == "slate"), bg
    assert w.errors == []


@pytest.mark.parametrize("system,scheme", SCHEMES)
def test_the_one_file_chapter_follows_the_system_too(course, open_site, system, scheme):
    page = course / "build" / "site" / "downloads" / "attention.html"
    w = first_visit(open_site, page.as_uri(), system, slow=4)
    frames = w.page.evaluate("window.__frames")
    assert frames and set(frames) == {scheme}, frames
    assert w.page.evaluate("window.__atPaint") == scheme
    assert w.page.locator("input[data-md-color-media]").count() == 0  # no toggle: the script carries the options
    assert w.errors == []


@pytest.mark.parametrize("system,scheme", SCHEMES)
def test_the_same_scheme_written_again_redraws_nothing_and_a_switch_redraws(course, server, open_site, system, scheme):
    w = first_visit(open_site, f"{server.base}/attention.html", system)
    settle(w.page)
    # Material's bundle has mounted its palette: it wrote the scheme the page already had (after
    # the header's script, which wrote it only if it differs from the first palette's)
    w.page.wait_for_function("window.__writes.some(([was, now]) => was === now)")
    assert w.page.evaluate("window.__writes")[-1] == [scheme, scheme]
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    draws = w.page.evaluate("window.__draws")
    assert draws.count(f1) == 1, draws
    # the reader switches: every drawn plot is drawn again, in the other palette
    other = "slate" if scheme == "default" else "default"
    get = f"document.querySelector('#{f1} .js-plotly-plot')._fullLayout.plot_bgcolor"
    before = w.page.evaluate(get)
    w.page.locator("form[data-md-component=palette] label:visible").click()  # Material's toggle
    w.page.wait_for_function(f"{get} !== {before!r}")
    assert w.page.evaluate("document.body.getAttribute('data-md-color-scheme')") == other
    assert w.page.evaluate("window.__draws").count(f1) == 2
    assert w.errors == []


def rgb(css: str) -> tuple[int, ...]:
    """A computed colour's red, green and blue ("rgb(68, 68, 68)"); both colours here are opaque."""
    return tuple(round(float(x)) for x in re.findall(r"[\d.]+", css)[:3])


@pytest.mark.parametrize("system,scheme", SCHEMES)
def test_tick_marks_and_the_colour_bars_outline_stand_out_in_either_palette(course, server, open_site, system, scheme):
    """course.js draws the heatmap's tick marks and its colour bar's outline (Plotly's #444): on
    slate's dark page #444 is 1.7:1, so the palette gives them a colour of their own, 3:1 or more
    (WCAG's non-text contrast) on the page behind the plot's transparent paper."""
    w = first_visit(open_site, f"{server.base}/attention.html", system)
    settle(w.page)
    assert w.page.evaluate("document.body.getAttribute('data-md-color-scheme')") == scheme
    page_bg = w.page.evaluate("getComputedStyle(document.body).backgroundColor")
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    for part in (".course-axis-marks", ".course-colourbar-fill"):
        stroke = w.page.evaluate(f"getComputedStyle(document.querySelector('#{f1} {part}')).stroke")
        ratio = contrast_ratio(rgb(stroke), rgb(page_bg))
        assert ratio >= 3, (part, stroke, page_bg, ratio)
    assert w.errors == []
