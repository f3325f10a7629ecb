"""The reader's pages of the real course (the session's shared build, course_builds), in
Chromium: contrast of every chart line, marker and bar in both palettes, computed from the
colours the browser rendered; the one-file chapter's inlined (encoded) trace decoded to the
hosted page's numbers; axe with every table and every "All heads" open (what the default view
hides, axe does not see). Every heatmap legible at 375 and 1280 px: test_a11y.py, on its page
walks."""

from __future__ import annotations

import json

import pytest

from course_builds import FINITE_ANIMATIONS_DONE, settle

from .conftest import page_opener
from .figure_ids import course_figure
from .test_a11y import axe, print_and_judge

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Rendered colours -> WCAG contrast against what lies behind each element (its own background
# and its ancestors', alpha-blended down to the page). `probe` is a self-check of the arithmetic.
CONTRAST_JS = """() => {
  const parse = c => { const m = /rgba?\\(([^)]+)\\)/.exec(c || ''); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const over = (fg, bg) => ({r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a), b: fg.b * fg.a + bg.b * (1 - fg.a), a: 1});
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const behind = el => { const stack = []; for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor); if (c && c.a > 0) { stack.push(c); if (c.a >= 1) break; } }
    let bg = {r: 255, g: 255, b: 255, a: 1}; for (let i = stack.length - 1; i >= 0; i--) bg = over(stack[i], bg); return bg; };
  const marks = [], grid = [];
  const add = (list, fig, what, colour, bg, opacity = 1) => { const c = parse(colour); if (!c) return; c.a *= opacity;
    if (c.a > 0) list.push({fig, what, colour, opacity, ratio: ratio(over(c, bg), bg)}); };
  const stroke = p => [getComputedStyle(p).stroke, parseFloat(getComputedStyle(p).strokeOpacity)];
  const fill = p => [getComputedStyle(p).fill, parseFloat(getComputedStyle(p).fillOpacity)];
  document.querySelectorAll('.course-fig .js-plotly-plot').forEach(plot => {
    const fig = plot.closest('.course-fig').id, bg = behind(plot);
    plot.querySelectorAll('.scatterlayer .js-line, .legend .legendlines path').forEach(p => add(marks, fig, 'line', stroke(p)[0], bg, stroke(p)[1]));
    plot.querySelectorAll('.scatterlayer .point, .legend .legendpoints path').forEach(p => add(marks, fig, 'marker', fill(p)[0], bg, fill(p)[1]));
    plot.querySelectorAll('.gridlayer path').forEach(p => add(grid, fig, 'gridline', stroke(p)[0], bg, stroke(p)[1]));
  });
  document.querySelectorAll('.course-fig .course-bar').forEach(b =>
    add(marks, b.closest('.course-fig').id, 'bar', getComputedStyle(b).backgroundColor, behind(b.parentElement)));
  const page = behind(document.querySelector('.md-content') || document.body);
  return {marks, grid, scheme: document.body.getAttribute('data-md-color-scheme'),
          probe: ratio({r: 0, g: 34, b: 78, a: 1}, page)};
}"""
HEADS_DRAWN = "[...document.querySelectorAll('.course-heads:not([hidden])')].every(h => h.querySelector('button'))"
OPEN_EVERYTHING = """() => {
  document.querySelectorAll('button.course-table-toggle[aria-expanded=false]').forEach(b => b.click());
  document.querySelectorAll('button[data-action=heads][aria-expanded=false]').forEach(b => b.click());
  return document.querySelectorAll('.course-table-wrap:not([hidden]) table.course-table').length;
}"""


@pytest.mark.parametrize("scheme,expected", [("light", "default"), ("dark", "slate")])
def test_every_line_marker_and_bar_has_3_to_1_in_both_palettes(course, server, open_site, scheme, expected):
    w = open_site(color_scheme=scheme)
    got = {"marks": [], "grid": []}
    for rel in ("attention.html", "training.html"):  # the softmax bars; the training charts
        w.page.goto(f"{server.base}/{rel}")
        settle(w.page)
        for fig in w.page.locator(".course-fig[data-kind=training] .course-plot").all():
            fig.scroll_into_view_if_needed()
            fig.locator(".main-svg").first.wait_for(state="attached")
        one = w.page.evaluate(CONTRAST_JS)
        got.update(scheme=one["scheme"], probe=one["probe"])
        got["marks"] += [dict(m, page=rel) for m in one["marks"]]
        got["grid"] += [dict(g, page=rel) for g in one["grid"]]
    assert got["scheme"] == expected
    # the navy that vanished on slate is caught by this arithmetic (and passes on white)
    assert (got["probe"] < 3) == (scheme == "dark")
    kinds = {m["what"] for m in got["marks"]}
    assert {"line", "marker", "bar"} <= kinds, kinds
    low = [m for m in got["marks"] if m["ratio"] < 3]
    assert low == [], low
    # gridlines are quiet: they must not glare (the white lines on slate did)
    assert got["grid"], "no gridlines found"
    loud = [g for g in got["grid"] if g["ratio"] > 1.6]
    assert loud == [], loud
    assert not w.errors, w.errors


DECODED_JS = """async () => { await courseReady(); return traces.map(t => ({key: t.key, layers: t.layers.map(l => ({
  attnConcat: l.attnConcat, heads: l.heads.map(h => ({q: h.q, k: h.k, v: h.v, scores: h.scores, out: h.out, weights: h.weights,
  scaledMasked: h.scaledMasked.map(r => r.map(x => x === -Infinity ? null : x))}))}))})); }"""


def test_pages_decode_their_encoded_parts_to_the_store_loaders_numbers(course, browser):
    """The hosted page loads each figure's parts as encoded arrays (traces/<model>/<key>/<l>-<h>.js),
    the one-file chapter inlines the same parts; in both, course.js decodes every head of every
    trace to exactly the doubles the store's loader gives in Python (the numbers the renderer
    printed from), and the page weights to the renderer's 4-decimal ones."""
    from generator.store import codec as store_codec
    from generator.render.context import trace_weights

    site = course / "build" / "site"
    onefile = (site / "downloads" / "attention.html").read_text(encoding="utf-8")
    assert '"int16"' in onefile and "window.courseTraceParts" in onefile  # the encoded part, inlined
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        for url in (site / "attention.html", site / "downloads" / "attention.html"):
            w.goto(url.as_uri())
            got = w.page.evaluate(DECODED_JS)
            assert got and not w.errors, (url, w.errors)
            for t in got:
                folder = site / "assets" / "generated" / "traces" / "tiny"
                parts = folder / t["key"]  # the hosted parts (one a head, and weights.js) are encoded
                assert all('"int16"' in p.read_text(encoding="utf-8") for p in (parts / "0-0.js", parts / "weights.js"))
                path = folder / f"{t['key']}.json"
                trace = store_codec.decode(json.loads(path.read_text(encoding="utf-8")), path)
                page_weights = trace_weights(trace).tolist()  # (layer, head, query, key)
                for l, (gl, tl) in enumerate(zip(t["layers"], trace["layers"], strict=True)):
                    assert gl["attnConcat"] == tl["attnConcat"], (url.name, t["key"], l)
                    for h, (gh, th) in enumerate(zip(gl["heads"], tl["heads"], strict=True)):
                        for name in ("q", "k", "v", "scores", "scaledMasked", "out"):
                            assert gh[name] == th[name], (url.name, t["key"], l, h, name)
                        assert gh["weights"] == page_weights[l][h], (url.name, t["key"], l, h, "weights")


def test_axe_with_every_table_and_all_heads_open(course, server, open_site, capsys):
    # reduced motion: "All heads" scrolls to the heads it focuses at once, not smoothly while axe
    # reads where things are
    w = open_site(viewport={"width": 375, "height": 900}, reduced_motion="reduce")
    results = {}
    for rel in ("attention.html", "heads.html"):
        w.page.goto(f"{server.base}/{rel}")
        settle(w.page)
        assert w.page.evaluate(OPEN_EVERYTHING) > 0
        # every opened "All heads" has drawn its heads (their grids load first), then the page's
        # reflow and Material's colour transitions have ended: waited for, not timed (under load
        # a fixed wait is too short)
        w.page.wait_for_function(HEADS_DRAWN)
        w.page.wait_for_function(FINITE_ANIMATIONS_DONE)
        results[rel] = axe(w.page)
    print_and_judge(results, "axe with tables and all heads open, 375 px", capsys, w.errors)


def test_a_token_of_one_glyph_reads_as_a_token(course, server, open_site):
    """The summary of layer 3, head 4 on the heads page reads "·Lily looks most at , 0.25": the
    comma is a token, so it gets the chip's edge as every token in prose does (tables have cells)."""
    fig = course_figure(course, "heads.html", kind="attention", caption="The scoring text for previous-token heads")
    w = open_site()
    w.goto(f"{server.base}/heads.html#{fig}:layer=3,head=4")
    chips = w.page.evaluate("""() => [...document.querySelectorAll('.course-tok')].filter(t => t.getClientRects().length).map(t =>
      ({text: t.textContent, table: !!t.closest('table'), edge: /inset/.test(getComputedStyle(t).boxShadow) || getComputedStyle(t).boxShadow.includes('0px 0px 0px 1px')}))""")
    comma = [c for c in chips if c["text"] == "," and not c["table"]]
    assert comma, "no comma token in the page's prose or summaries"
    assert all(c["edge"] for c in chips if not c["table"]), [c for c in chips if not c["table"] and not c["edge"]][:5]
    assert not any(c["edge"] for c in chips if c["table"])
    assert w.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_figure_this_copy_could_not_compute_is_a_box_not_a_paragraph(course, server, open_site, scheme):
    w = open_site(color_scheme=scheme)
    w.goto(f"{server.base}/gpt2.html", wait_painted=False)
    boxes = w.page.evaluate("""() => [...document.querySelectorAll('.course-pending-box')].map(b => {
      const cs = getComputedStyle(b);
      return {border: parseFloat(cs.borderTopWidth), style: cs.borderTopStyle, padding: parseFloat(cs.paddingLeft),
              bg: cs.backgroundColor};
    })""")
    assert boxes, "gpt2.html has no pending figure in this build"
    assert all(b["border"] >= 1 and b["style"] != "none" and b["padding"] >= 8 and b["bg"] not in ("rgba(0, 0, 0, 0)", "transparent")
               for b in boxes), boxes
    assert w.errors == []


def test_a_glossary_terms_tooltip_reads_at_body_size(course, server, open_site):
    """Hovering a term shows its definition (Material's tooltip, from the abbr's title) at the
    prose's size and weight, not Material's 10 px bold (course-a11y.css)."""
    w = open_site()
    w.goto(f"{server.base}/attention.html")
    w.page.wait_for_function("window.document$ !== undefined")  # Material's bundle has run
    term = w.page.locator("article a.course-term abbr").first
    term.scroll_into_view_if_needed()
    term.hover()
    tip = w.page.locator(".md-tooltip2--active [class*=md-tooltip2__inner]")
    tip.wait_for(timeout=10000)
    style = tip.evaluate("""t => ({size: parseFloat(getComputedStyle(t).fontSize), weight: getComputedStyle(t).fontWeight,
        body: parseFloat(getComputedStyle(document.querySelector('article p')).fontSize), text: t.textContent.trim()})""")
    assert style["text"] and style["size"] >= 13 and style["size"] >= 0.85 * style["body"], style
    assert int(style["weight"]) <= 500, style
    assert w.errors == []


FOCUS = """() => { const a = document.activeElement; const b = a.getBoundingClientRect();
  return {inScoreboard: !!a.closest('.course-fig[data-kind=scoreboard]'), cls: a.className || '', tag: a.tagName,
          id: a.id || '', visible: b.width > 0 && b.height > 0 && b.left >= 0 && b.top >= 0 && b.bottom <= innerHeight + 1}; }"""  # + 1: the skip link grows as it takes the focus, after the scroll that shows it (0.4 px seen)


def test_the_scoreboard_is_skipped_in_one_key_press_and_shows_its_sort_state(course, server, open_site):
    """heads.html by keyboard: the scoreboard (4 patterns, each a ranking of 3 sort buttons and 16
    links and its example grid's controls) starts with a skip link, seen when it has the focus; Enter on it and one
    Tab reach the first stop after the scoreboard. Every sort button shows its state: the sorted
    column its arrow, the others that they can be sorted; a click on Score turns it over."""
    w = open_site()
    page = w.page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{server.base}/heads.html")
    settle(page)
    for presses in range(1, 200):
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS)
        if focus["inScoreboard"]:
            break
    assert "course-skip" in focus["cls"] and focus["visible"], focus
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    after = page.evaluate(FOCUS)
    assert not after["inScoreboard"], f"one Tab after the skip link is still in the scoreboard: {after}"
    marks = page.evaluate("""() => [...document.querySelector('.course-fig[data-kind=scoreboard] table.course-sortable').tHead.querySelectorAll('button[data-sort]')]
        .map(b => [b.dataset.sort, getComputedStyle(b, '::after').content])""")
    assert dict(marks)["score"].startswith('" ▼"') and all(m not in ("none", "normal", '""') for _, m in marks), marks
    table = page.locator(".course-fig[data-kind=scoreboard] table.course-sortable").first
    scores = lambda: [float(x) for x in table.locator("tbody tr td:nth-child(3)").all_inner_texts()]
    assert scores() == sorted(scores(), reverse=True)
    table.locator("button[data-sort=score]").click()
    assert scores() == sorted(scores()) and scores() != sorted(scores(), reverse=True)
    assert page.evaluate("getComputedStyle(document.querySelector('.course-fig[data-kind=scoreboard] table.course-sortable button[data-sort=score]'), '::after').content").startswith('" ▲"')
