"""Phones (issue 29, item 8), at 375 px in Chromium on the session's shared course build: grids of
15-22 tokens read at 11 px or more (they open as the lines view), a long top-three list shows the
focus token's line with the rest behind a toggle (heads.html was 16,406 px high with its 21-item
lists), and the comparison and prediction tables keep every column, and their captions, in view
without a sideways scroll. No box on a page scrolls up and down inside it: a finger on it would
scroll the box, not the page (the scoreboard's rankings did)."""

from __future__ import annotations

import pytest

from course_builds import quiet, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 375, "height": 800}
HEADS_HEIGHT_MAX = 16000  # px at 375: 17,509 with every top-three list whole and every grid a heatmap
TOP3_MAX = 160  # px: the focus token's line and the toggle

# The smallest text a shown attention figure draws for its tokens: the lines view's labels, or
# the heatmap's tick labels, in CSS px as drawn (a scaled SVG counts at its scale).
LABELS = """() => [...document.querySelectorAll('.course-fig[data-kind=attention], .course-fig[data-kind=compare]')]
  .filter(f => f.getClientRects().length).map(f => {
    const n = Math.max(...[...f.querySelectorAll('table.course-table')].map(t => t.tBodies[0].rows.length));
    const texts = [...f.querySelectorAll('.course-lines-svg text, .course-plot .course-axis-labels text')]
      .filter(t => t.getClientRects().length);
    const px = texts.map(t => { const svg = t.ownerSVGElement, vb = svg.viewBox && svg.viewBox.baseVal;
      const scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
      return parseFloat(getComputedStyle(t).fontSize) * scale; });
    return {id: f.id, n: n, count: texts.length, min: Math.min(...px)}; })"""


def test_phone_grids_read_at_11px_and_top_three_lists_fold(course, server, open_site):
    w = open_site(viewport=PHONE)
    page = w.goto(f"{server.base}/heads.html")
    figs = page.locator(".course-fig[data-kind=attention]")
    for i in range(figs.count()):
        figs.nth(i).scroll_into_view_if_needed()
    quiet(page)  # every grid scrolled to drawn
    labels = page.evaluate(LABELS)
    long = [x for x in labels if 15 <= x["n"] <= 22]
    assert len(long) >= 3, labels
    assert all(x["count"] >= x["n"] and x["min"] >= 11 for x in long), long
    tops = page.evaluate("""() => [...document.querySelectorAll('.course-fig[data-kind=attention] .course-top3')].map(b => ({
      h: b.getBoundingClientRect().height, shown: [...b.querySelectorAll('li')].filter(li => li.getClientRects().length).map(li => li.value),
      n: b.querySelectorAll('li').length, token: +b.closest('.course-fig').querySelector('select[data-control=token]').value,
      button: b.querySelector('button.course-top3-toggle') && b.querySelector('button.course-top3-toggle').getAttribute('aria-expanded')}))""")
    assert len(tops) >= 3
    for t in tops:
        assert t["shown"] == [t["token"]] and t["button"] == "false" and t["h"] <= TOP3_MAX, t  # numbered as the token menu
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= HEADS_HEIGHT_MAX, f"heads.html is {height} px high at 375"
    # the toggle shows the whole list, and folds it again
    box = page.locator(".course-fig[data-kind=attention] .course-top3").first
    box.locator("button").click()
    assert box.locator("li:visible").count() == tops[0]["n"]
    assert box.locator("button").get_attribute("aria-expanded") == "true"
    box.locator("button").click()
    assert box.locator("li:visible").count() == 1
    # another token: its line is the one shown
    fig = page.locator(".course-fig[data-kind=attention]").first
    fig.locator("select[data-control=token]").select_option("3")
    page.wait_for_function("b => [...b.querySelectorAll('li')].filter(li => li.getClientRects().length).map(li => li.value).join() === '3'",
                           arg=box.element_handle())
    assert w.errors == []


# Every header and caption of the comparison and prediction tables shown: its box, and whether
# its scroll box scrolls sideways.
TABLES = """() => [...document.querySelectorAll('table.course-diff-table, table.course-predictions')]
  .filter(t => t.getClientRects().length).map(t => { const box = t.parentElement, c = t.caption;
    return {cls: t.className, scrolls: box.scrollWidth > box.clientWidth + 1, right: t.getBoundingClientRect().right,
      heads: [...t.querySelectorAll('thead th')].map(th => [th.textContent.trim(), th.getBoundingClientRect().right]),
      caption: c ? {right: c.getBoundingClientRect().right, cut: c.scrollWidth > c.clientWidth + 1} : null}; })"""


def test_phone_comparison_and_prediction_tables_keep_their_columns_in_view(course, server, open_site):
    w = open_site(viewport=PHONE)
    seen = set()
    for rel in ("attention.html", "causal.html"):
        page = w.goto(f"{server.base}/{rel}")
        tables = page.evaluate(TABLES)
        for t in tables:
            seen.add(t["cls"].split()[-1])
            assert not t["scrolls"] and t["right"] <= 375, (rel, t)
            assert all(right <= 375 for _, right in t["heads"]), (rel, t)
            keys = [h for h, _ in t["heads"] if h.startswith(("Weight", "Difference", "Guess 2", "Guess 3"))]
            assert len(keys) >= 2, (rel, t)
            assert t["caption"] and not t["caption"]["cut"] and t["caption"]["right"] <= 375, (rel, t)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 375, f"{rel} scrolls sideways ({wide} px)"
    assert seen == {"course-diff-table", "course-predictions"}, seen
    assert w.errors == []


# Every element in the page's content that scrolls up and down inside its own box, as laid out.
INNER_SCROLL = """() => [...document.querySelectorAll('.md-content *')].filter(e => {
  const s = getComputedStyle(e);
  return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1 && e.getClientRects().length; })
  .map(e => (e.closest('[id]') || e).id + ' ' + e.className)"""


@pytest.mark.parametrize("rel", ["heads.html", "gpt2.html", "causal.html", "circuits.html"])
def test_no_box_scrolls_up_and_down_inside_a_phone_page(course, server, open_site, rel):
    w = open_site(viewport=PHONE)
    page = w.goto(f"{server.base}/{rel}", wait_painted=False)  # GPT-2's page draws nothing in a copy without its weights
    settle(page)
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")  # every block laid out
    quiet(page)
    assert page.evaluate(INNER_SCROLL) == [], rel
    assert w.errors == []
