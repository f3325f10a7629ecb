"""The causal block in the store: written encoded, read back in its declared shapes, and refused
(one line naming the file) when it cannot be trusted. Also the per-model files, circuits.json and
patching.json, and how `make traces` follows the lessons' target tokens."""

from __future__ import annotations

import json

import numpy as np
import pytest
from causal_helpers import fake_robust
from trace_helpers import fake_doc

from generator.store import circuits_file
from generator import schema
from generator.store import DamagedFile, TraceStore


def written(tmp_path, targets=(7, 9)):
    from causal_helpers import fake_causal

    doc = fake_doc("a b c d", n_tokens=4)
    doc["causal"] = fake_causal(2, 2, 4, vocab_size=100, targets=targets)
    store = TraceStore(tmp_path)
    path = store.write(doc)
    return store, path, doc


def test_the_block_round_trips_within_the_stored_precision(tmp_path):
    store, path, doc = written(tmp_path)
    back = store.load("tiny", doc["text"])["causal"]
    dims = schema.causal_dims(2, 2, 4, 2, 2)
    for a in schema.CAUSAL_ARRAYS:
        want = np.asarray(doc["causal"][a.camel])
        assert back[a.camel].shape == tuple(dims[x] for x in a.shape)
        scale = json.loads(path.read_text())["causal"][a.camel]["scale"]
        assert np.abs(back[a.camel] - want).max() <= scale / 2 + 1e-12, a.camel
    assert back["followed"].tolist() == doc["causal"]["followed"] and back["targets"] == [7, 9]


def _damage(tmp_path, edit):
    store, path, doc = written(tmp_path)
    raw = json.loads(path.read_text())
    edit(raw["causal"])
    path.write_text(json.dumps(raw))
    store._index_cache.clear()
    with pytest.raises(DamagedFile) as e:
        store.load("tiny", doc["text"])
    line = str(e.value)
    assert "\n" not in line and path.name in line
    return line


def _set(key, value):
    return lambda c: c.__setitem__(key, value)


@pytest.mark.parametrize("edit, says", [
    (lambda c: c.pop("dla"), "causal holds"),
    (_set("targets", [9, 7]), "targets are not sorted distinct token ids"),
    (_set("targets", [7, 900]), "targets are not sorted distinct token ids"),
    (_set("ablations", ["zero", "half"]), "ablations are"),
    (_set("parts", ["embedding"]), "parts are not the embedding"),
    (lambda c: c["tokenTexts"].pop(sorted(c["tokenTexts"], key=int)[0]), "tokenTexts lacks the text of token"),
    (lambda c: c["followed"][0].__setitem__(0, 5000), "followed holds a token id outside the vocabulary"),
    (lambda c: c["followed"][1].__setitem__(-1, 8), "followed does not end in the targets"),
    (lambda c: c["lensIds"].pop(), "lensIds is not a"),
    (lambda c: c["kl"].__setitem__("shape", [3, 4]), "causal kl has shape"),
    (lambda c: c["dla"].__setitem__("scale", c["dla"]["scale"] * 2), "dla does not add up to cleanLogit"),
    (lambda c: c["kl"].__setitem__("scale", -1), "causal kl has scale"),
    (lambda c: c["kl"].__setitem__("scale", 1e-320), "causal kl has scale"),  # subnormal: it decoded to NaN
    (lambda c: c["dLogit"].__setitem__("scale", 1e300), "causal dLogit decodes to a number that is not finite or is beyond ±1e9"),
])
def test_a_damaged_block_is_one_line_naming_the_file(tmp_path, edit, says):
    assert says in _damage(tmp_path, edit)


def test_a_negative_kl_divergence_is_refused(tmp_path):
    from causal_helpers import fake_causal

    doc = fake_doc("a b c d", n_tokens=4)
    block = fake_causal(2, 2, 4, vocab_size=100)
    block["kl"] = (-np.ones((2, 2, 2, 4))).tolist()
    doc["causal"] = block
    store = TraceStore(tmp_path)
    store.write(doc)
    with pytest.raises(DamagedFile, match="a KL divergence is never negative"):
        store.load("tiny", doc["text"])


def test_a_trace_without_the_block_is_damaged(tmp_path):
    line = _damage(tmp_path, lambda c: c.clear())
    assert "causal holds []" in line


def test_circuits_file_is_checked_on_read(tmp_path):
    store, _, _ = written(tmp_path)
    kinds = ("previous-token", "duplicate-token", "induction", "sink")
    L, H = 2, 2
    doc = {
        "ablations": ["zero", "mean"], "kinds": list(kinds),
        "cleanScores": np.full((4, L, H), 0.5), "ablatedScores": np.full((2, L * H, 4, L, H), 0.4),
        "iclClean": np.array([9.0, 2.0]), "iclAblated": np.full((2, L * H, 2), 3.0),
        "composition": np.full((3, L, H, L, H), 0.1), "compositionKinds": ["q", "k", "v"], "compositionBaseline": 0.09,
        "robust": fake_robust(L, H),
    }
    revision = store.model_meta("tiny")["revision"]
    circuits_file.write_circuits(store, "tiny", doc, revision)
    back = circuits_file.load_circuits(store, "tiny", kinds, L, H)
    assert back["ablatedScores"].shape == (2, 4, 4, 2, 2) and back["iclClean"].tolist() == [9.0, 2.0]
    path = circuits_file.path_of(store.root, "tiny", circuits_file.CIRCUITS_FILE)
    for key, value, says in [("cleanScores", [[[2.0]]], "cleanScores has shape"), ("revision", "other", "was made from revision"),
                             ("kinds", ["sink"], "scores the kinds"), ("compositionBaseline", 2, "compositionBaseline")]:
        raw = json.loads(path.read_text())
        raw[key] = value
        path.write_text(json.dumps(raw))
        with pytest.raises(DamagedFile, match=says):
            circuits_file.load_circuits(store, "tiny", kinds, L, H)
        circuits_file.write_circuits(store, "tiny", doc, revision)
    raw = json.loads(path.read_text())
    raw["ablatedScores"][0][0][0][0][0] = 1.5
    path.write_text(json.dumps(raw))
    with pytest.raises(DamagedFile, match="a score lies between 0 and 1"):
        circuits_file.load_circuits(store, "tiny", kinds, L, H)


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.pop("robust"), "has no robust block with the methods zero, mean, indist, resample"),
    (lambda r: r["robust"].__setitem__("methods", ["zero", "mean"]), "has no robust block"),
    (lambda r: r["robust"]["config"].pop("seed"), "robust.config lacks its seed"),
    (lambda r: r["robust"]["config"].__setitem__("lengths", [5, 20]), "robust.lengths does not match"),
    (lambda r: r["robust"]["lengths"][0].__setitem__("rise", r["robust"]["lengths"][0]["rise"][:3]), "robust length 5 rise has shape"),
    (lambda r: r["robust"]["lengths"][1]["loss"][3][0].__setitem__(1, 99.0), "robust length 10 loss: an interval does not hold its value"),
    (lambda r: r["robust"]["lengths"][0]["cleanLoss"].__setitem__(0, [-1.0, -1.1, -0.9]), "a loss is negative"),
    (lambda r: r.__setitem__("formatVersion", 1), "is not a format-2 file"),
])
def test_the_robust_block_is_checked_on_read(tmp_path, edit, says):
    """Format 2 (issue 47): four ways of removing a head, per length of the sweep, with intervals;
    a damaged or format-1 file is one line naming it, never a figure drawn from it."""
    store, _, _ = written(tmp_path)
    kinds = ("previous-token", "duplicate-token", "induction", "sink")
    doc = {
        "ablations": ["zero", "mean"], "kinds": list(kinds),
        "cleanScores": np.full((4, 2, 2), 0.5), "ablatedScores": np.full((2, 4, 4, 2, 2), 0.4),
        "iclClean": np.array([9.0, 2.0]), "iclAblated": np.full((2, 4, 2), 3.0),
        "composition": np.full((3, 2, 2, 2, 2), 0.1), "compositionKinds": ["q", "k", "v"], "compositionBaseline": 0.09,
        "robust": fake_robust(2, 2),
    }
    circuits_file.write_circuits(store, "tiny", doc, store.model_meta("tiny")["revision"])
    assert circuits_file.load_circuits(store, "tiny", kinds, 2, 2)["robust"]["lengths"][1]["rise"].shape == (4, 4, 3)
    path = circuits_file.path_of(store.root, "tiny", circuits_file.CIRCUITS_FILE)
    raw = json.loads(path.read_text())
    edit(raw)
    path.write_text(json.dumps(raw))
    with pytest.raises(DamagedFile, match=says):
        circuits_file.load_circuits(store, "tiny", kinds, 2, 2)


def test_a_causal_file_keeps_the_store_s_five_significant_digits(tmp_path):
    """circuits.json is rounded as every trace is (traces/README.md: 5 significant digits), so
    that a retrace on another machine, whose float32 sums differ in the 7th digit, writes the
    same bytes. (It kept 7 digits before, and a retrace rewrote the file in its last digits.)"""
    store, _, _ = written(tmp_path)
    kinds = ("previous-token", "duplicate-token", "induction", "sink")
    doc = {
        "ablations": ["zero", "mean"], "kinds": list(kinds),
        "cleanScores": np.full((4, 2, 2), 0.5), "ablatedScores": np.full((2, 4, 4, 2, 2), 0.4),
        "iclClean": np.array([12.415512, 1.8248391]), "iclAblated": np.full((2, 4, 2), 3.0),
        "composition": np.full((3, 2, 2, 2, 2), 0.1), "compositionKinds": ["q", "k", "v"], "compositionBaseline": 0.09,
        "robust": fake_robust(2, 2),
    }
    circuits_file.write_circuits(store, "tiny", doc, store.model_meta("tiny")["revision"])
    back = circuits_file.load_circuits(store, "tiny", kinds, 2, 2)
    assert back["iclClean"].tolist() == [12.416, 1.8248]


def test_trace_run_retraces_when_the_lessons_name_other_targets(tmp_path):
    """plan(): a stored trace is kept only while it follows exactly the lessons' targets."""
    from generator.model import trace_run
    from generator.lessons.pages import Followed
    from generator.store import TraceRequest

    store, _, doc = written(tmp_path, targets=(7, 9))
    req = TraceRequest("tiny", doc["text"])
    assert trace_run.covers(store, req, (7, 9))
    assert not trace_run.covers(store, req, (7,)), "one fewer target: retraced, so the bytes are the lessons'"
    assert not trace_run.covers(store, req, (7, 9, 11))
    errors: list[str] = []
    got = trace_run.resolve_targets([Followed("tiny", "x", ("her", "xqzvw"), "content/a.md:4")], errors)
    assert got[TraceRequest("tiny", "x")] == (318,)
    assert len(errors) == 1 and errors[0].startswith("content/a.md:4: targets: 'xqzvw' is not one token of tiny's vocabulary")
    assert errors[0].endswith("Fix: name one token, like `her` for ·her")
