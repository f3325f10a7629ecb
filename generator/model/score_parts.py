"""Why a head looks where it looks: every attention score split into the parts of the residual
stream that made it.

The residual stream entering block l is a sum of parts (schema.split_parts): the token embedding,
the position embedding, each earlier head's output through its rows of W_O, each earlier MLP's
output, and the biases (every earlier attention output bias). With ln_1's scale frozen at its
value in the real run (as direct logit attribution freezes ln_f's), the layer norm is linear in
the stream, so each head's query and key are sums of one piece per part (ln_1's bias and c_attn's
bias go to the biases part), and the scaled score q·k/√d splits exactly:

* key side: score[i, j] = Σ_p q_i · k_j^p / √d (query i whole, key j split);
* query side: score[i, j] = Σ_p q_i^p · k_j / √d (roles swapped);
* layer 1's four-way table: score[i, j] = Σ_a Σ_b q_i^a · k_j^b / √d, where layer 1's stream
  has only three parts (token, position, biases).

Every split is checked against the model's own q·k/√d (from c_attn's output, hooked) to
:data:`SPLIT_ATOL` before anything is returned. Heads and layers count from 0 here; float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .. import schema
from .causal import blocks, dims, w_out
from .load import LoadedModel

SPLIT_ATOL = schema.SPLIT_ATOL  # the parts of a score add up to the model's own score within this


class SplitCheckError(AssertionError):
    """The parts do not add up to the model's own score."""


def _run(lm: LoadedModel, ids: Sequence[int]) -> dict:
    """One clean forward with hooks: each block's input stream, each c_proj input, each MLP output
    and each c_attn output (float64, batch axis dropped)."""
    seen: dict = {"resid": {}, "concat": {}, "mlp": {}, "qkv": {}}
    handles = []
    for l, block in enumerate(blocks(lm)):
        handles.append(block.register_forward_pre_hook(
            lambda _m, args, l=l: seen["resid"].__setitem__(l, args[0][0].detach().double())))  # (token, width)
        handles.append(block.attn.c_proj.register_forward_pre_hook(
            lambda _m, args, l=l: seen["concat"].__setitem__(l, args[0][0].detach().double())))  # (token, width)
        handles.append(block.mlp.register_forward_hook(
            lambda _m, _a, out, l=l: seen["mlp"].__setitem__(l, out[0].detach().double())))  # (token, width)
        handles.append(block.attn.c_attn.register_forward_hook(
            lambda _m, _a, out, l=l: seen["qkv"].__setitem__(l, out[0].detach().double())))  # (token, 3 * width)
    try:
        with torch.inference_mode():
            lm.model(torch.tensor([list(ids)]), use_cache=False)
    finally:
        for hd in handles:
            hd.remove()
    return seen


def stream_parts(lm: LoadedModel, ids: Sequence[int], seen: dict) -> list[torch.Tensor]:
    """Per layer l: the parts (part, token, width) that the stream entering block l is a sum of,
    in the order of schema.split_parts(l, n_head), checked against the stream itself."""
    L, H, W, d = dims(lm)
    tr = lm.model.transformer
    T = len(ids)
    with torch.inference_mode():
        tok = tr.wte.weight[torch.tensor(list(ids))].double()  # (token, width)
        pos = tr.wpe.weight[:T].double()  # (token, width)
        heads_out: list[torch.Tensor] = []  # each (token, width)
        mlps: list[torch.Tensor] = []  # each (token, width)
        bias = torch.zeros(T, W, dtype=torch.float64)  # (token, width)
        out = []
        for l, block in enumerate(blocks(lm)):
            parts = torch.stack([tok, pos, *heads_out, *mlps, bias])  # (part, token, width)
            worst = float((parts.sum(0) - seen["resid"][l]).abs().max())
            if worst > 1e-3 * (1 + float(seen["resid"][l].abs().max())):
                raise SplitCheckError(f"{lm.name}: layer {l + 1}'s stream parts add up to it within {worst:.3g} only")
            out.append(parts)
            concat = seen["concat"][l]  # (token, width)
            for h in range(H):
                heads_out.append(concat[:, h * d:(h + 1) * d] @ w_out(block, h, d).double())  # (token, width)
            mlps.append(seen["mlp"][l])
            bias = bias + block.attn.c_proj.bias.double()  # (token, width)
    return out


def qk_parts(lm: LoadedModel, layer: int, parts: torch.Tensor, resid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each part's piece of every head's query and key in `layer`, through ln_1 with its scale
    frozen at the stream `resid` (token, width): q and k (head, part, token, head_dim). The last
    part (biases) also takes ln_1's bias and c_attn's bias."""
    L, H, W, d = dims(lm)
    block = blocks(lm)[layer]
    ln = block.ln_1
    with torch.inference_mode():
        sigma = (resid.var(dim=-1, unbiased=False, keepdim=True) + ln.eps).sqrt()  # (token, 1)
        centred = parts - parts.mean(dim=-1, keepdim=True)  # (part, token, width)
        normed = centred / sigma * ln.weight.double()  # (part, token, width)
        normed[-1] = normed[-1] + ln.bias.double()  # (token, width)
        w = block.attn.c_attn.weight.double()  # (width, 3 * width): Conv1D is (in, out)
        b = block.attn.c_attn.bias.double()  # (3 * width,)
        P, T = parts.shape[0], parts.shape[1]
        q = normed @ w[:, :W]  # (part, token, width)
        k = normed @ w[:, W:2 * W]  # (part, token, width)
        q[-1] = q[-1] + b[:W]
        k[-1] = k[-1] + b[W:2 * W]
        q = q.view(P, T, H, d).permute(2, 0, 1, 3)  # (head, part, token, head_dim)
        k = k.view(P, T, H, d).permute(2, 0, 1, 3)  # (head, part, token, head_dim)
    return q, k


def split_scores(lm: LoadedModel, ids: Sequence[int], heads: Sequence[tuple[int, int]] | None = None) -> dict:
    """The split of every score of `heads` ((layer, head) pairs; every head when None) on `ids`.

    Returns {"score": {(l, h): (query, key)}, "key": {(l, h): (part, query, key)}, "query":
    {(l, h): (part, query, key)}, "table": {(0, h): (part, part, query, key)} for layer-1 heads},
    numpy float64, the masked cells (key after query) zero. Raises SplitCheckError when a split
    does not add up to the model's own scaled score within SPLIT_ATOL."""
    L, H, W, d = dims(lm)
    T = len(ids)
    wanted = sorted(set(heads)) if heads is not None else [(l, h) for l in range(L) for h in range(H)]
    seen = _run(lm, ids)
    per_layer = stream_parts(lm, ids, seen)
    below = torch.ones(T, T, dtype=torch.float64).tril()  # (query, key), 1 where a query may look
    out: dict = {"score": {}, "key": {}, "query": {}, "table": {}}
    for layer in sorted({l for l, _ in wanted}):
        q_parts, k_parts = qk_parts(lm, layer, per_layer[layer], seen["resid"][layer])  # (head, part, token, head_dim)
        scaling = float(blocks(lm)[layer].attn.scaling)
        qkv = seen["qkv"][layer]  # (token, 3 * width)
        for l, h in (x for x in wanted if x[0] == layer):
            with torch.inference_mode():
                q_own = qkv[:, h * d:(h + 1) * d]  # (token, head_dim)
                k_own = qkv[:, W + h * d:W + (h + 1) * d]  # (token, head_dim)
                score = (q_own @ k_own.T) * scaling * below  # (query, key), the model's own
                q_whole = q_parts[h].sum(0)  # (token, head_dim)
                k_whole = k_parts[h].sum(0)  # (token, head_dim)
                key = torch.einsum("id,pjd->pij", q_whole, k_parts[h]) * scaling * below  # (part, query, key)
                query = torch.einsum("pid,jd->pij", q_parts[h], k_whole) * scaling * below  # (part, query, key)
                parts = {"key": key, "query": query}
                if layer == 0:
                    parts["table"] = torch.einsum("aid,bjd->abij", q_parts[h], k_parts[h]) * scaling * below  # (part, part, query, key)
            for side, split in parts.items():
                total = split.sum(dim=(0, 1) if side == "table" else 0)  # (query, key)
                worst = float((total - score).abs().max())
                if not worst <= SPLIT_ATOL:
                    raise SplitCheckError(
                        f"{lm.name}: the {side} split of L{l + 1}H{h + 1} adds up to its score within {worst:.3g} only")
                out[side][(l, h)] = split.numpy()
            out["score"][(l, h)] = score.numpy()
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
        entries.append(e)
    return {"text": text, "ids": list(ids), "heads": entries}


def build(lm: LoadedModel, wanted: dict[str, set[tuple[int, int]] | None]) -> dict:
    """The splits.json document of `lm` for `wanted`: sentence -> heads (from 0), None for all."""
    L, H, _, _ = dims(lm)
    return {
        "format": schema.SPLIT_FORMAT, "model": lm.name, "revision": lm.revision, "nLayer": L, "nHead": H,
        "parts": [schema.split_parts(l, H) for l in range(L)],
        "sentences": [sentence_entry(lm, text, None if heads is None else sorted(heads)) for text, heads in wanted.items()],
    }


def write_for_lessons(models: list[str], traces_dir, content_dir, stand_in: bool = False, gpt2_path: str | None = None,
                      out=None, err=None, force: bool = False) -> int:
    """The `make traces` hook: rewrite traces/<model>/splits.json for the lessons' score-split
    figures. 0 on success (a model that cannot be loaded here is skipped: run_traces said so),
    2 for a lesson mistake (one line)."""
    import sys
    from pathlib import Path

    from ..lessons import pages, split_kinds
    from ..lessons.errors import LessonError
    from ..lessons.source import iter_markdown, shown_path
    from ..store import StoreError, splits_file
    from . import load as models_mod

    out, err = out or sys.stdout, err or sys.stderr
    try:
        directives = [d for p in iter_markdown(Path(content_dir)) for d in pages.parse_file(p, shown_path(p))]
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
