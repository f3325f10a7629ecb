"""Accessibility, measured in Chromium on the session's shared course build:

* axe-core (from npm, outside the repository: build/node/node_modules/axe-core/axe.min.js, which
  .ci/run installs) injected into EVERY built page over http and into every one-file chapter over
  file://; any violation fails, and all of them are printed;
* the keyboard alone picks a layer, head and token, steps the stepper, edits the softmax widget,
  and focus is always visible (a real outline on every focused control);
* prefers-reduced-motion: no CSS transition or animation runs;
* a 320 px viewport: the page body never scrolls sideways, the grids scroll inside their wrappers;
* print: every content tab is shown, one after another; table heatmaps show; Plotly plots do not;
* nothing cut off (cut_off.py), at 1280 and 375 px, and every heatmap and chart legible at 1280
  and 375 px (test_reader_view.check_legible), on the page loads of the axe walks (`walks`: every
  page loaded once per width and palette, at 1280 px light and dark and 375 px light, for every
  check made on it). test_diagrams_browser.py's axe on the pages with diagrams reads them too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from course_builds import INJECTION_PAGE_NAME, REPO, back_to_top, quiet, settle

from .conftest import page_opener
from .cut_off import cut_off
from .figure_ids import FIRST_HEATMAP, course_figure
from .test_reader_view import PLOT_BOXES, check_legible

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The newest axe-core on the npm registry when this was pinned (`npm view axe-core version`); .ci/run
# installs the same version.
AXE_VERSION = "4.14.1"
AXE = REPO / "build" / "node" / "node_modules" / "axe-core" / "axe.min.js"
AXE_INSTALL = f"npm install --prefix build/node --no-save axe-core@{AXE_VERSION} (as `make test` does)"
AXE_MISSING = f"{AXE.relative_to(REPO)} is missing: {AXE_INSTALL}"

AXE_RUN = """async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.length,
    examples: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240)),
  }));
}"""


@pytest.fixture
def open_site(browser, server):
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=1200) as open_:
        yield open_


# The shared build adds one page of its own, injection.html (hostile sentences, for
# test_injection.py). It is not a course page, its figures are built like the course's, and axe
# needs ~50 s for its 15,000 nodes on two cores, so the accessibility checks leave it out.
TEST_ONLY_PAGES = {INJECTION_PAGE_NAME.replace(".md", ".html")}


def built_pages(course: Path) -> list[str]:
    site = course / "build" / "site"
    pages = (p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.relative_to(site).parts[0] != "downloads")
    return sorted(p for p in pages if p not in TEST_ONLY_PAGES)


def one_file_chapters(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "build" / "site" / "downloads").glob("*.html") if p.name not in TEST_ONLY_PAGES)


def axe(page, every_tab: bool = True) -> list[dict]:
    """axe on the page as loaded; then, with every_tab, once more for each further tab: the k-th
    tab of every tab set selected (as a reader selects it, by its label), axe on the tab sets."""
    if axe_problem():
        pytest.fail(axe_problem())
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(AXE_RUN)
    for k in range(1, page.evaluate(TAB_COUNT) if every_tab else 1):
        missed = page.evaluate(SELECT_TAB, k)
        assert not missed, f"tab {k + 1} did not stay selected in {missed}"
        quiet(page)  # ResizeObserver entries for what the tab shows, and their redraws
        found += [dict(v, id=f"{v['id']} (tab {k + 1} of every set)") for v in page.evaluate(AXE_RUN_TABS)]
    return found


TAB_COUNT = "() => Math.max(0, ...[...document.querySelectorAll('.tabbed-set')].map(s => s.querySelectorAll(':scope > input[type=radio]').length))"
# Clicks the k-th label of every tab set that has one; returns the sets that do not show it then.
SELECT_TAB = """k => {
  const sets = [...document.querySelectorAll('.tabbed-set')];
  const kth = s => s.querySelectorAll(':scope > input[type=radio]')[k];
  sets.forEach(s => { const i = kth(s); if (i && !i.checked) s.querySelector('label[for="' + i.id + '"]').click(); });
  return sets.filter(s => kth(s) && !kth(s).checked).map(s => s.getAttribute('data-tabs'));
}"""
AXE_RUN_TABS = AXE_RUN.replace("axe.run(document,", "axe.run({include: [...document.querySelectorAll('.tabbed-set')].map(s => [s])},")


# Violations found in files this test's author does not own, reported to their owners. The test
# xfails (with this reason) while exactly these remain, and fails on any other violation, and
# when one of these is gone (so that the entry is removed).
KNOWN: dict[tuple[str, str], str] = {}  # none left: every page must have 0 violations


def judge(results: dict[str, list[dict]], text: str) -> None:
    found = {(page, v["id"]) for page, vs in results.items() for v in vs}
    unknown = found - set(KNOWN)
    assert not unknown, text
    gone = {k for k in KNOWN if k[0] in results} - found
    assert not gone, f"fixed, remove from KNOWN: {sorted(gone)}"
    if found:
        pytest.xfail("; ".join(KNOWN[k] for k in sorted(found)))


def print_and_judge(results: dict[str, list[dict]], title: str, capsys, errors: list[str]) -> None:
    """Print every page's violations under `title`, then fail on page errors and on violations."""
    text = "\n".join(report(rel, v) for rel, v in results.items())
    with capsys.disabled():
        print(f"\n{title}:\n" + text)
    assert not errors, errors
    judge(results, text)


def report(where: str, violations: list[dict]) -> str:
    lines = [f"{where}: {len(violations)} axe violation(s)"]
    for v in violations:
        lines.append(f"  [{v['impact']}] {v['id']}: {v['help']} ({v['nodes']} node(s))")
        lines += [f"      {e}" for e in v["examples"]]
    return "\n".join(lines)


# ---------------------------------------------------------------- axe, every page


def test_axe_every_built_page_over_http(walks, capsys):
    """At 1280 px, light: the walk the legibility check reads too (every walk is over http)."""
    if axe_problem():
        pytest.fail(axe_problem())
    walk = walks(1280, "light")
    assert not walk.axe_failed, walk.axe_failed
    print_and_judge(walk.axe, "axe over http at 1280 px, light", capsys, walk.errors)


@pytest.mark.parametrize("viewport,scheme", [(1200, "light"), (375, "dark")], ids=["1200px", "375px-dark"])
def test_axe_every_one_file_chapter_from_file(course, browser, capsys, viewport, scheme):
    results = {}
    with page_opener(browser, set(), width=viewport) as open_:
        w = open_(color_scheme=scheme)
        for name in one_file_chapters(course):
            w.page.goto((course / "build" / "site" / "downloads" / name).as_uri())
            settle(w.page)
            results[name] = axe(w.page)
    assert results, "no one-file chapters were built"
    print_and_judge({f"downloads/{n}": v for n, v in results.items()}, f"axe on one-file chapters at {viewport} px, {scheme}", capsys, [])


# ---------------------------------------------------------------- one walk, two checks: axe and what is cut off


def axe_problem() -> str | None:
    """Why axe cannot run here (not installed, or another version than AXE_VERSION), or None."""
    if not AXE.is_file():
        return AXE_MISSING
    head = AXE.read_bytes()[:64].decode("utf-8", "replace")
    if f"axe v{AXE_VERSION}\n" not in head and f"axe v{AXE_VERSION} " not in head:
        return f"{AXE.relative_to(REPO)} is not axe-core {AXE_VERSION} ({head.splitlines()[0]!r}): {AXE_INSTALL}"
    return None


@dataclass
class Walk:
    """Every built page at one width and palette, each loaded once and settled: axe on it as
    loaded (404.html left out), then everything in it shown and what is cut off (cut_off.py)."""

    axe: dict[str, list[dict]] = field(default_factory=dict)  # page -> axe's violations
    axe_failed: list[str] = field(default_factory=list)  # a page where axe could not run through (a tab that would not stay)
    cut: dict[str, list] = field(default_factory=dict)  # page -> what is cut off, where anything is
    illegible: list[str] = field(default_factory=list)  # what a reader could not read in a heatmap or chart (legibility)
    plots: int = 0  # heatmaps drawn, over every page
    errors: list[str] = field(default_factory=list)  # the pages' console and script errors


def walk_pages(course: Path, server, browser, width: int, scheme: str) -> Walk:
    walk, run_axe = Walk(), axe_problem() is None
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=width) as open_:
        w = open_(viewport={"width": width, "height": 900}, color_scheme=scheme)
        for rel in built_pages(course):
            w.page.goto(f"{server.base}/{rel}")
            settle(w.page)
            if scheme == LEGIBLE_SCHEME and legibility(w.page, rel, width, walk):
                back_to_top(w.page)  # it scrolled to a chart: the header's fade done, for axe
            if run_axe and rel != "404.html":
                try:
                    walk.axe[rel] = axe(w.page)
                except AssertionError as e:
                    walk.axe_failed.append(f"{rel}: {e}")
            cut = cut_off(w.page)
            if cut:
                walk.cut[rel] = cut
        walk.errors = list(w.errors)
    return walk


# ---------------------------------------------------------------- legibility, on the walks' page loads

LEGIBLE_SCHEME = "light"  # the palette the legibility test reads (sizes, not colours: one is enough)
PLOTS = ".course-fig[data-kind=attention] .js-plotly-plot, .course-fig[data-kind=compare] .js-plotly-plot"
# How far each chart's legend reaches into its plotting area (px; > 0 means it covers data).
LEGEND_OVERLAP = """() => [...document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot')].map(p => {
  const legend = p.querySelector('.legend'), area = p.querySelector('.nsewdrag');
  return legend && area ? legend.getBoundingClientRect().bottom - area.getBoundingClientRect().top : null;
})"""


def legibility(page, rel: str, width: int, walk: Walk) -> bool:
    """Every heatmap of the page as loaded legible at this width (test_reader_view.check_legible),
    no training chart's legend over its data, and no sideways scroll of the page. True when it
    scrolled the page (to draw a chart)."""
    quiet(page)  # a redraw for a new width runs on the next frame
    plots = page.evaluate(PLOT_BOXES, PLOTS)
    walk.plots += len(plots)
    walk.illegible += [f"{rel}: {p}" for p in check_legible(plots, width)]
    charts = page.locator(".course-fig[data-kind=training] .course-plot").all()
    for chart in charts:
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(state="attached")
    walk.illegible += [f"{rel}: a chart's legend covers {d:.0f} px of its data" for d in page.evaluate(LEGEND_OVERLAP) if d and d > 1]
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide > width:
        walk.illegible.append(f"{rel}: the page scrolls sideways ({wide} px at {width} px)")
    return bool(charts)


@pytest.fixture(scope="module")
def walks(course, server, browser):
    """walks(width, scheme) -> Walk, made once a module per width and palette: axe (over http at
    1280 px light, at 375 px light, at 1280 px dark), the cut-off check (375 light, 1280 dark) and
    the legibility check (375 and 1280, light) read the same page loads (each test loaded every
    page itself before)."""
    made: dict[tuple[int, str], Walk] = {}

    def get(width: int, scheme: str) -> Walk:
        if (width, scheme) not in made:
            made[(width, scheme)] = walk_pages(course, server, browser, width, scheme)
        return made[(width, scheme)]

    return get


@pytest.mark.parametrize("viewport,scheme", [(375, "light"), (1280, "dark")], ids=["375px", "dark"])
def test_axe_every_built_page_at_375px_and_in_dark_mode(walks, capsys, viewport, scheme):
    """At 375 px wide tables, the comparison and long formulas scroll sideways (each must then be
    a keyboard stop: scrollable-region-focusable); in dark mode (prefers-color-scheme: dark, the
    slate palette) every text keeps its contrast."""
    if axe_problem():
        pytest.fail(axe_problem())
    walk = walks(viewport, scheme)
    assert not walk.axe_failed, walk.axe_failed
    print_and_judge(walk.axe, f"axe at {viewport} px, {scheme}", capsys, walk.errors)


@pytest.mark.parametrize("width", [375, 1280])
def test_every_heatmap_and_chart_is_legible(walks, width):
    """In the light palette at both widths (the walks' page loads, before axe or anything else
    changed the page): cell numbers of 11 px or more that fit their cells, no two labels
    overlapping, the colour bar on the screen, no legend over a chart's data, no sideways scroll."""
    walk = walks(width, LEGIBLE_SCHEME)
    assert walk.plots >= 8, f"only {walk.plots} heatmaps drawn"
    assert walk.illegible == [], "\n".join(walk.illegible)
    assert walk.errors == []


@pytest.mark.parametrize("width,scheme", [(1280, "dark"), (375, "light")])
def test_no_page_has_an_element_cut_off(walks, width, scheme):
    """Both widths, one palette each: the palette changes colours, not sizes (the fade is a mask,
    the same in both). Measured on the code before issue 46: display formulas cut 2-5 px at the
    bottom on five pages, and a heatmap that scrolled with no fade (the injection page's long
    sentence). (cut_off.py; every page as the axe walk at the same width and palette left it.)"""
    walk = walks(width, scheme)
    assert walk.cut == {}
    assert walk.errors == []


# ---------------------------------------------------------------- keyboard and visible focus

FOCUS_STYLE = """() => {
  const el = document.activeElement;
  const s = getComputedStyle(el);
  return {tag: el.tagName, cls: el.className, visible: el.matches(':focus-visible'),
          outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 ? s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor : '',
          shadow: s.boxShadow !== 'none' ? s.boxShadow : ''};
}"""


def tab_to(page, selector: str, limit: int = 400) -> dict:
    """Press Tab until the focused element matches `selector`; checks focus is visible at every
    stop on the way. Returns the focus style at the target."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(sel) => document.activeElement && document.activeElement.matches(sel)", selector):
            style = page.evaluate(FOCUS_STYLE)
            assert style["outline"] or style["shadow"], f"focus is not visible on {selector}: {style}"
            return style
    raise AssertionError(f"{selector} was not reached with {limit} presses of Tab")


def assert_focus_visible_everywhere(page, stops: int) -> None:
    invisible = []
    for _ in range(stops):
        page.keyboard.press("Tab")
        style = page.evaluate(FOCUS_STYLE)
        if style["tag"] != "BODY" and not (style["outline"] or style["shadow"]):
            invisible.append(style)
    assert not invisible, f"{len(invisible)} focus stop(s) without a visible focus indicator: {invisible[:5]}"


def test_keyboard_alone_drives_every_widget_with_focus_visible(course, server, open_site):
    f1 = "#" + course_figure(course, "attention.html", **FIRST_HEATMAP)
    w = open_site()
    page = w.page
    page.goto(f"{server.base}/attention.html")
    settle(page)
    fig = page.locator(f1)
    summary = lambda: fig.locator(".course-summary").inner_text()  # noqa: E731

    # token, layer, head: reached with Tab from the top of the page, changed with the arrow keys
    for control in ("token", "layer", "head"):
        before = summary()
        tab_to(page, f"{f1} select[data-control={control}]")
        old, at_end = page.evaluate("[document.activeElement.value, document.activeElement.selectedIndex === document.activeElement.options.length - 1]")
        page.keyboard.press("ArrowUp" if at_end else "ArrowDown")
        assert page.evaluate("document.activeElement.value") != old, f"the arrow keys did not change the {control}"
        # a head not shown before loads its part first: the summary follows once it is in
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # lazily, as conftest: no Chromium, no import

        try:
            page.wait_for_function(f"([b]) => document.querySelector('{f1} .course-summary').innerText !== b", arg=[before])
        except PlaywrightTimeout:
            pass  # the assertion below says what did not change
        assert summary() != before, f"changing the {control} did not change the summary"

    # "Show as a table" by keyboard, then a table row's button picks that row's token (the first
    # row: the first token)
    tab_to(page, f"{f1} button.course-table-toggle")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.getAttribute('aria-expanded')") == "true"
    tab_to(page, f"{f1} .course-rowpick")
    before = summary()
    page.keyboard.press("Enter")
    assert summary() != before, "Enter on the first row did not pick its token"
    assert page.evaluate(f"document.querySelector('{f1} select[data-control=token]').value") == "0"

    # the stepper: Next by keyboard
    stepper = page.locator(".course-fig[data-kind=stepper]").first
    sid = stepper.get_attribute("id")
    status = stepper.locator(".course-step-status")
    assert status.inner_text() == "Step 1 of 5"
    tab_to(page, f"#{sid} button[data-action=next]")
    page.keyboard.press("Enter")
    assert status.inner_text() == "Step 2 of 5"
    page.keyboard.press("Space")
    assert status.inner_text() == "Step 3 of 5"

    # the softmax widget: type a new score
    sm = page.locator(".course-fig[data-kind=softmax]").first
    smid = sm.get_attribute("id")
    weights = lambda: sm.locator("output.course-weight").all_inner_texts()  # noqa: E731
    before = weights()
    tab_to(page, f"#{smid} input[data-score]")
    page.keyboard.press("Control+A")
    page.keyboard.type("9")
    assert weights() != before, "typing a score did not change the weights"
    assert weights()[0] in ("1.000", "0.999", "0.998", "0.997", "0.996", "0.995") or max(map(float, weights())) > 0.9

    # every focus stop after the widgets shows where the focus is
    assert_focus_visible_everywhere(page, 60)


# ---------------------------------------------------------------- reduced motion


def test_reduced_motion_runs_no_transition_or_animation(course, server, open_site):
    f1 = "#" + course_figure(course, "attention.html", **FIRST_HEATMAP)
    w = open_site(reduced_motion="reduce")
    page = w.page
    page.goto(f"{server.base}/attention.html")
    settle(page)
    sm = page.locator(".course-fig[data-kind=softmax]").first
    sm.locator("input[data-score]").first.fill("5")
    page.locator(f"{f1} select[data-control=head]").select_option(index=1)
    stepper = page.locator(".course-fig[data-kind=stepper]").first
    stepper.locator("button[data-action=next]").click()
    labels = page.locator(".tabbed-labels label")
    if labels.count() > 1:
        labels.nth(1).click()
    page.mouse.move(300, 300)
    running = page.evaluate("""() => document.getAnimations().filter(a => a.playState === 'running').map(a => {
        const t = a.effect && a.effect.target;
        return (a.transitionProperty || a.animationName || a.constructor.name) + ' on ' + (t ? t.tagName + '.' + String(t.className).slice(0, 60) : '?');
    })""")
    assert running == [], f"with prefers-reduced-motion, still running: {running}"


# ---------------------------------------------------------------- 320 px


def test_320px_no_horizontal_overflow_grids_scroll_inside(course, server, open_site):
    w = open_site(viewport={"width": 320, "height": 700})
    problems = []
    for rel in built_pages(course):
        w.page.goto(f"{server.base}/{rel}")
        settle(w.page)
        over = w.page.evaluate("""() => {
            const width = document.documentElement.clientWidth;
            const wide = [];
            for (const el of document.body.querySelectorAll('*')) {
              const r = el.getBoundingClientRect();
              if (r.width && r.right > width + 1 && !el.closest('.course-table-wrap, .course-scroll, .md-typeset__scrollwrap, .highlight, pre, .tabbed-labels, .md-sidebar, .md-search, .md-nav, .md-header, .course-diff'))
                wide.push(el.tagName + '.' + String(el.className).slice(0, 50) + ' right=' + Math.round(r.right));
            }
            return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 8)};
        }""")
        if over["scroll"] > over["width"]:
            problems.append(f"{rel}: the page is {over['scroll']} px wide at {over['width']} px; sticking out: {over['wide']}")
        # the grids are wider than the screen and scroll inside their wrapper
        wraps = w.page.evaluate("""() => [...document.querySelectorAll('.course-table-wrap')].map(e => {
            const s = getComputedStyle(e);
            return {over: e.scrollWidth > e.clientWidth, ox: s.overflowX};
        })""")
        for wrap in wraps:
            if wrap["over"] and wrap["ox"] not in ("auto", "scroll"):
                problems.append(f"{rel}: a .course-table-wrap overflows without scrolling (overflow-x: {wrap['ox']})")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- print


def test_print_shows_every_tab_and_the_tables_not_the_plots(course, server, open_site):
    w = open_site()
    page = w.page
    page.goto(f"{server.base}/attention.html")
    settle(page)
    page.emulate_media(media="print")
    sets = page.evaluate("""() => [...document.querySelectorAll('.tabbed-set')].map(set => {
        const blocks = [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')];
        const shown = blocks.filter(b => getComputedStyle(b).display !== 'none' && b.getBoundingClientRect().height > 0);
        const tops = shown.map(b => b.getBoundingClientRect().top);
        return {n: blocks.length, shown: shown.length, ordered: tops.every((t, i) => i === 0 || t >= tops[i - 1])};
    })""")
    assert sets, "no content tabs on the chapter"
    assert all(s["n"] == s["shown"] and s["ordered"] for s in sets), f"tabs hidden or out of order in print: {json.dumps(sets)}"
    assert any(s["n"] == 4 for s in sets), "the chapter's sections have four tabs each"
    tables = page.evaluate("""() => [...document.querySelectorAll('table.course-table')].map(t => getComputedStyle(t).display !== 'none' && t.getBoundingClientRect().height > 0)""")
    assert tables and all(tables), "a table heatmap is hidden in print"
    plots = page.evaluate("""() => [...document.querySelectorAll('.course-plot')].map(p => getComputedStyle(p).display === 'none' || p.getBoundingClientRect().height === 0)""")
    assert plots and all(plots), "a Plotly plot shows in print"


# The printable width of a page box in CSS pixels (96 per inch): Letter 8.5 in and A4 210 mm, less
# Chromium's default margins (0.4 in a side), and Letter with 1-inch margins.
PAPER = {"Letter": round(8.5 * 96 - 0.8 * 96), "A4": round(210 / 25.4 * 96 - 0.8 * 96), "Letter, 1 in margins": round(6.5 * 96)}

BOXES_IN_PRINT = """(width) => {
  const shown = el => { const b = el.getBoundingClientRect(); return b.width > 0 && b.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const wide = [], overlaps = [];
  for (const fig of document.querySelectorAll('.md-typeset .course-fig, .md-typeset > table, .md-typeset > pre')) {
    let right = fig.getBoundingClientRect().right;
    for (const el of fig.querySelectorAll('*')) if (shown(el)) right = Math.max(right, el.getBoundingClientRect().right);
    if (right > width + 0.5) wide.push(`${fig.id || fig.tagName}: right edge at ${Math.round(right)} px`);
    const blocks = [...fig.querySelectorAll('table, .course-panel, .course-view-side > *')].filter(shown);
    for (let i = 0; i < blocks.length; i++) for (let j = i + 1; j < blocks.length; j++) {
      const x = blocks[i], y = blocks[j];
      if (x.contains(y) || y.contains(x)) continue;
      const a = x.getBoundingClientRect(), b = y.getBoundingClientRect();
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
        overlaps.push(`${fig.id}: ${x.tagName}.${x.className} and ${y.tagName}.${y.className}`);
    }
  }
  return {wide, overlaps};
}"""


def test_printed_pages_fit_the_paper_with_no_overlapping_boxes(course, server, open_site):
    """attention, heads and vectors in print media at the printable width of Letter and A4: no
    figure (nor any box inside it) reaches past the page box, and no two of a figure's tables or
    panels overlap (a 15-token grid, two sentences side by side, a 21-token grid)."""
    w = open_site()
    page = w.page
    problems = []
    for paper, width in PAPER.items():
        page.set_viewport_size({"width": width, "height": 1100})
        for name in ("attention.html", "heads.html", "vectors.html"):
            page.emulate_media(media="screen")
            page.goto(f"{server.base}/{name}")
            settle(page)
            page.emulate_media(media="print")
            found = page.evaluate(BOXES_IN_PRINT, width)
            problems += [f"{paper} ({width} px) {name}: {p}" for p in found["wide"] + found["overlaps"]]
    assert not problems, "\n".join(problems)
