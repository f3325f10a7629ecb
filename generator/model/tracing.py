"""Run a model once on a sentence and capture every attention activation.

One forward pass, with hooks on each block's attention, placed through :mod:`.arch` (the one
module that knows where each architecture keeps its parts), so every model takes this one path:

* forward hooks on the q, k, v projections (:func:`arch.qkv_hooks`) capture them as the model
  computed them, before any rotation;
* a forward pre-hook on the out-projection (:func:`arch.out_proj`) captures its input: the heads'
  outputs side by side (``attn_concat``), exactly what the model itself computed;
* ``output_attentions=True`` returns transformers' own attention weights.

A rotary model's queries and keys are then turned by their positions (:func:`arch.rotation`,
:func:`arch.rotate`); q and k are after the turn, qUnrotated and kUnrotated before it. Keys and
values are kept per key/value head, and each query head reads its group's
(:func:`arch.group_of`, transformers' repeat_kv order). From them the tracer recomputes scores,
the scaled and masked scores, the weights and each head's output, and checks them against what
the model computed (:func:`self_check`); a trace that disagrees raises :class:`TraceCheckError`
and is never written.

Position 0 is always the model's ``<|endoftext|>`` (:attr:`LoadedModel.bos_id`): the tiny model
saw it at the start of every training window, and GPT-2 between every two documents. Its row can
only attend to itself (weight 1.00), and a head that has nowhere useful to look parks its weight
on it (an attention sink), instead of on whichever word happens to come first.

Shapes are written nanoGPT style in a comment on each tensor line. The returned document is plain
Python (lists, floats, None), camelCase through :mod:`generator.schema`, unrounded: the store
rounds it when it writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .. import schema
from . import arch
from .load import LoadedModel

WEIGHTS_ATOL = 1e-6  # our softmax vs transformers' output_attentions
OUT_ATOL = 1e-5  # our weights · v vs the model's own input to its out-projection
ROW_SUM_ATOL = 1e-5  # each weights row sums to 1


class TraceError(ValueError):
    """A sentence that cannot be traced (empty, too long, ids outside the vocabulary)."""


class TooLong(TraceError):
    pass


class TraceCheckError(AssertionError):
    """The recomputed activations disagree with the model's own."""


@dataclass
class Captured:
    """Raw tensors of one traced sentence, float32, batch axis dropped. k and v are stored once per
    key/value head (what the model computes); `expanded` gives them per query head."""

    ids: list[int]
    kv_of_head: list[int]  # per query head: the key/value head it reads (arch.group_of)
    rotary: bool  # queries and keys turned by their position (q, k are after the turn)
    q: list[torch.Tensor]  # per layer: (head, token, head_dim), rotated for a rotary model
    q_unrotated: list[torch.Tensor]  # per layer: (head, token, head_dim), before the rotation
    k: list[torch.Tensor]  # per layer: (kv_head, token, head_dim), rotated for a rotary model
    k_unrotated: list[torch.Tensor]  # per layer: (kv_head, token, head_dim), before the rotation
    v: list[torch.Tensor]  # per layer: (kv_head, token, head_dim)
    scores: list[torch.Tensor]  # per layer: (head, query, key)
    scaled_masked: list[torch.Tensor]  # per layer: (head, query, key), -inf above the diagonal
    weights: list[torch.Tensor]  # per layer: (head, query, key)
    out: list[torch.Tensor]  # per layer: (head, token, head_dim)
    attn_concat: list[torch.Tensor]  # per layer: (token, head · head_dim), the out-projection's input
    hf_weights: list[torch.Tensor]  # per layer: (head, query, key), from output_attentions
    logits: torch.Tensor  # (token, vocab)

    def expanded(self, per_kv: list[torch.Tensor]) -> list[torch.Tensor]:
        """Per-key/value-head tensors, (kv_head, token, head_dim) per layer, as each query head
        reads them: (head, token, head_dim) per layer."""
        idx = torch.tensor(self.kv_of_head)  # (head,)
        return [t.index_select(0, idx) for t in per_kv]  # each (head, token, head_dim)


def token_ids(lm: LoadedModel, text: str, ids: Sequence[int] | None = None) -> list[int]:
    """The ids to trace, checked against the model's context and vocabulary."""
    if ids is not None:
        out = [int(i) for i in ids]
        vocab = lm.dims.vocab
        bad = [i for i in out if not 0 <= i < vocab]
        if bad:
            raise TraceError(f"{lm.name}: token ids {bad[:5]} are outside the vocabulary (0..{vocab - 1})")
    else:
        words = lm.tokenizer_encode(text)
        if not words:
            raise TraceError(f"{lm.name}: nothing to trace in {text!r} (no tokens)")
        out = [lm.bos_id] + words
    if not out:
        raise TraceError(f"{lm.name}: nothing to trace (no token ids)")
    if len(out) > lm.n_ctx:
        raise TooLong(
            f"{lm.name}: {text[:40]!r}… is {len(out)} tokens, longer than {lm.name}'s context of {lm.n_ctx} tokens"
        )
    return out


def capture(lm: LoadedModel, ids: Sequence[int]) -> Captured:
    """One forward pass with hooks; returns every activation as float32 tensors."""
    model = lm.model
    d = arch.dims(model)
    H, G, hd = d.n_head, d.n_kv_head, d.head_dim
    T = len(ids)
    qkv_seen: list[dict] = [{} for _ in range(d.n_layer)]  # per layer: q, k, v as the model projected them
    concat_seen: list[torch.Tensor | None] = [None] * d.n_layer
    handles = []
    try:
        for layer, block in enumerate(arch.blocks(model)):

            def on_out_proj(_mod, args, layer=layer):
                concat_seen[layer] = args[0].detach()  # (1, token, head · head_dim)

            handles += arch.qkv_hooks(block, qkv_seen[layer])
            handles.append(arch.out_proj(block).register_forward_pre_hook(on_out_proj))
        with torch.inference_mode():
            x = torch.tensor([list(ids)], dtype=torch.long)  # (1, token)
            res = model(x, output_attentions=True, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    if res.attentions is None or any(len(s) != 3 for s in qkv_seen) or any(t is None for t in concat_seen):
        raise TraceCheckError(f"{lm.name}: hooks did not fire on every layer (is attention eager?)")

    turn = arch.rotation(model, T)  # None, or (cos, sin), each (token, head_dim)
    kv_of_head = [arch.group_of(h, d) for h in range(H)]
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # (query, key), True where a query may look
    cap = Captured(list(ids), kv_of_head, turn is not None, *([] for _ in range(11)), res.logits[0].float())  # logits (token, vocab)
    # Layer by layer, with the same operations in the same order as transformers' eager attention,
    # so that the recomputed weights and outputs match the model's bit for bit in practice (a
    # batched version over all layers drifts by ~1e-6).
    with torch.inference_mode():
        for layer, block in enumerate(arch.blocks(model)):
            seen = qkv_seen[layer]
            q0 = seen["q"][0].float().view(T, H, hd)  # (token, head, head_dim)
            k0 = seen["k"][0].float().view(T, G, hd)  # (token, kv_head, head_dim)
            v = seen["v"][0].float().view(T, G, hd).transpose(0, 1)  # (kv_head, token, head_dim)
            if turn is None:
                q, k = q0, k0  # (token, head, head_dim), (token, kv_head, head_dim)
            else:
                q = arch.rotate(q0, *turn)  # (token, head, head_dim)
                k = arch.rotate(k0, *turn)  # (token, kv_head, head_dim)
            q, q0 = q.transpose(0, 1), q0.transpose(0, 1)  # each (head, token, head_dim)
            k, k0 = k.transpose(0, 1), k0.transpose(0, 1)  # each (kv_head, token, head_dim)
            idx = torch.tensor(kv_of_head)  # (head,)
            k_h, v_h = k.index_select(0, idx), v.index_select(0, idx)  # each (head, token, head_dim)
            scores = q @ k_h.transpose(-1, -2)  # (head, query, key)
            # 1/√head_dim for both architectures; read from the module so the two never drift.
            scaled = scores * arch.scaling(block)  # (head, query, key)
            scaled_masked = scaled.masked_fill(~causal, float("-inf"))  # (head, query, key)
            weights = torch.softmax(scaled_masked, dim=-1)  # (head, query, key)
            out = weights @ v_h  # (head, token, head_dim)
            cap.q.append(q)
            cap.q_unrotated.append(q0)
            cap.k.append(k)
            cap.k_unrotated.append(k0)
            cap.v.append(v)
            cap.scores.append(scores)
            cap.scaled_masked.append(scaled_masked)
            cap.weights.append(weights)
            cap.out.append(out)
            cap.attn_concat.append(concat_seen[layer][0].float())  # (token, head · head_dim)
            cap.hf_weights.append(res.attentions[layer][0].float())  # (head, query, key)
    return cap


def self_check(cap: Captured, name: str = "") -> None:
    """Raise TraceCheckError unless the recomputed activations agree with the model's own."""
    T = len(cap.ids)
    L, H, _, d = len(cap.out), *cap.out[0].shape
    above = ~torch.ones(T, T, dtype=torch.bool).tril()  # (query, key), the masked cells
    with torch.inference_mode():
        w = torch.stack(cap.weights)  # (layer, head, query, key)
        merged = torch.stack(cap.out).transpose(1, 2).reshape(L, T, H * d)  # (layer, token, head · head_dim)
        errors = torch.stack([
            (w - torch.stack(cap.hf_weights)).abs().amax(dim=(1, 2, 3)),  # (layer,)
            (merged - torch.stack(cap.attn_concat)).abs().amax(dim=(1, 2)),  # (layer,)
            (w.sum(-1) - 1).abs().amax(dim=(1, 2)),  # (layer,)
            (w * above).abs().amax(dim=(1, 2, 3)),  # (layer,)
        ]).tolist()  # (check, layer)
    for layer, (e_w, e_out, e_sum, e_mask) in enumerate(zip(*errors)):
        where = f"{name} layer {layer}"
        if not e_w <= WEIGHTS_ATOL:
            raise TraceCheckError(f"{where}: weights differ from output_attentions by {e_w:.3g} > {WEIGHTS_ATOL}")
        if not e_out <= OUT_ATOL:
            raise TraceCheckError(f"{where}: weights·v differs from the out-projection's input by {e_out:.3g} > {OUT_ATOL}")
        if not e_sum <= ROW_SUM_ATOL:
            raise TraceCheckError(f"{where}: a weights row sums to 1 ± {e_sum:.3g}")
        if not e_mask == 0:
            raise TraceCheckError(f"{where}: a masked (future) cell has a nonzero weight")


def _masked_rows(grid: list) -> list:
    """Replace the cells above the diagonal of each (query, key) grid by None, in place."""
    for head in grid:
        for i, row in enumerate(head):
            row[i + 1 :] = [None] * (len(row) - i - 1)
    return grid


def token_record(lm: LoadedModel, i: int) -> dict:
    text = lm.token_text(i)
    return {"id": int(i), "text": text, "display": schema.display_token(text), "spoken": schema.spoken_token(text)}


def predictions(lm: LoadedModel, logits: torch.Tensor, k: int = schema.TOP_K_PREDICTIONS) -> list[list[dict]]:
    """Top-k next tokens with probabilities at every position, most likely first."""
    with torch.inference_mode():
        probs = torch.softmax(logits, dim=-1)  # (token, vocab)
        top = probs.topk(k, dim=-1)  # values, indices: (token, k)
    cache: dict[int, str] = {}
    rows = []
    for pvals, pids in zip(top.values.tolist(), top.indices.tolist()):
        row = []
        for p, i in zip(pvals, pids):
            text = cache.get(i)
            if text is None:
                text = cache[i] = lm.token_text(i)
            row.append(dict(zip(schema.PREDICTION_FIELDS, (int(i), text, schema.display_token(text), float(p)))))
        rows.append(row)
    return rows


def to_document(lm: LoadedModel, text: str, cap: Captured, ids_given: bool) -> dict:
    """The trace document (see traces/README.md), unrounded, without its key: per query head every
    activation (its group's k and v among them, and kvHead), per key/value head its k and v."""
    c = schema.camel
    layers = []
    for layer in range(len(cap.q)):
        k_h, v_h, ku_h = (cap.expanded(t)[layer] for t in (cap.k, cap.v, cap.k_unrotated))  # each (head, token, head_dim)
        per = {
            c("q"): cap.q[layer].tolist(),  # (head, token, head_dim)
            c("k"): k_h.tolist(),  # (head, token, head_dim)
            c("v"): v_h.tolist(),  # (head, token, head_dim)
            c("scores"): cap.scores[layer].tolist(),  # (head, query, key)
            c("scaled_masked"): _masked_rows(cap.scaled_masked[layer].tolist()),  # (head, query, key)
            c("weights"): cap.weights[layer].tolist(),  # (head, query, key)
            c("out"): cap.out[layer].tolist(),  # (head, token, head_dim)
            c("q_unrotated"): cap.q_unrotated[layer].tolist(),  # (head, token, head_dim)
            c("k_unrotated"): ku_h.tolist(),  # (head, token, head_dim)
        }
        assert list(per) == [a.camel for a in schema.HEAD_ACTIVATIONS]
        heads = [{**{name: grid[h] for name, grid in per.items()}, "kvHead": cap.kv_of_head[h]} for h in range(len(cap.kv_of_head))]
        kv = {"k": cap.k[layer].tolist(), "v": cap.v[layer].tolist(), "kUnrotated": cap.k_unrotated[layer].tolist()}  # each (kv_head, token, head_dim)
        kv_heads = [{name: grid[g] for name, grid in kv.items()} for g in range(len(cap.k[layer]))]
        layers.append({"heads": heads, "kvHeads": kv_heads, c("attn_concat"): cap.attn_concat[layer].tolist()})  # (token, width)
    doc = {
        "schemaVersion": schema.SCHEMA_VERSION,
        "model": lm.name,
        "text": text,
    }
    if ids_given:
        doc["ids"] = list(cap.ids)
    doc["meta"] = dict(lm.meta)
    doc["tokens"] = [token_record(lm, i) for i in cap.ids]
    doc["layers"] = layers
    doc["predictions"] = predictions(lm, cap.logits)
    return doc


def trace(lm: LoadedModel, text: str, ids: Sequence[int] | None = None, targets: Sequence[int] = ()) -> dict:
    """Trace `text` (or the explicit token `ids`, for scoring texts) through `lm`, with the causal
    block (generator/model/causal.py) following the clean top 5 and the token ids `targets` that the
    lessons name for this sentence.

    Returns the trace document, self-checked. Raises TraceError for an untraceable sentence
    (TooLong when it exceeds the model's context) and TraceCheckError when a check fails.
    """
    from . import causal

    tid = token_ids(lm, text, ids)
    vocab = lm.dims.vocab
    bad = [int(t) for t in targets if not 0 <= int(t) < vocab]
    if bad:
        raise TraceError(f"{lm.name}: target token ids {bad[:5]} are outside the vocabulary (0..{vocab - 1})")
    cap = capture(lm, tid)
    self_check(cap, lm.name)
    doc = to_document(lm, text, cap, ids_given=ids is not None)
    try:
        block = causal.sentence_block(lm, tid, cap.expanded(cap.v), targets=targets)  # v per query head
    except causal.CausalCheckError as e:
        raise TraceCheckError(str(e)) from None
    doc["causal"] = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in block.items()}  # plain Python, like the rest
    return doc
