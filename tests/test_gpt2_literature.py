"""GPT-2 small's head scores against the heads Wang et al. (2022) name.

Runs only where real GPT-2 traces exist in traces/gpt2 (made by `make traces` on a machine with a
network); the stand-in's random weights have no such heads, so its traces never count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import heads
from generator.store import TraceStore

TRACES = Path(__file__).resolve().parents[1] / "traces"
SKIP = "GPT-2 traces not present: run `make traces` on a machine with a network"

# Wang et al. 2022, "Interpretability in the Wild", 0-indexed layer.head as the paper writes them.
LITERATURE = [
    ("previous-token", 2, 2),
    ("previous-token", 4, 11),
    ("duplicate-token", 0, 1),
    ("duplicate-token", 3, 0),
    ("induction", 5, 5),
    ("induction", 6, 9),
]


@pytest.fixture(scope="module")
def gpt2_scores() -> heads.HeadScores:
    meta = TraceStore(TRACES).model_meta("gpt2")
    if meta is None or meta.get("standIn"):
        pytest.skip(SKIP)
    scores = heads.load_scores(TRACES, "gpt2", allow_stand_in=False)
    if scores is None:
        pytest.skip(SKIP + " (traces/gpt2/heads.json is missing or from another revision)")
    return scores


@pytest.mark.parametrize("kind,layer,head", LITERATURE, ids=[f"{k}-{l}.{h}" for k, l, h in LITERATURE])
def test_named_head_is_among_the_top_three_of_its_kind(gpt2_scores, kind, layer, head):
    top = gpt2_scores.top(kind, 3)
    shown = ", ".join(f"{l}.{h} ({s:.2f})" for l, h, s in top)
    assert (layer, head) in [(l, h) for l, h, _ in top], (
        f"Wang et al.'s {kind} head {layer}.{head} (our layer {layer + 1}, head {head + 1}) is not in the "
        f"top three of {kind}: {shown} (0-indexed)"
    )
