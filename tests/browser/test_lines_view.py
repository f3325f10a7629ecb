"""The lines view of attention (issue 29, item 14), in Chromium on the session's shared course
build: tokens in two columns, one line per (query, key) pair whose opacity is the weight the
trace holds, chosen with Grid / Lines among the figure's pickers; the pickers, the address and
the keyboard drive it; it is the default on a phone for a long sentence, and it prints within the
page."""

from __future__ import annotations

import json

import pytest

from course_builds import quiet

from .figure_ids import FIRST_HEATMAP, REPEATED_WORDS, course_figure

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def long_fig(course) -> str:
    """attention.html's figure of one head on 15 tokens (the repeated-words sentence)."""
    return course_figure(course, "attention.html", **REPEATED_WORDS)


# every line of a figure's lines view: its pair and its opacity
LINES = """id => [...document.querySelectorAll('#' + id + ' .course-lines line')].map(l => ({
  q: +l.getAttribute('data-q'), k: +l.getAttribute('data-k'), w: parseFloat(l.getAttribute('stroke-opacity')),
  focus: l.parentNode.classList.contains('course-lines-focus')}))"""

VIEW = """id => { const f = document.getElementById(id), svg = f.querySelector('.course-lines-svg'),
  plot = f.querySelector('.course-plot'), r = svg && svg.getBoundingClientRect();
  const opts = svg ? [...svg.querySelectorAll('[role=option]')] : [];
  return {lines: !!svg && svg.getClientRects().length > 0, grid: plot.getClientRects().length > 0,
    pressed: [...f.querySelectorAll('.course-viewswitch button')].map(b => [b.textContent, b.getAttribute('aria-pressed')]),
    selected: opts.filter(o => o.getAttribute('aria-selected') === 'true').map(o => +o.getAttribute('data-q')),
    tabbable: opts.filter(o => o.getAttribute('tabindex') === '0').map(o => +o.getAttribute('data-q')),
    token: +f.querySelector('select[data-control=token]').value,
    layer: +f.querySelector('select[data-control=layer]').value, head: +f.querySelector('select[data-control=head]').value,
    box: r ? [r.left, r.right, r.width, r.height] : null}; }"""


def trace_weights_of(course, page, fig: str):
    """(layer, head, query, key) weights of the figure's trace, as the store's loader reads the
    trace file the build wrote (the numbers the renderer printed its table from)."""
    from generator.render.context import trace_weights
    from generator.store import codec as store_codec

    key = page.get_attribute(f"#{fig}", "data-trace-key")
    path = course / "build" / "site" / "assets" / "generated" / "traces" / "tiny" / f"{key}.json"
    return trace_weights(store_codec.decode(json.loads(path.read_text(encoding="utf-8")), path)).tolist()


def check_lines(page, fig: str, weights, layer: int, head: int, token: int):
    lines = page.evaluate(LINES, fig)
    n = len(weights[layer][head])
    pairs = sorted((x["q"], x["k"]) for x in lines)
    assert pairs == [(q, k) for q in range(n) for k in range(q + 1)], f"{fig}: {len(lines)} lines for {n} tokens"
    for x in lines:
        want = weights[layer][head][x["q"]][x["k"]]
        assert abs(x["w"] - want) < 1e-9, (fig, layer, head, x, want)
    assert {x["q"] for x in lines if x["focus"]} == {token}


def wait_view(page, fig: str, lines: bool):
    page.wait_for_function("([id, on]) => { const s = document.querySelector('#' + id + ' .course-lines-svg');"
                           " return on ? !!s && s.getClientRects().length > 0 : !s || !s.getClientRects().length; }",
                           arg=[fig, lines])


def test_lines_view_draws_every_pair_at_its_weight_and_follows_the_pickers_and_the_address(course, long_fig, server, open_site):
    w = open_site()
    page = w.goto(f"{server.base}/attention.html")
    weights = trace_weights_of(course, page, long_fig)
    page.locator(f"#{long_fig}").scroll_into_view_if_needed()
    v = page.evaluate(VIEW, long_fig)
    assert not v["lines"] and v["pressed"] == [["Grid", "true"], ["Lines", "false"]], v  # a wide screen opens the grid
    page.click(f"#{long_fig} .course-viewswitch button:has-text('Lines')")
    wait_view(page, long_fig, True)
    v = page.evaluate(VIEW, long_fig)
    assert v["lines"] and not v["grid"] and v["pressed"] == [["Grid", "false"], ["Lines", "true"]], v
    assert v["selected"] == [v["token"]] and v["tabbable"] == [v["token"]], v
    check_lines(page, long_fig, weights, v["layer"], v["head"], v["token"])
    # the pickers drive it: another head, another token
    page.select_option(f"#{long_fig} select[data-control=head]", "1")
    page.select_option(f"#{long_fig} select[data-control=layer]", "2")
    page.select_option(f"#{long_fig} select[data-control=token]", "7")
    page.wait_for_function("id => document.querySelector('#' + id + ' .course-lines-tok[aria-selected=true]').getAttribute('data-q') === '7'", arg=long_fig)
    check_lines(page, long_fig, weights, 2, 1, 7)
    # the text alternative: the drawing is labelled, each token says what it looks at, as the list does
    alt = page.evaluate("""id => { const f = document.getElementById(id);
      return {label: f.querySelector('.course-lines-svg').getAttribute('aria-label'),
        option: f.querySelector('.course-lines-tok[aria-selected=true]').getAttribute('aria-label'),
        summary: f.querySelector('.course-summary').textContent, table: !!f.querySelector('button.course-table-toggle')}; }""", long_fig)
    assert "weight" in alt["label"] and alt["table"], alt
    assert alt["summary"].endswith(alt["option"].split(" looks most at ", 1)[1] + "."), alt
    # the address says the view, and a link opens it
    page.wait_for_function("id => location.hash === '#' + id + ':layer=3,head=2,token=7,view=lines'", arg=long_fig)
    # a new document, not a same-page hash change: the link is opened as a reader opens it
    page.goto("about:blank")
    page.goto(f"{server.base}/attention.html#{long_fig}:layer=2,head=3,token=4,view=lines")
    page.wait_for_function("window.course && window.course.paintedAt !== null")
    wait_view(page, long_fig, True)
    # the head's part loads first; the state is drawn once it is in
    page.wait_for_function("id => document.querySelector('#' + id + ' .course-lines-tok[aria-selected=true]')"
                           ".getAttribute('data-q') === '4'", arg=long_fig)
    v = page.evaluate(VIEW, long_fig)
    assert (v["layer"], v["head"], v["token"]) == (1, 2, 4) and not v["grid"], v
    check_lines(page, long_fig, weights, 1, 2, 4)
    # Grid brings the heatmap back, drawn for the same state
    page.click(f"#{long_fig} .course-viewswitch button:has-text('Grid')")
    wait_view(page, long_fig, False)
    page.locator(f"#{long_fig} .course-plot .main-svg").first.wait_for(state="visible")
    shown = page.evaluate("id => document.querySelector('#' + id + ' .course-summary').textContent", long_fig)
    assert shown.startswith("In layer 2, head 3, "), shown
    assert w.errors == []


def test_lines_view_by_keyboard(course, long_fig, server, open_site):
    w = open_site()
    page = w.goto(f"{server.base}/attention.html#{long_fig}:layer=4,head=4,token=10,view=lines")
    wait_view(page, long_fig, True)
    # one tab stop past the switch: the chosen token
    page.focus(f"#{long_fig} .course-viewswitch button:has-text('Lines')")
    page.keyboard.press("Tab")
    focused = page.evaluate("() => { const a = document.activeElement; return [a.getAttribute('role'), a.getAttribute('data-q'), a.getAttribute('aria-selected')]; }")
    assert focused == ["option", "10", "true"], focused
    # its focus is seen: the box round the token has a stroke
    ring = page.evaluate("() => getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth")
    assert ring not in ("0px", "0", ""), ring
    page.keyboard.press("ArrowUp")
    page.wait_for_function("id => document.querySelector('#' + id + ' select[data-control=token]').value === '9'", arg=long_fig)
    page.keyboard.press("ArrowUp")
    page.wait_for_function("id => document.querySelector('#' + id + ' select[data-control=token]').value === '8'", arg=long_fig)
    state = page.evaluate("""id => { const a = document.activeElement, f = document.getElementById(id);
      const g = f.querySelector('.course-lines-focus'), line = g.querySelector('line');
      return {q: a.getAttribute('data-q'), group: g.getAttribute('data-q'), stroke: getComputedStyle(line).stroke,
        other: getComputedStyle(f.querySelector('.course-lines-q:not(.course-lines-focus)')).opacity,
        mine: getComputedStyle(g).opacity, summary: f.querySelector('.course-summary').textContent}; }""", long_fig)
    assert state["q"] == "8" and state["group"] == "8", state
    assert float(state["mine"]) == 1 and float(state["other"]) < 0.5, state  # its lines stand out
    assert state["stroke"] in ("rgb(200, 0, 106)",), state  # the focus colour (course.css --course-focus)
    page.keyboard.press("End")
    page.wait_for_function("id => document.querySelector('#' + id + ' select[data-control=token]').value === '14'", arg=long_fig)
    page.keyboard.press("Home")
    page.wait_for_function("id => document.querySelector('#' + id + ' select[data-control=token]').value === '0'", arg=long_fig)
    assert w.errors == []


def test_lines_view_is_the_default_on_a_phone_for_a_long_sentence(course, long_fig, server, open_site):
    w = open_site(viewport={"width": 375, "height": 800})
    page = w.goto(f"{server.base}/attention.html")
    weights = trace_weights_of(course, page, long_fig)
    # the figures shown (the last compare figure waits in a closed tab): the token count decides the view
    n_tokens = page.evaluate("() => Object.fromEntries(course.figures.filter(f => f.views && f.el.getClientRects().length).map(f => [f.id, f.maxTokens]))")
    assert n_tokens[long_fig] == 15 and n_tokens[course_figure(course, "attention.html", **FIRST_HEATMAP)] <= 12, n_tokens
    for fig, n in n_tokens.items():
        page.locator(f"#{fig}").scroll_into_view_if_needed()
        v = page.evaluate(VIEW, fig)
        if n > 12:
            assert v["lines"] and not v["grid"] and v["pressed"][1] == ["Lines", "true"], (fig, v)
            assert v["box"][1] <= 375, (fig, v)  # within the screen
        else:
            assert not v["lines"] and v["pressed"][0] == ["Grid", "true"], (fig, v)
    v = page.evaluate(VIEW, long_fig)
    check_lines(page, long_fig, weights, v["layer"], v["head"], v["token"])
    # a phone's address still writes no view the reader did not choose
    page.select_option(f"#{long_fig} select[data-control=token]", "3")
    page.wait_for_function("id => new RegExp('^#' + id + ':layer=\\\\d+,head=\\\\d+,token=3$').test(location.hash)", arg=long_fig)
    assert w.errors == []


def test_lines_view_follows_a_new_width(course, long_fig, server, open_site):
    """Built on a phone, then the window widened and narrowed again: the drawing is the box's
    width each time (within its bounds), with every line at its weight, the same token chosen, and
    the keyboard's place kept."""
    w = open_site(viewport={"width": 320, "height": 800})
    page = w.goto(f"{server.base}/attention.html#{long_fig}:layer=2,head=3,token=6,view=lines")
    weights = trace_weights_of(course, page, long_fig)
    wait_view(page, long_fig, True)
    page.wait_for_function("id => document.querySelector('#' + id + ' .course-lines-tok[aria-selected=true]')"
                           ".getAttribute('data-q') === '6'", arg=long_fig)
    fit = """id => { const f = document.getElementById(id), svg = f.querySelector('.course-lines-svg');
      const box = f.querySelector('.course-view').clientWidth;
      return {svg: +svg.getAttribute('width'), shown: svg.getBoundingClientRect().width, box,
        drawings: f.querySelectorAll('.course-lines-svg').length,
        focus: document.activeElement && document.activeElement.getAttribute('data-q')}; }"""
    narrow = page.evaluate(fit, long_fig)
    assert narrow["svg"] < 420 and narrow["shown"] <= narrow["box"] + 0.5, narrow
    page.focus(f"#{long_fig} .course-lines-tok[data-q='6']")
    for width in (1280, 320):
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_function(f"""id => {{ const f = document.getElementById(id), svg = f.querySelector('.course-lines-svg');
          const box = f.querySelector('.course-view').clientWidth;
          return +svg.getAttribute('width') === Math.max(240, Math.min(420, Math.floor(box))); }}""", arg=long_fig)
        got = page.evaluate(fit, long_fig)
        assert got["drawings"] == 1 and got["focus"] == "6", got
        if width == 1280:
            assert got["svg"] > narrow["svg"], (got, narrow)  # it grew
        check_lines(page, long_fig, weights, 1, 2, 6)
    assert w.errors == []


def test_lines_view_prints_within_the_page(course, long_fig, server, open_site):
    w = open_site()
    page = w.goto(f"{server.base}/attention.html#{long_fig}:layer=4,head=4,token=10,view=lines")
    wait_view(page, long_fig, True)
    for width in (1280, 720):
        page.set_viewport_size({"width": width, "height": 900})
        page.emulate_media(media="print")
        quiet(page)
        box = page.evaluate("""id => { const f = document.getElementById(id), s = f.querySelector('.course-lines-svg');
          const r = s.getBoundingClientRect(), c = f.getBoundingClientRect();
          return {shown: s.getClientRects().length > 0 && getComputedStyle(s.parentNode).display !== 'none', left: r.left, right: r.right,
            height: r.height, fig: [c.left, c.right], page: document.documentElement.clientWidth,
            lines: s.querySelectorAll('line').length, switch: getComputedStyle(f.querySelector('.course-viewswitch')).display}; }""", long_fig)
        assert box["shown"] and box["height"] > 100 and box["lines"] == 15 * 16 // 2, (width, box)
        assert box["fig"][0] - 0.5 <= box["left"] and box["right"] <= box["fig"][1] + 0.5 and box["right"] <= box["page"], (width, box)
        assert box["switch"] == "none", box  # no buttons on paper
        page.emulate_media(media="screen")
    assert w.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_with_every_figure_in_the_lines_view(course, long_fig, server, open_site, capsys, scheme):
    from .test_a11y import axe, print_and_judge

    w = open_site(color_scheme=scheme, reduced_motion="reduce")
    results = {}
    for rel in ("attention.html", "heads.html"):
        page = w.goto(f"{server.base}/{rel}")
        chosen = page.evaluate("""() => { const bs = [...document.querySelectorAll('.course-viewswitch button[data-view=lines]')];
          bs.forEach(b => b.click()); return bs.length; }""")
        assert chosen >= 4, (rel, chosen)
        page.wait_for_function("n => document.querySelectorAll('.course-lines-svg').length >= n", arg=chosen)
        page.locator(".course-lines-tok[aria-selected=true]").first.focus()  # a focused token too
        quiet(page)
        results[rel] = axe(page, every_tab=False)
    print_and_judge(results, f"axe with every figure in the lines view, {scheme}", capsys, w.errors)


@pytest.mark.parametrize("width", [1280, 375])
def test_the_lines_view_headings_stay_inside_the_drawing(course, server, open_site, width):
    """A sentence of short tokens (chapter 3's first figure) made a column narrower than its
    heading, and "token (query)" ran off the drawing's left edge ("en (query)")."""
    w = open_site(viewport={"width": width, "height": 900})
    page = w.goto(f"{server.base}/attention.html#fig-1:layer=1,head=1,token=1,view=lines")
    wait_view(page, "fig-1", True)
    boxes = page.evaluate("""() => { const s = document.querySelector('#fig-1 .course-lines-svg');
      const vb = s.viewBox.baseVal;
      return {w: vb.width, texts: [...s.querySelectorAll('.course-lines-heads text')].map(t => { const b = t.getBBox(); return [t.textContent, b.x, b.x + b.width]; })}; }""")
    assert len(boxes["texts"]) == 2, boxes
    for text, left, right in boxes["texts"]:
        assert left >= 0 and right <= boxes["w"], (text, left, right, boxes["w"])
    assert w.errors == []
