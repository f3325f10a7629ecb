"""Position by rotation: what a rotary head's score does as a query and a key move apart.

A rotary model turns each query and key by an angle that grows with its position (arch.rotate),
so the score of query i for key j, scaled q·k/√d, depends on the two positions only through
their distance i − j: turning q by i and k by j scores the same as turning q by i − j and k by 0.
That lets us take one query and one key, unrotated (the query and key projections' outputs), and place
them at any distance d, with no other change:

* ``mean``: per layer × head, the score at d = 0..MAX_DISTANCE averaged over every (query,
  key) pair, key at or before query, of the natural scoring sentences (heads.SCORING_SENTENCES):
  the head's preference for a distance that comes from the rotation alone;
* ``examples``: for a (sentence, query token, key token) that a `rope-distance` figure names,
  every head's score with that query and key at every distance 0..n_ctx − 1, and the real score at
  their real distance (checked against the model's own attention weights before it is written).

Written by `make traces` into traces/<model>/rotary.json (store/rotary_file.py), only for rotary
models. Layers and heads count from 0 here and from 1 in the file. float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .. import schema
from ..heads import SCORING_SENTENCES
from ..registry import MODELS
from . import arch

MAX_DISTANCE = 64  # the mean curve's last distance: the natural scoring sentences are ~25 tokens, so
# pairs that far apart never occur in them; the curve still says what the rotation alone would do
WEIGHT_ATOL = 1e-4  # our recomputed weights agree with the model's eager attention within this


class RotaryCheckError(AssertionError):
    """Our rotation does not reproduce the model's own attention weights."""


def unrotated(model, ids: Sequence[int]) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
    """Per layer: q (token, head, head_dim) and k (token, kv_head, head_dim) before rotation, as
    the model's own projections give them, and its attention weights (head, query, key)."""
    d = arch.dims(model)
    seen: list[dict] = [{} for _ in arch.blocks(model)]
    handles = [h for block, s in zip(arch.blocks(model), seen) for h in arch.qkv_hooks(block, s)]
    try:
        with torch.inference_mode():
            out = model(torch.tensor([list(ids)]), output_attentions=True, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    if len(out.attentions or ()) != d.n_layer or out.attentions[0] is None:
        raise RotaryCheckError("the model gives no attention weights to check against: load it with attn_implementation='eager'")
    T = len(ids)
    qs = [s["q"][0].double().view(T, d.n_head, d.head_dim) for s in seen]  # each (token, head, head_dim)
    ks = [s["k"][0].double().view(T, d.n_kv_head, d.head_dim) for s in seen]  # each (token, kv_head, head_dim)
    weights = [a[0].double() for a in out.attentions]  # each (head, query, key)
    return qs, ks, weights


def turned(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (token, head, head_dim), each token turned by every row of cos/sin (distance, head_dim):
    (distance, token, head, head_dim)."""
    c = cos[:, None, None, :]  # (distance, 1, 1, head_dim)
    s = sin[:, None, None, :]  # (distance, 1, 1, head_dim)
    return x[None] * c + arch.rotate_half(x)[None] * s  # (distance, token, head, head_dim)


def scaled_scores(model, layer: int, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Scaled scores of every query head's q (token, head, head_dim) turned by each distance of
    cos/sin against its group's k (token, kv_head, head_dim) left at position 0:
    (distance, head, query, key)."""
    d = arch.dims(model)
    k_per_head = k[:, [arch.group_of(h, d) for h in range(d.n_head)]]  # (token, head, head_dim)
    qd = turned(q, cos, sin)  # (distance, token, head, head_dim)
    scale = arch.scaling(arch.blocks(model)[layer])
    return torch.einsum("dihx,jhx->dhij", qd, k_per_head) * scale  # (distance, head, query, key)


def check_weights(model, name: str, layer: int, q, k, weights, cos, sin) -> None:
    """Softmax of our real-position scores against the model's own weights (head, query, key)."""
    d = arch.dims(model)
    T = q.shape[0]
    k_per_head = k[:, [arch.group_of(h, d) for h in range(d.n_head)]]  # (token, head, head_dim)
    qr = arch.rotate(q, cos[:T], sin[:T])  # (token, head, head_dim)
    kr = arch.rotate(k_per_head, cos[:T], sin[:T])  # (token, head, head_dim)
    s = torch.einsum("ihx,jhx->hij", qr, kr) * arch.scaling(arch.blocks(model)[layer])  # (head, query, key)
    mask = torch.ones(T, T, dtype=torch.bool).tril()  # (query, key)
    w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)  # (head, query, key)
    worst = float((w - weights).abs().max())
    if not worst <= WEIGHT_ATOL:
        raise RotaryCheckError(f"{name}: layer {layer + 1}'s rotated scores give its attention weights within {worst:.3g} only")


def rotation(model) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (position, head_dim) in float64, for every position of the context."""
    d = arch.dims(model)
    freq = arch.frequencies(model).double()  # (head_dim / 2,)
    angle = torch.arange(d.n_ctx, dtype=torch.float64)[:, None] * freq[None, :]  # (position, head_dim / 2)
    angle = torch.cat((angle, angle), dim=-1)  # (position, head_dim): transformers' rotate_half layout
    return angle.cos(), angle.sin()


def mean_curves(model, name: str, id_lists: Sequence[Sequence[int]]) -> list[list[list[float]]]:
    """[layer][head] -> the mean scaled score at distance 0..MAX_DISTANCE over every pair (key at
    or before query) of every sentence in `id_lists`."""
    d = arch.dims(model)
    cos, sin = rotation(model)
    cos_d, sin_d = cos[:MAX_DISTANCE + 1], sin[:MAX_DISTANCE + 1]
    total = torch.zeros(d.n_layer, d.n_head, MAX_DISTANCE + 1, dtype=torch.float64)  # (layer, head, distance)
    pairs = 0
    for ids in id_lists:
        qs, ks, weights = unrotated(model, ids)
        T = len(ids)
        mask = torch.ones(T, T, dtype=torch.float64).tril()  # (query, key)
        pairs += int(mask.sum())
        for l in range(d.n_layer):
            check_weights(model, name, l, qs[l], ks[l], weights[l], cos, sin)
            s = scaled_scores(model, l, qs[l], ks[l], cos_d, sin_d)  # (distance, head, query, key)
            total[l] += (s * mask).sum(dim=(-1, -2)).T  # (head, distance)
    return (total / pairs).tolist()


def example(model, name: str, ids: Sequence[int], query: int, key: int) -> dict:
    """Every head's score with the query at `query` and the key at `key` placed at each distance
    0..n_ctx − 1 (`curve`, [layer][head][distance]), and the real score at their real distance."""
    d = arch.dims(model)
    cos, sin = rotation(model)
    qs, ks, weights = unrotated(model, ids)
    curves, real = [], []
    for l in range(d.n_layer):
        check_weights(model, name, l, qs[l], ks[l], weights[l], cos, sin)
        s = scaled_scores(model, l, qs[l][query:query + 1], ks[l][key:key + 1], cos, sin)  # (distance, head, 1, 1)
        curve = s[:, :, 0, 0].T  # (head, distance)
        curves.append(curve.tolist())
        here = scaled_scores(model, l, qs[l], ks[l], cos[query - key:query - key + 1], sin[query - key:query - key + 1])  # (1, head, query, key)
        real.append(here[0, :, query, key].tolist())
    return {"query": query, "key": key, "distance": query - key, "score": real, "curve": curves}


def build(model, name: str, revision: str, id_of, examples: Sequence[tuple[str, Sequence[int], Sequence[str], int, int]]) -> dict:
    """The rotary.json document: `id_of(text)` gives a scoring sentence's ids (EOT first);
    `examples` are (text, ids, token texts, query, key) that the lessons' figures name."""
    d = arch.dims(model)
    freq = arch.frequencies(model).double()  # (head_dim / 2,)
    theta = float(freq[1] ** (-d.head_dim / 2)) if d.head_dim > 2 else 0.0  # inv_freq[i] = θ^(−2i/d)
    by_text: dict[str, dict] = {}
    for text, ids, texts, q, k in examples:
        entry = by_text.setdefault(text, {"text": text, "ids": list(ids), "tokens": list(texts), "pairs": []})
        if not any((p["query"], p["key"]) == (q, k) for p in entry["pairs"]):
            entry["pairs"].append(example(model, name, ids, q, k))
    for e in by_text.values():
        e["pairs"].sort(key=lambda p: (p["query"], p["key"]))
    return {
        "format": schema.ROTARY_FORMAT, "model": name, "revision": revision,
        "nLayer": d.n_layer, "nHead": d.n_head, "nKvHead": d.n_kv_head, "headDim": d.head_dim, "nCtx": d.n_ctx,
        "ropeTheta": round(theta), "maxDistance": MAX_DISTANCE,
        "meanOver": list(SCORING_SENTENCES),
        "meanLongest": max(len(id_of(t)) for t in SCORING_SENTENCES) - 1,  # the farthest pair those sentences hold
        "mean": mean_curves(model, name, [id_of(t) for t in SCORING_SENTENCES]),
        "sentences": sorted(by_text.values(), key=lambda e: e["text"]),
    }


def write_for_lessons(models: list[str], traces_dir, content_dir, stand_in: bool = False, gpt2_path: str | None = None,
                      out=None, err=None, force: bool = False) -> int:
    """The `make traces` hook: rewrite traces/<model>/rotary.json for each rotary model (a model
    without rotary positions gets none). 0 on success, 2 for a lesson mistake (one line)."""
    import sys

    from ..lessons import pages, rope_kinds
    from ..lessons.errors import LessonError
    from ..store import StoreError, rotary_file
    from . import load as models_mod
    from .tracing import token_ids

    out, err = out or sys.stdout, err or sys.stderr
    try:
        directives = pages.parse_content(content_dir)
    except LessonError as e:
        print(str(e), file=err)
        return 2
    for model in models:
        if not MODELS[model].rotary:
            continue  # learned positions: nothing to turn, and no second load of the model
        try:
            lm = models_mod.load(model, gpt2_path=gpt2_path, stand_in=stand_in)
        except models_mod.ModelUnavailable as e:
            print(str(e), file=err)
            continue
        if arch.frequencies(lm.model) is None:
            continue  # a stand-in of another shape
        examples = []
        for d in rope_kinds.named(directives, model):
            ids = token_ids(lm, d.sentence)
            texts = [lm.token_text(i) for i in ids]
            q, k = rope_kinds.positions(d, texts)
            if q is not None and k is not None and 0 <= k <= q:
                examples.append((d.sentence, ids, texts, q, k))  # else the figure says what is wrong
        try:
            have = rotary_file.read(traces_dir, model)
        except StoreError:
            have = None
        wanted = sorted({(t, q, k) for t, _, _, q, k in examples})
        if not force and have is not None and have.revision == lm.revision and have.named() == wanted:
            print(f"{model}: rotary curves of {len(wanted)} examples kept (written already)", file=out)
            continue
        doc = build(lm.model, model, lm.revision, lambda text: token_ids(lm, text), examples)
        p = rotary_file.write(traces_dir, model, doc)
        print(f"{model}: rotary curves (mean of every head, {len(wanted)} examples) -> {p}", file=out)
    return 0
