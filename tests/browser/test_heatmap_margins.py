"""The heatmaps' margins, measured by course.js, not by Plotly: on every attention heatmap of the
real course, at a desktop and two phone widths, Plotly keeps the margins course.js gave it (it
did not push one and draw the plot a second time, which cost 30-45 ms of the first paint), and
every tick label and axis title still lies inside the plot, off the grid."""

from __future__ import annotations

import pytest

from generator.bench.browser import DRAW_ALL_JS
from course_builds import settle

from .figure_ids import FIRST_HEATMAP, REPEATED_WORDS, course_figure
from .test_play import STATE, enc


pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Per attention heatmap (once DRAW_ALL_JS has drawn every plot, as a reader scrolling down would
# see them): the margins asked for and those Plotly drew with, and its labels' boxes, relative to
# the plot.
MARGINS_JS = """() => {
  const plots = [...document.querySelectorAll('.course-plot-inner')].filter(d => d._fullLayout && d._fullLayout.xaxis.side === 'top');
  return plots.map(d => {
    const L = d._fullLayout, svg = d.querySelector('.main-svg').getBoundingClientRect();
    const rel = r => ({left: r.left - svg.left, top: r.top - svg.top, right: r.right - svg.left, bottom: r.bottom - svg.top});
    return {
      fig: d.closest('figure').id,
      asked: {l: L.margin.l, t: L.margin.t, r: L.margin.r, b: L.margin.b},
      drawn: {l: L._size.l, t: L._size.t, r: L._size.r, b: L._size.b},
      automargin: [L.xaxis.automargin, L.yaxis.automargin],
      size: {width: svg.width, height: svg.height},
      grid: {left: L._size.l, top: L._size.t, right: L._size.l + L._size.w, bottom: L._size.t + L._size.h},
      labels: [...d.querySelectorAll('.course-axis-labels text, .course-colourbar-fill')].filter(t => t.textContent || t.tagName === 'rect')
        .map(t => Object.assign({text: t.textContent || 'the colour bar'}, rel(t.getBoundingClientRect()))),
    };
  });
}"""


def margin_problems(plots: list[dict]) -> list[str]:
    """What is wrong with these heatmaps' margins: a margin Plotly changed (a second draw), an
    axis left on automatic margins, a label outside the plot or over the grid."""
    out = []
    for p in plots:
        name = p["fig"]
        if p["asked"] != p["drawn"]:
            out.append(f"{name}: Plotly moved the margins {p['asked']} -> {p['drawn']}")
        if any(p["automargin"]):
            out.append(f"{name}: automatic margins are on {p['automargin']}")
        g, size = p["grid"], p["size"]
        for t in p["labels"]:
            if t["left"] < -0.5 or t["top"] < -0.5 or t["right"] > size["width"] + 0.5 or t["bottom"] > size["height"] + 0.5:
                out.append(f"{name}: label {t['text']!r} lies outside the plot {t}")
            across = min(t["right"], g["right"]) - max(t["left"], g["left"])
            down = min(t["bottom"], g["bottom"]) - max(t["top"], g["top"])
            if across > 0.5 and down > 0.5:
                out.append(f"{name}: label {t['text']!r} lies over the grid {t}")
    return out


def test_margin_check_can_fail():
    ok = {"fig": "fig-1", "asked": {"l": 100, "t": 97, "r": 84, "b": 10}, "drawn": {"l": 100, "t": 97, "r": 84, "b": 10},
          "automargin": [False, False], "size": {"width": 414, "height": 293},
          "grid": {"left": 100, "top": 97, "right": 330, "bottom": 283},
          "labels": [{"text": "Lily", "left": 60, "top": 100, "right": 95, "bottom": 114}]}
    assert margin_problems([ok]) == []
    pushed = dict(ok, drawn=dict(ok["drawn"], l=104), automargin=[True, False])
    assert len(margin_problems([pushed])) == 2
    clipped = dict(ok, labels=[{"text": "·wanted", "left": -6, "top": 100, "right": 40, "bottom": 114}])
    assert "outside the plot" in margin_problems([clipped])[0]
    on_grid = dict(ok, labels=[{"text": "·wanted", "left": 80, "top": 100, "right": 110, "bottom": 114}])
    assert "over the grid" in margin_problems([on_grid])[0]


# a phone opens a long sentence in the lines view (lines.js): these tests are about the heatmap
GRID_VIEW_JS = "() => document.querySelectorAll('.course-viewswitch button[data-view=grid]').forEach(b => b.click())"


def every_heatmap(w, url: str, width: int, measure_js: str) -> list[dict]:
    """`measure_js` on `url` at `width` px, once every heatmap is drawn in the grid view."""
    w.page.set_viewport_size({"width": width, "height": 900})
    w.page.goto(url)
    w.page.evaluate(GRID_VIEW_JS)
    settle(w.page)
    w.page.evaluate(DRAW_ALL_JS)
    return w.page.evaluate(measure_js)


@pytest.mark.parametrize("page", ["attention.html", "heads.html"])
def test_plotly_keeps_the_margins_course_js_measured(course, server, open_site, page):
    w = open_site()
    for width in (1280, 375, 320):
        plots = every_heatmap(w, f"{server.base}/{page}", width, MARGINS_JS)
        assert len(plots) >= 4, f"{page} at {width} px: {len(plots)} heatmaps drawn"
        assert margin_problems(plots) == [], f"{page} at {width} px"
    assert not w.errors, w.errors


# One figure's tokens given long labels, first and last (the longest a label gets: 14 characters,
# course.js HEATMAP.tickChars), then drawn again as course.js draws it for the box's width.
LONG_LABELS_JS = """async ([id, text]) => {
  const f = course.figures.find(f => f.el.id === id), v = f.views[0];
  for (const i of [0, 1, v.n - 2, v.n - 1]) v.tokens[i] = Object.assign({}, v.tokens[i], {display: text});
  v.constant = null; v.cache = {};
  v.geom = v.geometry(v.plotHost.clientWidth);
  v.plotDiv.style.minWidth = v.geom.minWidth + 'px';
  await v.react();
  return v.geom;
}"""


@pytest.mark.parametrize("width", [1280, 375, 320])
def test_long_labels_at_either_end_stay_inside_the_plot(course, server, open_site, width):
    """The longest labels at the first and last rows and columns: the left and top margins grow
    for them, and the last columns' slanted (or upright) labels get room on the right."""
    w = open_site()
    w.page.set_viewport_size({"width": width, "height": 900})
    w.page.goto(f"{server.base}/attention.html")
    w.page.evaluate(GRID_VIEW_JS)
    settle(w.page)
    for fig in (course_figure(course, "attention.html", **FIRST_HEATMAP), course_figure(course, "attention.html", **REPEATED_WORDS)):  # 7 and 15 tokens
        w.page.locator(f"#{fig} .course-plot").scroll_into_view_if_needed()
        w.page.locator(f"#{fig} .course-plot .main-svg").first.wait_for(state="attached")
        geom = w.page.evaluate(LONG_LABELS_JS, [fig, "·extraordinary"])
        plots = [p for p in w.page.evaluate(MARGINS_JS) if p["fig"] == fig]
        assert plots and margin_problems(plots[:1]) == [], (fig, width, geom)
        assert sum(t["text"].startswith("·extraord") for t in plots[0]["labels"]) >= 4  # (repeated: with their positions)
    assert not w.errors, w.errors


@pytest.mark.parametrize("copies", [12, 40])  # 121 and 256 tokens (a longer text is cut at 256)
def test_a_long_sentences_colour_bar_stays_inside_the_plot_on_a_phone(course, server, open_site, copies):
    """Under a tall grid (the playground's own sentence, 500 px wide: the colour bar under the
    grid), the bar, its numbers and its title lie inside the plot, whose box clips what is not:
    Plotly pushed its bottom margin for a bar 2% of the grid's height below it; course.js's bar
    is a fixed gap below, in the margin course.js measured."""
    text = " ".join(["Tom saw a big dog and the dog ran."] * copies)
    w = open_site()
    w.page.set_viewport_size({"width": 500, "height": 900})
    w.page.goto(f"{server.base}/play.html#s={enc(text)}")
    w.page.wait_for_function(f"{STATE} !== null", timeout=120000)
    w.page.evaluate(GRID_VIEW_JS)
    w.page.locator("#fig-1 .course-plot .course-colourbar").wait_for(state="attached", timeout=60000)
    plots = [p for p in w.page.evaluate(MARGINS_JS) if p["fig"] == "fig-1"]
    assert plots and plots[0]["grid"]["bottom"] - plots[0]["grid"]["top"] > 100 * 14 - 1, plots and plots[0]["grid"]
    bar = [t for t in plots[0]["labels"] if t["text"] == "the colour bar"]
    assert bar and bar[0]["top"] > plots[0]["grid"]["bottom"], bar  # under the grid: a phone's layout
    assert margin_problems(plots) == [], (copies, plots[0]["size"], plots[0]["grid"])
    assert not w.errors, w.errors


# The gaps between each axis title and its labels, as drawn: the row title's right edge to the
# row labels' leftmost edge, the column title's bottom to the column labels' top.
TITLE_GAPS_JS = """(id) => { const d = document.querySelector('#' + id + ' .course-plot-inner'), box = e => e.getBoundingClientRect();
  const [keyTitle, queryTitle] = d.querySelectorAll('.course-axis-title');
  const rows = [...d.querySelectorAll('.course-axis-queries text')].map(box), cols = [...d.querySelectorAll('.course-axis-keys text')].map(box);
  return {left: d._fullLayout._size.l, top: d._fullLayout._size.t,
          row: Math.min(...rows.map(r => r.left)) - box(queryTitle).right, column: Math.min(...cols.map(r => r.top)) - box(keyTitle).bottom}; }"""


# Every token of a figure given a one-letter label, then drawn again as course.js draws it.
SHORT_LABELS_JS = """async ([id]) => {
  const f = course.figures.find(f => f.el.id === id), v = f.views[0];
  v.tokens = v.tokens.map((t, i) => Object.assign({}, t, {display: String.fromCharCode(97 + i % 26), text: String.fromCharCode(97 + i % 26)}));
  v.constant = null; v.cache = {};
  v.geom = v.geometry(v.plotHost.clientWidth);
  v.plotDiv.style.minWidth = v.geom.minWidth + 'px';
  await v.react();
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_the_axis_titles_stay_beside_short_labels(course, server, open_site, width):
    """Short tokens leave the left and top margins at their least (HEATMAP.marginMin): the axis
    titles then stay as near their labels as beside long ones, where Plotly put them, not at
    the figure's edge."""
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    w = open_site()
    w.page.set_viewport_size({"width": width, "height": 900})
    w.page.goto(f"{server.base}/attention.html")
    w.page.evaluate(GRID_VIEW_JS)
    settle(w.page)
    w.page.locator(f"#{f1} .course-plot .course-axis-title").first.wait_for(state="attached")
    gaps = {"long": w.page.evaluate(TITLE_GAPS_JS, f1)}
    w.page.evaluate(SHORT_LABELS_JS, [f1])
    gaps["short"] = w.page.evaluate(TITLE_GAPS_JS, f1)
    assert gaps["short"]["left"] == 60 and gaps["short"]["top"] == 60, gaps  # the margins at their least
    assert gaps["long"]["left"] > 60 and gaps["long"]["top"] > 60, gaps
    for side in ("row", "column"):
        assert abs(gaps["short"][side] - gaps["long"][side]) <= 1.5, (side, gaps)
    assert not w.errors, w.errors


# Per attention heatmap: where Plotly put each column's and row's centre (its axes' own mapping,
# l2p), and where the browser drew each label and tick mark of course.js's (axis-labels.js), in
# px from Plotly's SVG: what is drawn, through each element's own transforms (getScreenCTM), not
# the attributes course.js wrote. A column label's anchor is the middle of its first character's
# line (half its font size above that character's baseline); a row label's, its box.
LABEL_PLACES_JS = """() => [...document.querySelectorAll('.course-plot-inner')].filter(d => d._fullLayout && d._fullLayout.xaxis.side === 'top').map(d => {
  const L = d._fullLayout, main = d.querySelector('.main-svg').getBoundingClientRect(), n = d.querySelectorAll('.course-axis-queries text').length;
  const drawn = (e, x, y) => { const p = new DOMPoint(x, y).matrixTransform(e.getScreenCTM()); return [p.x - main.left, p.y - main.top]; };
  const anchor = t => { const p = t.getStartPositionOfChar(0), f = parseFloat(getComputedStyle(t).fontSize); return drawn(t, p.x, p.y - f / 2); };
  const path = d.querySelector('.course-axis-marks');
  const marks = [...(path.getAttribute('d') || '').matchAll(/M([-\\d.e]+),([-\\d.e]+)([hv])/g)].map(m => [m[3], ...drawn(path, +m[1], +m[2])]);
  const cols = [], rows = [];
  for (let i = 0; i < n; i++) { cols.push(L._size.l + L.xaxis.l2p(i)); rows.push(L._size.t + L.yaxis.l2p(i)); }
  return {fig: d.closest('figure').id, n, cols, rows, row: L._size.h / Math.max(1, n), left: L._size.l, top: L._size.t,
    keys: [...d.querySelectorAll('.course-axis-keys text')].map(t => [+t.dataset.i, ...anchor(t)]),
    queries: [...d.querySelectorAll('.course-axis-queries text')].map(t => { const r = t.getBoundingClientRect();
      return [+t.dataset.i, (r.top + r.bottom) / 2 - main.top, r.right - main.left]; }),
    xMarks: marks.filter(m => m[0] === 'v').map(m => m.slice(1)), yMarks: marks.filter(m => m[0] === 'h').map(m => m.slice(1))};
})"""


def place_problems(plots: list[dict]) -> list[str]:
    """Labels and tick marks that are not at Plotly's columns and rows, as drawn: a column
    label's anchor off its column's centre or not just above the grid, a row label's box more
    than a quarter of a row off its row's centre or not ending just left of the grid, a tick
    mark off the column of its label or off its row, or a row without its label and mark."""
    out = []
    for p in plots:
        f, cols, rows = p["fig"], p["cols"], p["rows"]
        if len(p["queries"]) != len(rows) or len(p["yMarks"]) != len(rows) or len(p["xMarks"]) != len(p["keys"]):
            out.append(f"{f}: {len(p['queries'])} row labels and {len(p['yMarks'])} row marks for {len(rows)} rows")
            continue
        for i, x, y in p["keys"]:
            if abs(x - cols[i]) > 0.5 or not p["top"] - 40 < y < p["top"]:
                out.append(f"{f}: column label {i} anchored at ({x:.1f}, {y:.1f}), its column at x {cols[i]:.1f} under y {p['top']:.1f}")
        for i, y, right in p["queries"]:
            if abs(y - rows[i]) > p["row"] / 4 or not p["left"] - 15 < right < p["left"]:
                out.append(f"{f}: row label {i} at y {y:.1f} ending at x {right:.1f}, its row at y {rows[i]:.1f} from x {p['left']:.1f}")
        for (i, *_), (x, y) in zip(p["keys"], p["xMarks"]):
            if abs(x - cols[i]) > 0.5 or not p["top"] - 2 <= y < p["top"]:
                out.append(f"{f}: column {i}'s mark at ({x:.1f}, {y:.1f}), its column at x {cols[i]:.1f}")
        for i, (x, y) in enumerate(p["yMarks"]):
            if abs(y - rows[i]) > 0.5 or not p["left"] - 2 <= x < p["left"]:
                out.append(f"{f}: row {i}'s mark at ({x:.1f}, {y:.1f}), its row at y {rows[i]:.1f}")
    return out


def test_place_check_can_fail():
    ok = {"fig": "fig-1", "n": 2, "cols": [110, 130], "rows": [110, 130], "row": 20, "left": 100, "top": 100,
          "keys": [[0, 110, 84], [1, 130, 84]], "queries": [[0, 111, 92], [1, 129, 92]],
          "xMarks": [[110, 99], [130, 99]], "yMarks": [[99, 110], [99, 130]]}
    assert place_problems([ok]) == []
    assert "column label 1" in place_problems([dict(ok, keys=[[0, 110, 84], [1, 132, 84]])])[0]  # a tenth of a column
    assert "column label 0" in place_problems([dict(ok, keys=[[0, 110, 104], [1, 130, 84]])])[0]  # over the grid
    assert "row label 0" in place_problems([dict(ok, queries=[[0, 118, 92], [1, 129, 92]])])[0]
    assert "row label 1" in place_problems([dict(ok, queries=[[0, 111, 92], [1, 129, 70]])])[0]  # far from its row
    assert "column 1's mark" in place_problems([dict(ok, xMarks=[[110, 99], [110, 99]])])[0]  # on a column, not its own
    assert "row 1's mark" in place_problems([dict(ok, yMarks=[[99, 110], [99, 131]])])[0]
    assert "row labels" in place_problems([dict(ok, queries=[[0, 111, 92]])])[0]


# Each figure's column labels moved as a reader would not see in their attributes: the groups'
# text-anchor, a CSS transform on the labels' SVG, the turn's pivot. Each must fail the check.
MISPLACE_JS = {
    "text-anchor": "() => document.querySelectorAll('.course-axis-keys').forEach(g => g.setAttribute('text-anchor', 'middle'))",
    "transform": "() => document.querySelectorAll('.course-axis-keys').forEach(g => { g.style.transform = 'translateX(2px)'; })",
    "pivot": """() => document.querySelectorAll('.course-axis-keys text').forEach(t => {
      t.setAttribute('transform', t.getAttribute('transform').replace(/,([-\\d.e]+)\\)$/, (m, y) => ',' + (+y - 6) + ')')); })""",
}


def test_labels_sit_at_their_columns_and_rows(course, server, open_site):
    """course.js draws the tokens along the axes and their tick marks, Plotly the cells: on every
    heatmap of the attention page, at a desktop and a phone width, each label and mark is at the
    centre of its column or row as Plotly's axes place it."""
    f1 = course_figure(course, "attention.html", **FIRST_HEATMAP)
    w = open_site()
    for width in (1280, 375):
        plots = every_heatmap(w, f"{server.base}/attention.html", width, LABEL_PLACES_JS)
        assert len(plots) >= 4 and all(p["n"] and p["keys"] for p in plots), plots
        assert place_problems(plots) == [], f"attention.html at {width} px"
    # a reader selecting the page copies its text, not the axes (Plotly's labels were not selectable either)
    copied = w.page.evaluate("(id) => { const s = getSelection(); s.selectAllChildren(document.getElementById(id)); return s.toString(); }", f1)
    assert "token (query)" not in copied and "looks at (key)" not in copied and "looks most at" in copied, copied[:300]
    for name, js in MISPLACE_JS.items():
        w.page.reload()
        w.page.evaluate(GRID_VIEW_JS)
        settle(w.page)
        w.page.evaluate(DRAW_ALL_JS)
        w.page.evaluate(js)
        problems = place_problems(w.page.evaluate(LABEL_PLACES_JS))
        assert any(p.startswith(f"{f1}: column label") for p in problems), f"{name}: moved labels pass the check: {problems[:3]}"
    assert not w.errors, w.errors
