"""Schema 3's encoded arrays (traces/README.md, "Encoded arrays"): int16 × scale in base64.

The bound: every decoded value is within scale / 2 of the float the tracer gave, with scale =
max|x| / 32767 rounded up to two significant digits; scaledMasked (restored from scores) within
scale / (2√d) + scale / 200. Re-deriving the weights from the decoded q and k still matches the
decoded weights to 1e-3; a damaged encoded array is the store's one-line DamagedFile.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest

from generator import schema
from generator.store import codec, files
from generator.store import DamagedFile, StoreError, TraceStore
from trace_helpers import HAVE_TINY, NO_TINY_REASON, fake_doc


def roundtrip(a, tril=False):
    obj = json.loads(json.dumps(codec.encode_array(a, tril=tril)))
    shape = tuple(obj["shape"])
    return obj, codec.decode_array(Path("x.json"), "x", obj, shape, tril=tril)


@pytest.mark.parametrize("magnitude", [1e-6, 3e-3, 0.7, 1.0, 13.0, 250.0, 4e4])
def test_roundtrip_within_half_a_step(magnitude):
    rng = np.random.default_rng(int(magnitude * 1000) % 9973)
    a = rng.standard_t(3, size=(17, 64)) * magnitude  # heavy tails, like real activations
    obj, back = roundtrip(a)
    scale = obj["scale"]
    mx = np.abs(a).max()
    assert mx / 32767 <= scale <= 1.1 * mx / 32767 + 1e-300  # two significant digits, rounded up
    assert float(f"{scale:.2g}") == scale
    err = np.abs(back - a).max()
    assert err <= scale / 2 * (1 + 1e-9)
    # far better than float16 on the large values
    big = np.abs(a) > mx / 2
    if 0.7 <= magnitude <= 1e3:
        f16 = np.abs(a.astype(np.float16).astype(np.float64) - a)
        assert np.abs(back - a)[big].max() < f16[big].max()
    # decoded values are short decimals (what the page parts carry): at most 7 significant digits
    assert all(len(repr(x).replace("-", "").replace(".", "").lstrip("0").split("e")[0]) <= 7 for x in back.ravel()[:500].tolist())


def test_zeros_and_lower_triangle():
    obj, back = roundtrip(np.zeros((3, 4)))
    assert obj["scale"] == 1.0 and (back == 0).all()
    w = np.tril(np.random.default_rng(1).uniform(0, 1, (6, 6)))
    obj, back = roundtrip(w, tril=True)
    assert (np.triu(back, 1) == 0).all() and np.abs(back - w).max() <= obj["scale"] / 2 * (1 + 1e-9)
    w = w.copy()
    w[0, 0], w[1, :2] = 1.0, [0.66, 0.34]  # weights: 0, 1 and two-decimal values come back exact
    obj = codec.encode_array(w, tril=True, scale=codec.WEIGHTS_SCALE)
    exact = codec.decode_array(Path("x.json"), "x", obj, (6, 6), tril=True)
    assert exact[0, 0] == 1.0 and exact[1, :2].tolist() == [0.66, 0.34] and exact[0, 1] == 0.0
    assert obj["tril"] is True and len(base64.b64decode(obj["int16"])) == 2 * 21


def test_store_roundtrip_restores_every_field(tmp_path):
    doc = fake_doc("a b c d e", n_tokens=5, n_layer=2, n_head=3, head_dim=4)
    path = TraceStore(tmp_path).write(doc)
    raw = json.loads(path.read_text(encoding="utf-8"))
    back = TraceStore(tmp_path).load("tiny", "a b c d e")
    d = doc["meta"]["headDim"]
    for l, layer in enumerate(back["layers"]):
        assert list(layer) == ["heads", "kvHeads", "attnConcat"]
        for h, head in enumerate(layer["heads"]):
            assert list(head) == [a.camel for a in schema.HEAD_ACTIVATIONS] + ["kvHead"]
            stored = raw["layers"][l]["heads"][h]
            for f in schema.STORED_HEAD_FIELDS:
                err = np.abs(np.array(head[f]) - np.array(doc["layers"][l]["heads"][h][f])).max()
                assert err <= stored[f]["scale"] / 2 * (1 + 1e-9), f
            sm, want = head["scaledMasked"], doc["layers"][l]["heads"][h]["scaledMasked"]
            assert [[x is None for x in r] for r in sm] == [[x is None for x in r] for r in want]
            bound = stored["scores"]["scale"] * (1 / (2 * math.sqrt(d)) + 1 / 200)
            assert max(abs(a - b) for r, s in zip(sm, want) for a, b in zip(r, s) if a is not None) <= bound
        outs = np.concatenate([np.array(hd["out"]) for hd in layer["heads"]], axis=1)
        assert (outs == np.array(layer["attnConcat"])).all()  # exactly the heads' out side by side


def test_encoded_file_is_smaller_than_plain_json(tmp_path):
    doc = fake_doc("a b c d e f g h", n_tokens=8, n_layer=2, n_head=2, head_dim=32)
    _, data = TraceStore(tmp_path).encode(doc)
    plain = files.dumps(files.round_floats(doc))  # schema 2's way: every float a 5-digit number
    assert len(data) < 0.5 * len(plain)


def test_writer_refuses_fields_it_could_not_restore(tmp_path):
    doc = fake_doc("a b c")
    doc["layers"][0]["heads"][1]["scaledMasked"][2][0] += 0.5
    with pytest.raises(StoreError, match="scaledMasked is not scores"):
        TraceStore(tmp_path).write(doc)
    doc = fake_doc("a b c")
    doc["layers"][1]["heads"][0]["out"][0][0] += 0.5
    with pytest.raises(StoreError, match="out is not block 0 of attnConcat"):
        TraceStore(tmp_path).write(doc)


def _tamper(tmp_path, change):
    s = TraceStore(tmp_path)
    path = s.write(fake_doc("a b c"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc["layers"][1]["heads"][0])
    path.write_text(json.dumps(doc).replace('"SCALE_INF"', "1e999"), encoding="utf-8")
    with pytest.raises(DamagedFile) as e:
        s.load("tiny", "a b c")
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "Fix: run `make traces`" in msg
    assert not s.usable("tiny", "a b c")  # so make traces retraces it
    return msg


def test_damaged_encoded_arrays_are_one_line_errors(tmp_path):
    def bad_base64(h):
        h["q"]["int16"] = h["q"]["int16"][:-4] + "@@@@"

    def cut_short(h):
        h["out"]["int16"] = h["out"]["int16"][:-4]

    def wrong_shape(h):
        h["q"]["shape"] = [3, 5]

    def inf_scale(h):
        h["scores"]["scale"] = "SCALE_INF"  # written as 1e999, which JSON reads as inf

    def zero_scale(h):
        h["weights"]["scale"] = 0

    def no_tril(h):
        del h["weights"]["tril"]

    def plain_list(h):
        h["out"] = [[0.0] * 4] * 3

    checks = {
        bad_base64: "layer 1 head 0 q is not valid base64",
        cut_short: "layer 1 head 0 out holds 10 numbers, its shape needs 12",
        wrong_shape: "layer 1 head 0 q has shape [3, 5], not [3, 4]",
        inf_scale: "layer 1 head 0 scores has scale inf",
        zero_scale: "layer 1 head 0 weights has scale 0",
        no_tril: 'layer 1 head 0 weights lacks "tril"',
        plain_list: "layer 1 head 0 out is not an encoded array",
    }
    for i, (change, want) in enumerate(checks.items()):
        assert want in _tamper(tmp_path / str(i), change)


def _rederive_worst(doc) -> float:
    worst = 0.0
    for layer in doc["layers"]:
        for head in layer["heads"]:
            q, k = np.array(head["q"]), np.array(head["k"])
            T, d = q.shape
            s = q @ k.T / math.sqrt(d) + np.triu(np.full((T, T), -np.inf), 1)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            worst = max(worst, float(np.abs(w - np.array(head["weights"])).max()))
    return worst


@pytest.mark.skipif(not HAVE_TINY, reason=NO_TINY_REASON)
def test_rederive_weights_on_a_real_tiny_trace(tmp_path):
    pytest.importorskip("torch")
    from generator.model import load as models, tracing

    s = TraceStore(tmp_path)
    s.write(tracing.trace(models.load_tiny(), "Lily wanted to play with her ball."))
    assert _rederive_worst(s.load("tiny", "Lily wanted to play with her ball.")) <= 1e-3


@pytest.mark.slow
def test_rederive_weights_on_a_gpt2_shaped_trace(gpt2_shaped):
    """GPT-2 small's shape (12 × 12 × 64 per head), random weights: a trace from the run's one
    GPT-2-shaped course (tests/gpt2_store.py), as the store wrote it."""
    text = "The animal didn't cross the street because it was too tired"
    s = TraceStore(gpt2_shaped.traces)
    doc = s.load("gpt2", text)
    assert (len(doc["layers"]), len(doc["layers"][0]["heads"]), len(doc["layers"][0]["heads"][0]["q"][0])) == (12, 12, 64)
    assert _rederive_worst(doc) <= 1e-3
    plain = files.dumps(files.round_floats(as_lists(doc)))  # the trace as plain JSON numbers
    assert s.lookup("gpt2", text).stat().st_size < 0.3 * len(plain)


def as_lists(x):
    """A loaded trace with its decoded arrays (numpy) as the nested lists the tracer wrote."""
    if isinstance(x, dict):
        return {k: as_lists(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [as_lists(v) for v in x]
    return x.tolist() if isinstance(x, np.ndarray) else x
