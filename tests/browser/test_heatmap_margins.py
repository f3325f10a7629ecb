"""The heatmaps' margins, measured by course.js, not by Plotly: on every attention heatmap of the
real course, at a desktop and two phone widths, Plotly keeps the margins course.js gave it (it
did not push one and draw the plot a second time, which cost 30-45 ms of the first paint), and
every tick label and axis title still lies inside the plot, off the grid."""

from __future__ import annotations

import pytest

from generator.bench.browser import DRAW_ALL_JS
from course_builds import settle


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
      labels: [...d.querySelectorAll('.course-axis-labels text')]
        .filter(t => t.textContent).map(t => Object.assign({text: t.textContent}, rel(t.getBoundingClientRect()))),
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
    for fig in ("fig-1", "fig-5"):  # 7 and 15 tokens
        w.page.locator(f"#{fig} .course-plot").scroll_into_view_if_needed()
        w.page.locator(f"#{fig} .course-plot .main-svg").first.wait_for(state="attached")
        geom = w.page.evaluate(LONG_LABELS_JS, [fig, "·extraordinary"])
        plots = [p for p in w.page.evaluate(MARGINS_JS) if p["fig"] == fig]
        assert plots and margin_problems(plots[:1]) == [], (fig, width, geom)
        assert sum(t["text"].startswith("·extraord") for t in plots[0]["labels"]) >= 4  # (repeated: with their positions)
    assert not w.errors, w.errors


# Per attention heatmap: where Plotly put each column's and row's centre (its axes' own mapping,
# l2p), and where course.js drew each label and tick mark (axis-labels.js), in the plot's px.
LABEL_PLACES_JS = """() => [...document.querySelectorAll('.course-plot-inner')].filter(d => d._fullLayout && d._fullLayout.xaxis.side === 'top').map(d => {
  const L = d._fullLayout, box = d.getBoundingClientRect(), n = d.querySelectorAll('.course-axis-queries text').length;
  const mid = t => { const r = t.getBoundingClientRect(); return (r.top + r.bottom) / 2 - box.top; };
  const marks = [...(d.querySelector('.course-axis-marks').getAttribute('d') || '').matchAll(/M([-\\d.e]+),([-\\d.e]+)([hv])/g)];
  const cols = [], rows = [];
  for (let i = 0; i < n; i++) { cols.push(L._size.l + L.xaxis.l2p(i)); rows.push(L._size.t + L.yaxis.l2p(i)); }
  return {fig: d.closest('figure').id, n, cols, rows, row: L._size.h / Math.max(1, n),
    keys: [...d.querySelectorAll('.course-axis-keys text')].map(t => [+t.dataset.i, +t.getAttribute('x')]),
    queries: [...d.querySelectorAll('.course-axis-queries text')].map(t => [+t.dataset.i, mid(t)]),
    xMarks: marks.filter(m => m[3] === 'v').map(m => +m[1]), yMarks: marks.filter(m => m[3] === 'h').map(m => +m[2])};
})"""


def place_problems(plots: list[dict]) -> list[str]:
    """Labels and tick marks that are not at Plotly's columns and rows: a column label or mark
    off its column's centre, a row label more than a quarter of a row off its row's centre (its
    box, as drawn), a row mark off it, or a row without its label and mark."""
    out = []
    for p in plots:
        f, cols, rows = p["fig"], p["cols"], p["rows"]
        if len(p["queries"]) != len(rows) or len(p["yMarks"]) != len(rows) or len(p["xMarks"]) != len(p["keys"]):
            out.append(f"{f}: {len(p['queries'])} row labels and {len(p['yMarks'])} row marks for {len(rows)} rows")
            continue
        out += [f"{f}: column label {i} at x {x:.1f}, its column at {cols[i]:.1f}" for i, x in p["keys"] if abs(x - cols[i]) > 0.5]
        out += [f"{f}: row label {i} at y {y:.1f}, its row at {rows[i]:.1f}" for i, y in p["queries"] if abs(y - rows[i]) > p["row"] / 4]
        out += [f"{f}: a column mark at x {x:.1f}, on no column" for x in p["xMarks"] if min(abs(x - c) for c in cols) > 0.5]
        out += [f"{f}: row mark {i} at y {y:.1f}, its row at {rows[i]:.1f}" for i, y in enumerate(p["yMarks"]) if abs(y - rows[i]) > 0.5]
    return out


def test_place_check_can_fail():
    ok = {"fig": "fig-1", "n": 2, "cols": [10, 30], "rows": [110, 130], "row": 20, "keys": [[0, 10], [1, 30]],
          "queries": [[0, 111], [1, 129]], "xMarks": [10, 30], "yMarks": [110, 130]}
    assert place_problems([ok]) == []
    assert "column label 1" in place_problems([dict(ok, keys=[[0, 10], [1, 34]])])[0]
    assert "row label 0" in place_problems([dict(ok, queries=[[0, 118], [1, 130]])])[0]
    assert "on no column" in place_problems([dict(ok, xMarks=[10, 20])])[0]
    assert "row mark 1" in place_problems([dict(ok, yMarks=[110, 131])])[0]
    assert "row labels" in place_problems([dict(ok, queries=[[0, 111]])])[0]


def test_labels_sit_at_their_columns_and_rows(course, server, open_site):
    """course.js draws the tokens along the axes and their tick marks, Plotly the cells: on every
    heatmap of the attention page, at a desktop and a phone width, each label and mark is at the
    centre of its column or row as Plotly's axes place it."""
    w = open_site()
    for width in (1280, 375):
        plots = every_heatmap(w, f"{server.base}/attention.html", width, LABEL_PLACES_JS)
        assert len(plots) >= 4 and all(p["n"] and p["keys"] for p in plots), plots
        assert place_problems(plots) == [], f"attention.html at {width} px"
    assert not w.errors, w.errors
