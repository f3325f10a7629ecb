"""A comparison of two sentences that do not line up position by position, in the session's
shared build of the real course: chapter 3's second comparison ("One day, Lily wanted to play
with her" against "The dog saw Lily and wanted to play with her"). Both panels and the difference
table follow the same token, and what course.js draws for a state is what the build wrote."""

from __future__ import annotations

import pytest

from course_builds import quiet, settle

from .conftest import page_opener

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The compare figure whose sentences differ in length, what it shows, and its difference table.
READ_JS = """() => {
  const f = [...document.querySelectorAll('.course-fig[data-kind=compare]')].find(f => {
    const n = [...f.querySelectorAll('.course-panel')].map(p => p.querySelectorAll('.course-table tbody tr').length);
    return n.length === 2 && n[0] !== n[1];
  });
  if (!f) return null;
  const text = e => e.textContent.replace(/\\s+/g, ' ').trim();
  return {id: f.id,
          summaries: [...f.querySelectorAll('.course-summary')].map(text),
          focus: [...f.querySelectorAll('.course-table tr.course-focus th')].map(text),
          token: f.querySelector('select[data-control=token]').value,
          diff: [...f.querySelectorAll('.course-diff tbody tr')].map(r => [...r.cells].map(text))};
}"""


def test_a_comparison_of_unaligned_sentences_follows_one_token_in_both(course, server, open_site):
    w = open_site()
    w.page.goto(f"{server.base}/attention.html")
    settle(w.page)
    built = w.page.evaluate(READ_JS)
    assert built, "chapter 3 has no comparison of sentences of different lengths"
    # as the build wrote it: the last token of each sentence, ·her, at 9 and at 10
    assert all(s.split(", ")[2].startswith("·her looks most at") for s in built["summaries"]), built["summaries"]
    assert [f.split(" ")[0] for f in built["focus"]] == ["·her", "·her"], built["focus"]
    last = built["diff"][-1]
    assert last[0] == "9 / 10" and last[1] == last[3] == "·her", last
    assert any(r[1] == "–" and r[3] == "·and" for r in built["diff"]), built["diff"]
    # another token, then back: course.js draws the same rows, summaries and focus as the build
    fid = built["id"]
    w.page.evaluate("id => course.setState(id, {token: 4})", fid)
    moved = w.page.evaluate(READ_JS)
    assert [f.split(" ")[0] for f in moved["focus"]] == ["·Lily", "·Lily"], moved["focus"]
    assert moved["diff"][-1][0] == "4" and len(moved["diff"]) == 5, moved["diff"]
    w.page.evaluate("([id, t]) => course.setState(id, {token: +t})", [fid, built["token"]])
    quiet(w.page)
    assert w.page.evaluate(READ_JS) == built
    assert not w.errors, w.errors


def _disagreeing(rows: list[list[str]]) -> list[list[str]]:
    """Rows whose difference is not the second shown weight minus the first (a reader's sum)."""
    bad = []
    for r in rows:
        if "–" in (r[2], r[4], r[5]):
            continue
        d = round(float(r[4]) - float(r[2]), 2)
        if float(r[5].replace("\u2212", "-")) != d or (r[5] == "0.00") != (d == 0):
            bad.append(r)
    return bad


def test_every_difference_is_the_shown_weights_subtracted(course, server, open_site):
    """The build's rows and course.js's, for every token of every comparison in chapter 3."""
    w = open_site()
    w.page.goto(f"{server.base}/attention.html")
    settle(w.page)
    figs = w.page.evaluate("[...document.querySelectorAll('.course-fig[data-kind=compare]')].map(f => [f.id, f.querySelector('select[data-control=token]').options.length])")
    assert len(figs) >= 2
    rows_of = """id => [...document.querySelectorAll('#' + id + ' .course-diff tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()))"""
    seen = 0
    for fid, n in figs:
        built = w.page.evaluate(rows_of, fid)
        assert built and _disagreeing(built) == [], (fid, _disagreeing(built))
        for t in range(n):
            w.page.evaluate("([id, t]) => course.setState(id, {token: t})", [fid, t])
            rows = w.page.evaluate(rows_of, fid)
            assert _disagreeing(rows) == [], (fid, t, _disagreeing(rows))
            seen += len(rows)
    assert seen > 50
    assert not w.errors, w.errors


@pytest.mark.parametrize("width", [1000, 1280])
def test_both_panels_show_cell_numbers_or_neither(course, server, browser, width):
    """The panels are equally wide, and the longer sentence has the smaller cells: where its
    numbers would be too small, neither panel draws them (they stay in the hover and the table),
    so a reader never compares a panel with numbers against one without."""
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=width) as open_:
        w = open_()
        w.page.goto(f"{server.base}/attention.html")
        settle(w.page)
        fid = w.page.evaluate(READ_JS)["id"]
        w.page.evaluate("""id => { const f = document.getElementById(id), set = f.closest('.tabbed-set');
          if (set) {  // a figure under a tab (none in the course now: issue 45 keeps the argument in Story)
            const i = [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')].findIndex(b => b.contains(f));
            set.querySelectorAll(':scope > input')[i].click(); }
          f.scrollIntoView(); }""", fid)
        plots = w.page.locator(f"#{fid} .js-plotly-plot")
        plots.nth(1).locator(".main-svg").first.wait_for(state="attached")
        quiet(w.page)
        drawn = w.page.evaluate("""id => [...document.querySelectorAll('#' + id + ' .js-plotly-plot')].map(p =>
          [...p.querySelectorAll('.heatmaplayer text')].filter(t => t.textContent).length)""", fid)
        assert len(drawn) == 2 and (drawn[0] > 0) == (drawn[1] > 0), f"cell numbers per panel at {width} px: {drawn}"
        assert not w.errors, w.errors
