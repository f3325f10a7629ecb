"""Why a head looks where it looks: every attention score split into the parts of the residual
stream that made it.

The residual stream entering block l is a sum of parts (schema.split_parts): the token embedding,
the position embedding (learned positions only), each earlier head's output through its rows of
W_O, each earlier MLP's output, and the biases (every earlier attention output bias; a model
without biases, Llama, has no such part). With the attention norm's scale frozen at its value in
the real run (as direct logit attribution freezes the final norm's), the norm is linear in the
stream (LayerNorm centres each part first, RMSNorm does not), so each head's query and key are
sums of one piece per part (the norm's bias and the projections' biases go to the biases part),
and the scaled score q·k/√d splits exactly:

* key side: score[i, j] = Σ_p q_i · k_j^p / √d (query i whole, key j split);
* query side: score[i, j] = Σ_p q_i^p · k_j / √d (roles swapped);
* learned positions, layer 1's four-way table: score[i, j] = Σ_a Σ_b q_i^a · k_j^b / √d, where
  layer 1's stream has only three parts (token, position, biases).

Rotary positions (Llama): each query piece is turned by the query's position and each key piece
by the key's before the dot product (the turn is linear, so the turned pieces still add up to the
turned q and k), and position enters every part's share only through that turn: there is no
position part. Layer 1's stream is the token embedding alone, so there is no table; instead each
head also gets `scoreUnrotated`, the same score with q and k left unturned, so a page can show how
much of the score the rotation makes (for a previous-token head in layer 1, all of "looks one
back"). A query head reads its key/value group's key (arch.group_of).

Every split is checked against the model's own q·k/√d (its own q and k projections, hooked, and
for a rotary model turned by the model's own rotation) to :data:`SPLIT_ATOL`, and the softmax of
that score against the model's own attention weights to :data:`WEIGHTS_ATOL`, before anything is
returned. Heads and layers count from 0 here; float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .. import schema
from . import arch
from .causal import dims, w_out
from .rerun import blocks
from .load import LoadedModel

SPLIT_ATOL = schema.SPLIT_ATOL  # the parts of a score add up to the model's own score within this
WEIGHTS_ATOL = 1e-4  # softmax of the own score vs the model's attention weights (float64 vs float32); a wrong rotation is off by ≫ 0.01


class SplitCheckError(AssertionError):
    """The parts do not add up to the model's own score."""


def _run(lm: LoadedModel, ids: Sequence[int]) -> dict:
    """One clean forward with hooks: each block's input stream, each out-projection input, each
    MLP output and each q, k, v projection (before any rotation), float64, batch axis dropped;
    and the model's own attention weights (layer, head, query, key)."""
    seen: dict = {"resid": {}, "concat": {}, "mlp": {}, "qkv": {}}
    handles = []
    for l, block in enumerate(blocks(lm)):
        handles.append(block.register_forward_pre_hook(
            lambda _m, args, l=l: seen["resid"].__setitem__(l, args[0][0].detach().double())))  # (token, width)
        handles.append(arch.out_proj(block).register_forward_pre_hook(
            lambda _m, args, l=l: seen["concat"].__setitem__(l, args[0][0].detach().double())))  # (token, width)
        handles.append(arch.mlp(block).register_forward_hook(
            lambda _m, _a, out, l=l: seen["mlp"].__setitem__(l, out[0].detach().double())))  # (token, width)
        handles += arch.qkv_hooks(block, seen["qkv"].setdefault(l, {}))  # q (1, token, head·d), k and v (1, token, kv_head·d)
    try:
        with torch.inference_mode():
            res = lm.model(torch.tensor([list(ids)]), use_cache=False, output_attentions=True)
    finally:
        for hd in handles:
            hd.remove()
    seen["weights"] = torch.stack([a[0] for a in res.attentions]).double()  # (layer, head, query, key)
    return seen


def stream_parts(lm: LoadedModel, ids: Sequence[int], seen: dict) -> list[torch.Tensor]:
    """Per layer l: the parts (part, token, width) that the stream entering block l is a sum of,
    in the order of schema.split_parts(l, n_head, positions), checked against the stream itself."""
    L, H, W, d = dims(lm)
    model = lm.model
    biases = arch.has_biases(model)
    table = arch.position_embedding(model)
    T = len(ids)
    with torch.inference_mode():
        tok = arch.token_embedding(model).weight[torch.tensor(list(ids))].double()  # (token, width)
        pos = [] if table is None else [table.weight[:T].double()]  # [(token, width)] or none
        heads_out: list[torch.Tensor] = []  # each (token, width)
        mlps: list[torch.Tensor] = []  # each (token, width)
        bias = torch.zeros(T, W, dtype=torch.float64)  # (token, width)
        out = []
        for l, block in enumerate(blocks(lm)):
            parts = torch.stack([tok, *pos, *heads_out, *mlps, *([bias] if biases else [])])  # (part, token, width)
            worst = float((parts.sum(0) - seen["resid"][l]).abs().max())
            if worst > 1e-3 * (1 + float(seen["resid"][l].abs().max())):
                raise SplitCheckError(f"{lm.name}: layer {l + 1}'s stream parts add up to it within {worst:.3g} only")
            out.append(parts)
            concat = seen["concat"][l]  # (token, width)
            for h in range(H):
                heads_out.append(concat[:, h * d:(h + 1) * d] @ w_out(block, h, d).double())  # (token, width)
            mlps.append(seen["mlp"][l])
            bias = bias + arch.out_weights(block)[1].double()  # (token, width)
    return out


def qk_parts(lm: LoadedModel, layer: int, parts: torch.Tensor, resid: torch.Tensor,
             rotation: tuple[torch.Tensor, torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Each part's piece of every head's query and key in `layer`, through the attention norm with
    its scale frozen at the stream `resid` (token, width), turned by `rotation` ((cos, sin), each
    (token, head_dim)) when given: q (head, part, token, head_dim) and k (kv_head, part, token,
    head_dim). The last part (biases, where the model has them) also takes the norm's bias and the
    projections' biases."""
    shape = arch.dims(lm.model)
    H, KV, d = shape.n_head, shape.n_kv_head, shape.head_dim
    block = blocks(lm)[layer]
    ln = arch.attn_norm(block)
    biases = arch.has_biases(lm.model)
    with torch.inference_mode():
        normed = arch.frozen_norm(ln, parts, resid, arch.adapter(lm.model).norm_centres)  # (part, token, width)
        wq, wk, _wv, bq, bk, _bv = arch.qkv_weights(block)  # (width, head·d), (width, kv_head·d); biases
        if biases:
            normed[-1] = normed[-1] + arch.norm_bias(ln).double()  # (token, width)
        P, T = parts.shape[0], parts.shape[1]
        q = normed @ wq.double()  # (part, token, head·d)
        k = normed @ wk.double()  # (part, token, kv_head·d)
        if biases:
            q[-1] = q[-1] + bq.double()
            k[-1] = k[-1] + bk.double()
        q = q.view(P, T, H, d)  # (part, token, head, head_dim)
        k = k.view(P, T, KV, d)  # (part, token, kv_head, head_dim)
        if rotation is not None:
            q, k = arch.rotate(q, *rotation), arch.rotate(k, *rotation)  # each piece turned by its own token's position
        q = q.permute(2, 0, 1, 3)  # (head, part, token, head_dim)
        k = k.permute(2, 0, 1, 3)  # (kv_head, part, token, head_dim)
    return q, k


def split_scores(lm: LoadedModel, ids: Sequence[int], heads: Sequence[tuple[int, int]] | None = None) -> dict:
    """The split of every score of `heads` ((layer, head) pairs; every head when None) on `ids`.

    Returns {"score": {(l, h): (query, key)}, "key": {(l, h): (part, query, key)}, "query":
    {(l, h): (part, query, key)}, "table": {(0, h): (part, part, query, key)} for layer-1 heads of
    a learned-position model, "unrotated": {(l, h): (query, key)} for a rotary model's heads},
    numpy float64, the masked cells (key after query) zero. Raises SplitCheckError when a split
    does not add up to the model's own scaled score within SPLIT_ATOL."""
    shape = arch.dims(lm.model)
    L, H, W, d = dims(lm)
    T = len(ids)
    wanted = sorted(set(heads)) if heads is not None else [(l, h) for l in range(L) for h in range(H)]
    seen = _run(lm, ids)
    per_layer = stream_parts(lm, ids, seen)
    rot = arch.rotation(lm.model, T)  # (cos, sin), each (token, head_dim), or None
    rot = None if rot is None else (rot[0].double(), rot[1].double())
    below = torch.ones(T, T, dtype=torch.float64).tril()  # (query, key), 1 where a query may look
    out: dict = {"score": {}, "key": {}, "query": {}, "table": {}, "unrotated": {}}
    for layer in sorted({l for l, _ in wanted}):
        q_parts, k_parts = qk_parts(lm, layer, per_layer[layer], seen["resid"][layer], rot)  # (head | kv_head, part, token, head_dim)
        scaling = arch.scaling(blocks(lm)[layer])
        own = seen["qkv"][layer]
        q_all = own["q"][0].double().view(T, H, d)  # (token, head, head_dim), as projected
        k_all = own["k"][0].double().view(T, shape.n_kv_head, d)  # (token, kv_head, head_dim)
        q_turned, k_turned = (q_all, k_all) if rot is None else (arch.rotate(q_all, *rot), arch.rotate(k_all, *rot))
        for l, h in (x for x in wanted if x[0] == layer):
            g = arch.group_of(h, shape)
            with torch.inference_mode():
                q_own = q_turned[:, h]  # (token, head_dim)
                k_own = k_turned[:, g]  # (token, head_dim): the group's key
                score = (q_own @ k_own.T) * scaling * below  # (query, key), the model's own
                q_whole = q_parts[h].sum(0)  # (token, head_dim)
                k_whole = k_parts[g].sum(0)  # (token, head_dim)
                key = torch.einsum("id,pjd->pij", q_whole, k_parts[g]) * scaling * below  # (part, query, key)
                query = torch.einsum("pid,jd->pij", q_parts[h], k_whole) * scaling * below  # (part, query, key)
                parts = {"key": key, "query": query}
                if layer == 0 and rot is None:
                    parts["table"] = torch.einsum("aid,bjd->abij", q_parts[h], k_parts[g]) * scaling * below  # (part, part, query, key)
                weights = torch.softmax(score.masked_fill(below == 0, float("-inf")), dim=-1)  # (query, key)
            off = float((weights - seen["weights"][l, h]).abs().max())
            if not off <= WEIGHTS_ATOL:
                raise SplitCheckError(f"{lm.name}: L{l + 1}H{h + 1}'s recomputed scores give weights {off:.3g} off the model's own")
            for side, split in parts.items():
                total = split.sum(dim=(0, 1) if side == "table" else 0)  # (query, key)
                worst = float((total - score).abs().max())
                if not worst <= SPLIT_ATOL:
                    raise SplitCheckError(
                        f"{lm.name}: the {side} split of L{l + 1}H{h + 1} adds up to its score within {worst:.3g} only")
                out[side][(l, h)] = split.numpy()
            out["score"][(l, h)] = score.numpy()
            if rot is not None:
                out["unrotated"][(l, h)] = ((q_all[:, h] @ k_all[:, g].T) * scaling * below).numpy()  # (query, key)
    return out


def _cells(a: np.ndarray) -> list:
    """The (..., query, key) array's cells on and below the diagonal, row by row: (..., cell)."""
    T = a.shape[-1]
    rows, cols = np.tril_indices(T)
    return a[..., rows, cols].tolist()


def sentence_entry(lm: LoadedModel, text: str, heads: Sequence[tuple[int, int]] | None) -> dict:
    """splits.json's entry for one sentence (store/splits_file.py), heads counting from 1."""
    from .tracing import token_ids

    ids = token_ids(lm, text)
    split = split_scores(lm, ids, heads)
    entries = []
    for l, h in sorted(split["score"]):
        e = {"layer": l + 1, "head": h + 1, "score": _cells(split["score"][(l, h)]),
             "key": _cells(split["key"][(l, h)]), "query": _cells(split["query"][(l, h)])}
        if (l, h) in split["table"]:
            e["table"] = _cells(split["table"][(l, h)])
        if (l, h) in split["unrotated"]:
            e["scoreUnrotated"] = _cells(split["unrotated"][(l, h)])
        entries.append(e)
    return {"text": text, "ids": list(ids), "heads": entries}


def build(lm: LoadedModel, wanted: dict[str, set[tuple[int, int]] | None]) -> dict:
    """The splits.json document of `lm` for `wanted`: sentence -> heads (from 0), None for all."""
    L, H, _, _ = dims(lm)
    positions = arch.positions(lm.model)
    if positions == "rotary" and arch.has_biases(lm.model):
        raise SplitCheckError(f"{lm.name}: a rotary model with attention biases has no split parts named here (schema.split_parts)")
    return {
        "format": schema.SPLIT_FORMAT, "model": lm.name, "revision": lm.revision, "nLayer": L, "nHead": H,
        # written only for a rotary model, so that the files of learned-position models keep their bytes (absent: learned)
        **({} if positions == "learned" else {"positions": positions}),
        "parts": [schema.split_parts(l, H, positions) for l in range(L)],
        "sentences": [sentence_entry(lm, text, None if heads is None else sorted(heads)) for text, heads in wanted.items()],
    }


def write_for_lessons(models: list[str], traces_dir, content_dir, stand_in: bool = False, gpt2_path: str | None = None,
                      out=None, err=None, force: bool = False) -> int:
    """The `make traces` hook: rewrite traces/<model>/splits.json for the lessons' score-split
    figures. 0 on success (a model that cannot be loaded here is skipped: run_traces said so),
    2 for a lesson mistake (one line)."""
    import sys

    from ..lessons import pages, split_kinds
    from ..lessons.errors import LessonError
    from ..store import StoreError, splits_file
    from . import load as models_mod

    out, err = out or sys.stdout, err or sys.stderr
    try:
        directives = pages.parse_content(content_dir)
    except LessonError as e:
        print(str(e), file=err)
        return 2
    needed = split_kinds.needs(directives)
    for model in models:
        wanted = {text: heads for (m, text), heads in needed.items() if m == model}
        if not wanted:
            continue
        try:
            lm = models_mod.load(model, gpt2_path=gpt2_path, stand_in=stand_in)
        except models_mod.ModelUnavailable as e:
            print(str(e), file=err)  # run_traces has said what is missing and set the exit status
            continue
        try:
            have = splits_file.read(traces_dir, model)
        except StoreError:
            have = None  # damaged: written again
        if not force and have is not None and have.revision == lm.revision and \
                [s["text"] for s in have.doc["sentences"]] == list(wanted) and \
                all(heads is None or {(e["layer"] - 1, e["head"] - 1) for e in have.sentence(t)["heads"]} == heads
                    for t, heads in wanted.items()):
            print(f"{model}: score splits of {len(wanted)} sentences kept (written already)", file=out)
            continue
        p = splits_file.write(traces_dir, model, build(lm, wanted))
        print(f"{model}: score splits of {len(wanted)} sentences -> {p}", file=out)
    return 0
