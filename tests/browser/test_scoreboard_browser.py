"""The scoreboard as the renderer writes it (generator/render/scoreboard.py), driven by course.js in
Chromium: sorting the tables, and a row's link opening that head in the example figure."""

from __future__ import annotations


import pytest

from generator import heads
from generator.render import assets
from generator.store import TraceStore
from heads_helpers import store_with_scores

from . import harness
from generator import render
from generator.lessons import directives as D
from generator.render import format as fmt
from generator.render.context import Ctx

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def board_page(tmp_path_factory):
    """file:// URL of a page holding one rendered tiny scoreboard and its example figures."""
    root = tmp_path_factory.mktemp("scoreboard")
    store_with_scores(root / "store")
    store = TraceStore(root / "store")
    used: list[dict] = []
    ctx = Ctx(store=store, page="heads.md", assets_url="", on_trace=used.append)
    d = D.parse_directive("scoreboard", "model: tiny\nscores: [previous-token, induction]\nid: sb\n", "heads.md:1")
    body = render.render(d, ctx)
    harness.copy_assets(root)
    for trace in used:
        assets.write_trace_assets(trace, root)
    (root / "index.html").write_text(harness.page(body), encoding="utf-8")
    return (root / "index.html").as_uri(), heads.load_scores(root / "store", "tiny")


def column(page, section: str, i: int) -> list[str]:
    return page.eval_on_selector_all(
        f'#fig-1 section[data-score="{section}"] table.course-sortable tbody tr',
        f"rs => rs.map(r => r.cells[{i}].textContent)",
    )


def aria(page, section: str, key: str) -> str:
    return page.eval_on_selector(
        f'#fig-1 section[data-score="{section}"] button[data-sort={key}]', "b => b.closest('th').getAttribute('aria-sort')"
    )


def caption(page, section: str) -> str:
    """The sortable table's name, which says the order its rows are in."""
    return page.eval_on_selector(f'#fig-1 section[data-score="{section}"] table.course-sortable caption', "c => c.textContent")


def test_scoreboard_tables_sort(open_page, board_page):
    url, scores = board_page
    w = open_page()
    page = w.goto(url, wait_painted=False)
    page.wait_for_function("document.documentElement.classList.contains('course-js')")
    ranked = [fmt.f2(s) for _, _, s in scores.ranked("induction")]
    assert column(page, "induction", 2) == ranked  # as rendered: highest first
    assert aria(page, "induction", "score") == "descending"

    named = caption(page, "induction")
    assert ", highest score first." in named
    page.click('#fig-1 section[data-score="induction"] button[data-sort=score]')
    assert column(page, "induction", 2) == sorted(ranked, key=float)
    assert aria(page, "induction", "score") == "ascending"
    assert caption(page, "induction") == named.replace("highest score first", "sorted by score, lowest first")

    page.click('#fig-1 section[data-score="induction"] button[data-sort=layer]')
    layers = column(page, "induction", 0)
    assert layers == sorted(layers, key=int) and aria(page, "induction", "layer") == "ascending"
    assert aria(page, "induction", "score") == "none"
    assert caption(page, "induction") == named.replace("highest score first", "sorted by layer, lowest first")
    page.click('#fig-1 section[data-score="induction"] button[data-sort=score]')  # back to the order it shipped
    assert caption(page, "induction") == named and column(page, "induction", 2) == ranked
    # the other kind's table is untouched
    assert column(page, "previous-token", 2) == [fmt.f2(s) for _, _, s in scores.ranked("previous-token")]
    assert w.errors == []


def test_scoreboard_link_opens_the_head_in_the_example(open_page, board_page):
    url, scores = board_page
    w = open_page()
    page = w.goto(url, wait_painted=False)
    page.wait_for_function("document.documentElement.classList.contains('course-js')")
    ex = page.eval_on_selector("#fig-1 > script.course-data", "s => JSON.parse(s.textContent).examples")
    fig = "#" + ex["induction"]
    assert fig != "#" + ex["previous-token"]  # repeated random tokens vs a natural sentence
    layer, head, _ = scores.ranked("induction")[5]  # a head that is not the example's first
    link = f'#fig-1 section[data-score="induction"] a[href="{fig}:layer={layer + 1},head={head + 1}"]'
    page.click(link)
    page.wait_for_function(
        "([id, l, h]) => +document.querySelector(id + ' select[data-control=layer]').value === l && "
        "+document.querySelector(id + ' select[data-control=head]').value === h",
        arg=[fig, layer, head],
    )
    summary = page.text_content(f"{fig} .course-summary")
    assert summary.startswith(f"In layer {layer + 1}, head {head + 1}, ")
    assert page.evaluate("location.hash").startswith(f"{fig}:layer={layer + 1},head={head + 1}")
    # the figure scrolls into view (smoothly, so wait for it)
    page.wait_for_function(
        "id => { const t = document.querySelector(id).getBoundingClientRect().top; return t > -5 && t < innerHeight / 2; }",
        arg=fig,
    )
    assert w.errors == []
