"""`make bench` labels every figure that has a target "met" or "missed", and never touches
build/site (its pages are built into their own folder). The figures themselves are not tested."""

from __future__ import annotations

import re

from course_builds import REPO
from generator.bench import browser, met, preview, suite

TIMES = dict(painted=0.0, init=1.0, setup=1.0, newplot=1.0, frame=1.0, cpu=1.0)


def timings(painted: float, switch: float, ratio: float) -> dict:
    return {
        "page": "p.html", "runs": 3, "switches": 3, "loadavg": "1.0", "external": [],
        "cold": {**TIMES, "painted": painted}, "warm": {**TIMES, "painted": painted},
        "switch": {"id": "fig-1", "tokens": 6, "heads": 16, "script": 1.0, "painted": switch, "max": switch, "cpu": 1.0},
        "floor": {"cold": 100.0, "warm": 100.0, "warmRatio": ratio, "coldRatio": ratio, "cpu": 1.0, "cpuRatio": 1.0, "pairs": None},
    }


def targets(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(r"\btarget\b|\bbudget\b", line) and not line.startswith("ratio = ")]


def labelled(text: str, word: str) -> None:
    lines = targets(text)
    assert lines, text
    for line in lines:
        assert re.search(rf"\b{word}\b", line), f"not labelled {word!r}: {line}"
        assert "MISSED" not in line and "OVER" not in line and "within" not in line


def test_every_browser_target_is_labelled_met_or_missed():
    labelled(browser.report(timings(100.0, 10.0, 1.1)), "met")
    labelled(browser.report(timings(900.0, 90.0, 2.0)), "missed")
    pages = {"a.html": {"bytes": 5e6, "gzip": 1, "files": {}, "inline": 0, "parts": 0, "partsBytes": 0}}
    onefile = {"a.html": {"bytes": 5e6, "gzip": 1, "partsBytes": 0}}
    labelled(browser.weights_report({"site": "s", "pages": pages, "onefile": onefile}), "missed")
    # the playground's one-file copy holds the weights: listed apart, and the chapters judged alone
    small = {"a.html": {"bytes": 1e6, "gzip": 1, "partsBytes": 0}, "play.html": {"bytes": 9e6, "gzip": 1, "partsBytes": 0, "playground": True}}
    report = browser.weights_report({"site": "s", "pages": {"a.html": {**pages["a.html"], "bytes": 1e6}}, "onefile": small})
    assert "one-file chapters  [target <= 2.5 MB: met, max 1.00 MB]" in report, report
    assert "one-file playground downloads/play.html: 9.00 MB" in report and "no size goal" in report, report
    views = {("attention.html", 1280, "light"): {"height": 9000, "width": 1280}}
    labelled(browser.views_report(views, None), "missed")


def test_the_preview_labels_the_first_and_the_next_saves():
    fast = preview.report({"first": 4.0, "torch_s": 2.0, "load_s": 0.5, "warm": [1.0, 2.0], "fix": 1.5})
    slow = preview.report({"first": 9.0, "torch_s": 2.0, "load_s": 0.5, "warm": [4.0, 5.0], "fix": 4.0})
    labelled(fast, "met")
    labelled(slow, "missed")
    assert "first save: 4.00 s in all [target <= 5 s: met]" in fast
    assert "[target <= 3 s: missed (median)]" in slow


def test_the_suite_says_met_or_missed():
    assert (met(True), met(False)) == ("met", "missed") and suite.met is met
    lines: list[str] = []
    parts = {"parts": 1, "bytes": 1, "gzip_bytes": 1, "plain_bytes": 1, "plain_gzip_bytes": 1}
    suite.print_first_loads([{"page": "gpt2.md", "figure": "fig-1", "kind": "attention", "gzip_bytes": 10e6}], parts, out=lines.append)
    assert any(line.startswith("  largest ") and line.endswith(": missed") for line in lines), lines
    for module in (suite, browser, preview):  # the old words are gone
        source = open(module.__file__, encoding="utf-8").read()
        assert "'MISSED'" not in source and '"MISSED"' not in source and "'OVER'" not in source


def test_make_bench_builds_its_pages_outside_build_site():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench: ", 1)[1].split("\n\n", 1)[0]
    assert "build/site" not in recipe
    site_line = next(line for line in recipe.splitlines() if "-m generator site" in line)
    assert "-d $(BENCH_SITE)" in site_line and "BENCH_SITE := build/bench-site" in makefile
    assert "--site $(BENCH_SITE)" in recipe and "--page $(BENCH_SITE)/" in recipe
