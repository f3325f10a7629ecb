"""Prose numbers point at their cells (issue 29, item 13), in Chromium on the session's shared
course build: pressing a bound number (render/ref_binding.py; a click, or Enter by keyboard) sets
the figure's pickers to the number's layer, head and token, outlines its cell in the table and
over the heatmap, and scrolls the figure into view below the sticky header; hovering it outlines
the cell only while the figure shows the number's state, and changes nothing (issue 46, item 1:
tests/browser/test_text_follows.py); axe finds nothing with a number pointed at; printed, nothing
is outlined or underlined."""

from __future__ import annotations

import pytest

from course_builds import settle

from .test_a11y import axe

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Every bound cell reference of the page: its index among the page's .course-ref spans, what it
# names, and its figure's kind.
CELL_REFS = """() => [...document.querySelectorAll('span.course-ref')].map((s, i) => ({
  i, fig: s.dataset.fig, level: [...s.classList].find(c => c.startsWith('course-ref-') && c !== 'course-ref-on'),
  layer: s.dataset.layer, head: s.dataset.head, q: s.dataset.q, k: s.dataset.k, panel: s.dataset.panel,
  text: s.textContent, kind: document.getElementById(s.dataset.fig).dataset.kind,
  visible: s.getClientRects().length > 0,
  gap: s.getBoundingClientRect().top - document.getElementById(s.dataset.fig).getBoundingClientRect().top}))
  .filter(r => r.level === 'course-ref-cell')"""

PICKERS = """fid => ['layer', 'head', 'token'].map(c => document.querySelector('#' + fid + ' select[data-control=' + c + ']').value)"""

# The outlined table cell of the reference's panel, and the box over its heatmap.
MARKS = """r => {
  const fig = document.getElementById(r.fig);
  const panel = fig.dataset.kind === 'compare' ? fig.querySelectorAll('.course-panel')[+r.panel] : fig;
  const td = panel.querySelector('table.course-table td[data-q="' + r.q + '"][data-k="' + r.k + '"]');
  const box = panel.querySelector('.course-plot .course-ref-mark');
  const b = box && box.getBoundingClientRect();
  return { td: !!td && td.classList.contains('course-ref-target'), tdText: td && td.textContent,
           outlined: [...document.querySelectorAll('.course-ref-target')].length,
           box: b && { x: b.x + b.width / 2, y: b.y + b.height / 2, w: b.width, h: b.height } };
}"""


@pytest.fixture
def attention_page(course, server, open_site):
    w = open_site(reduced_motion="reduce")
    page = w.goto(f"{server.base}/attention.html")
    settle(page)
    page.wait_for_function("() => window.course && window.course.figures.length > 0")
    return w, page


# Opens the content tabs around the i-th bound number, as a reader would, by their labels.
SHOW_TABS = """i => {
  for (let n = document.querySelectorAll('span.course-ref')[i]; n; n = n.parentElement) {
    if (!n.classList.contains('tabbed-block')) continue;
    const set = n.closest('.tabbed-set');
    const k = [...n.parentElement.children].indexOf(n);
    const input = set.querySelectorAll(':scope > input[type=radio]')[k];
    if (!input.checked) set.querySelector('label[for="' + input.id + '"]').click();
  }
}"""


def cell_refs(page, visible: bool = True) -> list[dict]:
    found = [r for r in page.evaluate(CELL_REFS) if r["visible"] or not visible]
    assert len(found) >= 3, f"attention.html has {len(found)} bound cell references"
    return found


def move_away(page, r: dict) -> None:
    """Every figure to another head and token, so that pointing at `r` has something to change."""
    page.evaluate("""r => course.setState(r.fig, {layer: (+r.layer + 1) % 4, head: (+r.head + 1) % 4, token: 1})""", r)
    page.wait_for_function(f"fid => ({PICKERS})(fid)[2] === '1'", arg=r["fig"])


def expect_pointed(page, r: dict) -> dict:
    want = [r["layer"], r["head"]]
    page.wait_for_function(f"a => ({PICKERS})(a[0]).slice(0, 2).join() === a[1]", arg=[r["fig"], ",".join(want)])
    marks = page.evaluate(MARKS, r)
    assert marks["td"] and marks["tdText"] == r["text"], f"{r}: the table cell is not outlined ({marks})"
    return marks


def test_hover_outlines_the_cell_of_the_state_shown(attention_page):
    w, page = attention_page
    r = next(x for x in cell_refs(page) if x["kind"] == "attention")
    move_away(page, r)
    span = page.locator("span.course-ref").nth(r["i"])
    span.click()  # the figure to the number's state, as the reader asks
    expect_pointed(page, r)
    page.mouse.move(2, 2)
    page.evaluate("() => document.activeElement.blur()")  # the click focused the number
    page.wait_for_function("() => !document.querySelector('.course-ref-target, .course-ref-mark')")
    span.scroll_into_view_if_needed()
    page.evaluate("fid => document.getElementById(fid).scrollIntoView({block: 'start'})", r["fig"])
    span.hover()
    expect_pointed(page, r)
    page.wait_for_function(f"r => ({MARKS})(r).box", arg=r)
    marks = page.evaluate(MARKS, r)
    token = page.evaluate(PICKERS, r["fig"])[2]
    assert token == r["q"], f"the token picker reads {token}, the number is ·{r['q']}'s"
    # the box sits on the cell: Plotly, hovered at its centre, names that cell and its weight
    box = marks["box"]
    assert box["w"] > 5 and box["h"] > 5, box
    page.mouse.move(box["x"], box["y"])
    page.wait_for_selector(f"#{r['fig']} .hoverlayer .hovertext")
    said = page.text_content(f"#{r['fig']} .hoverlayer .hovertext")
    assert said.endswith(f": {r['text']}"), f"the outlined box is over the cell that reads {said!r}, not {r['text']}"
    # the pointer gone, nothing stays outlined
    page.mouse.move(2, 2)
    page.wait_for_function("() => !document.querySelector('.course-ref-target, .course-ref-mark')")
    assert not w.errors, w.errors


def test_keyboard_focus_outlines_a_compare_cell_of_sentence_two(attention_page):
    w, page = attention_page
    refs = cell_refs(page, visible=False)
    r = next(x for x in refs if x["kind"] == "compare" and x["panel"] == "1")
    page.evaluate(SHOW_TABS, r["i"])
    move_away(page, r)
    span = page.locator("span.course-ref").nth(r["i"])
    assert span.get_attribute("tabindex") == "0"
    # by keyboard: focus the number just before it, then Tab
    before = page.locator("span.course-ref").nth(r["i"] - 1)
    before.focus()
    page.keyboard.press("Tab")
    if page.evaluate("() => document.activeElement.matches('button.course-ref-about')"):
        page.keyboard.press("Tab")  # the state button after the number before (its figure is elsewhere)
    assert page.evaluate("i => document.activeElement === document.querySelectorAll('span.course-ref')[i]", r["i"]), "Tab did not reach the number"
    page.keyboard.press("Enter")
    expect_pointed(page, r)
    note = span.get_attribute("aria-description")
    assert note.startswith("from figure ") and "sentence 2" in note, note
    page.keyboard.press("Tab")  # focus moves on: the outline goes
    page.keyboard.press("Tab")  # (past the number's own state button, if the figure was elsewhere)
    page.wait_for_function("i => !document.querySelectorAll('span.course-ref')[i].classList.contains('course-ref-on')", arg=r["i"])
    assert not w.errors, w.errors


def test_click_scrolls_the_figure_below_the_header(attention_page):
    w, page = attention_page
    r = max(cell_refs(page), key=lambda x: x["gap"])  # the number furthest below its figure
    span = page.locator("span.course-ref").nth(r["i"])
    span.scroll_into_view_if_needed()
    page.evaluate("() => window.scrollBy(0, -window.innerHeight / 3)")
    # the figure starts above the screen
    assert page.evaluate("fid => document.getElementById(fid).getBoundingClientRect().top", r["fig"]) < 0, "pick a number further from its figure"
    span.click()
    page.wait_for_function("""fid => {
      const h = document.querySelector('.md-header').getBoundingClientRect().bottom;
      const t = document.getElementById(fid).getBoundingClientRect().top;
      return t >= h && t < h + 40; }""", arg=r["fig"])
    expect_pointed(page, r)
    page.wait_for_function(f"fid => location.hash.startsWith('#' + fid + ':layer=')", arg=r["fig"])
    assert not w.errors, w.errors


def test_axe_finds_nothing_with_a_number_pointed_at(attention_page):
    w, page = attention_page
    r = cell_refs(page)[0]
    page.locator("span.course-ref").nth(r["i"]).focus()
    page.keyboard.press("Enter")
    expect_pointed(page, r)
    found = axe(page, every_tab=False)
    assert found == [], found


def test_print_shows_plain_numbers(attention_page):
    w, page = attention_page
    r = next(x for x in cell_refs(page) if x["kind"] == "attention")
    span = page.locator("span.course-ref").nth(r["i"])
    span.focus()
    page.keyboard.press("Enter")
    expect_pointed(page, r)
    screen = page.evaluate("s => getComputedStyle(s).boxShadow", span.element_handle())
    assert "inset" in screen, "on screen a bound number is underlined by its edge"
    page.emulate_media(media="print")
    styles = page.evaluate("""() => [...document.querySelectorAll('span.course-ref, .course-ref-target, .course-ref-mark')].map(e => {
      const cs = getComputedStyle(e);
      return [e.className, cs.outlineStyle, cs.borderBottomStyle, cs.display, cs.cursor, cs.boxShadow]; })""")
    assert len(styles) > 10
    for cls, outline, border, display, cursor, shadow in styles:
        if "course-ref-mark" in cls:
            assert display == "none", cls
            continue
        assert outline == "none", f"{cls}: outlined in print"
        if "course-ref " in cls + " ":
            assert border == "none" and shadow == "none" and cursor == "auto", f"{cls}: styled as a link in print"
