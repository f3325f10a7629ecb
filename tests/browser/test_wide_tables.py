"""Tables that fit at 1280 px (a screenshot review, round after issue 52): the score split's parts
table on "Why a head looks where it looks" (492 px in its 454 px half of the figure, its Share
column under the fade) and chapter 6's circuit table (1088 px in 938, about 150 px under the fade)
fit their boxes at 1280 px; at 375 px the circuit table still scrolls, and shows it (the fade).
And position 0's label, <|endoftext|>, reads ‹eot› on chapter 3's first grid at 375 px, whole
(it was cut to "‹|endofte…"). Measured in Chromium on the shared build, never timed."""

from __future__ import annotations

import pytest

from course_builds import TWO_FRAMES, quiet, settle

pytestmark = pytest.mark.browser

WRAP_JS = """(sel) => [...document.querySelectorAll(sel)].map(w => {
  const cs = getComputedStyle(w), mask = cs.maskImage || cs.webkitMaskImage || 'none';
  return {scroll: w.scrollWidth, box: w.clientWidth, fade: mask.includes('gradient') && !!w.getAttribute('data-course-more')};
})"""


def tables(open_site, server, rel: str, width: int, sel: str) -> list[dict]:
    w = open_site(viewport={"width": width, "height": 900})
    w.page.goto(f"{server.base}/{rel}")  # the tables are the page's own HTML: no plot to wait for
    w.page.wait_for_load_state("load")
    w.page.locator(sel).first.scroll_into_view_if_needed()
    w.page.evaluate(TWO_FRAMES)  # the scroll's handlers (scroll-boxes.js marks a box's fade) have run
    got = w.page.evaluate(WRAP_JS, sel)
    assert got and w.errors == []
    return got


@pytest.mark.parametrize("rel,sel", [
    ("why-heads-look.html", ".course-fig[data-kind=score-split] .course-table-wrap"),
    ("circuits.html", ".course-fig[data-kind=circuit] .course-table-wrap"),
])
def test_at_1280_the_tables_fit_their_boxes(open_site, server, rel, sel):
    got = tables(open_site, server, rel, 1280, sel)
    assert all(t["scroll"] <= t["box"] + 1 for t in got), got


def test_at_375_the_circuit_table_still_scrolls_with_its_fade(open_site, server):
    got = tables(open_site, server, "circuits.html", 375, ".course-fig[data-kind=circuit] .course-table-wrap")
    assert all(t["scroll"] > t["box"] and t["fade"] for t in got), got


def test_at_375_position_0_reads_eot_whole_on_the_first_grid(open_site, server):
    w = open_site(viewport={"width": 375, "height": 900})
    w.goto(f"{server.base}/attention.html")
    settle(w.page)
    fig = w.page.locator(".md-typeset > .course-fig[data-kind=attention]").first
    fig.scroll_into_view_if_needed()
    quiet(w.page)
    fig.locator(".course-plot .course-axis-keys text").first.wait_for(state="attached")
    ticks = fig.locator(".course-plot .course-axis-keys text, .course-plot .course-axis-queries text").all_text_contents()
    assert ticks.count("‹eot›") == 2 and not any("endofte" in t for t in ticks), ticks
