"""Running a model again from any block, for the causal measurements (causal.py, robust.py,
pronoun_sweep.py): one clean forward keeps the stream entering each block and the exact arguments
transformers gave it (:func:`block_inputs`); :func:`run_blocks` then runs transformers' own blocks
from any one of them on, with a changed stream or a head's output replaced, without running the
blocks before it again (their outputs do not change).
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
