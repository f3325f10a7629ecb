"""What each head *does* to the prediction, measured, not read off its weights.

For one traced sentence (:func:`sentence_block`), with transformers' own modules and hooks, never
a reimplementation of the model:

* **ablation**: each head's output (its block of the out-projection's input, which
  model/arch.py finds for either architecture) replaced, at every position,
  by zeros or by its mean over a fixed reference text (:func:`head_means`), one batched forward
  per layer; per head and position, the KL divergence of the clean next-token distribution from
  the ablated one, and the change in logit and log-probability of the clean top 5 and of every
  token a lesson names for the sentence (its ``targets``);
* **direct logit attribution**: the final residual stream is the sum of the embedding, every
  head's output through its rows of ``W_O``, every MLP's output and the biases; through the final
  norm's scale frozen at the clean run (LayerNorm centres the parts first, RMSNorm does not), each
  part's share of each followed logit (the parts add up to the logit: :data:`DLA_ATOL`). A model
  without biases (Llama) keeps the biases part, all zeros, so that every model has the same parts;
* **value norms** ‖v_j W_O^h‖ (Kobayashi et al. 2020): α_ij times this is what token j really
  hands token i through head h; v_j is the value of head h's key/value group (query heads that
  share a group share v, not W_O);
* **the logit lens**: the residual stream after the embedding and after each block, through the
  final norm and the unembedding, top 5 per layer and position.

Per model, generator/model/circuits.py builds on these runs. For a pair of sentences (:func:`patching`): each head's output from sentence B put into
sentence A at the same positions, and what that does to the followed logits.

Everything returned is numpy float64 / int, unrounded; :mod:`generator.store.codec` encodes it.
Heads and layers count from 0 here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .. import heads, schema
from . import arch
from .load import LoadedModel
from .rerun import CleanRun, blocks, clean_run, run_blocks

ABLATIONS = ("zero", "mean")  # how a removed head's output is replaced
DLA_ATOL = 1e-4  # the parts of a logit add up to it within this (float32 sums of ~20 vectors)
LENS_K = schema.LENS_K  # top guesses the logit lens keeps per layer and position


class CausalCheckError(AssertionError):
    """A causal measurement disagrees with the model's own forward pass."""


@dataclass(frozen=True)
class CausalConfig:
    ablations: tuple[str, ...] = ABLATIONS  # zero: the head adds nothing; mean: it adds its average output
    lens_k: int = LENS_K  # top guesses per layer and position in the logit lens
    reference_texts: tuple[str, ...] = heads.SCORING_SENTENCES  # what a head's mean output is taken over
    reference_version: int = heads.SCORING_SET_VERSION  # bumped with the texts


@dataclass
class Reference:
    """Each head's mean output over the reference texts, for mean-ablation."""

    means: np.ndarray  # (layer, head, head_dim)
    record: dict = field(default_factory=dict)  # what it was taken over, for the trace


def dims(lm: LoadedModel) -> tuple[int, int, int, int]:
    """(layers, query heads, width, head_dim); arch.dims has the key/value heads too."""
    d = arch.dims(lm.model)
    return d.n_layer, d.n_head, d.width, d.head_dim


def w_out(block, h: int, d: int) -> torch.Tensor:
    """Head h's rows of W_O (head_dim, width), whichever module holds them (arch.out_weights)."""
    return arch.out_weights(block)[0][h * d : (h + 1) * d, :]  # (head_dim, width)


def _pre_hook(block, fn):
    """Pass the out-projection's input (the heads' outputs side by side) through fn first."""
    return arch.out_proj(block).register_forward_pre_hook(lambda _m, args: (fn(args[0]),))


def _forward(lm: LoadedModel, x: torch.Tensor, replace: dict | None = None, attentions: bool = False):
    """The model on token ids `x` (batch, token), each layer's out-projection input passed through
    replace[layer](concat) first. Returns transformers' output."""
    handles = []
    for layer, fn in (replace or {}).items():
        handles.append(_pre_hook(blocks(lm)[layer], fn))
    try:
        with torch.inference_mode():
            return lm.model(x, use_cache=False, output_attentions=attentions)
    finally:
        for hd in handles:
            hd.remove()


def _head_replacer(H: int, d: int, means: np.ndarray | None, layer: int, modes: Sequence[str]):
    """Out-projection-input rewriter for a batch of len(modes) × H copies: copy m·H + h has head h
    replaced as modes[m] says (zero, or the head's mean output at this layer)."""
    def fn(concat):  # (batch, token, width)
        concat = concat.clone()
        for m, mode in enumerate(modes):
            for h in range(H):
                block = concat[m * H + h, :, h * d : (h + 1) * d]  # (token, head_dim)
                if mode == "zero":
                    block.zero_()
                else:
                    block.copy_(torch.as_tensor(means[layer, h], dtype=concat.dtype).expand_as(block))
        return concat
    return fn


def head_means(lm: LoadedModel, config: CausalConfig = CausalConfig()) -> Reference:
    """Each head's output averaged over every position but 0 (<|endoftext|>) of the reference
    texts, each traced from <|endoftext|> as the pages' sentences are."""
    L, H, W, d = dims(lm)
    total = np.zeros((L, W))  # (layer, width)
    n = 0
    for text in config.reference_texts:
        ids = lm.ids_of(text)
        seen: dict[int, torch.Tensor] = {}

        def keep(layer):
            def fn(concat):
                seen[layer] = concat[0].detach().double()  # (token, width)
                return concat
            return fn

        _forward(lm, torch.tensor([ids]), {l: keep(l) for l in range(L)})
        for l in range(L):
            total[l] += seen[l][1:].sum(dim=0).numpy()  # (width,)
        n += len(ids) - 1
    means = (total / n).reshape(L, H, d)  # (layer, head, head_dim)
    record = {"texts": "heads.SCORING_SENTENCES", "version": config.reference_version,
              "sha": heads.texts_digest(config.reference_texts), "positions": n}
    return Reference(means, record)


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.double(), dim=-1)


def resumed(lm: LoadedModel, run: CleanRun, layer: int, batch: int, replace) -> tuple[torch.Tensor, torch.Tensor]:
    """The model from block `layer` on, for `batch` copies of the clean stream entering it, with
    that block's out-projection input passed through `replace` first: transformers' own blocks, final norm and
    unembedding, called with the arguments the clean run gave them (the blocks before `layer` are
    not run again: their outputs do not change). Returns logits (batch, token, vocab) and the
    attention weights of blocks layer… (batch, layer, head, query, key)."""
    chain = blocks(lm)
    seen = []
    handles = [_pre_hook(chain[layer], replace)]
    for block in chain[layer:]:
        handles.append(arch.attention(block).register_forward_hook(
            lambda _m, _a, out: seen.append(arch.attention_weights(out).detach())))
    try:
        with torch.inference_mode():
            x = run.streams[layer].expand(batch, *run.streams[layer].shape[1:])  # (batch, token, width)
            x = run_blocks(lm, x, run.calls, layer)  # (batch, token, width)
            logits = arch.unembedding(lm.model)(arch.final_norm(lm.model)(x))  # (batch, token, vocab)
    finally:
        for hd in handles:
            hd.remove()
    return logits, torch.stack(seen, dim=1)  # float32: (batch, token, vocab), (batch, layer', head, query, key)


def _logsumexp_(x: torch.Tensor) -> torch.Tensor:
    """logsumexp over the last axis, keepdim, computed in x's own memory (x is overwritten):
    torch.logsumexp allocates a temporary the size of x for each of its steps."""
    with torch.inference_mode():  # x is an inference tensor (resumed's): changed in place only in this mode
        top = x.amax(dim=-1, keepdim=True)  # (…, 1)
        return x.sub_(top).exp_().sum(dim=-1, keepdim=True).log_().add_(top)  # (…, 1)


def _next_logits(logits: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
    """(batch, token - 1, 1): each position's logit of the token that comes next."""
    return logits[:, :-1].gather(-1, torch.as_tensor(list(ids[1:])).expand(logits.shape[0], -1).unsqueeze(-1))


def _icl_losses(picked: torch.Tensor, lse: torch.Tensor, half: int) -> torch.Tensor:
    """(batch, 2): mean next-token loss over the first copy (its tokens 2…half) and over the
    same tokens in the second copy, of <|endoftext|> + s + s with |s| = half. picked: each
    position's logit of its next token (batch, token - 1, 1, :func:`_next_logits`); lse: the
    logits' logsumexp (batch, token, 1). A log-probability is logit − lse."""
    first = torch.arange(2, half + 1)
    second = torch.arange(half + 2, 2 * half + 1)
    nll = (lse[:, :-1] - picked)[..., 0]  # (batch, token - 1)
    return torch.stack([nll[:, first - 1].mean(-1), nll[:, second - 1].mean(-1)], dim=-1)


def repeated_half(ids: Sequence[int]) -> int | None:
    """|s| when ids are <|endoftext|> + s + s (a scoring text of repeated random tokens), else None."""
    n = (len(ids) - 1) // 2
    return n if n >= 2 and len(ids) == 2 * n + 1 and list(ids[1 : n + 1]) == list(ids[n + 1 :]) else None


def ablation(lm: LoadedModel, ids: Sequence[int], ref: Reference, followed: np.ndarray, config: CausalConfig = CausalConfig()) -> dict:
    """Per ablation mode, head and position: KL(clean ‖ ablated) of the next-token distribution,
    and the ablated logit and log-probability of each followed token.

    followed: (token, n) token ids followed at each position. Returns arrays shaped
    kl (mode, layer, head, token), logit / logprob (mode, layer, head, token, n). Along the way it
    keeps, for :func:`circuits`, every head's kind scores and (on repeated random tokens) the
    copying losses with each head removed (lm's memo, keyed by the ids)."""
    L, H, W, d = dims(lm)
    T = len(ids)
    modes = config.ablations
    run = clean_run(lm, ids)
    clean_lse = torch.logsumexp(run.logits, dim=-1, keepdim=True)  # (token, 1), float64
    clean_lp = run.logits - clean_lse  # (token, vocab), float64
    p_clean = clean_lp.float().exp()  # (token, vocab): the batches below are float32, as the model computes
    clean_logits32 = run.logits.float()  # (token, vocab): exact, the model's own float32
    idx = torch.as_tensor(followed, dtype=torch.long)  # (token, n)
    kl = np.zeros((len(modes), L, H, T))
    logit = np.zeros((len(modes), L, H, T, idx.shape[1]))
    logprob = np.zeros_like(logit)
    half = repeated_half(ids)
    kinds = list(heads.KINDS)
    # each kind's pattern as a (query, key) mask, so that a batch's on-pattern sums are one einsum
    masks, counts = {}, {}
    for kind in kinds:
        cells = heads.pattern_targets(kind, ids)
        masks[kind] = np.zeros((T, T))
        for q, keys in enumerate(cells):
            masks[kind][q, list(keys)] = 1.0
        counts[kind] = sum(1 for keys in cells if len(keys))
    parts = {k: np.zeros((len(modes), L * H, L, H)) for k in kinds}  # on-pattern weight sums, each head removed
    losses = np.zeros((len(modes), L * H, 2))
    clean_w = run.attentions.numpy()  # (layer, head, query, key)
    diff = None
    for layer in range(L):
        out, att = resumed(lm, run, layer, len(modes) * H, _head_replacer(H, d, ref.means, layer, modes))
        # KL(clean ‖ ablated) = Σ p (clean logit − logit) + (lse − clean lse), since Σ p = 1: no
        # (batch, token, vocab) log-softmax is made, only one difference of logits, and it is as
        # exact (each term is a small difference). The logsumexp is then taken in place: on
        # GPT-2's 50,257 words these passes over the logits were a third of the run.
        if diff is None:
            diff = torch.empty_like(out)  # (mode·head, token, vocab): one buffer for every layer
        torch.sub(clean_logits32, out, out=diff)
        k = diff.mul_(p_clean).sum(-1).double()  # (mode·head, token)
        gl = out.gather(-1, idx.expand(out.shape[0], *idx.shape))  # (mode·head, token, n)
        picked = None if half is None else _next_logits(out, ids)  # (mode·head, token - 1, 1)
        lse = _logsumexp_(out)  # (mode·head, token, 1), float32; out is used up
        k += lse[..., 0].double() - clean_lse[:, 0]
        gp = gl - lse  # (mode·head, token, n): log-probabilities
        kl[:, layer] = k.view(len(modes), H, T).numpy()
        logit[:, layer] = gl.view(len(modes), H, T, -1).double().numpy()
        logprob[:, layer] = gp.view(len(modes), H, T, -1).double().numpy()
        if half is not None:
            losses[:, layer * H : (layer + 1) * H] = _icl_losses(picked, lse, half).view(len(modes), H, 2).double().numpy()
        att = att.double().numpy()  # (mode·head, layers from `layer`, head, query, key)
        for kind in kinds:
            later = np.einsum("blhqk,qk->blh", att, masks[kind])  # (mode·head, layers from `layer`, head)
            before = np.einsum("lhqk,qk->lh", clean_w[:layer], masks[kind])  # (layer, head): unchanged
            sums = np.concatenate([np.broadcast_to(before, (att.shape[0], *before.shape)), later], axis=1)
            parts[kind][:, layer * H : (layer + 1) * H] = sums.reshape(len(modes), H, L, H)
    memo = lm.__dict__.setdefault("_circuit_parts", {})
    memo[(tuple(int(i) for i in ids), tuple(modes), ref.record.get("sha"))] = {
        "clean": {kind: heads.score_parts(kind, clean_w, ids) for kind in kinds},
        "ablated": {kind: (parts[kind], counts[kind]) for kind in kinds},
        "icl_clean": None if half is None else _icl_losses(_next_logits(run.logits.unsqueeze(0), ids), clean_lse.unsqueeze(0), half)[0].numpy(),
        "icl": None if half is None else losses,
    }
    return {"kl": np.maximum(kl, 0.0), "logit": logit, "logprob": logprob}


def residual_parts(lm: LoadedModel, ids: Sequence[int]) -> dict:
    """One clean forward, split into what the final residual stream is a sum of.

    Returns parts (part, token, width) in the order of :func:`schema.causal_parts`, the residual stream
    before each block and before the final norm (stage, token, width), the logits (token, vocab), the value
    norms (layer, head, token) and each layer's out-projection input (layer, token, width)."""
    L, H, W, d = dims(lm)
    model = lm.model
    seen: dict = {"mlp": {}, "concat": {}, "resid": {}}
    handles = []
    for l, block in enumerate(blocks(lm)):
        handles.append(block.register_forward_pre_hook(
            lambda _m, args, kw=None, l=l: seen["resid"].__setitem__(l, args[0][0].detach().double())))
        handles.append(arch.out_proj(block).register_forward_pre_hook(
            lambda _m, args, l=l: seen["concat"].__setitem__(l, args[0][0].detach().double())))
        handles.append(arch.mlp(block).register_forward_hook(
            lambda _m, _a, out, l=l: seen["mlp"].__setitem__(l, out[0].detach().double())))
    handles.append(arch.final_norm(model).register_forward_pre_hook(
        lambda _m, args: seen["resid"].__setitem__(L, args[0][0].detach().double())))
    try:
        with torch.inference_mode():
            res = model(torch.tensor([list(ids)]), use_cache=False)
    finally:
        for hd in handles:
            hd.remove()
    with torch.inference_mode():
        parts = [seen["resid"][0]]  # the embedding: token (+ position, where a table adds it), (token, width)
        norms = np.zeros((L, H, len(ids)))
        bias = torch.zeros(W, dtype=torch.float64)  # (width,)
        for l, block in enumerate(blocks(lm)):
            concat = seen["concat"][l]  # (token, width)
            for h in range(H):
                w_o = w_out(block, h, d).double()  # (head_dim, width)
                parts.append(concat[:, h * d : (h + 1) * d] @ w_o)  # (token, width)
            bias = bias + arch.out_weights(block)[1].double()  # (width,): zeros without biases
        parts += [seen["mlp"][l] for l in range(L)]  # each (token, width)
        parts.append(bias.expand(len(ids), W))  # (token, width), every layer's attention output bias
        stacked = torch.stack(parts)  # (part, token, width)
        worst = float((stacked.sum(0) - seen["resid"][L]).abs().max())
        if worst > 1e-3 * (1 + float(seen["resid"][L].abs().max())):
            raise CausalCheckError(f"{lm.name}: the residual parts add up to the stream within {worst:.3g} only")
        stages = torch.stack([seen["resid"][s] for s in range(L + 1)])  # (stage, token, width)
    return {"parts": stacked, "stages": stages, "logits": res.logits[0].double(), "concat": seen["concat"]}


def value_norms(lm: LoadedModel, v: list[torch.Tensor]) -> np.ndarray:
    """‖v_j W_O^h‖ for every layer, head and token: v per layer is (head, token, head_dim), one
    per query head, or (kv_head, token, head_dim), one per key/value group (query head h reads
    group arch.group_of(h))."""
    shape = arch.dims(lm.model)
    L, H, W, d = dims(lm)
    out = np.zeros((L, H, v[0].shape[1]))
    with torch.inference_mode():
        for l, block in enumerate(blocks(lm)):
            per_group = v[l].shape[0] == shape.n_kv_head
            for h in range(H):
                vh = v[l][arch.group_of(h, shape) if per_group else h]  # (token, head_dim)
                out[l, h] = (vh.double() @ w_out(block, h, d).double()).norm(dim=-1).numpy()  # (token,)
    return out


def attribution(lm: LoadedModel, rp: dict, followed: np.ndarray) -> np.ndarray:
    """Each part's direct share of each followed logit, through the final norm with its scale
    frozen at the clean run: (part, token, n). The last part (biases) also takes the norm's own
    bias (LayerNorm's; an RMSNorm has none)."""
    ln = arch.final_norm(lm.model)
    head = arch.unembedding(lm.model)
    with torch.inference_mode():
        x = rp["stages"][-1]  # (token, width), the stream the final norm reads
        scaled = arch.frozen_norm(ln, rp["parts"], x, arch.adapter(lm.model).norm_centres)  # (part, token, width)
        idx = torch.as_tensor(followed, dtype=torch.long)  # (token, n)
        u = head.weight[idx].double()  # (token, n, width): only the followed rows of W_U (GPT-2's whole W_U in float64 is 309 MB)
        dla = torch.einsum("ptw,tnw->ptn", scaled, u)  # (part, token, n)
        dla[-1] += torch.einsum("w,tnw->tn", arch.norm_bias(ln).double(), u)  # (token, n)
        if head.bias is not None:
            dla[-1] += head.bias[idx].double()
        clean = rp["logits"].gather(-1, idx)  # (token, n)
        worst = float((dla.sum(0) - clean).abs().max())
    if worst > DLA_ATOL * (1 + float(clean.abs().max())):
        raise CausalCheckError(f"{lm.name}: direct logit attribution adds up to the logit within {worst:.3g} only")
    return dla.numpy()


def logit_lens(lm: LoadedModel, rp: dict, k: int = LENS_K) -> tuple[np.ndarray, np.ndarray]:
    """Top-k next tokens read off the residual stream after the embedding and after each block:
    ids (stage, token, k) and probabilities (stage, token, k). The last stage is the model's own
    prediction."""
    with torch.inference_mode():
        logits = arch.unembedding(lm.model)(arch.final_norm(lm.model)(rp["stages"].float())).double()  # (stage, token, vocab)
        top = torch.softmax(logits, dim=-1).topk(k, dim=-1)  # (stage, token, k)
        final = rp["logits"].softmax(-1).topk(k, dim=-1)
        if not torch.equal(top.indices[-1], final.indices) and (top.values[-1] - final.values).abs().max() > 1e-5:
            raise CausalCheckError(f"{lm.name}: the logit lens's last layer is not the model's own prediction")
    return top.indices.numpy(), top.values.numpy()


def followed_tokens(top_ids: np.ndarray, targets: Sequence[int]) -> np.ndarray:
    """(token, k + n): each position's clean top k, then the lesson's targets (the same at every
    position)."""
    T = top_ids.shape[0]
    tgt = np.tile(np.asarray(list(targets), dtype=np.int64), (T, 1)).reshape(T, len(targets))
    return np.concatenate([top_ids.astype(np.int64), tgt], axis=1)


def reference(lm: LoadedModel, config: CausalConfig = CausalConfig()) -> Reference:
    """The model's mean-ablation reference, computed once per loaded model."""
    cache = lm.__dict__.setdefault("_causal_reference", {})
    if config not in cache:
        cache[config] = head_means(lm, config)
    return cache[config]


def sentence_block(lm: LoadedModel, ids: Sequence[int], v: list[torch.Tensor], ref: Reference | None = None,
                   targets: Sequence[int] = (), config: CausalConfig = CausalConfig()) -> dict:
    """Everything causal about one sentence (see the module's docstring): the trace's `causal`
    block (schema.CAUSAL_FIELDS), numpy arrays unrounded."""
    from ..schema import TOP_K_PREDICTIONS

    ref = ref or reference(lm, config)
    L, H, W, d = dims(lm)
    targets = sorted({int(t) for t in targets})
    rp = residual_parts(lm, ids)
    clean_lp = log_softmax(rp["logits"])  # (token, vocab)
    top = clean_lp.topk(TOP_K_PREDICTIONS, dim=-1).indices.numpy()  # (token, k)
    followed = followed_tokens(top, targets)  # (token, k + n)
    idx = torch.as_tensor(followed)
    ab = ablation(lm, ids, ref, followed, config)
    lens_ids, lens_probs = logit_lens(lm, rp, config.lens_k)
    clean_logit = rp["logits"].gather(-1, idx).numpy()  # (token, k + n)
    clean_logprob = clean_lp.gather(-1, idx).numpy()  # (token, k + n)
    ids_used = sorted({int(i) for i in followed.ravel()} | {int(i) for i in lens_ids.ravel()})
    return {
        "targets": targets,
        "ablations": list(config.ablations),
        "parts": schema.causal_parts(L, H),
        "meanReference": dict(ref.record),
        "tokenTexts": {str(i): lm.token_text(i) for i in ids_used},
        "followed": followed,  # (token, k + n)
        "lensIds": lens_ids.astype(np.int64),  # (stage, token, k)
        "cleanLogit": clean_logit,
        "cleanLogprob": clean_logprob,
        "kl": ab["kl"],  # (mode, layer, head, token)
        "dLogit": ab["logit"] - clean_logit,  # (mode, layer, head, token, k + n)
        "dLogprob": ab["logprob"] - clean_logprob,  # (mode, layer, head, token, k + n)
        "dla": attribution(lm, rp, followed),  # (part, token, k + n)
        "valueNorms": value_norms(lm, v),  # (layer, head, token)
        "lensProbs": lens_probs,  # (stage, token, k)
    }


# ---------------------------------------------------------------- pairs


def patching(lm: LoadedModel, ids_a: Sequence[int], ids_b: Sequence[int], targets: Sequence[int]) -> dict:
    """Each head's output from sentence B put into sentence A at every position (same length),
    one head at a time. Returns the followed targets' logits: clean A and B (token, n), and
    patched (layer, head, token, n)."""
    if len(ids_a) != len(ids_b):
        raise ValueError(f"patching needs two sentences of the same length ({len(ids_a)} and {len(ids_b)} tokens)")
    L, H, W, d = dims(lm)
    T = len(ids_a)
    idx = torch.as_tensor([list(targets)] * T, dtype=torch.long)  # (token, n)
    rb = residual_parts(lm, ids_b)
    ra = residual_parts(lm, ids_a)
    run = clean_run(lm, ids_a)
    patched = np.zeros((L, H, T, len(targets)))
    for layer in range(L):
        source = rb["concat"][layer]  # (token, width)

        def put(concat, source=source):  # (head, token, width)
            concat = concat.clone()
            for h in range(H):
                concat[h, :, h * d : (h + 1) * d] = source[:, h * d : (h + 1) * d].to(concat.dtype)
            return concat

        out, _ = resumed(lm, run, layer, H, put)  # (head, token, vocab)
        patched[layer] = out.gather(-1, idx.expand(H, *idx.shape)).numpy()  # (head, token, n)
    return {
        "targets": [int(t) for t in targets],
        "cleanA": ra["logits"].gather(-1, idx).numpy(),  # (token, n)
        "cleanB": rb["logits"].gather(-1, idx).numpy(),  # (token, n)
        "patched": patched,  # (layer, head, token, n)
    }
