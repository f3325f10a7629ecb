"""An independent check of the committed traces: plain json + numpy, none of the generator's code.

The files are schema 3 (traces/README.md): q, k, v, scores, weights and out are encoded arrays,
decoded here by :func:`decode` as the README shows; scaledMasked and attnConcat are not stored
(scores / √d, and the heads' out side by side), so what is checked of them is what is stored.
For every trace under traces/<model>/ listed in its index:
softmax(q·kᵀ/√d + mask) = weights, rows sum to 1, masked cells are 0 (null in scaledMasked),
weights·v = out, and the heads' outs side by side = attnConcat, within the documented precision
(int16 × scale: re-derived weights to 1e-3).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "traces"
CHECKPOINT = ROOT / "generator" / "tiny_model" / "model.safetensors"


def committed() -> list[tuple[str, Path]]:
    out = []
    for index in sorted(TRACES.glob("*/index.json")):
        doc = json.loads(index.read_text(encoding="utf-8"))
        out += [(doc["model"], index.parent / e["file"]) for e in doc["traces"]]
    return out


TRACE_FILES = committed()


def decode(o) -> np.ndarray:
    """An encoded array {"int16", "scale", "shape"[, "tril"]}, as traces/README.md decodes it."""
    a = np.frombuffer(base64.b64decode(o["int16"]), "<i2") * o["scale"]
    if not o.get("tril"):
        return a.reshape(o["shape"])
    m = np.zeros(o["shape"])
    m[np.tril_indices(o["shape"][0])] = a
    return m


def test_the_lessons_traces_are_committed():
    texts = {json.loads(p.read_text(encoding="utf-8"))["text"] for m, p in TRACE_FILES if m == "tiny"}
    assert {"Lily wanted to play with her", "Ben wanted to play with her"} <= texts


@pytest.mark.parametrize("model,path", TRACE_FILES, ids=[f"{m}/{p.name}" for m, p in TRACE_FILES])
def test_trace_rederives_from_its_own_numbers(model, path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    d = doc["meta"]["headDim"]
    n = len(doc["tokens"])
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # (query, key)
    assert len(doc["layers"]) == doc["meta"]["nLayer"]
    rotary = doc["meta"]["positions"] == "rotary"
    n_kv = doc["meta"]["nKvHead"]
    per_group = doc["meta"]["nHead"] // n_kv
    for layer in doc["layers"]:
        assert list(layer) == ["heads", "kvHeads"]  # attnConcat: the heads' out side by side, restored on load
        assert len(layer["heads"]) == doc["meta"]["nHead"] and len(layer["kvHeads"]) == n_kv
        for group in layer["kvHeads"]:
            assert list(group) == ["k", "v"] + (["kUnrotated"] if rotary else [])
        for h, head in enumerate(layer["heads"]):
            assert list(head) == ["q", "scores", "weights", "out"] + (["qUnrotated"] if rotary else [])
            group = layer["kvHeads"][h // per_group]  # the key/value head this query head reads
            q, scores, weights, out = (decode(head[f]) for f in ("q", "scores", "weights", "out"))
            k, v = decode(group["k"]), decode(group["v"])
            assert q.shape == k.shape == v.shape == out.shape == (n, d) and scores.shape == weights.shape == (n, n)
            for f in list(head) + [f"kv:{f}" for f in group]:
                o = group[f[3:]] if f.startswith("kv:") else head[f]
                assert np.abs(decode(o)).max() <= 32767 * o["scale"]
            scaled = np.where(future, -np.inf, q @ k.T / np.sqrt(d))  # (query, key)
            e = np.exp(scaled - scaled.max(axis=1, keepdims=True))  # (query, key)
            rederived = e / e.sum(axis=1, keepdims=True)  # (query, key)
            np.testing.assert_allclose(rederived, weights, atol=1e-3)
            np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-3)
            assert (weights[future] == 0).all()
            # scores is q·kᵀ (the loader's scaledMasked is scores / √d)
            np.testing.assert_allclose(q @ k.T, scores, rtol=1e-3, atol=2e-3 * np.abs(scores).max())
            # out is what the model fed its output projection; weights · v, recomputed from the stored numbers, matches it
            np.testing.assert_allclose(weights @ v, out, rtol=1e-3, atol=1e-3)
            if rotary:  # the stored q and k are the unrotated ones turned by their positions (traces/README.md)
                theta, half = doc["meta"]["ropeTheta"], d // 2
                speed = theta ** (-np.arange(half) * 2 / d)  # (head_dim/2,) radians per position
                angle = np.arange(n)[:, None] * np.concatenate([speed, speed])[None]  # (token, head_dim)

                def turn(x):
                    return x * np.cos(angle) + np.concatenate([-x[:, half:], x[:, :half]], axis=1) * np.sin(angle)

                np.testing.assert_allclose(turn(decode(head["qUnrotated"])), q, atol=3e-3 * np.abs(q).max())
                np.testing.assert_allclose(turn(decode(group["kUnrotated"])), k, atol=3e-3 * np.abs(k).max())


def test_tiny_traces_come_from_the_committed_checkpoint():
    revision = hashlib.sha256(CHECKPOINT.read_bytes()).hexdigest()[:12]
    index = json.loads((TRACES / "tiny" / "index.json").read_text(encoding="utf-8"))
    assert index["meta"]["revision"] == revision, "traces/tiny is stale: run `make traces`"


def test_some_head_links_her_to_lily():
    """The quality bar for the tiny model: a head puts at least half of ·her's attention on Lily."""
    index = json.loads((TRACES / "tiny" / "index.json").read_text(encoding="utf-8"))
    entry = next(e for e in index["traces"] if e["text"] == "Lily wanted to play with her")
    doc = json.loads((TRACES / "tiny" / entry["file"]).read_text(encoding="utf-8"))
    texts = [t["text"] for t in doc["tokens"]]
    assert texts == ["<|endoftext|>", "Lily", " wanted", " to", " play", " with", " her"]  # position 0: <|endoftext|>
    best = max(decode(head["weights"])[6][1] for layer in doc["layers"] for head in layer["heads"])
    assert best >= 0.5


def test_make_traces_on_a_checkout_rewrites_none_of_the_committed_traces(tmp_path):
    """`make traces` over the committed store, with the committed lessons, changes no byte: every
    trace is kept, and so is every patching pair (recomputed on another CPU, a pair's numbers can
    differ in the 5th digit). A stored pair's numbers are what is kept, unless --force asks."""
    import json
    import shutil

    from course_builds import REPO, run, traces_command, tree_digest

    pytest.importorskip("torch")
    store = tmp_path / "traces"
    shutil.copytree(REPO / "traces", store)
    before = tree_digest(store)
    done = run(traces_command("--traces-dir", str(store), real=True), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    after = tree_digest(store)
    assert sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)) == []

    patching = store / "tiny" / "patching.json"
    doc = json.loads(patching.read_text(encoding="utf-8"))
    cell = doc["pairs"][0]["patched"][0][0][0]
    cell[0] = planted = round(cell[0] + 0.5, 4)  # still a valid number: kept, not recomputed
    patching.write_text(json.dumps(doc), encoding="utf-8")
    again = run(traces_command("--traces-dir", str(store), real=True), timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(patching.read_text(encoding="utf-8"))["pairs"][0]["patched"][0][0][0][0] == planted
    forced = run(traces_command("--traces-dir", str(store), "--force", real=True), timeout=900)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert json.loads(patching.read_text(encoding="utf-8"))["pairs"][0]["patched"][0][0][0][0] != planted
