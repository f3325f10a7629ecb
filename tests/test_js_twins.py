"""The page scripts' twins of Python functions: a function course.js or play.js must compute in
the reader's page (a number formatted live, a cell coloured for a sentence the reader typed) and
that Python computes for the first paint. Each twin is listed in TWINS, run in Node on many inputs
and held equal to its Python function; a constant of a rule comes from Python (colorscale.js,
play.js's SIGNED_RULE), never typed into the script. A script comment that names a Python function
it copies ("as format.diff2") names a twin this file checks, or the test fails."""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import REPO
from generator import heads, registry, schema
from generator.lessons import values
from generator.render import causal_data, grid, softmax
from generator.render import format as fmt
from generator.render.play_model import play_js
from generator.store import codec
from test_token_labels import SENTENCE, js_function

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

ASSETS = REPO / "generator" / "assets"
SCRIPT_PARTS = sorted((ASSETS / "js").glob("*.js")) + sorted((ASSETS / "play").glob("*.js"))

# JavaScript twin -> the Python function it must agree with (module.function, as a script's
# comment names it). course.js's are run from core.js, play.js's from the play.js the site ships.
TWINS = {
    "fmt": "format.f2",  # and f"{x:.{d}f}" for every d
    "signed2": "format.diff2",
    "shownDiff": "format.shown_diff",
    "roundHalfEven": "round",
    "cellRGB": "format.cell_rgb",
    "cellColour": "format.cell_style",
    "tokDisplay": "format.token_label",
    "tokSpoken": "format.token_spoken",
    "ranked": "grid.top_entries",
    "softmax": "softmax.softmax",
    "contrastRatio": "format.contrast_ratio",
    "signedStyle": "causal_data.signed_style",
    "rankedHeads": "causal_data.ranked_heads",
    "pageTokens": "format.page_tokens",
    "patternTargets": "heads.pattern_targets",
    "scaleDecimals": "codec.scale_decimals",
    "npRound": "np.round",
}
PLAY_TWINS = ("luminance", "contrastRatio", "signedStyle", "rankedHeads", "pageTokens", "patternTargets")
# constants a script keeps beside the twins that read them, each held to Python's value:
# (script part, JS name, Python's value)
CONSTANTS = [
    ("js/traces.js", "SCALE_DIGITS", codec.SCALE_DIGITS),
    ("js/softmax.js", "SCORE_LIMIT", values.MAX_MAGNITUDE),
    ("js/softmax.js", "SOFTMAX_DECIMALS", len(fmt.f3(0.0).split(".")[1])),  # the softmax table's f3
    ("play/scores.js", "SCORE_KINDS", list(registry.KINDS)),
]
# "as format.diff2", "as causal_data.signed_style", "Python's token_label": a comment naming what it copies
NAMED_COPY = re.compile(r"\bas (?:format|fmt|causal_data|grid|softmax|heads|codec)\.(\w+)|Python's (token_label|token_spoken)\b")


def run_node(program: str, cases) -> object:
    out = subprocess.run(["node", "-e", program], input=json.dumps(cases), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def core_program(body: str) -> str:
    """core.js (its helpers at the top level of a Node script, with the colour file it reads) and `body`."""
    return (
        "var window = {};\n" + fmt.colorscale_js() + "\n"
        + (ASSETS / "js" / "core.js").read_text(encoding="utf-8") + "\n"
        + "var cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" + body
    )


def play_program(body: str) -> str:
    """play.js's twins as the site ships them (SIGNED_RULE written in), on core.js's helpers."""
    shipped = play_js()
    rule = re.search(r"var SIGNED_RULE = [^\n]*;\n", shipped)
    assert rule, "play.js carries no SIGNED_RULE"
    funcs = "\n".join(js_function(shipped, name) for name in PLAY_TWINS)
    return core_program("window.course = { fmt: fmt, roundHalfEven: roundHalfEven };\n" + rule.group(0) + funcs + "\n" + body)


def numbers(seed: int) -> list[float]:
    rng = random.Random(seed)
    xs = [k / 16 for k in range(-40, 41)] + [k / 1000 for k in range(-1500, 1500, 7)]
    xs += [math.nextafter(k / 8, s) for k in range(-20, 20) for s in (-math.inf, math.inf)]
    xs += [0.005, 0.015, -0.005, 2.675, 1e6 + 0.125, -0.0, 0.0]
    return xs + [rng.uniform(-3, 3) for _ in range(2000)]


def test_fmt_signed2_and_shown_diff_write_what_python_writes():
    xs = numbers(1)
    pairs = [[a, b] for a, b in zip(xs, reversed(xs))]
    got = run_node(core_program(
        "process.stdout.write(JSON.stringify({fmt: [0, 1, 2, 3, 4].map(d => cases.xs.map(x => fmt(x, d))),"
        " signed2: cases.xs.map(signed2), shownDiff: cases.pairs.map(p => shownDiff(p[0], p[1]))}));"),
        {"xs": xs, "pairs": pairs})
    for d in range(5):
        assert got["fmt"][d] == [f"{x:.{d}f}" for x in xs], d
    assert got["fmt"][2] == [fmt.f2(x) for x in xs]
    assert got["signed2"] == [fmt.diff2(x) for x in xs]
    assert got["shownDiff"] == [fmt.shown_diff(a, b) for a, b in pairs]


def test_cell_colours_and_python_round_agree():
    rng = random.Random(2)
    ws = [k / 512 for k in range(-8, 521)] + [rng.random() for _ in range(2000)]
    halves = [k + 0.5 for k in range(-10, 300)] + [rng.uniform(0, 255) for _ in range(500)]
    got = run_node(core_program(
        "process.stdout.write(JSON.stringify({rgb: cases.ws.map(cellRGB), colour: cases.ws.map(cellColour),"
        " round: cases.halves.map(roundHalfEven)}));"), {"ws": ws, "halves": halves})
    assert got["rgb"] == [list(fmt.cell_rgb(w)) for w in ws]
    assert ["background:{};color:{}".format(c["background"], c["color"]) for c in got["colour"]] == [fmt.cell_style(w) for w in ws]
    assert got["round"] == [round(h) for h in halves]


def test_the_top_keys_and_the_softmax_agree():
    rng = np.random.default_rng(3)
    rows = [rng.dirichlet(np.ones(n) * a).round(rng.integers(2, 6)).tolist() for n in (2, 5, 9, 16) for a in (0.1, 1, 10) for _ in range(40)]
    rows += [[0.5, 0.5, 0.0, 0.0], [0.25] * 4, [0.004, 0.996, 0.0]]
    queries = [[row, i] for row in rows for i in range(len(row))]
    scores = [rng.normal(0, s, n).tolist() for n in (1, 3, 8) for s in (0.5, 5, 50) for _ in range(20)]
    got = run_node(core_program(
        "process.stdout.write(JSON.stringify({ranked: cases.queries.map(q => ranked(q[0], q[1])),"
        " softmax: cases.scores.map(softmax)}));"), {"queries": queries, "scores": scores})
    assert got["ranked"] == [grid.top_entries(row, i) for row, i in queries]
    for js, xs in zip(got["softmax"], scores):
        assert np.allclose(js, softmax.softmax(xs), rtol=1e-12, atol=1e-15)


def test_token_labels_agree_on_the_course_s_kinds_of_token():
    toks = fmt.label_tokens(SENTENCE)
    got = run_node(core_program("process.stdout.write(JSON.stringify(cases.map(t => [tokDisplay(t), tokSpoken(t)])));"), toks)
    assert got == [[fmt.token_label(t), fmt.token_spoken(t)] for t in toks]


def test_course_js_colours_signed_cells_as_python_does():
    """course.js's own signedStyle (the score split's bars), its constants read from colorscale.js."""
    xs = numbers(9)
    scales = [1.0, 0.37, 2.5, 0.0]
    got = run_node(core_program("process.stdout.write(JSON.stringify(cases.scales.map(s => cases.xs.map(x => signedStyle(x, s)))));"),
                   {"xs": xs, "scales": scales})
    for scale, styles in zip(scales, got):
        assert styles == [causal_data.signed_style(x, scale) for x in xs], scale


def test_play_js_colours_and_ranks_the_ablation_cells_as_python_does():
    rng = random.Random(4)
    colours = [[rng.randrange(256) for _ in range(3)] for _ in range(300)] + [[0, 0, 0], [255, 255, 255]]
    xs = numbers(5)
    scales = [1.0, 0.37, 2.5, 0.0]
    grids = [np.round(np.random.default_rng(s).normal(0, 1, (4, 4)), s % 4 + 1) for s in range(60)]
    got = run_node(play_program(
        "process.stdout.write(JSON.stringify({contrast: cases.colours.map(c => contrastRatio(c, [0, 0, 0])),"
        " styles: cases.scales.map(s => cases.xs.map(x => signedStyle(x, s))),"
        " heads: cases.grids.map(g => rankedHeads(g).map(c => [c[0], c[1]]))}));"),
        {"colours": colours, "xs": xs, "scales": scales, "grids": [g.tolist() for g in grids]})
    assert np.allclose(got["contrast"], [fmt.contrast_ratio(c, (0, 0, 0)) for c in colours], rtol=1e-12)
    for scale, styles in zip(scales, got["styles"]):
        assert styles == [causal_data.signed_style(x, scale) for x in xs], scale
    assert got["heads"] == [[[l, h] for l, h, _ in causal_data.ranked_heads(g)] for g in grids]


def test_play_js_reads_tokens_and_score_patterns_as_python_does():
    rng = random.Random(6)
    texts = [" her", "Lily", " ", "\n", "\t", " a\tb", "<|endoftext|>", ".", " red", "red", "x\ny"]
    sentences = [[rng.randrange(len(texts)) for _ in range(rng.randrange(1, 14))] for _ in range(200)]
    ids = [[rng.randrange(5) for _ in range(rng.randrange(1, 16))] for _ in range(200)]
    got = run_node(play_program(
        "var tok = { text: function (id) { return cases.texts[id]; } };\n"
        "process.stdout.write(JSON.stringify({tokens: cases.sentences.map(s => pageTokens(tok, s)),"
        " targets: cases.kinds.map(k => cases.ids.map(s => patternTargets(k, s)))}));"),
        {"texts": texts, "sentences": sentences, "ids": ids, "kinds": list(registry.KINDS)})
    for s, js in zip(sentences, got["tokens"]):
        want = fmt.page_tokens([{"id": i, "text": texts[i], "display": schema.display_token(texts[i]), "spoken": schema.spoken_token(texts[i])} for i in s])
        assert js == want, s
    for kind, per_kind in zip(registry.KINDS, got["targets"]):
        assert per_kind == [[list(t) for t in heads.pattern_targets(kind, s)] for s in ids], kind


def test_the_page_decodes_a_trace_s_numbers_as_the_store_does():
    source = (ASSETS / "js" / "traces.js").read_text(encoding="utf-8")
    rng = np.random.default_rng(8)
    scales = sorted({float(f"{x:.2g}") for x in rng.uniform(1e-6, 10, 300)})
    xs = rng.normal(0, 3, 3000).tolist() + [k / 2 for k in range(-20, 21)]
    got = run_node("var cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
                   + re.search(r"var SCALE_DIGITS = [^;]*;", source).group(0) + "\n"
                   + js_function(source, "scaleDecimals") + "\n" + js_function(source, "npRound") + "\n"
                   "process.stdout.write(JSON.stringify({dec: cases.scales.map(scaleDecimals),"
                   " round: [0, 1, 2, 3].map(d => cases.xs.map(x => npRound(x, d)))}));", {"scales": scales, "xs": xs})
    assert got["dec"] == [codec.scale_decimals(s) for s in scales]
    for d, js in enumerate(got["round"]):
        assert js == np.round(np.array(xs), d).tolist(), d


def test_the_constants_a_script_keeps_are_python_s():
    for part, name, want in CONSTANTS:
        m = re.search(rf"var {name} = ([^;]*);", (ASSETS / part).read_text(encoding="utf-8"))
        assert m, f"{part} no longer has {name}: take it out of CONSTANTS"
        assert json.loads(m.group(1).replace("'", '"')) == want, (part, name)


def test_every_copy_a_script_names_is_a_checked_twin():
    """A new twin marked as such ("as format.x") must join TWINS, and so this file's checks."""
    named = {m.group(1) or m.group(2) for p in SCRIPT_PARTS for m in NAMED_COPY.finditer(p.read_text(encoding="utf-8"))}
    checked = {py.rpartition(".")[2] for py in TWINS.values()}
    assert named - checked == set(), f"script functions copy these Python functions unchecked: {sorted(named - checked)}"
    defined = {m.group(1) for p in SCRIPT_PARTS for m in re.finditer(r"function (\w+)\(", p.read_text(encoding="utf-8"))}
    assert set(TWINS) <= defined, f"TWINS names functions no script defines: {sorted(set(TWINS) - defined)}"


def test_no_script_types_a_constant_python_owns():
    """The signed colours' ends and thresholds and the colour scale are written in from Python."""
    owned = [", ".join(map(str, causal_data.POSITIVE_RGB)), ", ".join(map(str, causal_data.NEGATIVE_RGB)), "SOLID_FROM",
             str(fmt.TEXT_DARK_FROM)] + list(fmt.CIVIDIS[1:-1])
    typed = [(p.name, c) for p in SCRIPT_PARTS for c in owned if c in p.read_text(encoding="utf-8").replace(",", ", ").replace(",  ", ", ")]
    assert typed == [], f"constants typed into a script (write them in from Python): {typed}"
