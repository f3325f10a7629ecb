"""rotary.json (generator/model/rotary.py, generator/store/rotary_file.py) and the rope-distance
figure: numbers recomputed independently with numpy from θ, byte-identical re-runs, a damaged
file as one line, the figure's golden HTML."""

from __future__ import annotations

import html
import json
import re
import math
import textwrap

import numpy as np
import pytest

from conftest import write_traces
from generator import render
from generator.lessons import directives as D
from generator.lessons.errors import LessonError
from generator.render.context import Ctx
from generator.store import TraceStore, rotary_file
from generator.store.files import DamagedFile
from test_render import check_golden, course_data, text_of

SENTENCE = "Tom gave the ball to Sam"
IDS = [0, 5, 9, 2, 7, 3, 11]
TEXTS = ["<|endoftext|>", "Tom", " gave", " the", " ball", " to", " Sam"]


@pytest.fixture(scope="module")
def llama():
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=8, max_position_embeddings=24,
                      rope_parameters={"rope_theta": 100.0, "rope_type": "default"}, attn_implementation="eager")
    return LlamaForCausalLM(cfg).eval()


def small_build(llama, monkeypatch):
    from generator.model import rotary

    monkeypatch.setattr(rotary, "MAX_DISTANCE", 12)
    monkeypatch.setattr(rotary, "SCORING_SENTENCES", ("a", "b"))
    texts = {"a": [0, 1, 2, 3, 4, 5, 6, 7], "b": [0, 8, 9, 10, 11, 12]}
    return rotary.build(llama, "tiny-rope", "rev1", texts.__getitem__, [(SENTENCE, IDS, TEXTS, 6, 5), (SENTENCE, IDS, TEXTS, 6, 1)])


def numpy_qk(llama, ids):
    """Unrotated q (layer, token, head, d) and k (layer, token, kv, d) from transformers' hidden
    states through each layer's own norm and projections: not through generator.model.arch."""
    import torch

    with torch.no_grad():
        hs = llama(torch.tensor([ids]), output_hidden_states=True).hidden_states
        qs, ks = [], []
        for l, layer in enumerate(llama.model.layers):
            x = layer.input_layernorm(hs[l])[0]
            qs.append(layer.self_attn.q_proj(x).view(len(ids), 4, 8).double().numpy())
            ks.append(layer.self_attn.k_proj(x).view(len(ids), 2, 8).double().numpy())
    return qs, ks


def numpy_turn(x, pos, theta, d=8):
    inv = theta ** (-np.arange(0, d, 2) / d)  # (d/2,)
    a = np.concatenate([pos * inv, pos * inv])  # (d,)
    half = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * np.cos(a) + half * np.sin(a)


def test_numbers_match_numpy_rotation_from_theta(llama, monkeypatch):
    doc = small_build(llama, monkeypatch)
    assert doc["ropeTheta"] == 100 and doc["nKvHead"] == 2 and doc["meanLongest"] == 7
    theta, scale = doc["ropeTheta"], 1 / math.sqrt(8)
    qs, ks = numpy_qk(llama, IDS)
    pair = next(p for p in doc["sentences"][0]["pairs"] if (p["query"], p["key"]) == (6, 1))
    assert pair["distance"] == 5
    for l in range(2):
        for h in range(4):
            q, k = qs[l][6, h], ks[l][1, h // 2]  # query head h reads key/value head h // 2
            want = [scale * numpy_turn(q, dist, theta) @ k for dist in range(24)]
            assert np.allclose(pair["curve"][l][h], want, rtol=1e-6, atol=1e-9)
            real = scale * numpy_turn(q, 6, theta) @ numpy_turn(k, 1, theta)
            assert math.isclose(pair["score"][l][h], real, rel_tol=1e-6, abs_tol=1e-9)
    # the mean: every pair (key at or before query) of both scoring texts, at each distance
    qa, ka = numpy_qk(llama, [0, 1, 2, 3, 4, 5, 6, 7])
    qb, kb = numpy_qk(llama, [0, 8, 9, 10, 11, 12])
    l, h = 1, 3
    for dist in (0, 1, 7, 12):
        vals = [scale * numpy_turn(q[i, h], dist, theta) @ k[j, h // 2]
                for q, k in ((qa[l], ka[l]), (qb[l], kb[l])) for i in range(len(q)) for j in range(i + 1)]
        assert math.isclose(doc["mean"][l][h][dist], np.mean(vals), rel_tol=1e-6, abs_tol=1e-9)


def test_rewrite_is_byte_identical_and_reads_back(llama, monkeypatch, tmp_path):
    p = rotary_file.write(tmp_path, "tiny-rope", small_build(llama, monkeypatch))
    first = p.read_bytes()
    rotary_file.write(tmp_path, "tiny-rope", small_build(llama, monkeypatch))
    assert p.read_bytes() == first
    r = rotary_file.read(tmp_path, "tiny-rope")
    assert r.named() == [(SENTENCE, 6, 1), (SENTENCE, 6, 5)]
    assert all(len(f"{abs(x):.15g}".replace(".", "").lstrip("0")) <= 5 for x in r.mean(2, 4))  # 5 significant digits


@pytest.mark.parametrize("damage, words", [
    (lambda doc: doc.update(format=99), "has format 99"),
    (lambda doc: doc.pop("meanLongest"), "has no whole meanLongest"),
    (lambda doc: doc["mean"][0].pop(), "mean is not a list of 4"),
    (lambda doc: doc["mean"][0][0].__setitem__(0, 1e300), "is not a finite number within ±1e9"),
    (lambda doc: doc["sentences"][0]["pairs"][0]["score"][0].__setitem__(0, 123.0), "is not its curve at distance"),
    (lambda doc: doc["sentences"][0]["pairs"][0].update(key=9), "a key at or before it"),
])
def test_damaged_file_is_one_line(llama, monkeypatch, tmp_path, damage, words):
    p = rotary_file.write(tmp_path, "tiny-rope", small_build(llama, monkeypatch))
    doc = json.loads(p.read_text())
    damage(doc)
    p.write_text(json.dumps(doc))
    with pytest.raises(DamagedFile) as e:
        rotary_file.read(tmp_path, "tiny-rope")
    assert words in str(e.value) and str(p) in str(e.value) and "\n" not in str(e.value)


def test_cut_short_file_is_one_line(tmp_path):
    p = rotary_file.path(tmp_path, "tiny-rope")
    p.parent.mkdir(parents=True)
    p.write_text('{"format": 1, "mo')
    with pytest.raises(DamagedFile, match="not valid JSON"):
        rotary_file.read(tmp_path, "tiny-rope")


# ---------------------------------------------------------------- the figure


def fixture_doc() -> dict:
    """A rotary.json of tiny-rope's shape, from formulas (no model): head (l, h)'s mean peaks at
    distance (l + h) % 3; the pair's curve is a damped cosine."""
    L, H, C, top = 4, 4, 80, 64
    mean = [[[round(math.exp(-abs(x - (l + h) % 3)) + 0.1 * l, 4) for x in range(top + 1)] for h in range(H)] for l in range(L)]
    curve = [[[round(math.cos(0.3 * x + h) * math.exp(-x / 40) + l, 4) for x in range(C)] for h in range(H)] for l in range(L)]
    return {"format": 1, "model": "tiny-rope", "revision": "abcdef1234567890", "nLayer": L, "nHead": H, "nKvHead": 2,
            "headDim": 32, "nCtx": C, "ropeTheta": 10000, "maxDistance": top, "meanOver": ["a"], "meanLongest": 20, "mean": mean,
            "sentences": [{"text": SENTENCE, "ids": IDS, "tokens": TEXTS, "pairs": [
                {"query": 6, "key": 5, "distance": 1, "score": [[c[1] for c in row] for row in curve], "curve": curve}]}]}


def figure(body: str) -> D.Directive:
    return D.parse_directive("rope-distance", textwrap.dedent(body), "content/modern.md:9")


BLOCK = f"""\
    model: tiny-rope
    sentence: "{SENTENCE}"
    layer: 2
    head: 3
    token: Sam
    id: turn
"""


def fixture_ctx(tmp_path) -> Ctx:
    rotary_file.write(tmp_path, "tiny-rope", fixture_doc())
    return Ctx(store=TraceStore(tmp_path), page="content/modern.md")


def test_golden_rope_distance(tmp_path, update_golden):
    ctx = fixture_ctx(tmp_path)
    out = render.render(figure(BLOCK), ctx)
    check_golden("rope-distance", out, update_golden)
    data = course_data(out)
    assert (data["layer"], data["head"], data["distance"]) == (2, 3, 1)
    assert "(real)" in text_of(out)


def test_the_table_holds_every_distance_the_summary_names(tmp_path):
    """The table without JavaScript shows distances 0-16 and also each one the summary names (the
    lowest and highest score, the peaks), however far: here the pair scores highest 60 tokens apart."""
    doc = fixture_doc()
    pair = doc["sentences"][0]["pairs"][0]
    pair["curve"][1][2] = [round(math.sin(x / 7) + x / 20, 4) if x != 60 else 9.5 for x in range(80)]
    doc["mean"][1][2] = [round(1 - abs(x - 40) / 40, 4) for x in range(65)]  # the head's mean peaks 40 back
    pair["score"][1][2] = pair["curve"][1][2][pair["distance"]]  # the real score is the curve's at the real distance
    rotary_file.write(tmp_path, "tiny-rope", doc)
    out = render.render(figure(BLOCK), Ctx(store=TraceStore(tmp_path), page="content/modern.md"))
    rows = {int(d): (pair_score, mean) for d, pair_score, mean in
            re.findall(r'<th scope="row">(\d+)(?: \(real\))?</th><td>([^<]+)</td><td>([^<]+)</td>', out)}
    assert set(range(17)) <= set(rows) and {40, 60} <= set(rows) and max(rows) == 60
    summary = text_of(out[: out.index('<div class="course-plot"')])
    assert "from " + rows[min(rows, key=lambda d: float(rows[d][0].replace("\u2212", "-")))][0] + " to 9.50, highest at 60 tokens back" in summary
    assert "highest at 40 tokens back." in summary and rows[40][1] == "1.00"
    assert "at distances 0 to 16 and at every distance named above" in out


def test_references_read_the_figure(tmp_path):
    from generator.lessons import refs

    ctx = fixture_ctx(tmp_path)
    render.render(figure(BLOCK), ctx)
    say = lambda t: render.render_ref(refs.parse_ref(t.strip("{} "), "content/modern.md:20"), ctx)
    # layer 2, head 3 (from 0: 1, 2): the mean peaks at (1 + 2) % 3 = 0
    assert say("{{ turn.meanPeak }}") == "0" and say("{{ turn.meanPeakWords }}") == "the token itself"
    assert say("{{ turn.head }}") == "layer 2, head 3" and say("{{ turn.group }}") == "2"
    assert say("{{ turn.distance }}") == "1" and say("{{ turn.longest }}") == "20"
    assert say("{{ turn.nearPeakWords }}") == "the token itself"
    curve = fixture_doc()["sentences"][0]["pairs"][0]["curve"][1][2]
    assert say("{{ turn.at(10) }}") == f"{curve[10]:.2f}".replace("-", "\u2212")


def test_pending_without_the_file_and_errors_name_the_line(tmp_path):
    write_traces(tmp_path, [])
    ctx = Ctx(store=TraceStore(tmp_path), page="content/modern.md")
    out = render.render(figure(BLOCK), ctx)
    assert 'data-pending="true"' in out
    with pytest.raises(LessonError, match="modern.md:10: rope-distance: model .tiny. has no rotary positions"):
        figure(BLOCK.replace("tiny-rope", "tiny"))
    with pytest.raises(LessonError, match="needs a figure's attention weights"):
        figure(BLOCK.replace("layer: 2\n    head: 3\n", "pick: previous-token\n"))
    with pytest.raises(LessonError, match="no token 'Ben'"):
        render.render(figure(BLOCK.replace("token: Sam", "token: Ben")), fixture_ctx(tmp_path / "x"))


# ---------------------------------------------------------------- heads that share one key


def test_group_option_needs_shared_keys():
    with pytest.raises(LessonError, match="modern.md:35: attention: .heads. is group, but tiny gives every head its own key and value"):
        D.parse_directive("attention", 'model: tiny\nsentence: "Lily wanted to play with her"\nlayer: 1\nhead: 1\nheads: group\n', "content/modern.md:30")
    d = D.parse_directive("attention", 'model: tiny-rope\nsentence: "Tom gave the ball to Sam"\nlayer: 1\nheads: group\nhead: 2\n', "content/modern.md:30")
    assert d.heads == "group"


def test_group_shows_the_heads_that_share_one_key_side_by_side(tmp_path):
    """A schema-5 trace names each head's key/value head (`kvHead`); the figure shows every head of
    the picked head's group, side by side, labelled with the group."""
    from dataclasses import replace

    from conftest import LILY, synthetic_trace

    trace = synthetic_trace(LILY)
    ctx = Ctx(store=TraceStore(tmp_path), page="content/modern.md")
    write_traces(tmp_path, [trace])
    panel = __import__("generator.render.context", fromlist=["load_panel"])
    d = replace(D.parse_directive("attention", f'model: tiny\nsentence: "{LILY}"\nlayer: 2\nhead: 4\nid: g\n', "content/modern.md:30"), heads="group")
    from generator.render import attention

    loaded = panel.load_panel(d, "tiny", LILY, ctx)  # the page's one cached panel: the render below reads this one
    for layer in loaded.trace["layers"]:
        for h, head in enumerate(layer["heads"]):
            head["kvHead"] = h // 2  # as trace schema 5 restores it: 4 query heads, 2 key/value heads
    out = render.render(d, ctx)
    assert text_of(out).count("share one key and value: group 2") == 1
    assert re.findall(r'data-kind="attention"[^>]*data-layer="(\d)" data-head="(\d)"', out) == [("1", "2"), ("1", "3")]
    assert ctx.figures["g"].head == 3  # the references read the picked head
    # every layer's groups and their labels, for course.js to keep the label true after a click
    groups = json.loads(html.unescape(re.search(r"data-groups='([^']*)'", out).group(1)))
    assert len(groups) == len(loaded.trace["layers"])
    assert groups[0] == [{"heads": [0, 1], "label": "Layer 1, heads 1 and 2 share one key and value: group 1."},
                         {"heads": [2, 3], "label": "Layer 1, heads 3 and 4 share one key and value: group 2."}]


# ---------------------------------------------------------------- the notebook's part


def test_notebook_part_turns_the_stored_vectors_and_matches_rotary_json(llama, monkeypatch, tmp_path):
    """The chapter's notebook section, run on a schema-5-shaped trace of the fixture model (the
    shape branch rope-trace writes: qUnrotated per head, kvHeads[g] with k and kUnrotated): its
    curve, computed with numpy, passes its own check against rotary.json, and so does the answer."""
    import torch

    from generator.model import arch, rotary
    from generator.notebooks import cells, rope_cells
    from generator.store.codec import encode_array

    doc = small_build(llama, monkeypatch)
    qs, ks, _ = rotary.unrotated(llama, IDS)
    cos, sin = rotary.rotation(llama)
    T = len(IDS)
    layers = []
    for l in range(2):
        qr = arch.rotate(qs[l], cos[:T], sin[:T]).numpy()  # (token, head, head_dim)
        kr = arch.rotate(ks[l], cos[:T], sin[:T]).numpy()  # (token, kv_head, head_dim)
        heads = [{"q": encode_array(qr[:, h]), "qUnrotated": encode_array(qs[l][:, h].numpy()),
                  "scores": encode_array(np.tril(qr[:, h] @ kr[:, h // 2].T))} for h in range(4)]
        groups = [{"k": encode_array(kr[:, g]), "kUnrotated": encode_array(ks[l][:, g].numpy())} for g in range(2)]
        layers.append({"heads": heads, "kvHeads": groups})
    data = tmp_path / "data" / "tiny-rope"
    data.mkdir(parents=True)
    (data / "t.json").write_text(json.dumps({"layers": layers}))
    (data / "rotary.json").write_text(json.dumps(doc))
    section = rope_cells.rope_distance("tiny-rope/t.json", "tiny-rope/rotary.json", "tiny-rope", SENTENCE, 1, 3, 6, 1, "·Sam", "Tom")
    code = [c.source for c in cells.opening("t").cells + section.cells if c.kind == "code"]
    code += [answer for _, answer in section.answers]
    monkeypatch.chdir(tmp_path)
    printed = []
    env = {"print": lambda *a, **k: printed.append(" ".join(map(str, a)))}
    for source in code:
        exec(compile(source, "<notebook>", "exec"), env)
    assert any("reads key/value head 2" in line and line.endswith("True") for line in printed)
    assert not any("wrong" in line for line in printed)
    assert np.allclose(env["curve"], doc["sentences"][0]["pairs"][0]["curve"][1][3][:13], atol=1e-3)


# ---------------------------------------------------------------- the chapter's guess


def chapter_blocks() -> tuple[str, str]:
    """The guess block and the rope-distance block of content/modern.md, as written there."""
    from conftest import REPO

    text = (REPO / "content" / "modern.md").read_text(encoding="utf-8")
    guess = re.search(r"```guess\n(.*?)```\n", text, re.S).group(1)
    figure = re.search(r"```rope-distance\n(.*?)```\n", text, re.S).group(1)
    return guess, figure


@pytest.mark.parametrize("shape, right", [("as built", 2), ("peak at 1", 1), ("flat", 0)])
def test_the_chapter_guess_is_decided_by_the_data(tmp_path, monkeypatch, shape, right):
    from test_guesses import form_data
    from test_render import md_convert

    guess, figure = chapter_blocks()
    figure = re.sub(r"pick: .*\n", "layer: 2\nhead: 3\n", figure)  # heads.json is not in this fixture
    figure = re.sub(r"sentence: .*\n", f'sentence: "{SENTENCE}"\n', figure)
    doc = fixture_doc()
    pair = doc["sentences"][0]["pairs"][0]
    curve = pair["curve"][1][2]
    if shape == "peak at 1":
        curve[1] = max(curve) + 1.0
    if shape == "flat":
        curve[:] = [0.5] * len(curve)
    pair["score"][1][2] = curve[1]
    rotary_file.write(tmp_path / "traces", "tiny-rope", doc)
    monkeypatch.chdir(tmp_path)
    page = (f"# Modern\n\n**Guess first.** What happens?\n\n```guess\n{guess}```\n\n```rope-distance\n{figure}```\n\n"
            "??? question \"Show the answer\"\n\n    Highest at {{ turn.peakWords }}.\n")
    data = form_data(md_convert(tmp_path, page))
    assert data["right"] == right


def test_a_damaged_rotary_file_is_its_own_one_line_naming_it_not_the_lessons(tmp_path):
    """As a damaged trace is: the file, its problem and one Fix (it was the lesson's line, the
    file's absolute path and two Fixes, once per figure)."""
    from generator.markdown.build_errors import CourseBuildError
    from generator.markdown.kept_errors import one_line_errors

    ctx = fixture_ctx(tmp_path)
    p = rotary_file.path(tmp_path, "tiny-rope")
    doc = json.loads(p.read_text())
    doc["format"] = 99
    p.write_text(json.dumps(doc))
    with pytest.raises(CourseBuildError) as e:
        with one_line_errors("content/modern.md:9", "internal error", "report it"):
            render.render(figure(BLOCK), ctx)
    line = str(e.value)
    assert "\n" not in line and line.count("Fix: ") == 1 and "modern.md" not in line
    assert "rotary.json: has format 99" in line and "make traces" in line
