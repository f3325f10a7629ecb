"""Chapters 5 and 6's causal figures in Chromium (the session's shared build of the real course): a cell
of the ablation grid opens that head in the attention figure above; at 375 and 1280 px, light
and dark, no figure makes the page scroll sideways and every cell's text keeps 4.5:1 against what
is behind it; without JavaScript the tables are all there; the one-file chapter has them too."""

from __future__ import annotations

import pytest

from course_builds import settle

from .figure_ids import course_figure

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# each chapter's causal figure kinds: chapter 5 tests one head four ways, chapter 6 removes heads
KINDS = {"causal.html": ("ablation", "attribution", "patching", "lens"), "circuits.html": ("ablation", "circuit")}

# every number cell of the causal tables: its text colour against its own background, blended
# down over its ancestors' (the page's) as the browser painted them
CELL_CONTRAST_JS = """() => {
  const parse = c => { const m = /rgba?\\(([^)]+)\\)/.exec(c || ''); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const over = (fg, bg) => ({r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a), b: fg.b * fg.a + bg.b * (1 - fg.a), a: 1});
  const behind = el => { const stack = []; for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor); if (c && c.a > 0) { stack.push(c); if (c.a >= 1) break; } }
    let bg = {r: 255, g: 255, b: 255, a: 1}; for (let i = stack.length - 1; i >= 0; i--) bg = over(stack[i], bg); return bg; };
  const out = [];
  document.querySelectorAll('.course-fig:is([data-kind=ablation],[data-kind=patching],[data-kind=attribution]) td').forEach(td => {
    if (!td.textContent.trim()) return;
    const bg = behind(td), fg = over(parse(getComputedStyle(td.querySelector('a') || td).color), bg);
    const a = lum(fg), b = lum(bg);
    out.push({text: td.textContent.trim(), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)});
  });
  return out;
}"""


def test_an_ablation_cell_opens_that_head_in_the_attention_figure(course, server, open_site):
    fig = course_figure(course, "causal.html", kind="attention", sentence="Lily wanted to play with")
    w = open_site()
    w.page.goto(f"{server.base}/causal.html")
    settle(w.page)
    cell = w.page.locator('.course-fig[data-kind="ablation"]').first.locator("tbody tr").nth(1).locator("a").nth(2)
    href = cell.get_attribute("href")  # layer 2, head 3
    assert href.startswith(f"#{fig}:layer=2,head=3,token=")
    # open another head first, so the link has something to change
    w.page.goto(f"{server.base}/causal.html#{fig}:layer=1,head=1,token=6")
    settle(w.page)
    w.page.locator('.course-fig[data-kind="ablation"] tbody tr').nth(1).locator("a").nth(2).click()
    w.page.wait_for_function(f"() => document.querySelector('#{fig}-head') && document.querySelector('#{fig}-head').value === '2'")
    assert w.page.locator(f"#{fig}-layer").input_value() == "1"
    assert not w.errors, w.errors


@pytest.mark.parametrize("rel", sorted(KINDS))
@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_causal_tables_fit_and_read_in_both_palettes(server, open_site, width, scheme, rel):
    w = open_site(viewport={"width": width, "height": 900}, color_scheme=scheme)
    w.page.goto(f"{server.base}/{rel}")
    settle(w.page)
    assert w.page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    for kind in KINDS[rel]:
        assert w.page.locator(f'.course-fig[data-kind="{kind}"] table').count() >= 1, kind
    cells = w.page.evaluate(CELL_CONTRAST_JS)
    assert len(cells) > {"causal.html": 16 * 2 + 22, "circuits.html": 16}[rel]  # chapter 6: one grid of the tiny model's 16 heads
    weak = [c for c in cells if c["ratio"] < 4.5]
    assert not weak, weak[:5]
    assert not w.errors, w.errors


@pytest.mark.parametrize("rel", sorted(KINDS))
def test_without_javascript_every_causal_table_is_there(server, open_site, rel):
    w = open_site(js=False)
    w.page.goto(f"{server.base}/{rel}")
    for kind in KINDS[rel]:
        table = w.page.locator(f'.course-fig[data-kind="{kind}"] table').first
        assert table.is_visible(), kind
        assert table.locator("td").count() >= 5, kind


@pytest.mark.parametrize("rel", sorted(KINDS))
def test_the_one_file_chapter_holds_the_causal_figures(course, rel):
    page = (course / "build" / "site" / "downloads" / rel).read_text(encoding="utf-8")
    for kind in KINDS[rel]:
        assert f'data-kind="{kind}"' in page, kind
