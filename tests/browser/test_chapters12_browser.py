"""Chapters 1 and 2 in Chromium, with every request that is not file:// or data: blocked: the
one-file chapters alone, and the hosted pages' widgets (the sentence picker and `tokens`, the merge
stepper, the heatmap, the map's hover points, the no-JS fallbacks)."""

from __future__ import annotations

import shutil

import pytest

from course_builds import quiet

from .conftest import page_opener

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def offline(browser):
    with page_opener(browser, set(), width=375) as open_:
        yield open_


@pytest.mark.parametrize("chapter, plots", [("tokens.html", 0), ("vectors.html", 3)])
def test_one_file_chapter_alone_at_375px(course, chapter, plots, offline, tmp_path):
    alone = tmp_path / chapter
    shutil.copy(course / "build" / "site" / "downloads" / chapter, alone)
    w = offline()
    page = w.goto(alone.as_uri(), wait_painted=False)  # course.js paints no chapter-3 figure here
    if plots:
        page.wait_for_function(f"document.querySelectorAll('.course-plot .main-svg').length >= {plots}")
    assert [u for u in w.requests if not u.startswith("data:")] == [alone.as_uri()]
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    assert not w.errors, w.errors


def test_the_sentence_picker_shows_one_sentence_and_sets_tokens(course, offline):
    w = offline()
    page = w.goto((course / "build" / "site" / "tokens.html").as_uri(), wait_painted=False)
    page.wait_for_function("window.tokens !== undefined")
    fig = page.locator("figure[data-kind=tokens]").first
    shown = lambda: fig.locator(".course-token-sentence:visible").count()  # noqa: E731
    assert shown() == 1 and page.evaluate("tokens.text") == "Lily wanted to play with her"
    first = page.evaluate("tokens.gpt2.map(t => t.display)")
    assert first[:3] == ["<|endoftext|>", "L", "ily"]
    fig.locator("select[data-control=sentence]").select_option("3")
    assert shown() == 1 and page.evaluate("tokens.text") == "Mommy said the sandcastle was beautiful."
    assert page.evaluate("tokens.tiny.map(t => t.display)")[1] == "Mommy"
    assert not w.errors, w.errors


def test_the_merge_stepper_walks_every_real_merge(course, offline):
    w = offline()
    page = w.goto((course / "build" / "site" / "tokens.html").as_uri(), wait_painted=False)
    page.wait_for_selector("figure[data-kind=merges] .course-merge-nav")
    fig = page.locator("figure[data-kind=merges]").first
    steps = fig.locator(".course-merge-step").count()
    assert steps > 1 and fig.locator(".course-merge-step:visible").count() == 0
    nxt = fig.get_by_role("button", name="Next")
    for k in range(1, steps + 1):
        nxt.click()
        assert fig.locator(".course-merge-step:visible").count() == k
        assert fig.locator(".course-merge-status").inner_text().startswith(f"Merge {k} of {steps}")
    assert nxt.is_disabled()
    fig.get_by_role("button", name="Back").click()
    assert fig.locator(".course-merge-step:visible").count() == steps - 1
    assert not w.errors, w.errors


def test_vectors_page_draws_and_exposes_its_numbers(course, offline):
    w = offline()
    page = w.goto((course / "build" / "site" / "vectors.html").as_uri(), wait_painted=False)
    page.wait_for_function("document.querySelectorAll('.course-plot .main-svg').length >= 3")
    width, rows = page.evaluate("[embedding.width, embedding.parts.sum.length]")
    assert width == 128 and rows == len(page.evaluate("embedding.tokens"))
    points = page.evaluate("document.querySelectorAll('figure[data-kind=map] .scatterlayer .point').length")
    assert points >= 300  # the common tokens and the marked words
    fig = page.locator("figure[data-kind=embedding]").first
    fig.locator("select[data-control=view]").select_option("heatmap")  # one token's bars first (issue 46)
    before = page.evaluate("document.querySelector('figure[data-kind=embedding] .course-plot').data[0].z[1][0]")
    fig.locator("select[data-control=part]").select_option("position")
    after = page.evaluate("document.querySelector('figure[data-kind=embedding] .course-plot').data[0].z[1][0]")
    assert after == page.evaluate("embedding.parts.position[1][0]") and after != before
    # position rows are named for their places, token rows and the sum for their tokens
    ticks = "[...document.querySelectorAll('figure[data-kind=embedding] .ytick text')].map(t => t.textContent)"
    n = len(page.evaluate("embedding.tokens"))
    assert page.evaluate(ticks) == [f"position {i}" for i in range(n)]
    fig.locator("select[data-control=part]").select_option("sum")
    assert page.evaluate(ticks) == page.evaluate("embedding.tokens.map(t => course.tokDisplay(t))")  # ‹eot› as every label shows it
    # one colour scale for every part: a colour keeps its number when the reader switches
    scale = "(d => [d.zmin, d.zmax])(document.querySelector('figure[data-kind=embedding] .course-plot').data[0])"
    reach = page.evaluate("Math.max(...Object.values(embedding.parts).flat(2).map(Math.abs))")
    assert page.evaluate(scale) == [-reach, reach]
    fig.locator("select[data-control=part]").select_option("token")
    assert page.evaluate(scale) == [-reach, reach]
    assert not w.errors, w.errors


def test_without_javascript_the_figures_show_all_their_content(course, browser):
    with page_opener(browser, set(), width=1200) as open_:
        w = open_(js=False)
        page = w.goto((course / "build" / "site" / "tokens.html").as_uri(), wait_painted=False)
        assert page.locator(".course-token-sentence:visible").count() == 6
        assert page.locator(".course-merge-step:visible").count() == page.locator(".course-merge-step").count() > 0
        page = w.goto((course / "build" / "site" / "vectors.html").as_uri(), wait_painted=False)
        assert page.locator("table.course-embedding tbody tr").count() >= 3 * 7
        assert page.locator("table.course-map tbody tr").count() >= 12


MAP_LABELS = """() => {
  const plot = document.querySelector('figure[data-kind=map] .course-plot');
  const full = plot._fullLayout, unit = a => a._length / (a.range[1] - a.range[0]);
  const boxes = Array.from(plot.querySelectorAll('.textpoint text')).filter(t => t.textContent)
    .map(t => { const r = t.getBoundingClientRect(); return {text: t.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom}; });
  const clashes = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
    if (a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b) clashes.push(a.text + ' / ' + b.text); }));
  const note = document.querySelector('figure[data-kind=map] .course-map-unlabelled');
  const halo = Array.from(plot.querySelectorAll('.textpoint text')).filter(t => t.textContent)
    .every(t => getComputedStyle(t).textShadow !== 'none');
  return {labels: boxes.length, shown: boxes.map(b => b.text), clashes, halo, ratio: unit(full.xaxis) / unit(full.yaxis),
          height: full.height, marks: plot.data[1].hovertext, note: note && !note.hidden ? note.textContent : ''};
}"""


def test_the_map_keeps_one_scale_and_its_labels_apart_at_any_width(course, browser):
    """One unit as long across as up; the labels drawn never overlap, at 1280 px and after the
    window narrows to 375 px (the map redraws for the new width); the line under the map names
    every marked word left without a label; at 1280 px the words chapter 2's text cites are labelled;
    each label has a halo in the page's colour, so it reads over the grey dots."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.goto((course / "build" / "site" / "vectors.html").as_uri(), wait_painted=False)
        page.wait_for_function("document.querySelector('figure[data-kind=map] .course-plot .main-svg')")
        quiet(page)
        wide = page.evaluate(MAP_LABELS)
        page.set_viewport_size({"width": 375, "height": 800})
        quiet(page)  # the resize delay, then Plotly's redraw
        narrow = page.evaluate(MAP_LABELS)
        assert not w.errors, w.errors
    for got in (wide, narrow):
        assert got["clashes"] == [] and abs(got["ratio"] - 1) < 0.01, got
        assert got["halo"], "every label has a halo, so it reads over the grey dots"
        left = [m for m in got["marks"] if m not in got["shown"]]
        assert all(m in got["note"] for m in left) and bool(left) == bool(got["note"]), got
    assert {"·her", "·she", "·Lily", "·Tom"} <= set(wide["shown"]) and 0 < narrow["labels"] <= wide["labels"]
    assert narrow["height"] < wide["height"]
