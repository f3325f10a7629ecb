"""The playground's score split (generator/assets/play/split.js, forward.js's scoreSplit) in
Chromium, on a committed sentence: the shown head's split of the focus token's cell is the one
`make traces` stored in traces/tiny/splits.json, before and after the reader picks another key and
side; the bars add up to the score."""

from __future__ import annotations

import pytest

from course_builds import REPO

from .conftest import page_opener
from .test_play import enc, play_url  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FROG = "frog lamp seven river coat frog lamp seven river coat"
SPLIT = "() => { const a = document.getElementById('course-play').coursePlay; return a.split || null; }"


def stored(layer: int, head: int, q: int, k: int, side: str) -> dict[str, float]:
    from generator.store import splits_file

    s = splits_file.read(REPO / "traces", "tiny")
    e = s.head(FROG, layer, head)
    cell = q * (q + 1) // 2 + k
    return {p: e[side][i][cell] for i, p in enumerate(s.parts(layer))} | {"score": e["score"][cell]}


def check(page, layer, head, q, k, side):
    got = page.evaluate(SPLIT)
    assert (got["layer"] + 1, got["head"] + 1, got["query"], got["key"], got["side"]) == (layer, head, q, k, side)
    want = stored(layer, head, q, k, side)
    assert abs(got["score"] - want["score"]) < 1e-4
    assert {p for p, _ in got["parts"]} == set(want) - {"score"}
    for p, v in got["parts"]:
        assert abs(v - want[p]) < 1e-4, (p, v, want[p])
    bars = page.evaluate("() => [...document.querySelectorAll('.course-play-split tr[data-part]')].map(tr => Number(tr.dataset.value))")
    shown = float(page.get_attribute(".course-play-split td[data-score]", "data-score"))
    assert abs(sum(bars) - shown) < 1e-3 and bars == sorted(bars, reverse=True)


def test_the_playgrounds_split_is_the_stored_one_on_a_committed_sentence(browser, play_url):  # noqa: F811
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url + f"#s={enc(FROG)}&layer=4&head=4&token=12")
        page.wait_for_function(f"() => {{ const s = ({SPLIT})(); return s && s.layer === 3 && s.head === 3 && s.query === 12; }}",
                               timeout=60000)
        check(page, 4, 4, 12, 7, "key")  # the key where layer 4, head 4 looks most from the second ·river: the first ·coat
        page.select_option("#play-split-side", "query")
        page.wait_for_function(f"() => ({SPLIT})().side === 'query'")
        check(page, 4, 4, 12, 7, "query")
        page.select_option("#play-split-key", "4")
        page.wait_for_function(f"() => ({SPLIT})().key === 4")
        check(page, 4, 4, 12, 4, "query")
        assert page.evaluate("() => document.getElementById('course-play').coursePlay.splitMs") >= 0
        assert not w.errors, w.errors
