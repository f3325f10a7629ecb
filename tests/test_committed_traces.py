"""An independent check of the committed traces: plain json + numpy, none of the generator's code.

For every trace under traces/<model>/ listed in its index:
softmax(q·kᵀ/√d + mask) = weights, rows sum to 1, masked cells are 0 (null in scaledMasked),
weights·v = out, and the heads' outs side by side = attnConcat, within the documented precision
(5 significant digits: re-derived weights to 1e-3).
"""

from __future__ import annotations

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
    for layer in doc["layers"]:
        outs = []
        assert len(layer["heads"]) == doc["meta"]["nHead"]
        for head in layer["heads"]:
            q, k, v = (np.array(head[f], dtype=np.float64) for f in ("q", "k", "v"))  # (token, head_dim)
            assert q.shape == k.shape == v.shape == (n, d)
            scaled = np.where(future, -np.inf, q @ k.T / np.sqrt(d))  # (query, key)
            e = np.exp(scaled - scaled.max(axis=1, keepdims=True))  # (query, key)
            rederived = e / e.sum(axis=1, keepdims=True)  # (query, key)
            weights = np.array(head["weights"], dtype=np.float64)  # (query, key)
            np.testing.assert_allclose(rederived, weights, atol=1e-3)
            np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-4)
            assert (weights[future] == 0).all()
            masked = np.array([[c is None for c in row] for row in head["scaledMasked"]])
            assert (masked == future).all()
            sm = np.array([[0.0 if c is None else c for c in row] for row in head["scaledMasked"]])
            np.testing.assert_allclose(sm[~future], (np.array(head["scores"]) / np.sqrt(d))[~future], rtol=1e-4, atol=1e-4)
            out = np.array(head["out"], dtype=np.float64)  # (token, head_dim)
            np.testing.assert_allclose(weights @ v, out, rtol=1e-3, atol=1e-3)
            outs.append(out)
        concat = np.concatenate(outs, axis=1)  # (token, width)
        np.testing.assert_allclose(concat, np.array(layer["attnConcat"]), rtol=1e-4, atol=1e-4)


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
    assert texts == ["Lily", " wanted", " to", " play", " with", " her"]
    best = max(head["weights"][5][0] for layer in doc["layers"] for head in layer["heads"])
    assert best >= 0.5
