"""Chapter 4's chart of the best head of each kind against training step, in Chromium on the real
course: every kind's chance level can be seen. Kinds with the same chance level (previous-token and
sink, duplicate-token and induction on the tiny model) share one dashed line whose dashes take
their colours in turn; before, the later line hid the earlier one."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# For each chance line as drawn: its level, its stroke colour and dash pattern in the DOM, and the
# colour of its kind's solid line.
CHANCE_JS = """() => Array.from(document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot')).flatMap(plot => {
  const groups = plot.querySelectorAll('.scatterlayer .trace');
  const stroke = i => { const p = groups[i] && groups[i].querySelector('.js-line');
    return p ? {colour: getComputedStyle(p).stroke, dash: p.style.strokeDasharray} : null; };
  return plot.data.map((t, i) => [t, i]).filter(([t]) => /^chance/.test(t.name)).map(([t, i]) => {
    const kind = plot.data.findIndex(s => s.legendgroup === t.legendgroup && !/^chance/.test(s.name));
    return {name: t.name, level: t.y[0], line: stroke(i), kindColour: stroke(kind).colour};
  });
})"""


def dash_intervals(dasharray: str) -> tuple[float, list[tuple[float, float]]]:
    """A stroke-dasharray ("8px, 16px") as its period and the [start, end) of its dashes in one period."""
    lengths = [float(x.strip().removesuffix("px")) for x in dasharray.split(",") if x.strip()]
    if len(lengths) % 2:
        lengths *= 2  # SVG repeats an odd list
    at, dashes = 0.0, []
    for i, n in enumerate(lengths):
        if i % 2 == 0 and n > 0:
            dashes.append((at, at + n))
        at += n
    return at, dashes


def test_dash_intervals_reads_an_svg_dasharray():
    assert dash_intervals("8px, 16px") == (24.0, [(0.0, 8.0)])
    assert dash_intervals("0px, 12px, 8px, 4px") == (24.0, [(12.0, 20.0)])
    assert dash_intervals("3px") == (6.0, [(0.0, 3.0)])


def test_every_kind_s_chance_level_shows_in_its_own_colour(open_site, server):
    w = open_site()
    w.goto(f"{server.base}/training.html", wait_painted=False)
    chart = w.page.locator(".course-fig[data-kind=training]").last
    chart.scroll_into_view_if_needed()
    w.page.wait_for_function("""() => Array.from(document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot'))
        .some(p => p.data.some(t => /^chance/.test(t.name)))""")
    lines = w.page.evaluate(CHANCE_JS)
    assert len(lines) >= 2
    by_level: dict[float, list[dict]] = {}
    for line in lines:
        assert line["line"]["colour"] == line["kindColour"], line
        by_level.setdefault(round(line["level"], 4), []).append(line)
    assert any(len(group) > 1 for group in by_level.values()), "the tiny model's kinds share chance levels"
    for level, group in by_level.items():
        drawn = [dash_intervals(line["line"]["dash"]) for line in group]
        assert all(dashes for _, dashes in drawn), (level, group)
        if len(group) == 1:
            continue
        assert len({period for period, _ in drawn}) == 1, (level, group)  # one rhythm
        spans = sorted(span for _, dashes in drawn for span in dashes)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), f"dashes at {level} hide each other: {group}"
    assert w.errors == []


@pytest.mark.parametrize("width", [375, 1280])
def test_both_charts_label_the_same_steps_up_to_the_last(open_site, server, width):
    """The loss chart and the heads chart share their step axis: the same labels, from 0 to the
    last logged step, which the text names (at 375 px one showed 0 and 5000, the other 0 to 8000)."""
    w = open_site(viewport={"width": width, "height": 900})
    w.goto(f"{server.base}/training.html", wait_painted=False)
    w.page.locator(".course-fig[data-kind=training]").last.scroll_into_view_if_needed()
    w.page.wait_for_function("document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot .xtick').length > 0 && "
                             "document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot').length >= 2")
    got = w.page.evaluate("""() => Array.from(document.querySelectorAll('.course-fig[data-kind=training] .js-plotly-plot')).map(p => ({
      ticks: [...p.querySelectorAll('.xtick text')].map(t => t.textContent),
      last: Math.max(...p.data.flatMap(t => t.x))}))""")
    assert len(got) == 2 and got[0]["ticks"] == got[1]["ticks"], got
    last = max(g["last"] for g in got)
    assert got[0]["ticks"][0] == "0" and got[0]["ticks"][-1] == f"{last:,}", got
    assert 3 <= len(got[0]["ticks"]) <= (6 if width < 500 else 12), got
    assert w.errors == []
