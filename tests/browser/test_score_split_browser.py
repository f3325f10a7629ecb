"""`score-split` figures in Chromium (the session's shared build of the real course): the bars add
up to the cell's score, for the figure's own cell and for any other the reader picks with the
menus; the numbers after a pick are the shipped split's own."""

from __future__ import annotations

import html
import re

import pytest

from course_builds import settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = "why-heads-look.html"

# every score-split figure: its bars' values, their sum and the cell's score as the page shows them
BARS_JS = """() => Array.from(document.querySelectorAll('.course-fig[data-kind="score-split"]')).map(fig => {
  const values = Array.from(fig.querySelectorAll('.course-split-bars tr[data-part]')).map(tr => Number(tr.dataset.value));
  const score = Number(fig.querySelector('.course-split-bars td[data-score]').dataset.score);
  const data = JSON.parse(fig.querySelector(':scope > script.course-data').textContent);
  const q = Number(fig.querySelector('.course-split-controls select').value);
  const k = Number(fig.querySelectorAll('.course-split-controls select')[1].value);
  return {id: fig.id, values, sum: values.reduce((a, b) => a + b, 0), score, q, k, shipped: data.score[q * (q + 1) / 2 + k],
          shown: fig.querySelector('.course-split-bars tr.course-total td').textContent,
          captions: Array.from(fig.querySelectorAll('caption')).map(c => c.textContent), tokens: data.tokens, head: [data.layer, data.head]};
})"""


def bars(page) -> list[dict]:
    return page.evaluate(BARS_JS)


def test_the_bars_add_up_to_the_cells_score(server, open_site):
    w = open_site()
    w.page.goto(f"{server.base}/{PAGE}")
    settle(w.page)
    w.page.wait_for_function("() => document.querySelectorAll('.course-split-controls').length >= 4")
    figs = bars(w.page)
    assert len(figs) >= 4
    served = w.page.request.get(f"{server.base}/{PAGE}").text()
    for f in figs:  # the script writes the tables' names again, word for word as the page came
        fragment = served[served.index(f'id="{f["id"]}"'):]
        assert f["captions"] == [html.unescape(c) for c in re.findall(r"<caption>(.*?)</caption>", fragment)[:2]], f["id"]
    for f in figs:
        assert len(f["values"]) >= 3, f
        assert abs(f["sum"] - f["score"]) < 1e-3, f
        assert f["score"] == f["shipped"], f
        assert f["values"] == sorted(f["values"], reverse=True), f
    assert not w.errors, w.errors


def test_another_cell_picked_in_the_menus_still_adds_up(server, open_site):
    w = open_site()
    w.page.goto(f"{server.base}/{PAGE}")
    settle(w.page)
    w.page.wait_for_function("() => document.querySelectorAll('.course-split-controls').length >= 4")
    fig = w.page.locator('.course-fig[data-kind="score-split"]').nth(1)  # layer 4, head 4: 18 parts
    fig_id = fig.get_attribute("id")
    before = next(f for f in bars(w.page) if f["id"] == fig_id)
    selects = fig.locator(".course-split-controls select")
    selects.nth(0).select_option("13")  # the second ·coat
    w.page.wait_for_function(f"() => document.querySelector('#{fig_id} .course-split-controls select').value === '13'")
    selects.nth(1).select_option("8")  # the second ·frog
    selects.nth(2).select_option("query")
    w.page.wait_for_function(
        f"() => document.querySelector('#{fig_id} .course-summary').textContent.includes(\"the query's parts\")")
    after = next(f for f in bars(w.page) if f["id"] == fig_id)
    assert (after["q"], after["k"]) == (13, 8) and (after["q"], after["k"]) != (before["q"], before["k"])
    assert abs(after["sum"] - after["score"]) < 1e-3 and after["score"] == after["shipped"]
    assert after["shown"] == f"{after['score']:.2f}".replace("-", "\u2212")
    q, k, (layer, head) = after["tokens"][13], after["tokens"][8], after["head"]
    assert after["captions"] == [  # the tables' names follow the pick (they kept the figure's first cell)
        f"The score of {q} for {k} in layer {layer}, head {head}, split into the query's parts, largest first: they add up to {after['shown']}.",
        f"The row this explains: {q}'s score and weight on each token up to itself in layer {layer}, head {head}; the chosen key is marked."]
    assert not w.errors, w.errors


AWAY = """fid => {
  const spans = [...document.querySelectorAll('span.course-ref.course-ref-figure[data-fig="' + fid + '"]')];
  const buttons = [...document.querySelectorAll('button.course-ref-about')].filter(b => !b.hidden && spans.includes(b.previousElementSibling));
  return {spans: spans.length, away: spans.filter(s => s.classList.contains('course-ref-away')).length,
          buttons: buttons.map(b => b.textContent), summary: document.querySelector('#' + fid + ' .course-summary').textContent};
}"""


def test_the_page_s_numbers_say_when_the_figure_shows_another_cell(server, open_site):
    """The prose numbers of a score-split figure are about the cell it opens on: once the reader
    picks another, they are marked away and a button after them brings the figure back; pressing
    a number does too."""
    w = open_site()
    page = w.page
    page.goto(f"{server.base}/{PAGE}")
    settle(page)
    page.wait_for_function("() => document.querySelectorAll('.course-split-controls').length >= 4")
    fid = page.evaluate("""() => [...document.querySelectorAll('.course-fig[data-kind="score-split"]')]
      .map(f => f.id).find(id => document.querySelector('span.course-ref.course-ref-figure[data-fig="' + id + '"]'))""")
    before = page.evaluate(AWAY, fid)
    assert before["spans"] and before["away"] == 0 and before["buttons"] == [], before
    page.locator(f"#{fid} .course-split-controls select").nth(0).select_option("5")
    page.wait_for_function(f"() => ({AWAY})('{fid}').away > 0")
    after = page.evaluate(AWAY, fid)
    assert after["away"] == after["spans"] and after["summary"] != before["summary"], after
    assert after["buttons"] and all(b == f"figure {fid[4:]} as it opened" for b in after["buttons"]), after
    page.locator("button.course-ref-about", has_text=f"figure {fid[4:]} as it opened").first.click()
    page.wait_for_function(f"() => ({AWAY})('{fid}').away === 0")
    assert page.evaluate(AWAY, fid) == before
    # a press on a number brings the figure back too
    page.locator(f"#{fid} .course-split-controls select").nth(0).select_option("5")
    page.wait_for_function(f"() => ({AWAY})('{fid}').away > 0")
    page.locator(f'span.course-ref.course-ref-figure[data-fig="{fid}"]').first.click()
    page.wait_for_function(f"() => ({AWAY})('{fid}').away === 0")
    assert page.evaluate(AWAY, fid)["summary"] == before["summary"]
    assert not w.errors, w.errors
