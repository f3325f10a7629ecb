"""The reader's view of a figure, on the harness page (tests/browser/harness.py): one view per
figure (the table one click away), "All heads" where the reader is looking, and a heatmap that
stays legible at 375 px (no label or number overlapping, the colour bar on screen)."""

from __future__ import annotations

import math

import pytest

from course_builds import quiet

pytestmark = pytest.mark.browser

FIG1 = "#fig-1"

# Boxes of what the heatmap shows: Plotly's cell numbers, course.js's tick labels and colour bar (page coordinates).
PLOT_BOXES = r"""sel => {  // sel: the Plotly graph divs
  const box = e => { const r = e.getBoundingClientRect(), rot = /rotate\((-?[\d.]+)/.exec(e.getAttribute('transform') || '');
                      return {x: r.left, y: r.top, w: r.width, h: r.height, angle: rot ? +rot[1] : 0,
                              text: e.textContent, size: parseFloat(getComputedStyle(e).fontSize)}; };
  return [...document.querySelectorAll(sel)].map(p => ({
    cells: [...p.querySelectorAll('.heatmaplayer text')].filter(t => t.textContent).map(box),
    xticks: [...p.querySelectorAll('.course-axis-keys text')].map(box),
    yticks: [...p.querySelectorAll('.course-axis-queries text')].map(box),
    colourbar: box(p.querySelector('.course-colourbar')),
    cell: p._fullLayout.xaxis._length / p._fullLayout.xaxis._rl.reduce((a, b) => Math.abs(b - a)),
  }));
}"""


def overlaps(boxes: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels that overlap. Level text: boxes that share more than half a pixel both ways.
    Rotated text (parallel slanted lines, whose boxes overlap anyway): lines closer than 0.95 of
    the font size, measured across the text's direction between the boxes' centres."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a.get("angle") or b.get("angle"):
                t = math.radians(a.get("angle", 0))
                dx = (b["x"] + b["w"] / 2) - (a["x"] + a["w"] / 2)
                dy = (b["y"] + b["h"] / 2) - (a["y"] + a["h"] / 2)
                if abs(-math.sin(t) * dx + math.cos(t) * dy) < 0.95 * max(a["size"], b["size"]):
                    out.append((a["text"], b["text"]))
                continue
            dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            if dx > 0.5 and dy > 0.5:
                out.append((a["text"], b["text"]))
    return out


def check_legible(plots: list[dict], width: int) -> list[str]:
    """What a reader of these heatmaps could not read, at a viewport `width` px wide."""
    problems = []
    for n, p in enumerate(plots):
        for t in p["cells"]:
            if t["size"] < 11:
                problems.append(f"plot {n}: cell number {t['text']} drawn at {t['size']} px")
        if p["cells"] and p["cells"][0]["w"] > p["cell"]:
            problems.append(f"plot {n}: cell numbers {p['cells'][0]['w']:.0f} px wide in {p['cell']:.0f} px cells")
        for what in ("cells", "xticks", "yticks"):
            for a, b in overlaps(p[what]):
                problems.append(f"plot {n}: {what} {a!r} and {b!r} overlap")
        cb = p["colourbar"]
        if cb["x"] < 0 or cb["x"] + cb["w"] > width + 0.5:
            problems.append(f"plot {n}: the colour bar spans x {cb['x']:.0f}..{cb['x'] + cb['w']:.0f}, off a {width} px screen")
    return problems


# ------------------------------------------------------------------ "Show as a table"


def test_table_is_one_click_away_and_the_print_view(open_page, harness_url):
    page = open_page().goto(harness_url())
    toggle = f"{FIG1} button.course-table-toggle"
    box_id = page.get_attribute(toggle, "aria-controls")
    assert box_id and page.get_attribute(f"#{box_id}", "class") == "course-table-wrap course-table-closed"
    assert page.locator(f"#{box_id} table.course-table").count() == 1
    assert page.get_attribute(toggle, "aria-expanded") == "false"
    assert page.text_content(toggle) == "Show as a table"
    assert page.is_hidden(f"#{box_id}") and page.is_visible(f"{FIG1} .course-plot .main-svg")
    page.click(toggle)
    assert page.get_attribute(toggle, "aria-expanded") == "true" and page.is_visible(f"#{box_id}")
    assert page.text_content(toggle) == "Hide the table"
    page.keyboard.press("Enter")  # the button keeps focus: a keyboard closes it again
    assert page.get_attribute(toggle, "aria-expanded") == "false" and page.is_hidden(f"#{box_id}")
    # print: the table is the figure, the button is not printed
    page.emulate_media(media="print")
    assert page.is_visible(f"#{box_id}") and page.is_hidden(toggle)
    # every plotted figure has exactly one table toggle per table, with distinct ids
    ids = page.eval_on_selector_all(".course-table-toggle", "bs => bs.map(b => b.getAttribute('aria-controls'))")
    assert len(ids) == len(set(ids)) >= 4


def test_without_javascript_the_table_is_the_figure(open_page, harness_url):
    page = open_page(js=False).goto(harness_url(), wait_painted=False)
    assert page.locator(".course-table-toggle").count() == 0
    assert page.is_visible(f"{FIG1} table.course-table")
    assert page.is_hidden(f"{FIG1} button[data-action=heads]")  # it could do nothing


def test_one_view_on_screen(open_page, harness_url):
    """With the plot drawn, a figure shows the plot, the pickers, the summary and the top-3 list,
    and the same numbers once: no table below the plot."""
    page = open_page().goto(harness_url())
    shown = page.evaluate("""id => {
      const f = document.querySelector(id), vis = s => [...f.querySelectorAll(s)].filter(e => e.getClientRects().length).length;
      return {plot: vis('.course-plot .main-svg'), controls: vis('.course-controls'), summary: vis('.course-summary'),
              top3: vis('.course-top3 li'), table: vis('table.course-table')};
    }""", FIG1)
    assert shown["plot"] >= 1 and shown["controls"] == 1 and shown["summary"] == 1 and shown["top3"] > 0
    assert shown["table"] == 0


# ------------------------------------------------------------------ "All heads"


def test_all_heads_opens_under_the_pickers_and_takes_focus(open_page, harness_url):
    page = open_page(viewport={"width": 1100, "height": 700}).goto(harness_url())
    btn = f"{FIG1} button[data-action=heads]"
    heads = page.get_attribute(btn, "aria-controls")
    assert page.get_attribute(f"#{heads}", "class") == "course-heads"
    page.locator(btn).scroll_into_view_if_needed()
    page.click(btn)
    # the small grids open once weights.js is in (loaded on the first click), then take the focus
    page.wait_for_function("() => document.activeElement && document.activeElement.matches('button.course-mini')")
    got = page.evaluate("""([btn, heads]) => {
      const a = document.activeElement, box = document.getElementById(heads);
      const r = a.getBoundingClientRect(), plot = document.querySelector('#fig-1 .course-plot');
      return {isMini: a.matches('button.course-mini'), pressed: a.getAttribute('aria-pressed'), inside: box.contains(a),
              layer: a.dataset.layer, head: a.dataset.head, inView: r.top >= 0 && r.bottom <= innerHeight,
              beforePlot: !!(box.compareDocumentPosition(plot) & Node.DOCUMENT_POSITION_FOLLOWING)};
    }""", [btn, heads])
    assert got == {"isMini": True, "pressed": "true", "inside": True, "layer": "0", "head": "0", "inView": True,
                   "beforePlot": True}
    page.keyboard.press("ArrowRight")  # focus is where the keys work
    assert page.evaluate("document.activeElement.dataset.head") == "1"


# Per small grid: the outlined row's top and height against the grid's rows (its canvas has one
# pixel a cell, n by n, scaled up), in px from the grid's top.
MINI_ROWS = """() => [...document.querySelectorAll('#fig-1 .course-mini-grid')].map(g => {
  const top = g.getBoundingClientRect().top, mark = g.querySelector('.course-mini-row').getBoundingClientRect();
  const c = g.querySelector('canvas'), box = c.getBoundingClientRect(), n = c.height, cell = box.height / n;
  const rows = [...Array(n).keys()].map(i => box.top - top + i * cell);
  return {mark: mark.top - top, height: mark.height, rows, cell, square: Math.abs(box.width - box.height) < 0.5 && c.width === n};
})"""


def test_all_heads_outline_the_row_of_the_token_in_focus(open_page, harness_url):
    """Each small grid shows the head's whole grid; the intro says the focus row is outlined, and
    it is, in every small grid, and it follows the token picker."""
    page = open_page(viewport={"width": 1100, "height": 700}).goto(harness_url())
    page.click(f"{FIG1} button[data-action=heads]")
    page.wait_for_selector(f"{FIG1} button.course-mini", state="visible")  # after weights.js loads
    assert "row of the token in focus outlined" in page.text_content(f"{FIG1} .course-heads-intro")
    for token in (None, 1):
        if token is not None:
            page.select_option(f"{FIG1} select[data-control=token]", str(token))
            # the outline moves in the next frame: wait until every small grid's has moved
            page.wait_for_function(f"want => ({MINI_ROWS})().every(m => Math.abs(m.mark - m.rows[want]) < 0.5)", arg=token)
        want = int(page.eval_on_selector(f"{FIG1} select[data-control=token]", "s => s.value"))
        minis = page.evaluate(MINI_ROWS)
        assert len(minis) >= 4
        for m in minis:
            assert abs(m["mark"] - m["rows"][want]) < 0.5 and abs(m["height"] - m["cell"]) < 0.5 and m["square"], (token, m)


def test_a_small_grid_chosen_on_a_short_screen_brings_the_big_grid_into_view(open_page, harness_url):
    """On a phone the small multiples can fill the screen: a click on one scrolls until the grid
    it opened shows; the arrow keys keep the reader among the small grids."""
    page = open_page(viewport={"width": 375, "height": 420}, reduced_motion="reduce").goto(harness_url())
    btn = f"{FIG1} button[data-action=heads]"
    page.locator(btn).scroll_into_view_if_needed()
    page.click(btn)
    page.wait_for_function("() => document.activeElement && document.activeElement.matches('button.course-mini')")
    plot_top = "document.querySelector('#fig-1 .course-plot').getBoundingClientRect().top"
    page.keyboard.press("ArrowRight")
    quiet(page)  # the key handled, and anything it set off
    assert page.evaluate(plot_top) > page.evaluate("innerHeight"), "the keys must not scroll the reader away"
    mini = page.locator(f"{FIG1} button.course-mini[data-layer='1'][data-head='2']")
    mini.scroll_into_view_if_needed()
    assert page.evaluate(plot_top) > page.evaluate("innerHeight") - 120, "the test needs the grid below the fold"
    mini.click()
    page.wait_for_function(f"{plot_top} < innerHeight - 100")
    assert page.input_value(f"{FIG1} select[data-control=layer]") == "1"


def test_all_heads_opened_by_the_page_leaves_focus_alone(open_page, harness_url):
    # what data-show-heads="true" does once the plot is drawn: open, without moving focus
    page = open_page().goto(harness_url())
    page.evaluate("course.figures[0].toggleHeads(true)")
    assert page.is_visible(f"{FIG1} .course-heads")
    assert page.evaluate("document.activeElement === document.body")


# ------------------------------------------------------------------ small screens


@pytest.mark.parametrize("width", [320, 375, 1280])
def test_heatmaps_stay_legible(open_page, harness_url, width):
    page = open_page(viewport={"width": width, "height": 800}).goto(harness_url())
    for fig in ("#fig-1", "#fig-2"):
        page.locator(f"{fig} .course-plot").scroll_into_view_if_needed()
        page.locator(f"{fig} .course-plot .main-svg").first.wait_for(state="attached")
    quiet(page)  # a width change redraws once per frame
    plots = page.evaluate(PLOT_BOXES, "#fig-1 .js-plotly-plot, #fig-2 .js-plotly-plot")
    assert len(plots) == 2
    assert check_legible(plots, width) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    if width == 320:
        # the 8-token grid's cells are too small for numbers there: none drawn, the value is in the hover
        assert plots[1]["cell"] < 28 and plots[1]["cells"] == []
        assert page.evaluate("document.querySelector('#fig-2 .js-plotly-plot')._fullData[0].hovertext[3][2]").endswith(": "
            + page.text_content("#fig-2 td[data-q='3'][data-k='2']"))
    if width == 1280:
        assert all(len(p["cells"]) > 0 for p in plots)  # room enough: the numbers are drawn


def test_legibility_check_can_fail():
    """The checks above are not vacuous: overlapping labels, tiny numbers and a colour bar off
    screen are each reported."""
    a = {"x": 0, "y": 0, "w": 20, "h": 10, "text": "0.56", "size": 9}
    b = {"x": 10, "y": 2, "w": 20, "h": 10, "text": "0.44", "size": 9}
    plot = {"cells": [a, b], "xticks": [a, b], "yticks": [], "colourbar": {"x": 360, "y": 0, "w": 40, "h": 100}, "cell": 12}
    problems = check_legible([plot], 375)
    assert any("drawn at 9" in p for p in problems)
    assert any("cells '0.56' and '0.44' overlap" in p for p in problems)
    assert any("xticks" in p for p in problems)
    assert any("20 px wide in 12 px cells" in p for p in problems)
    assert any("colour bar" in p for p in problems)
    slanted = [dict(a, angle=-50, x=0, size=12), dict(a, angle=-50, x=10, size=12)]  # 7.7 px apart across
    assert overlaps(slanted) and not overlaps([slanted[0], dict(slanted[1], x=24)])  # 18.4 px: clear


def test_a_new_width_redraws_the_heatmap_for_it(open_page, harness_url):
    """Turned from 620 to 320 px (a phone), the grid drops the numbers that no longer fit and
    moves the colour bar under itself; back at 620 px both return. (At 620 px the top-3 list sits
    under the plot, which has its box's full width, over 560 px; wider, the list sits beside it
    and the plot's box is narrower again: course.css "the view".)"""
    page = open_page(viewport={"width": 620, "height": 800}).goto(harness_url())
    page.locator("#fig-2 .course-plot").scroll_into_view_if_needed()
    page.locator("#fig-2 .course-plot .main-svg").first.wait_for(state="attached")
    assert page.evaluate("document.querySelector('#fig-2 .course-plot').getBoundingClientRect().width") >= 560
    state = "() => { const p = document.querySelector('#fig-2 .js-plotly-plot'); return [p._fullData[0].texttemplate, p.querySelector('.course-colourbar').dataset.orientation]; }"
    assert page.evaluate(state) == ["%{text}", "v"]
    page.set_viewport_size({"width": 320, "height": 800})
    page.wait_for_function(f"({state})()[1] === 'h'")
    assert page.evaluate(state) == ["", "h"]
    assert check_legible(page.evaluate(PLOT_BOXES, "#fig-2 .js-plotly-plot"), 320) == []
    page.set_viewport_size({"width": 620, "height": 800})
    page.wait_for_function(f"({state})()[1] === 'v'")
    assert page.evaluate(state) == ["%{text}", "v"]


def test_all_heads_fit_a_phone(open_page, harness_url):
    """At 375 px every small grid of every layer is on screen (the fourth column was cut off)."""
    page = open_page(viewport={"width": 375, "height": 800}).goto(harness_url())
    page.click(f"{FIG1} button[data-action=heads]")
    page.wait_for_selector(f"{FIG1} button.course-mini", state="visible")  # after weights.js loads
    rights = page.eval_on_selector_all(f"{FIG1} button.course-mini", "bs => bs.map(b => b.getBoundingClientRect().right)")
    assert len(rights) == 12 and max(rights) <= 375
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
