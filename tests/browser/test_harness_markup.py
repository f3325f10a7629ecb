"""The harness page's figures are the renderer's (tests/browser/harness.py): the harness writes
no figure markup and no palette of its own, so a change in a template or in render/format.py is
what the browser tests see. No browser here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from generator import render
from generator.lessons.directives import parse_directive
from generator.render import format as fmt
from generator.render.context import Ctx
from generator.store import TraceStore

from . import harness

HARNESS_PY = Path(harness.__file__)

# What only a hand-written copy of the renderer's output or of its colours would hold
HAND_WRITTEN = {
    "an HTML element of a figure": re.compile(r"<(figure|figcaption|table|thead|tbody|tr|td|th|select|option|ol|li|section|output|input)\b"),
    "a figure's class": re.compile(r"course-(fig|summary|controls|table|top3|plot|panel|pending|step|bar|weight|sortable)\b"),
    "a hex colour": re.compile(r"#[0-9a-fA-F]{6}\b"),
    "an rgb() colour built here": re.compile(r"rgb\(\s*\d"),
    "a palette of its own": re.compile(r"^\s*(CIVIDIS|PALETTE|COLOU?RS?|STOPS)\s*=", re.M),
}


def hand_written(source: str) -> list[str]:
    """What in `source` reads as figure markup or a palette written by hand, one line each."""
    found = []
    for what, pattern in HAND_WRITTEN.items():
        for m in pattern.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            found.append(f"harness.py:{line}: {what} ({m.group(0).strip()!r})")
    return found


def test_harness_writes_no_figure_markup_and_no_palette():
    assert hand_written(HARNESS_PY.read_text(encoding="utf-8")) == []


def test_the_check_finds_a_hand_written_figure_and_palette():
    planted = '''
CIVIDIS = ["#00224e", "#123570"]
def fig(n):
    return f'<figure class="course-fig" id="fig-{n}"><table class="course-table"><td style="background:rgb(0, 34, 78)">'
'''
    found = " ".join(hand_written(planted))
    for what in HAND_WRITTEN:
        assert what in found, what


def test_every_figure_on_the_page_is_the_renderers(tmp_path):
    """Each <figure> of index.html is, byte for byte, what the renderer gives for the harness's
    specs, rendered again here from the same store through generator.render.KINDS; and the page
    holds every kind course.js drives on it."""
    harness.build(tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    figures = re.findall(r"<figure\b.*?</figure>", page, re.S)
    kinds = [re.search(r'data-kind="([^"]+)"', f)[1] for f in figures]
    assert {"attention", "compare", "stepper", "softmax", "training", "scoreboard"} <= set(kinds)
    assert sum('data-pending="true"' in f for f in figures) == 1

    harness.write_store(tmp_path / "store")
    ctx = Ctx(store=TraceStore(tmp_path / "store"), page=harness.PAGE, assets_url="", training_log=harness.training_log())
    again = []
    for line, (kind, spec) in enumerate(harness.FIGURES, 1):
        if kind in render.KINDS:
            d = parse_directive(kind, json.dumps(spec), f"{harness.PAGE}:{line}")
            again += re.findall(r"<figure\b.*?</figure>", render.KINDS[kind].render(d, ctx), re.S)
    assert figures == again


def test_cell_colours_are_the_shipped_palette():
    for w in (0.0, 0.1234, 0.47, 0.5, 1.0):
        assert f"background:{harness.colour(w)};" in fmt.cell_style(w)
