"""A Python rule that the browser applies too is written once: the playground's ablation cells take
their colours from causal_data.signed_style's own table (signed_style_steps, shipped in play.js),
not from a second copy of the rule in JavaScript."""

from __future__ import annotations

import bisect
import json
import math
import random
import re
import shutil
import subprocess

import numpy as np
import pytest

from course_builds import REPO
from generator.render.causal_data import signed_style, signed_style_steps
from generator.render.play_model import play_js

NODE = shutil.which("node")


def looked_up(steps: dict, x: float, scale: float) -> str:
    """What play.js's signedStyle does with the table: the last step at or below |x| / scale."""
    t = 0.0 if scale <= 0 else min(1.0, abs(x) / scale)
    table = steps["positive" if x >= 0 else "negative"]
    return table[bisect.bisect_right([s for s, _ in table], t) - 1][1]


def test_the_table_is_signed_style_at_every_step_and_between():
    steps = signed_style_steps()
    for table in steps.values():
        assert [s for s, _ in table] == sorted({s for s, _ in table})  # one step per t, in order
        assert len({style for _, style in table}) == len(table)  # a style is never met twice
    rng = random.Random(7)
    xs = [(rng.uniform(-3, 3), rng.uniform(0, 3)) for _ in range(20000)] + [(0.0, 1.0), (-0.0, 1.0), (0.5, 0.0), (2.0, 1.0)]
    for table in steps.values():  # each step's own t, and the float just below it: where a copy would slip
        xs += [(sign * t, 1.0) for t, _ in table[1:] for sign in (1.0, -1.0)]
        xs += [(sign * math.nextafter(t, 0.0), 1.0) for t, _ in table[1:] for sign in (1.0, -1.0)]
    wrong = [(x, scale) for x, scale in xs if looked_up(steps, x, scale) != signed_style(x, scale)]
    assert wrong == []


def test_play_js_ships_the_table_and_its_lookup_colours_as_python_does():
    js = play_js()
    shipped = json.loads(re.search(r"var SIGNED_STYLES = (.*?);\n", js).group(1))
    assert shipped == {sign: [list(step) for step in table] for sign, table in signed_style_steps().items()}
    if NODE is None:
        pytest.skip("no node to run play.js's lookup")
    source = (REPO / "generator" / "assets" / "play" / "ablation.js").read_text(encoding="utf-8")
    lookup = re.search(r"  function signedStyle\(x, scale\) \{.*?\n  \}\n", source, re.S).group(0)
    xs = [float(x) for x in np.linspace(-1.25, 1.25, 2001)] + [0.0, -0.0, 0.5, -0.5, 0.49999, 1e-12]
    program = (f"var SIGNED_STYLES = {json.dumps(shipped)};\n{lookup}\n"
               f"process.stdout.write(JSON.stringify({json.dumps(xs)}.map(function (x) {{ return signedStyle(x, 1); }})));")
    out = subprocess.run([NODE, "-"], input=program, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [signed_style(x, 1.0) for x in xs]
