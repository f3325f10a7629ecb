"""Synthetic data for chapter 1 and 2's figures (no torch): a vectors.json of width 4 whose numbers
are seeded random, written through the real writer, so its checks and rounding apply."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from generator import schema, tokens
from generator.store import vectors_file

WIDTH = 4
LILY = "Lily wanted to play with her"


def token_entry(i: int) -> dict:
    text = tokens.token_text("tiny", i)
    return {"id": int(i), "text": text, "display": schema.display_token(text), "spoken": schema.spoken_token(text)}


def synthetic_vectors(sentences=(LILY,), words=("her", "she", "Lily", "Ben", "ball"), revision: str = "synthetic-0001", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    sents = []
    for text in sentences:
        toks = [token_entry(t.id) for t in tokens.encode("tiny", text)]
        n = len(toks)
        tok, pos = rng.normal(0, 0.1, (n, WIDTH)), rng.normal(0, 0.1, (n, WIDTH))  # (token, width)
        total = tok + pos
        norm = (total - total.mean(1, keepdims=True)) / np.sqrt(total.var(1, keepdims=True) + 1e-5)
        sents.append({"text": text, "tokens": toks, "token": tok.tolist(), "position": pos.tolist(), "sum": total.tolist(),
                      "normalised": norm.tolist(), "ln1": (norm * 0.5 + 0.01).tolist()})
    entries = []
    for k, w in enumerate(words):
        i = vectors_file.word_token("tiny", w)[0]
        near = sorted(rng.uniform(-1, 1, 8).tolist(), reverse=True)
        entries.append({"word": w, "token": token_entry(i), "vector": rng.normal(0, 0.2, WIDTH).tolist(), "norm": 0.5,
                        "nearest": [{"token": token_entry(300 + 8 * k + j), "cosine": c} for j, c in enumerate(near)]})
    points = [token_entry(i) | {"x": float(x), "y": float(y)} for i, (x, y) in zip(range(400, 420), rng.normal(0, 0.3, (20, 2)))]
    marks = [e["token"] | {"x": float(x), "y": float(y)} for e, (x, y) in zip(entries, rng.normal(0, 0.3, (len(entries), 2)))]
    return {
        "format": vectors_file.FORMAT, "model": "tiny", "revision": revision, "width": WIDTH, "vocabSize": 4096,
        "layerNorm": {"layer": 0, "weight": [0.5] * WIDTH, "bias": [0.01] * WIDTH, "eps": 1e-5},
        "sentences": sents, "words": entries,
        "map": {"rule": "20 synthetic tokens", "tokens": points, "marks": marks, "explained": [0.4, 0.2]},
    }


def write_vectors(root: Path, doc: dict | None = None) -> Path:
    return vectors_file.write(root, "tiny", doc or synthetic_vectors())
