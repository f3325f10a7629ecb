"""The her/his test over many sentences: one head removed, a grid of templates × names.

Chapter 5 removes layer 2, head 3 after "Lily wanted to play with" and the preference for ·her
flips. One sentence cannot say whether that holds in general, so this module measures the same
thing on a fixed, recorded set of names × templates (every template ends where a pronoun comes
next): per case, the clean logit(her) − logit(his), the value with the head removed (zeros, and
the head's natural-text mean, causal.py's reference), and which head's zero-removal moves it most.
Batched: every sentence goes through the model in one padded batch, and each removal is one more
batch pass from the removed head's layer on (the clean run's stream entering it is kept), in which
only each sentence's last position is unembedded.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import arch, causal, rerun
from .load import LoadedModel

FORMAT = 1  # bumped when the stored block changes shape


@dataclass(frozen=True)
class SweepConfig:
    female: tuple[str, ...] = ("Lily", "Mia", "Lucy", "Anna", "Sara", "Emma")  # names "her" would follow
    male: tuple[str, ...] = ("Ben", "Tom", "Max", "Sam", "Jack", "Tim")  # names "his" would follow
    templates: tuple[str, ...] = (  # "{}" is the name; each ends just before a pronoun
        "{} wanted to play with", "{} hugged", "{} looked at", "{} smiled at", "{} said hello to",
        "{} went home with", "{} lost", "{} loved", "{} played with", "{} found", "{} went to see",
        "{} ran to",
    )
    targets: tuple[str, str] = ("her", "his")  # the preference measured: logit(first) − logit(second)
    head: tuple[int, int] = (2, 3)  # (layer, head) counting from 1: the head removed in every case


SIZES = {
    "full": SweepConfig(),
    # the GPT-2-shaped stand-in's test path: 2 × 2 names, 2 templates, layer 1, head 1 (any model has it)
    "small": SweepConfig(female=("Lily", "Mia"), male=("Ben", "Tom"), templates=("{} wanted to play with", "{} hugged"), head=(1, 1)),
}


def record(config: SweepConfig) -> dict:
    """The set as stored beside its numbers, so that a reader can check what was measured."""
    return {"female": list(config.female), "male": list(config.male), "templates": list(config.templates),
            "targets": list(config.targets), "head": list(config.head)}


def _diffs(lm: LoadedModel, hidden: torch.Tensor, her: int, his: int, last: torch.Tensor) -> np.ndarray:
    """logit(her) − logit(his) after each sentence's own last token (`last`: (sentence,) indices),
    from the final stream `hidden` (sentence, token, width). Only the last positions are
    unembedded: the others are never read, and on GPT-2's 50,257 words their unembedding was most
    of the sweep."""
    with torch.inference_mode():
        at = arch.unembedding(lm.model)(hidden[torch.arange(len(last)), last])  # (sentence, vocab): the guess after the last token
    return (at[:, her] - at[:, his]).double().numpy()  # (sentence,)


def sweep(lm: LoadedModel, ref: causal.Reference, config: SweepConfig = SweepConfig()) -> dict:
    """Per (template, name): clean, zero-removed and mean-removed logit(her) − logit(his), and the
    head (from 1) whose zero-removal changes it most, with that change. Arrays are (template, name),
    names female first."""
    from .. import tokens

    L, H, W, d = causal.dims(lm)
    her, his = (tokens.vocab_token(lm.name, t).id for t in config.targets)
    names = list(config.female) + list(config.male)
    cases = [(t, n) for t in range(len(config.templates)) for n in range(len(names))]
    ids = {c: lm.ids_of(config.templates[c[0]].format(names[c[1]])) for c in cases}
    shape = (len(config.templates), len(names))
    clean, zero, mean, top_change = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape)
    top_head = np.zeros(shape + (2,), dtype=int)  # (template, name, layer/head) from 1
    hl, hh = config.head[0] - 1, config.head[1] - 1
    # One batch: shorter sentences are padded after their end. A causal model's positions never see
    # a later token, so each sentence's last position gives what it gives alone (one forward pass per
    # removed head, not one per head and sentence length).
    T = max(len(v) for v in ids.values())
    last = torch.tensor([len(ids[c]) - 1 for c in cases])  # (sentence,)
    x = torch.tensor([ids[c] + [lm.bos_id] * (T - len(ids[c])) for c in cases])  # (sentence, token)
    # each removal runs from the removed head's layer on, from the clean batch's stream entering it
    streams, calls, _ = rerun.clean_streams(lm, x)
    base = _diffs(lm, rerun.final_stream(lm, streams, calls), her, his, last)  # (sentence,)
    effects = np.zeros((L, H, len(cases)))  # (layer, head, sentence): zero-removed minus clean
    for layer in range(L):
        for h in range(H):
            removed = rerun.resumed_with(lm, streams, calls, layer, {h: torch.zeros(d)})  # (sentence, token, width)
            effects[layer, h] = _diffs(lm, removed, her, his, last) - base
    by_mean = _diffs(lm, rerun.resumed_with(lm, streams, calls, hl, {hh: torch.as_tensor(ref.means[hl, hh])}), her, his, last)
    flat = np.abs(effects.reshape(L * H, -1)).argmax(axis=0)  # (sentence,): largest change, first on ties
    for i, (t, n) in enumerate(cases):
        clean[t, n], zero[t, n], mean[t, n] = base[i], base[i] + effects[hl, hh, i], by_mean[i]
        top_head[t, n] = (flat[i] // H + 1, flat[i] % H + 1)
        top_change[t, n] = effects[flat[i] // H, flat[i] % H, i]
    return {"set": record(config), "clean": clean, "zero": zero, "mean": mean,
            "topHead": top_head, "topChange": top_change}
