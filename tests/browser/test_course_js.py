"""course.js in Chromium, on the harness page (tests/browser/harness.py): every expected number
and sentence here is computed in Python from the synthetic trace, independently of course.js."""

from __future__ import annotations

import math

import pytest

from generator.render import format as fmt

from course_builds import quiet

from . import harness

pytestmark = pytest.mark.browser

FIG1 = "#fig-1"


def texts(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.textContent)")


def table_texts(page, fig: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"{fig} table.course-table tbody tr",
        "rows => rows.map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent))",
    )


def state_of(page, fig: str) -> dict:
    return page.evaluate(
        "id => Object.fromEntries(['layer','head','token'].map(k => "
        "[k, +document.querySelector(id + ' select[data-control=' + k + ']').value]))",
        fig,
    )


def wait_state(page, fig: str, **expected):
    page.wait_for_function(
        "([id, exp]) => Object.entries(exp).every(([k, v]) => "
        "+document.querySelector(id + ' select[data-control=' + k + ']').value === v)",
        arg=[fig, expected],
    )


# ------------------------------------------------------------------ load


def test_loads_clean_and_offline(open_page, harness_url, scheme):
    """From file:// and from http://127.0.0.1: no console errors, nothing leaves the machine
    (the fixture asserts 0 external requests), Plotly painted, the course globals exist."""
    w = open_page()
    page = w.goto(harness_url(scheme))
    page.wait_for_function("document.querySelectorAll('.course-plot .main-svg').length >= 1")
    assert page.evaluate("typeof Plotly") == "object"
    assert page.evaluate("Array.isArray(traces) && trace === traces[0]")
    quiet(page)  # idle work (heavy parts) has run, and would have failed loudly
    assert w.errors == []
    assert w.dialogs == []
    assert w.external == []
    assert any(u.endswith("/assets/course.js") for u in w.requests)
    # figures below the fold are drawn when the page is idle, without scrolling (7 plots: two
    # attention figures, the two compare panels, the training curve, the scoreboard's two examples)
    page.wait_for_function("document.querySelectorAll('.course-plot .js-plotly-plot').length === 7")
    assert page.evaluate("scrollY") == 0
    # a pending figure is left alone
    assert page.evaluate(f"document.querySelector('{harness.PENDING_FIG}').__course") is None
    assert page.evaluate("traces.length") == 6


def test_first_grid_shows_trace_numbers(open_page, harness_url, harness_site):
    """The first figure's table, summary, top-3 list and Plotly data are the trace's numbers."""
    docs = harness_site[1]
    doc = docs["lily"]
    page = open_page().goto(harness_url())
    n = len(doc["tokens"])
    assert table_texts(page, FIG1) == harness.cell_texts(doc, 0, 0)
    assert page.text_content(f"{FIG1} .course-summary") == harness.summary_text(doc, 0, 0, n - 1)
    assert texts(page, f"{FIG1} .course-top3 li") == harness.top3_texts(doc, 0, 0)
    plot = page.evaluate(
        "() => { const gd = document.querySelector('#fig-1 .course-plot .js-plotly-plot');"
        " const t = gd.data[0]; return {z: t.z, text: t.text,"
        " ticks: [...document.querySelectorAll('#fig-1 .course-axis-keys text')].map(e => e.textContent),"
        " yrange: gd._fullLayout.yaxis.range, zmin: t.zmin, zmax: t.zmax, scale: t.colorscale,"
        " bar: gd.querySelectorAll('.course-colourbar-ticks text').length, hover: t.hovertext} }"
    )
    grid = doc["layers"][0]["heads"][0]["weights"]
    assert plot["z"] == [[w if j <= i else None for j, w in enumerate(row)] for i, row in enumerate(grid)]
    assert plot["text"][n - 1] == [f"{w:.2f}" for w in grid[n - 1]]
    assert plot["ticks"] == [t["display"] for t in doc["tokens"]]
    assert plot["yrange"][0] > plot["yrange"][1]  # reversed: the first token on top
    assert (plot["zmin"], plot["zmax"]) == (0, 1)
    assert [c for _, c in plot["scale"]] == list(fmt.CIVIDIS)
    assert plot["bar"] == 5  # 0, 0.25 .. 1
    assert plot["hover"][0][1] == "Lily cannot look ahead at ·wanted"
    assert plot["hover"][5][0] == f"·her → Lily: {grid[5][0]:.2f}"
    # the SVG shows the cell numbers
    shown = texts(page, f"{FIG1} .course-plot .heatmap-label text")
    assert f"{grid[n - 1][1]:.2f}" in shown


def test_picking_a_head_updates_everything(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    page = open_page().goto(harness_url())
    page.select_option(f"{FIG1} select[data-control=layer]", "2")
    page.select_option(f"{FIG1} select[data-control=head]", "1")
    n = len(doc["tokens"])
    expected = harness.summary_text(doc, 2, 1, n - 1)
    assert expected != harness.summary_text(doc, 0, 0, n - 1)
    page.wait_for_function("([s, t]) => document.querySelector(s).textContent === t",
                           arg=[f"{FIG1} .course-summary", expected])
    assert table_texts(page, FIG1) == harness.cell_texts(doc, 2, 1)
    assert texts(page, f"{FIG1} .course-top3 li") == harness.top3_texts(doc, 2, 1)
    grid = doc["layers"][2]["heads"][1]["weights"]
    z = page.evaluate("document.querySelector('#fig-1 .js-plotly-plot').data[0].z")
    assert z[n - 1] == grid[n - 1]
    # cell colours follow the shared rule
    bg = page.eval_on_selector(f"{FIG1} td[data-q='{n - 1}'][data-k='0']", "td => td.style.background")
    assert bg == harness.colour(grid[n - 1][0])
    # the state went into the URL (layer and head from 1, the token by its position, from 0)
    page.wait_for_function("h => location.hash === h", arg=f"#fig-1:layer=3,head=2,token={n - 1}")


def test_js_text_matches_reference_for_every_state(open_page, harness_url, harness_site):
    """Summary and top-3 for every layer/head/token of a trace with repeated tokens and an
    exactly uniform head (weights 0.125: Python rounds half to even, "0.12")."""
    doc = harness_site[1]["xss"]
    page = open_page().goto(harness_url())
    got = page.evaluate(
        """async () => {
          const out = [];
          const f = document.querySelector('#fig-2');
          for (let l = 0; l < 3; l++) for (let h = 0; h < 4; h++) for (let t = 0; t < 8; t++) {
            await course.setState('fig-2', {layer: l, head: h, token: t});
            out.push([l, h, t, f.querySelector('.course-summary').textContent,
                      t === 0 ? Array.from(f.querySelectorAll('.course-top3 li')).map(li => li.textContent) : null]);
          }
          return out;
        }"""
    )
    assert len(got) == 96
    for layer, head, tok, summary, top3 in got:
        assert summary == harness.summary_text(doc, layer, head, tok)
        if top3 is not None:
            assert top3 == harness.top3_texts(doc, layer, head)
    uniform = harness.top3_texts(doc, 0, 1)[7]
    assert "0.12" in uniform and "0.13" not in uniform


def test_js_numbers_are_pythons_for_ties_near_ties_and_the_rest(open_page, harness_url):
    """course.fmt writes what Python's f"{x:.{d}f}" writes (fmt.f2's rule): exact binary ties
    half to even, values a hair off a tie, big values past the quick path, and ordinary ones."""
    import random

    rng = random.Random(7)
    values = [k / 16 for k in range(-40, 41)] + [k / 1024 for k in range(0, 2048, 7)]
    values += [math.nextafter(k / 8, sign) for k in range(1, 20) for sign in (-math.inf, math.inf)]
    values += [2.675, 0.005, 0.015, 1.005, 2.0 ** 45 + 0.125, 2.0 ** 40 + 0.375, 1e6 + 0.125, 1e7 + 0.375, 2.0 ** 52 + 0.5, 123456789.125, -0.0]
    values += [rng.random() for _ in range(3000)] + [rng.uniform(-50, 50) for _ in range(1000)]
    page = open_page().goto(harness_url())
    for d in (0, 1, 2, 3):
        got = page.evaluate("([xs, d]) => xs.map(x => course.fmt(x, d))", [values, d])
        want = [f"{x:.{d}f}" for x in values]
        bad = [(x, g, w) for x, g, w in zip(values, got, want) if g != w]
        assert not bad, (d, bad[:5])


def test_hash_restores_state(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    w = open_page()
    page = w.goto(harness_url(hash="#fig-1:layer=3,head=3,token=3;fig-2:layer=2,head=4,token=7"))
    assert state_of(page, FIG1) == {"layer": 2, "head": 2, "token": 3}
    assert state_of(page, "#fig-2") == {"layer": 1, "head": 3, "token": 7}
    assert page.text_content(f"{FIG1} .course-summary") == harness.summary_text(doc, 2, 2, 3)
    assert page.get_attribute(f"{FIG1} tbody tr:nth-child(4)", "class") == "course-focus"
    # and on hashchange (a link on the page)
    page.evaluate("location.hash = '#fig-1:layer=1,head=4,token=1'")
    wait_state(page, FIG1, layer=0, head=3, token=1)
    assert page.text_content(f"{FIG1} .course-summary") == harness.summary_text(doc, 0, 3, 1)
    assert w.errors == []


def show_table(page, fig: str):
    """Press the figure's "Show as a table" (the table is one click away once the plot is drawn)."""
    page.click(f"{fig} button.course-table-toggle")
    page.locator(f"{fig} .course-table-wrap").first.wait_for(state="visible")


def test_clicking_a_table_row_or_plot_row_picks_the_token(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    page = open_page().goto(harness_url())
    show_table(page, FIG1)
    page.click(f"{FIG1} tbody tr:nth-child(3) th button.course-rowpick")
    wait_state(page, FIG1, token=2)
    assert page.text_content(f"{FIG1} .course-summary") == harness.summary_text(doc, 0, 0, 2)
    assert page.get_attribute(f"{FIG1} tbody tr:nth-child(3) .course-rowpick", "aria-pressed") == "true"
    # a data cell of row 2 also picks it
    page.click(f"{FIG1} td[data-q='1'][data-k='0']")
    wait_state(page, FIG1, token=1)
    # keyboard: focus the row button of row 5 and press Enter
    page.focus(f"{FIG1} tbody tr:nth-child(5) .course-rowpick")
    page.keyboard.press("Enter")
    wait_state(page, FIG1, token=4)
    # the plot: click the middle of row 4 (y reversed: first token on top)
    box = page.locator(f"{FIG1} .nsewdrag").first.bounding_box()
    n = len(doc["tokens"])
    page.mouse.click(box["x"] + box["width"] * 0.5 / n, box["y"] + box["height"] * 3.5 / n)
    wait_state(page, FIG1, token=3)
    shapes = page.evaluate("document.querySelector('#fig-1 .js-plotly-plot').layout.shapes")
    focus = [s for s in shapes if s["type"] == "rect"]
    assert len(focus) == 1 and (focus[0]["y0"], focus[0]["y1"]) == (2.5, 3.5)
    # the lines between the cells come first, so the focus row's outline is drawn over them
    assert [s["type"] for s in shapes] == ["path", "rect"]


def test_all_heads_opens_a_head(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    page = open_page().goto(harness_url())
    btn = f"{FIG1} button[data-action=heads]"
    assert page.get_attribute(btn, "aria-expanded") == "false"
    assert page.is_hidden(f"{FIG1} .course-heads")
    page.click(btn)
    # the small grids open once weights.js (every head's grid) is in: a load, not at once
    page.wait_for_function("([sel]) => document.querySelector(sel).getAttribute('aria-expanded') === 'true'", arg=[btn])
    minis = page.locator(f"{FIG1} button.course-mini")
    assert minis.count() == 3 * 4
    assert page.evaluate("document.querySelector('#fig-1 .course-plot .course-mini')") is None  # no Plotly in minis
    label = page.get_attribute(f"{FIG1} button.course-mini[data-layer='1'][data-head='2']", "aria-label")
    assert label == harness.mini_label(doc, 1, 2, 5)
    page.click(f"{FIG1} button.course-mini[data-layer='1'][data-head='2']")
    wait_state(page, FIG1, layer=1, head=2)
    assert page.text_content(f"{FIG1} .course-summary") == harness.summary_text(doc, 1, 2, 5)
    assert page.get_attribute(f"{FIG1} button.course-mini[data-layer='1'][data-head='2']", "aria-pressed") == "true"
    # keyboard: arrows move between heads, Enter opens
    page.focus(f"{FIG1} button.course-mini[data-layer='1'][data-head='2']")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("[document.activeElement.dataset.layer, document.activeElement.dataset.head]") == ["2", "3"]
    page.keyboard.press("Enter")
    wait_state(page, FIG1, layer=2, head=3)
    page.click(btn)
    assert page.is_hidden(f"{FIG1} .course-heads")


def test_focus_is_visible(open_page, harness_url):
    page = open_page().goto(harness_url())
    page.focus(f"{FIG1} select[data-control=token]")
    page.keyboard.press("Tab")  # keyboard focus -> :focus-visible
    style = page.evaluate("(() => { const s = getComputedStyle(document.activeElement);"
                          " return [document.activeElement.dataset.control, s.outlineStyle, s.outlineWidth]; })()")
    assert style[0] == "layer"
    assert style[1] == "solid" and float(style[2].rstrip("px")) >= 2


def test_compare_shares_the_picker_and_diffs(open_page, harness_url, harness_site):
    a, b = harness_site[1]["cmpa"], harness_site[1]["cmpb"]
    page = open_page().goto(harness_url())
    fig = "#fig-3"
    page.select_option(f"{fig} select[data-control=head]", "2")
    page.select_option(f"{fig} select[data-control=token]", "3")
    panels = page.locator(f"{fig} .course-panel .course-summary")
    page.wait_for_function("t => document.querySelector('#fig-3 .course-panel .course-summary').textContent === t",
                           arg=harness.summary_text(a, 0, 2, 3))
    # A's " down" has no partner in B: B shows the partner of the token before it, its " sat"
    assert panels.nth(1).text_content() == harness.summary_text(b, 0, 2, 2)
    rows = page.eval_on_selector_all(f"{fig} .course-diff tbody tr",
                                     "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent))")
    ra, rb = a["layers"][0]["heads"][2]["weights"][3], b["layers"][0]["heads"][2]["weights"][2]
    expected = []
    for p in range(4):
        d = float(f"{rb[p]:.2f}") - float(f"{ra[p]:.2f}") if p <= 2 else None  # of the weights as shown
        ds = "–" if d is None else ("0.00" if f"{abs(d):.2f}" == "0.00" else f"{d:+.2f}".replace("-", "\u2212"))
        expected.append([str(p) if p <= 2 else f"{p} / –", a["tokens"][p]["display"], f"{ra[p]:.2f}",  # positions count from 0
                         b["tokens"][p]["display"] if p <= 2 else "–", f"{rb[p]:.2f}" if p <= 2 else "–", ds])
    assert rows == expected
    assert page.evaluate("traces.length") == 6  # 2 attention figures, 2 compare sentences, 2 scoreboard examples; not the pending one
    assert page.evaluate("traces[2].text") == a["text"]


# ------------------------------------------------------------------ other widgets


def test_stepper_next_back_and_keyboard(open_page, harness_url):
    page = open_page().goto(harness_url())
    fig = "#fig-4"
    status = f"{fig} .course-step-status"
    visible = lambda: page.evaluate(  # noqa: E731  (the other steps keep their place in the grid, unseen)
        "Array.from(document.querySelectorAll('#fig-4 .course-step'))"
        ".map(li => li.offsetParent !== null && getComputedStyle(li).visibility === 'visible')")
    assert page.text_content(status) == "Step 1 of 5"
    assert page.get_attribute(status, "aria-live") == "polite"
    assert visible() == [True, False, False, False, False]
    assert page.get_attribute(f"{fig} button[data-action=back]", "aria-disabled") == "true"
    page.click(f"{fig} button[data-action=next]")
    page.click(f"{fig} button[data-action=next]")
    assert page.text_content(status) == "Step 3 of 5"
    assert visible() == [False, False, True, False, False]
    page.click(f"{fig} button[data-action=back]")
    assert page.text_content(status) == "Step 2 of 5"
    page.focus(f"{fig} button[data-action=next]")
    for _ in range(5):
        page.keyboard.press("Enter")
    assert page.text_content(status) == "Step 5 of 5"
    assert page.get_attribute(f"{fig} button[data-action=next]", "aria-disabled") == "true"
    assert page.evaluate("document.activeElement.dataset.action") == "next"  # focus not lost
    page.keyboard.press("ArrowLeft")
    assert page.text_content(status) == "Step 4 of 5"
    page.emulate_media(media="print")
    assert visible() == [True] * 5


def test_print_shows_tables_tabs_and_steps_not_plots(open_page, harness_url):
    page = open_page().goto(harness_url())
    page.emulate_media(media="print")
    shown = page.evaluate("""() => {
      const vis = s => Array.from(document.querySelectorAll(s)).map(e => getComputedStyle(e).display !== 'none');
      return {plots: vis('.course-plot'), tables: vis('table.course-table'), blocks: vis('.tabbed-block'),
              controls: vis('.course-controls'), steps: vis('.course-step'),
              label: getComputedStyle(document.querySelectorAll('.tabbed-block')[1], '::before').content};
    }""")
    assert not any(shown["plots"])
    assert all(shown["tables"]) and all(shown["blocks"]) and all(shown["steps"])
    assert not any(shown["controls"])
    assert shown["label"] == '"Code"'


def test_softmax_widget_updates_live(open_page, harness_url):
    page = open_page().goto(harness_url())
    fig = "#fig-5"
    outs = lambda: texts(page, f"{fig} output.course-weight")  # noqa: E731
    assert outs() == [f"{w:.3f}" for w in harness.softmax(harness.SOFTMAX_SCORES)]
    page.fill(f"{fig} input[data-score='0']", "3.5")
    page.fill(f"{fig} input[data-score='2']", "-1")
    expected = harness.softmax([3.5, 1.0, -1.0])
    assert outs() == [f"{w:.3f}" for w in expected]
    width = page.eval_on_selector(f"{fig} .course-bar[data-i='0']", "b => b.style.width")
    assert width == f"{expected[0] * 100:.1f}%"
    # not a number: left out, marked invalid, the rest normalised among themselves
    page.fill(f"{fig} input[data-score='1']", "")
    assert page.get_attribute(f"{fig} input[data-score='1']", "aria-invalid") == "true"
    rest = harness.softmax([3.5, -1.0])
    assert outs() == [f"{rest[0]:.3f}", "–", f"{rest[1]:.3f}"]
    assert page.text_content(f"{fig} .course-softmax-status") == "The score for \u201cplay\u201d is empty, so it is left out."
    page.type(f"{fig} input[data-score='1']", "2")
    assert page.get_attribute(f"{fig} input[data-score='1']", "aria-invalid") is None
    assert outs() == [f"{w:.3f}" for w in harness.softmax([3.5, 2.0, -1.0])]
    page.fill(f"{fig} input[data-score='0']", "1e6")  # huge scores stay finite
    assert outs()[0] == "1.000"


def test_scoreboard_sorts_and_links(open_page, harness_url, harness_site):
    """The renderer's scoreboard among the other figures: its tables sort, and a row's link opens
    that head in the kind's example figure, whose summary is the reference reading of its trace."""
    docs = harness_site[1]
    board = docs["board"]
    page = open_page().goto(harness_url())
    fig = harness.SCOREBOARD_FIG
    sec = f'{fig} section[data-score="induction"]'
    col = lambda i: page.eval_on_selector_all(  # noqa: E731
        f"{sec} table.course-sortable tbody tr", f"rs => rs.map(r => r.cells[{i}].textContent)")
    sort = lambda k: page.click(f"{sec} button[data-sort={k}]")  # noqa: E731
    aria = lambda k: page.eval_on_selector(f"{sec} button[data-sort={k}]", "b => b.closest('th').getAttribute('aria-sort')")  # noqa: E731
    scores = [f"{v:.2f}" for _, _, v in sorted(board.ranked("induction"), key=lambda r: -r[2])]
    assert len(scores) == 3 * 4 and len(set(scores)) > 1
    assert col(2) == scores and aria("score") == "descending"  # as rendered: highest first
    sort("score")
    assert col(2) == sorted(scores, key=float) and aria("score") == "ascending"
    sort("score")
    assert col(2) == sorted(scores, key=float, reverse=True) and aria("score") == "descending"
    sort("layer")
    assert col(0) == sorted(col(0), key=int) and aria("layer") == "ascending" and aria("score") == "none"
    # a row links to that head in the example figure of its kind (not the head it opened on)
    example = "#" + page.eval_on_selector(f"{fig} > script.course-data", "s => JSON.parse(s.textContent).examples.induction")
    assert example not in (FIG1, fig)
    layer, head, _ = board.ranked("induction")[5]
    doc = docs["traces"][page.get_attribute(example, "data-trace-key")]
    token = int(page.get_attribute(example, "data-token"))
    page.click(f'{sec} a[href="{example}:layer={layer + 1},head={head + 1}"]')
    wait_state(page, example, layer=layer, head=head)
    assert page.text_content(f"{example} .course-summary") == harness.summary_text(doc, layer, head, token)
    page.wait_for_function(  # scrolled to it (smoothly, so wait for it)
        "id => { const t = document.querySelector(id).getBoundingClientRect().top; return t > -5 && t < 200; }", arg=example)


def test_training_curve_is_plotted(open_page, harness_url):
    page = open_page().goto(harness_url())
    fig = harness.TRAINING_FIG
    page.locator(fig).scroll_into_view_if_needed()
    page.wait_for_function("id => document.querySelector(id + ' .js-plotly-plot') && "
                           "document.querySelector(id + ' .js-plotly-plot').data.length === 2", arg=fig)
    names = page.evaluate("id => document.querySelector(id + ' .js-plotly-plot').data.map(t => t.name)", fig)
    assert names == ["training batches", "validation"]


# ------------------------------------------------------------------ console API and heavy parts


def test_console_api(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    page = open_page().goto(harness_url())
    # the page holds only the shown head's grid; the others come with the heavy part (courseReady)
    assert page.evaluate("async () => { await courseReady(); return trace.layers[2].heads[2].weights; }") \
        == doc["layers"][2]["heads"][2]["weights"]
    got = page.evaluate("softmax([1, 0, 0])")
    e = math.e
    assert got == pytest.approx([e / (e + 2), 1 / (e + 2), 1 / (e + 2)], abs=1e-12)
    assert page.evaluate("softmax([0, -Infinity])") == [1, 0]
    assert page.evaluate("[trace.text, trace.tokens.length, trace.meta.nLayer]") == [doc["text"], 6, 3]


def test_heavy_parts_load(open_page, harness_url, harness_site, scheme):
    doc = harness_site[1]["lily"]
    page = open_page().goto(harness_url(scheme))
    got = page.evaluate("""async () => {
      await courseReady();
      const h = trace.layers[0].heads[0];
      return {q: h.q.length, dim: h.q[0].length, sm: h.scaledMasked[0][1], sm0: h.scaledMasked[1][0],
              out: h.out.length, concat: trace.layers[0].attnConcat[0].length, all: traces.every(t => t.layers[0].heads[0].q)};
    }""")
    head = doc["layers"][0]["heads"][0]
    assert got == {"q": 6, "dim": 4, "sm": float("-inf"), "sm0": head["scaledMasked"][1][0],
                   "out": 6, "concat": 16, "all": True}


def test_code_tab_loads_parts_at_once(open_page, harness_url):
    """With the idle load off (lazy.html), opening the tab labelled "Code" loads the parts."""
    w = open_page()
    page = w.goto(harness_url(page="lazy.html"))
    # the page set up (under load that can take longer than the wait below), then time for an idle load
    page.wait_for_function("typeof trace !== 'undefined' && window.course && window.course.paintedAt !== null")
    quiet(page)  # every idle callback has run: an idle load would have happened by now
    assert page.evaluate("trace.layers[0].heads[0].q === undefined")
    assert not any(u.endswith(".js") and "/traces/" in u for u in w.requests)
    page.click("label[for=__tabbed_1_2]")
    # every head's part: each arrives on its own, so wait for the last one read here too
    page.wait_for_function("Array.isArray(trace.layers[0].heads[0].q) && Array.isArray(trace.layers[1].heads[3].k)")
    assert page.evaluate("trace.layers[1].heads[3].k.length") == 6


# ------------------------------------------------------------------ safety and layout


def test_injected_token_never_executes(open_page, harness_url, harness_site, scheme):
    w = open_page()
    page = w.goto(harness_url(scheme))
    page.locator("#fig-2").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#fig-2 .js-plotly-plot')")
    page.click("#fig-2 button[data-action=heads]")
    page.locator("#fig-2 .course-heads").wait_for(state="visible")  # the small grids, once weights.js is in
    page.select_option("#fig-2 select[data-control=token]", "2")
    page.hover("#fig-2 .nsewdrag")
    quiet(page)  # the hover's redraw and tooltip have run
    assert page.evaluate("window.__pwned") is None
    assert w.dialogs == []
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('#fig-2 b').length") == 0
    # the token is shown as text, everywhere
    assert harness.XSS in page.text_content("#fig-2 thead")
    assert harness.XSS in page.text_content("#fig-2 .course-summary")
    # long tick labels are shortened: to 10 characters in a box under 560 px (course.js
    # HEATMAP.narrowTickChars), else to 14 (tickChars; since issue 46 the plot beside its top-3
    # list is as wide as its cells of up to 72 px make it)
    plot_width = page.evaluate("document.querySelector('#fig-2 .course-plot').getBoundingClientRect().width")
    keep = 10 if plot_width < 560 else 14
    ticks = texts(page, "#fig-2 .course-axis-keys text")
    assert harness.XSS[:keep - 1] + "…" in ticks and "·<b>" in ticks
    # the hover label shows the whole token as text
    box = page.locator("#fig-2 .nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 2.5 / 8, box["y"] + box["height"] * 2.5 / 8)
    page.wait_for_selector("#fig-2 .hoverlayer .hovertext")
    hover = page.text_content("#fig-2 .hoverlayer .hovertext")
    assert hover.startswith(f"{harness.XSS} → {harness.XSS}: ")
    assert w.errors == []


def test_injected_token_ticks_in_a_wide_box(open_page, harness_url):
    """Under 640 px the top-3 list goes under the plot, whose box (here 588 px, over 560) keeps
    14 characters of a tick label (course.js HEATMAP.tickChars); the token stays text."""
    w = open_page(viewport={"width": 620, "height": 800})
    page = w.goto(harness_url())
    page.locator("#fig-2").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#fig-2 .course-axis-keys text')")
    assert page.evaluate("document.querySelector('#fig-2 .course-plot').getBoundingClientRect().width") >= 560
    ticks = texts(page, "#fig-2 .course-axis-keys text")
    assert harness.XSS[:13] + "…" in ticks and "·<b>" in ticks
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert w.errors == []


def test_narrow_viewport_scrolls_never_squashes(open_page, harness_url):
    page = open_page(viewport={"width": 320, "height": 700}).goto(harness_url())
    show_table(page, "#fig-2")
    got = page.evaluate("""() => {
      const wrap = document.querySelector('#fig-2 .course-table-wrap');
      const plot = document.querySelector('#fig-1 .course-plot');
      const td = document.querySelector('#fig-2 td[data-q="7"][data-k="7"]');
      return {doc: document.documentElement.scrollWidth, wrapScroll: wrap.scrollWidth > wrap.clientWidth,
              wrapOverflow: getComputedStyle(wrap).overflowX, plotOverflow: getComputedStyle(plot).overflowX,
              plotInner: plot.firstElementChild.getBoundingClientRect().width,
              plotWidth: plot.querySelector('.js-plotly-plot')._fullLayout.width, cell: td.getBoundingClientRect().width};
    }""")
    assert got["doc"] <= 320
    assert got["wrapScroll"] and got["wrapOverflow"] == "auto"
    assert got["plotOverflow"] == "auto"
    # the grid fits the width until a cell would be under 12 px, then scrolls inside its box
    assert got["plotInner"] <= 320 and got["plotWidth"] == got["plotInner"]
    assert got["cell"] >= 28


def test_reduced_motion(open_page, harness_url):
    page = open_page(reduced_motion="reduce").goto(harness_url())
    t = page.eval_on_selector("#fig-5 .course-bar", "b => getComputedStyle(b).transitionDuration")
    assert t == "0s"
