"""Shared helpers for the model/tracing/store tests: small random models, a throwaway tokenizer,
and synthetic trace documents (no torch) for store tests."""

from __future__ import annotations

import functools
import math
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY_DIR = REPO / "generator" / "tiny_model"
HAVE_TINY = (TINY_DIR / "model.safetensors").is_file() and (TINY_DIR / "tokenizer.json").is_file()
NO_TINY_REASON = "generator/tiny_model/model.safetensors is missing (run `make tiny-model`)"

SENTENCES = [
    "Lily wanted to play with her ball.",
    "Ben wanted to play with her dog.",
    "Once upon a time, there was a little girl named Lily.",
]


@functools.lru_cache(maxsize=None)
def small_tokenizer():
    """A byte-level BPE trained in a moment on a few sentences, built like the tiny one."""
    from generator.model.training import train_tokenizer

    return train_tokenizer(SENTENCES * 20, 400)


def random_tiny(seed: int = 0, sharpen: float = 1.0, revision: str = "test-random"):
    """The tiny model's shape (4 × 4 × 128, 256 positions, 4096 tokens), random weights. `sharpen`
    scales the q/k part of each c_attn so that attention is far from uniform."""
    import torch

    from generator.model import load as models

    model = models.random_model(4, 4, 128, 256, 4096, seed=seed)
    if sharpen != 1.0:
        with torch.no_grad():
            for block in model.transformer.h:
                block.attn.c_attn.weight[:, : 2 * 128] *= sharpen
    return models.from_parts("tiny", model, small_tokenizer(), revision)


def fake_doc(text: str = "a b c", model: str = "tiny", revision: str = "rev-a", ids=None, n_tokens: int = 3,
             n_layer: int = 2, n_head: int = 2, head_dim: int = 4, seed: int = 0) -> dict:
    """A self-consistent trace document built with plain Python (for store tests, no torch)."""
    from generator import schema

    rng = random.Random(f"{seed}-{text}-{revision}")
    T, H, d = n_tokens, n_head, head_dim

    def mat(r, c):
        return [[rng.uniform(-2, 2) for _ in range(c)] for _ in range(r)]

    layers = []
    for _ in range(n_layer):
        heads = []
        for _ in range(H):
            q, k, v = mat(T, d), mat(T, d), mat(T, d)
            scores = [[sum(a * b for a, b in zip(q[i], k[j])) for j in range(T)] for i in range(T)]
            sm = [[scores[i][j] / math.sqrt(d) if j <= i else None for j in range(T)] for i in range(T)]
            weights = []
            for row in sm:
                m = max(x for x in row if x is not None)
                e = [math.exp(x - m) if x is not None else 0.0 for x in row]
                weights.append([x / sum(e) for x in e])
            out = [[sum(weights[i][j] * v[j][c] for j in range(T)) for c in range(d)] for i in range(T)]
            heads.append(dict(q=q, k=k, v=v, scores=scores, scaledMasked=sm, weights=weights, out=out))
        concat = [sum((h["out"][i] for h in heads), []) for i in range(T)]
        layers.append({"heads": heads, "attnConcat": concat})
    words = [f" w{i}" if i else "w0" for i in range(T)]
    meta = {
        "model": model, "hfName": None, "revision": revision, "architecture": "gpt2", "nLayer": n_layer, "nHead": H, "nKvHead": H,
        "positions": "learned", "ropeTheta": None, "width": H * d,
        "headDim": d, "nCtx": 16, "vocabSize": 100, "nParams": 1000, "tokenizer": "fake",
        "libraryVersions": {"torch": "x", "transformers": "y", "tokenizers": "z"},
        "schemaVersion": schema.SCHEMA_VERSION, "precision": {"compute": "float32", "significantDigits": 5},
        "standIn": False,
    }
    doc = {"schemaVersion": schema.SCHEMA_VERSION, "model": model, "text": text}
    if ids is not None:
        doc["ids"] = list(ids)
    doc["meta"] = meta
    token_ids = list(ids) if ids is not None else list(range(T))
    doc["tokens"] = [{"id": i, "text": w, "display": schema.display_token(w), "spoken": schema.spoken_token(w)}
                     for i, w in zip(token_ids, words)]
    doc["layers"] = layers
    doc["predictions"] = [[{"id": j, "text": "x", "display": "x", "prob": p} for j, p in
                           enumerate([0.5, 0.2, 0.1, 0.05, 0.01])] for _ in range(T)]
    from causal_helpers import fake_causal

    doc["causal"] = fake_causal(n_layer, H, T, vocab_size=meta["vocabSize"], seed=seed)
    return doc
