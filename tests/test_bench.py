"""generator.bench.browser's arithmetic (the bench itself prints figures and is not a test)."""

import pytest

from generator.bench.browser import RATIO_TARGET, paired_ratios


def test_each_page_load_meets_the_floor_loads_either_side_of_it():
    # The machine slows down over the run: each floor load is 10 ms slower than the one before,
    # and each page load sits between two of them at 1.25x their mean.
    floor = [100.0 + 10 * i for i in range(9)]
    page = [1.25 * (floor[i] + floor[i + 1]) / 2 for i in range(8)]
    r = paired_ratios(page, floor)
    assert r["n"] == 8
    assert r["median"] == pytest.approx(1.25)
    assert r["q1"] == pytest.approx(1.25) and r["q3"] == pytest.approx(1.25)
    assert r["met"] == 8


def test_the_last_page_load_has_only_the_floor_load_before_it():
    floor = [100.0, 100.0, 100.0, 100.0]  # the run ends on a page load: no floor after the last
    page = [120.0, 120.0, 120.0, 150.0]
    r = paired_ratios(page, floor)
    assert r["n"] == 4
    assert r["met"] == 3 and 150.0 / 100.0 > RATIO_TARGET
    assert r["q3"] > r["median"] == pytest.approx(1.2)


def test_too_few_pairs_give_no_spread():
    assert paired_ratios([120.0, 130.0, 125.0], [100.0, 100.0, 100.0]) is None


@pytest.mark.parametrize("flag", ["--runs", "--switches"])
@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_a_count_below_one_is_a_one_line_usage_error(flag, value, capsys):
    from generator.bench import browser as bench_browser

    with pytest.raises(SystemExit) as stop:
        bench_browser.main([flag, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"python -m generator.bench.browser: error: argument {flag}: invalid positive_int value: '{value}'"
    assert "Traceback" not in "\n".join(err)


def test_every_built_page_s_script_stays_within_a_chapter_s_budget():
    """make bench's page-weight figure, as a check: no built page (the playground included, less
    its weights, which load after the first paint) ships more script code than SCRIPT_TARGET."""
    from course_builds import shared_course
    from generator.bench.page_weight import SCRIPT_TARGET, site_weights

    pages = site_weights(shared_course() / "build" / "site")["pages"]
    assert "play.html" in pages and "attention.html" in pages, sorted(pages)
    over = {rel: v["bytes"] for rel, v in pages.items() if v["bytes"] > SCRIPT_TARGET}
    assert not over, f"over {SCRIPT_TARGET:,.0f} bytes of script: {over}"


def test_the_playground_bench_reads_the_page_s_delays_from_page_js(tmp_path, monkeypatch):
    from generator.bench import play

    src = play.PAGE_JS.read_text(encoding="utf-8")
    for name, value in (("TYPING_DELAY", play.TYPING_DELAY_MS), ("QUICK_RUN", play.QUICK_RUN_MS)):
        assert f"var {name} = {value};" in src
    fake = tmp_path / "page.js"
    fake.write_text("  var TYPING_DELAY = 90;\n", encoding="utf-8")
    monkeypatch.setattr(play, "PAGE_JS", fake)
    assert play.page_constant("TYPING_DELAY") == 90
    with pytest.raises(SystemExit, match="no `var QUICK_RUN"):
        play.page_constant("QUICK_RUN")


@pytest.mark.parametrize("fix, word", [(1.25, "met"), (3.5, "missed")])
def test_the_preview_bench_reports_how_long_a_fixed_mistake_takes_to_clear(fix, word):
    from generator.bench import preview

    text = preview.report({"first": 4.0, "torch_s": 2.0, "load_s": 0.5, "warm": [1.0, 2.0, 2.5], "fix": fix})
    line = next(line for line in text.splitlines() if "a fixed mistake" in line)
    assert f"{fix:.2f} s from saving the fix to the error box gone and the figure painted" in line
    assert line.endswith(f"[target <= {preview.FIX_TARGET_S:.0f} s: {word}]")
