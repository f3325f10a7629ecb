"""Synthetic scoring traces and head scores for the scoreboard tests (plain numpy, no torch)."""

from __future__ import annotations

from pathlib import Path

from conftest import synthetic_trace
from generator import heads
from generator.store import TraceStore

NO_CONTENT = Path("/nonexistent-content")


def scoring_traces(model: str = "tiny", stand_in: bool = False, revision: str = "synthetic-0001", **request_kw) -> list[dict]:
    """Synthetic traces of every scoring text (`request_kw`: n_random, random_length). Layer 1,
    head 1 (0-based (0, 0)) is a planted previous-token head on the natural sentences and an
    induction head on the repeated ones."""
    out = []
    for req in heads.scoring_requests(model, {"standIn": stand_in}, **request_kw):
        if req.ids is None:
            n = len(req.text.split(" "))
            plant = {(0, 0, i): {i - 1: 0.97, i: 0.03} for i in range(1, n)}
            out.append(synthetic_trace(req.text, model=model, plant=plant, stand_in=stand_in, revision=revision))
            continue
        ids = list(req.ids)
        half = (len(ids) - 1) // 2
        plant = {(0, 0, i): {i - half + 1: 0.97, i: 0.03} for i in range(half + 1, len(ids))}
        doc = synthetic_trace(req.text, model=model, tokens=[f" r{i}" for i in ids], plant=plant, stand_in=stand_in, revision=revision)
        for t, i in zip(doc["tokens"], ids):
            t["id"] = i
        doc["ids"] = ids
        out.append(doc)
    return out


def store_with_scores(root: Path, model: str = "tiny", stand_in: bool = False, revision: str = "synthetic-0001", **request_kw) -> TraceStore:
    store = TraceStore(root)
    for doc in scoring_traces(model, stand_in, revision, **request_kw):
        store.write(doc)
    heads.write_scores(store, model, **request_kw)
    return store
