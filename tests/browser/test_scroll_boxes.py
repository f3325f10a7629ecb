"""Boxes that scroll sideways (wide tables, the comparison, long formulas) show that they do: in
Chromium on the real course, at 375 and 1280 px, a box fades out at each side where more of it
lies, in step with its scroll position and the window's width; a table's caption stays clear of the
fade, and keyboard focus takes the fade away so the focus ring shows whole."""

from __future__ import annotations

import pytest

from .figure_ids import first_of

pytestmark = pytest.mark.browser

BOXES = ".course-table-wrap, .course-diff, .course-math, .course-fig .course-scroll, .md-typeset__scrollwrap"

# Every shown box: whether it overflows, which sides have more, and the fade the browser applies.
STATE_JS = """(sel) => Array.from(document.querySelectorAll(sel)).filter(b => b.getClientRects().length).map(b => {
  const room = b.scrollWidth - b.clientWidth;
  const want = room > 1 ? [b.scrollLeft > 1 ? 'left' : '', b.scrollLeft < room - 1 ? 'right' : ''].filter(Boolean).join(' ') : '';
  const cs = getComputedStyle(b);
  return {name: (b.closest('[id]') || {}).id || b.className, want, got: b.getAttribute('data-course-more') || '',
          mask: cs.maskImage || cs.webkitMaskImage || 'none'};
})"""


def settled(page):
    """course.js has set up the boxes (after the first heatmap, on a page with heatmaps) and the
    last scroll or resize has been seen."""
    page.wait_for_function("""() => document.readyState === 'complete' && window.course && (window.course.paintedAt !== null
        || !document.querySelector('.course-fig:is([data-kind=attention], [data-kind=compare])'))""")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def mismatches(page):
    return [s for s in page.evaluate(STATE_JS, BOXES)
            if s["got"] != s["want"] or (s["want"] != "") != ("linear-gradient" in s["mask"])]


@pytest.mark.parametrize("width", [375, 1280])
def test_every_box_fades_exactly_where_more_of_it_lies(open_site, server, width):
    w = open_site(viewport={"width": width, "height": 900})
    for rel in ("attention.html", "heads.html", "vectors.html", "tokens.html"):
        w.goto(f"{server.base}/{rel}", wait_painted=False)
        settled(w.page)
        w.page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")  # every block rendered
        settled(w.page)
        assert mismatches(w.page) == [], rel
    assert w.errors == []


def test_the_fade_follows_the_scroll_position_the_width_and_focus(course, open_site, server):
    fig = "#" + first_of(course / "build" / "site" / "causal.html", "compare")
    w = open_site(viewport={"width": 375, "height": 800})
    page = w.page
    w.goto(f"{server.base}/causal.html")
    settled(page)
    # a 13-token grid's table (a comparison panel), shown (the prediction tables fit a phone now, test_phone_layout.py)
    page.locator(f"{fig} button.course-table-toggle").first.focus()
    page.keyboard.press("Enter")  # by keyboard: the focus test below needs :focus-visible
    box = page.locator(f"{fig} .course-table-wrap").first
    box.wait_for(state="visible")
    box.scroll_into_view_if_needed()
    assert box.get_attribute("data-course-more") == "right"

    # The caption above the table is outside the fade: the kept band reaches from the box's top
    # past the caption's bottom to the table's first row, at this width and at a narrower one
    # (where the caption takes another line).
    def caption_clear():
        keep, caption_bottom, first_row = box.evaluate("""b => { const top = b.getBoundingClientRect().top;
            const t = b.querySelector('table');
            return [parseFloat(b.style.getPropertyValue('--course-more-keep')),
                    t.caption.getBoundingClientRect().bottom - top, (t.tHead || t.rows[0]).getBoundingClientRect().top - top]; }""")
        assert 0 < caption_bottom <= keep <= first_row + 1
        return keep

    wide_keep = caption_clear()
    page.set_viewport_size({"width": 300, "height": 800})
    page.wait_for_function("(b) => parseFloat(b.style.getPropertyValue('--course-more-keep')) !== %r" % wide_keep, arg=box.element_handle())
    assert caption_clear() > wide_keep
    page.set_viewport_size({"width": 375, "height": 800})
    settled(page)

    def scroll_to(fraction):
        box.evaluate("(b, f) => { b.scrollLeft = Math.round((b.scrollWidth - b.clientWidth) * f); }", fraction)
        settled(page)
        return box.get_attribute("data-course-more")

    assert scroll_to(0.5) == "left right"
    assert scroll_to(1) == "left"
    assert scroll_to(0) == "right"
    assert mismatches(page) == []

    # Keyboard focus: no fade, so the focus ring is whole.
    box.evaluate("b => b.focus()")
    assert box.evaluate("b => b.matches(':focus-visible')")
    assert box.evaluate("b => getComputedStyle(b).maskImage") == "none"
    box.evaluate("b => b.blur()")

    # A wider window: boxes that fit now lose their fade.
    page.set_viewport_size({"width": 1280, "height": 800})
    settled(page)
    page.wait_for_function(f"""() => Array.from(document.querySelectorAll({BOXES!r})).every(b =>
        !b.getClientRects().length || (b.scrollWidth - b.clientWidth > 1) === b.hasAttribute('data-course-more'))""")
    assert mismatches(page) == []
    assert w.errors == []


def test_print_has_no_fade(open_site, server):
    w = open_site(viewport={"width": 375, "height": 800})
    w.goto(f"{server.base}/attention.html")
    settled(w.page)
    box = w.page.locator("[data-course-more]").first
    w.page.emulate_media(media="print")
    assert box.evaluate("b => getComputedStyle(b).maskImage") == "none"


# Every token and code span in a table, open or not (its block forced to render): drawn on how many
# lines; and every scoreboard table's overflow past its box.
CUT_JS = """() => {
  document.querySelectorAll('.md-typeset > *').forEach(e => e.style.contentVisibility = 'visible');
  document.querySelectorAll('.course-table-wrap[hidden]').forEach(b => b.hidden = false);
  const cut = [...document.querySelectorAll('table .course-tok, table code')]
    .filter(t => t.getClientRects().length > 1).map(t => t.textContent);
  const score = [...document.querySelectorAll('.course-score-ranking .course-table-wrap')].filter(b => b.getClientRects().length)
    .map(b => b.scrollWidth - b.clientWidth);
  return {cut, score};
}"""


def test_on_a_phone_no_token_is_cut_in_two_and_the_scoreboards_tables_fit(open_site, server):
    """A table too wide for the screen scrolls (above); a token in it stays whole (the comparison's
    table broke <|endoftext|> in two), and the scoreboard's rankings fit (its 4 × 4 tables were 2 px
    too wide, their fade covered Head 4, where the winners are)."""
    w = open_site(viewport={"width": 375, "height": 800})
    seen_scores = 0
    for rel in ("attention.html", "heads.html", "vectors.html", "tokens.html"):
        w.goto(f"{server.base}/{rel}", wait_painted=False)
        settled(w.page)
        got = w.page.evaluate(CUT_JS)
        assert got["cut"] == [], (rel, got["cut"])
        assert all(room <= 0 for room in got["score"]), (rel, got["score"])
        seen_scores += len(got["score"])
    assert seen_scores >= 4  # one ranking per pattern
    assert w.errors == []


def test_a_fade_is_no_wider_than_what_lies_past_the_edge(open_site, server):
    """Chapter 5's ablation grid (and other tables) ran 2 px past a phone's column; the 40 px fade
    then covered its Head 4 column. The fade is as wide as the part past the edge, 8 to 40 px."""
    w = open_site(viewport={"width": 375, "height": 800})
    seen = 0
    for rel in ("causal.html", "circuits.html", "attention.html"):
        w.goto(f"{server.base}/{rel}", wait_painted=False)
        settled(w.page)
        # the marks follow each box's size on a later frame (a ResizeObserver, lazy plots): wait,
        # in one read of every box, until each marked box overflows and its fade fits what overflows
        # (a fade that never fits times out and fails)
        seen += w.page.wait_for_function("""() => {
          const boxes = [...document.querySelectorAll('[data-course-more]')].map(b => ({
            room: b.scrollWidth - b.clientWidth, fade: parseFloat(getComputedStyle(b).getPropertyValue('--course-more-fade'))}));
          const fits = boxes.every(b => b.room > 1 && b.fade >= 8 && b.fade <= 40 && b.fade <= Math.max(8, b.room) + 0.5);
          return fits ? boxes.length + 1 : false;
        }""").json_value() - 1
    assert seen, "no box scrolls sideways at 375 px"
    assert w.errors == []
