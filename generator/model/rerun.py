"""Running a model again from any block, for the causal measurements (causal.py, robust.py,
pronoun_sweep.py): one clean forward keeps the stream entering each block and the exact arguments
transformers gave it (:func:`block_inputs`); :func:`run_blocks` then runs transformers' own blocks
from any one of them on, with a changed stream or a head's output replaced, without running the
blocks before it again (their outputs do not change). One sentence: :func:`clean_run`; a batch,
with heads set to given values in copies of it: :func:`clean_streams`, :func:`resumed_with`,
:func:`final_stream`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from . import arch
from .load import LoadedModel


def blocks(lm: LoadedModel):
    """The model's transformer blocks, in order (arch.blocks)."""
    return arch.blocks(lm.model)


@dataclass
class CleanRun:
    """One clean forward with what a resumed run needs: the stream entering each block and the
    exact arguments transformers gave it (the causal mask it built among them)."""

    streams: list  # per block: (1, token, width), the residual stream entering it
    calls: list  # per block: (args after the stream, kwargs)
    logits: torch.Tensor  # (token, vocab), float64
    attentions: torch.Tensor  # (layer, head, query, key), float64


@contextmanager
def block_inputs(lm: LoadedModel):
    """While open, every forward pass keeps, per block, the stream entering it (batch, token, width)
    and the exact other arguments transformers gave it (the causal mask and the rotary angles among
    them): what :func:`run_blocks` needs to run the model again from any block. Yields (streams,
    calls), two lists with one entry per block, filled by the pass."""
    L = len(blocks(lm))
    streams, calls = [None] * L, [None] * L
    handles = []
    for l, block in enumerate(blocks(lm)):
        def keep(_m, args, kwargs, l=l):
            streams[l] = args[0].detach()
            calls[l] = (tuple(args[1:]), dict(kwargs))
        handles.append(block.register_forward_pre_hook(keep, with_kwargs=True))
    try:
        yield streams, calls
    finally:
        for hd in handles:
            hd.remove()


def run_blocks(lm: LoadedModel, x: torch.Tensor, calls: list, layer: int, rep=None) -> torch.Tensor:
    """The stream x (batch, token, width) entering block `layer`, through it and every block after,
    each called with the arguments the clean run gave it (:func:`block_inputs`), each passed through
    `rep` first where given (a batch of several copies repeats them). Returns the last block's
    output (batch, token, width), before the final norm. Run it under torch.inference_mode()."""
    chain = blocks(lm)
    for l in range(layer, len(chain)):
        args, kwargs = calls[l]
        if rep is not None:
            args, kwargs = tuple(rep(a) for a in args), {k: rep(v) for k, v in kwargs.items()}
        x = chain[l](x, *args, **kwargs)
        x = x[0] if isinstance(x, tuple) else x  # (batch, token, width)
    return x


def clean_run(lm: LoadedModel, ids: Sequence[int]) -> CleanRun:
    """The model on one sentence, keeping what :func:`run_blocks` needs, its logits and its weights."""
    with block_inputs(lm) as (streams, calls), torch.inference_mode():
        res = lm.model(torch.tensor([list(ids)]), use_cache=False, output_attentions=True)
    att = torch.stack([a[0] for a in res.attentions]).double()  # (layer, head, query, key)
    return CleanRun(streams, calls, res.logits[0].double(), att)


def clean_streams(lm: LoadedModel, x: torch.Tensor):
    """One clean run on the batch x: per block, the stream entering it (batch, token, width),
    the exact arguments transformers gave it, and the out-projection's input (batch, token, width)."""
    concat = {}
    handles = [arch.out_proj(block).register_forward_pre_hook(lambda _m, args, l=l: concat.__setitem__(l, args[0].detach().clone()))
               for l, block in enumerate(blocks(lm))]
    try:
        with block_inputs(lm) as (streams, calls), torch.inference_mode():
            arch.body(lm.model)(x, use_cache=False)
    finally:
        for hd in handles:
            hd.remove()
    return streams, calls, concat


def resumed_with(lm: LoadedModel, streams, calls, layer: int, values: dict[int, torch.Tensor]) -> torch.Tensor:
    """The final stream after the final norm (G·batch, token, width), G = len(values): copy g of the
    batch (rows g·batch …) with the g-th head of `values` (in the dict's order) set to its value
    ((head_dim,) or (token, head_dim)). transformers' own blocks from `layer` on, with the clean
    run's arguments, each batch-sized tensor among them repeated G times (the blocks below do not
    change)."""
    d = arch.dims(lm.model).head_dim
    chain = blocks(lm)
    n = streams[layer].shape[0]
    heads_ = list(values)

    def put(_m, args):
        concat = args[0].clone()  # (G·batch, token, width)
        for g, h in enumerate(heads_):
            rows = concat[g * n : (g + 1) * n]  # (batch, token, width)
            rows[:, :, h * d : (h + 1) * d] = values[h].to(concat.dtype).expand(n, concat.shape[1], d)
        return (concat,)

    def rep(v):  # a copy even for one head: its layout is what the numbers were computed with
        return v.repeat(len(heads_), *([1] * (v.dim() - 1))) if torch.is_tensor(v) and v.dim() and v.shape[0] == n else v

    handle = arch.out_proj(chain[layer]).register_forward_pre_hook(put)
    try:
        with torch.inference_mode():
            x = run_blocks(lm, rep(streams[layer]), calls, layer, rep)  # (G·batch, token, width)
            return arch.final_norm(lm.model)(x)
    finally:
        handle.remove()


def final_stream(lm: LoadedModel, streams, calls) -> torch.Tensor:
    """The clean final stream after the final norm, from the last block's input."""
    last = len(blocks(lm)) - 1
    with torch.inference_mode():
        return arch.final_norm(lm.model)(run_blocks(lm, streams[last], calls, last))  # (batch, token, width)
