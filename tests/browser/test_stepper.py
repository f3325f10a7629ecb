"""The chapter's stepper as the seed lesson has it, and repeated tokens with their positions, in
Chromium on the built course: one step counter, the set-up table, the full score grid
with the focus row marked, bordered tables, e^score as MathML; ·red₄ and ·red₁₀ in a live figure."""

from __future__ import annotations

import pytest

from .conftest import page_opener

pytestmark = pytest.mark.browser


def shown(page, locator):
    """Scroll to a figure and wait until it is drawn (course.css skips off-screen sections)."""
    locator.scroll_into_view_if_needed()
    locator.evaluate("el => new Promise(done => { const ok = () => el.innerText.trim() ? done() : requestAnimationFrame(ok); ok(); })")


@pytest.fixture
def page(browser, server):
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=1280) as open_:
        w = open_()
        w.goto(f"{server.base}/attention.html")
        yield w.page
        assert w.errors == []


def test_the_stepper_has_one_counter_the_setup_table_and_the_full_grid(page):
    fig = page.locator(".course-fig[data-kind=stepper]").first
    shown(page, fig)
    text = fig.inner_text()
    assert text.count("Step 1 of 5") == 1 and "of 5:" not in text
    assert page.evaluate("""() => {
      const li = document.querySelector('.course-fig[data-kind=stepper] li.course-step.is-current');
      return [getComputedStyle(li).listStyleType, getComputedStyle(li.parentNode).listStyleType];
    }""") == ["none", "none"], "no list number before the step"
    setup = fig.locator("table.course-step-setup")
    assert setup.is_visible() and setup.locator("tbody tr").count() == 3
    grid = fig.locator("li.course-step.is-current table")
    assert grid.locator("tbody tr").count() == 3 and grid.locator("thead th").count() == 4  # 3 × 3 and the row headers
    assert grid.locator("tbody tr.course-focus").count() == 1
    border = page.evaluate("() => getComputedStyle(document.querySelector('.course-fig[data-kind=stepper] li.is-current td')).borderTopWidth")
    assert float(border.rstrip("px")) >= 1
    fig.locator("button[data-action=next]").click()
    fig.locator("button[data-action=next]").click()
    assert fig.locator(".course-step-status").inner_text() == "Step 3 of 5"
    ns = page.evaluate("() => document.querySelector('.course-fig[data-kind=stepper] li.is-current thead math').namespaceURI")
    assert ns == "http://www.w3.org/1998/Math/MathML"


@pytest.mark.parametrize("width", [1280, 768, 375])
def test_stepping_never_moves_what_follows_the_stepper(page, width):
    """The figure is as tall as its tallest step, so Next and Back leave the text under it where
    it was; only the current step is visible, and it starts right under the buttons."""
    page.set_viewport_size({"width": width, "height": 900})
    fig = page.locator(".course-fig[data-kind=stepper]").first
    shown(page, fig)
    seen = []
    for step in range(5):
        seen.append(page.evaluate("""() => {
          const f = document.querySelector('.course-fig[data-kind=stepper]'), cur = f.querySelector('li.course-step.is-current');
          const nav = f.querySelector('.course-step-nav').getBoundingClientRect(), r = cur.firstElementChild.getBoundingClientRect();
          return {height: Math.round(f.getBoundingClientRect().height), below: Math.round(f.nextElementSibling.getBoundingClientRect().top),
                  gap: Math.round(r.top - nav.bottom), shown: [...f.querySelectorAll('li.course-step')].filter(li => getComputedStyle(li).visibility === 'visible').length};
        }"""))
        if step < 4:
            fig.locator("button[data-action=next]").click()
    assert len({(s["height"], s["below"]) for s in seen}) == 1, seen
    assert all(s["shown"] == 1 and 0 <= s["gap"] <= 40 for s in seen), seen


@pytest.mark.parametrize("width", [1100, 1280, 1600])
def test_beside_its_text_a_steps_table_starts_at_the_same_place_at_every_step(page, width):
    """Where a step's table sits beside its text, its left edge does not move from step to step
    (ending at the column's edge, it moved with each table's width) and it keeps clear of the text;
    the first grid greys the scores of later tokens, each named as masked."""
    page.set_viewport_size({"width": width, "height": 900})
    fig = page.locator(".course-fig[data-kind=stepper]").first
    shown(page, fig)
    later = fig.locator("li.course-step.is-current td.course-later")
    assert later.count() == 3 and all("(later: masked)" in later.nth(i).inner_text() for i in range(3))
    edges = []
    for step in range(4):  # step 5 has no table
        edges.append(page.evaluate("""() => {
          const cur = document.querySelector('.course-fig[data-kind=stepper] li.course-step.is-current');
          const t = cur.querySelector('.course-table-wrap table').getBoundingClientRect();
          const text = Math.max(...[...cur.querySelectorAll(':scope > p:not(.course-step-title), :scope > ul')].map(e => e.getBoundingClientRect().right));
          return {table: Math.round(t.left), clear: t.left - text, below: t.top > cur.querySelector(':scope > .course-step-title').getBoundingClientRect().bottom};
        }"""))
        fig.locator("button[data-action=next]").click()
    assert len({e["table"] for e in edges}) == 1, edges
    assert all(e["clear"] >= 16 and e["below"] for e in edges), edges


def test_repeated_tokens_carry_their_position_in_the_live_figure(page):
    fig_id = page.evaluate("""() => Array.from(document.querySelectorAll('.course-fig[data-kind=attention]'))
      .find(f => /red ball to Sam/.test(f.querySelector('script.course-data').textContent)).id""")
    shown(page, page.locator(f"#{fig_id}"))
    page.select_option(f"#{fig_id} select[data-control=token]", "10")
    summary = page.locator(f"#{fig_id} .course-summary").inner_text()
    assert summary.startswith("In layer") and "·red₁₀ looks most at" in summary
    labels = page.evaluate(f"() => Array.from(document.querySelectorAll('#{fig_id} .course-summary .course-tok')).map(s => s.getAttribute('aria-label'))")
    assert labels[0] == "space red, position 10"


def test_on_a_phone_every_stepper_table_fits_its_width(browser, server):
    """At 375 px the set-up table and each step's table fit the column: the headers wrap and no
    column lies past the edge (the numbers are short)."""
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=375) as open_:
        w = open_()
        w.goto(f"{server.base}/attention.html")
        fig = w.page.locator(".course-fig[data-kind=stepper]").first
        shown(w.page, fig)
        wide = []
        for step in range(1, 6):
            wide += w.page.evaluate("""(step) => Array.from(document.querySelectorAll(
                '.course-fig[data-kind=stepper] table')).filter(t => t.getClientRects().length).map(t => {
                  const box = t.closest('.course-table-wrap');
                  return [step, t.caption ? t.caption.textContent.slice(0, 40) : '', box.scrollWidth, box.clientWidth];
                }).filter(([, , sw, cw]) => sw > cw + 1)""", step)
            if step < 5:
                fig.get_by_role("button", name="Next").click()
        assert wide == []
        assert w.errors == []
