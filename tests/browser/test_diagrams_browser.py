"""The drawn diagrams in Chromium, on the session's shared course build: shown without JavaScript
at 1280 and 375 px, inside the text column, themed by the palette (light and dark draw in other
colours), and axe-core finds no violation on the pages that hold them at 375 px in the dark
palette (test_a11y.py's axe; its walks of every page cover the other widths and palettes)."""

from __future__ import annotations

import pytest

from course_builds import settle

from .conftest import page_opener
from .test_a11y import axe, print_and_judge

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = {"vectors.html": 1, "attention.html": 2, "causal.html": 1}  # the diagrams each chapter holds

MEASURE = """() => [...document.querySelectorAll('figure.course-diagram')].map(fig => {
  const col = fig.closest('article') || document.body;
  const c = col.getBoundingClientRect();
  return {kind: fig.dataset.kind, col: [c.left, c.right], svgs: [...fig.querySelectorAll('svg')].map(svg => {
    const r = svg.getBoundingClientRect();
    const text = svg.querySelector('text');
    const line = svg.querySelector('line.course-dia-vec, line.course-dia-stream');
    return {left: r.left, right: r.right, width: r.width, height: r.height,
            named: !!svg.getAttribute('aria-labelledby') && svg.getAttribute('role') === 'img',
            text: getComputedStyle(text).fill, line: line ? getComputedStyle(line).stroke : null,
            fontPx: parseFloat(getComputedStyle(text).fontSize) * r.width / svg.viewBox.baseVal.width};
  })};
})"""


@pytest.fixture
def opener(browser, server):
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=1280) as open_:
        yield open_


@pytest.mark.parametrize("width", [1280, 375])
def test_diagrams_show_without_javascript_inside_the_column(server, opener, width):
    w = opener(js=False, viewport={"width": width, "height": 900})
    for page, count in PAGES.items():
        w.page.goto(f"{server.base}/{page}")
        figures = w.page.evaluate(MEASURE)
        assert len(figures) == count, (page, figures)
        for fig in figures:
            for svg in fig["svgs"]:
                assert svg["named"] and svg["width"] >= 200 and svg["height"] >= 100, (page, fig["kind"], svg)
                assert fig["col"][0] - 1 <= svg["left"] and svg["right"] <= fig["col"][1] + 1, f"{page}: a {fig['kind']} picture leaves the column at {width} px"
                least = 11.5 if width == 1280 else 10  # natural size (12 px) in the wide column; no smaller than 10 px on a phone
                assert svg["fontPx"] >= least, f"{page}: a {fig['kind']} picture's text is drawn at {svg['fontPx']:.1f} px at {width} px"
    assert not w.errors, w.errors


def test_diagrams_draw_in_the_palettes_colours(server, opener):
    """Text and lines follow the light and the dark palette (no fixed colour)."""
    colours = {}
    for scheme in ("light", "dark"):
        w = opener(color_scheme=scheme)
        for page in PAGES:
            w.page.goto(f"{server.base}/{page}")
            for fig in w.page.evaluate(MEASURE):
                colours.setdefault(scheme, set()).update((svg["text"], svg["line"]) for svg in fig["svgs"])
        assert not w.errors, w.errors
    light, dark = colours["light"], colours["dark"]
    assert light and dark and not (light & dark), f"the diagrams draw in the same colours in light and dark: {light} {dark}"


# At 1280 px light and dark and at 375 px light, axe runs on every built page, these included, in
# test_a11y.py's walks (the same build, the same axe): only the phone's dark palette is left here.
@pytest.mark.parametrize("width,scheme", [(375, "dark")])
def test_axe_finds_nothing_on_the_pages_with_diagrams(server, opener, capsys, width, scheme):
    w = opener(viewport={"width": width, "height": 900}, color_scheme=scheme)
    results = {}
    for page in PAGES:
        w.page.goto(f"{server.base}/{page}")
        settle(w.page)
        results[page] = axe(w.page, every_tab=False)
    print_and_judge(results, f"axe on the pages with diagrams at {width} px, {scheme}", capsys, w.errors)
