"""The copying test of circuits.json under four ways of removing a head, on hundreds of repeated
random texts of several lengths, with bootstrap 95 % intervals: the `robust` block.

A finding about what a head does can be an artefact of how the head was removed (Heimersheim and
Nanda 2024; Zhang and Nanda 2024) or of one small test set. So, per repeat length of the sweep,
on a fixed test set of ``<|endoftext|> + s + s`` texts (s: `length` distinct random tokens):

* **zero**: the head's output replaced by zeros;
* **mean**: by its average over the natural scoring sentences (causal.py's reference, one vector
  at every position: the course's older "mean");
* **indist**: by its average over the test set itself, per position (the same kind of text the
  test uses; still an average, which no single text gives);
* **resample**: by its output on another random repeated text of the same length, from a fixed
  source set; every test text is run once per source and the losses averaged (all texts, and the
  heads of a layer, in one batch).

Measured per method and removed head: the mean loss on the second copy (nats per token) and its
rise over the clean run, each with a paired bootstrap 95 % interval over the test texts; clean: both
copies' losses and every head's duplicate-token and induction scores, with intervals. Everything is
seeded (:class:`RobustConfig`) and the seeds are written beside the numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from .. import heads
from . import arch
from .causal import Reference, dims
from .rerun import clean_streams, final_stream, resumed_with
from .load import LoadedModel

METHODS = ("zero", "mean", "indist", "resample")  # how a removed head's output is replaced (above)
SCORED_KINDS = heads.REPEATED_KINDS  # the kind scores measured on the same random texts
LOGIT_BUDGET = 2**27  # floats of logits one batch may hold (512 MB): how many heads share a pass


@dataclass(frozen=True)
class RobustConfig:
    lengths: tuple[int, ...] = (5, 10, 20, 40)  # repeat lengths of the sweep (tokens in each copy)
    n_texts: int = 100  # test texts per length: rises of several nats get intervals of about ±0.3
    n_sources: int = 2  # resample: source texts each test text takes a head's output from
    n_boot: int = 1000  # bootstrap draws for each interval
    seed: int = 47  # seeds the texts (with the length and the set's name) and the bootstrap


SIZES = {  # `--scoring-set`: the course's, and the test suite's small GPT-2-shaped run
    "full": RobustConfig(),
    # the GPT-2-shaped stand-in's 144 heads each unembed over 50,257 words: the same path, few texts
    "small": RobustConfig(lengths=(3,), n_texts=2, n_sources=2, n_boot=100),
}


def texts(vocab: heads.Vocab, length: int, n: int, seed: int, name: str) -> np.ndarray:
    """(text, 1 + 2·length) ids: n texts <|endoftext|> + s + s, s drawn without repeats by a
    generator seeded with (seed, length, name)."""
    rng = np.random.default_rng([seed, length, {"test": 0, "source": 1}[name]])
    span = np.arange(vocab.low, vocab.high)
    seqs = np.stack([rng.choice(span, size=length, replace=False) for _ in range(n)])  # (text, length)
    eot = np.full((n, 1), vocab.eot)
    return np.concatenate([eot, seqs, seqs], axis=1).astype(np.int64)


def _losses(lm: LoadedModel, x: torch.Tensor, length: int, hidden: torch.Tensor, first: bool = False) -> np.ndarray:
    """(batch,): each text's mean loss on its second copy (tokens 2…length; token 1 follows
    nothing it could copy), or (batch, 2) with the first copy's too when `first`. hidden: the
    final stream after the final norm (batch, token, width); only the positions read are unembedded."""
    start_at = 1 if first else length + 1  # the position predicting the first scored token
    with torch.inference_mode():
        logits = arch.unembedding(lm.model)(hidden[:, start_at : 2 * length])  # (batch, scored position, vocab)
        picked = logits.gather(-1, x[:, start_at + 1 : 2 * length + 1].unsqueeze(-1))[..., 0]  # (batch, scored position)
        nll = (torch.logsumexp(logits, dim=-1) - picked).double()  # (batch, scored position)
    second = nll[:, -(length - 1):].mean(-1)
    return (torch.stack([nll[:, : length - 1].mean(-1), second], dim=-1) if first else second).numpy()


def ablated_losses(lm: LoadedModel, test: np.ndarray, source: np.ndarray, ref: Reference, length: int):
    """(method, layer·head, text) the second copy's loss with each head removed, per method, and
    the clean losses (text, 2). The heads of a layer go in one batch (as many as LOGIT_BUDGET
    allows); resample: every text gets source s's output, one batch per source (each source's
    output is one (token, head_dim) block), and the losses are averaged over the sources."""
    L, H, W, d = dims(lm)
    x = torch.as_tensor(test)  # (text, token)
    N = x.shape[0]
    streams, calls, clean_out = clean_streams(lm, x)
    with torch.inference_mode():
        clean = _losses(lm, x, length, final_stream(lm, streams, calls), first=True)  # (text, 2)
    src_out = clean_streams(lm, torch.as_tensor(source))[2]  # per layer (source, token, width)
    group = max(1, min(H, LOGIT_BUDGET // (N * length * arch.dims(lm.model).vocab)))
    out = np.zeros((len(METHODS), L * H, N))
    for l in range(L):
        def block(h):
            return slice(h * d, (h + 1) * d)

        values = {  # method -> one {head: value} per run, averaged over the runs
            "zero": [{h: torch.zeros(d) for h in range(H)}],
            "mean": [{h: torch.as_tensor(ref.means[l, h]) for h in range(H)}],  # (head_dim,): one vector at every position
            "indist": [{h: clean_out[l][:, :, block(h)].double().mean(0) for h in range(H)}],  # (token, head_dim)
            "resample": [{h: src_out[l][s, :, block(h)] for h in range(H)} for s in range(source.shape[0])],
        }
        for m, method in enumerate(METHODS):
            for start in range(0, H, group):
                hs = list(range(start, min(H, start + group)))
                runs = [_losses(lm, x.repeat(len(hs), 1), length, resumed_with(lm, streams, calls, l, {h: v[h] for h in hs})).reshape(len(hs), N)
                        for v in values[method]]
                out[m, l * H + start : l * H + hs[-1] + 1] = np.mean(runs, axis=0)
    return out, clean


def kind_scores(lm: LoadedModel, test: np.ndarray) -> np.ndarray:
    """(kind, text, layer, head): each text's clean duplicate-token and induction scores."""
    L, H = dims(lm)[:2]
    out = np.zeros((len(SCORED_KINDS), test.shape[0], L, H))
    with torch.inference_mode():
        res = lm.model(torch.as_tensor(test), use_cache=False, output_attentions=True)
    w = torch.stack(res.attentions, dim=1).double().numpy()  # (text, layer, head, query, key)
    for i, ids in enumerate(test.tolist()):
        for k, kind in enumerate(SCORED_KINDS):
            total, n = heads.score_parts(kind, w[i], ids)
            out[k, i] = total / n
    return out


def interval(values: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """(…, 3): the mean over the last axis and its bootstrap 95 % interval (percentiles 2.5 and
    97.5 of the means of the texts `draws` picks, (draw, text))."""
    means = values[..., draws].mean(-1)  # (…, draw)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=-1)
    return np.stack([values.mean(-1), lo, hi], axis=-1)


def robust(lm: LoadedModel, ref: Reference, config: RobustConfig = RobustConfig()) -> dict:
    """The `robust` block of circuits.json (see the module's docstring); numpy, unrounded."""
    vocab = heads.vocab_for(lm.name, dict(lm.meta))
    draws = np.random.default_rng([config.seed, 0]).integers(0, config.n_texts, size=(config.n_boot, config.n_texts))  # (draw, text)
    per_length = []
    for length in config.lengths:
        test = texts(vocab, length, config.n_texts, config.seed, "test")
        source = texts(vocab, length, config.n_sources, config.seed, "source")
        ablated, clean = ablated_losses(lm, test, source, ref, length)  # (method, ablated, text), (text, 2)
        per_length.append({
            "length": length,
            "cleanLoss": interval(clean.T, draws),  # (copy, 3)
            "loss": interval(ablated, draws),  # (method, ablated, 3)
            "rise": interval(ablated - clean[:, 1], draws),  # (method, ablated, 3): paired
            "scores": interval(np.moveaxis(kind_scores(lm, test), 1, -1), draws),  # (kind, layer, head, 3)
        })
    return {
        "methods": list(METHODS),
        "scoredKinds": list(SCORED_KINDS),
        "config": asdict(config) | {"lengths": list(config.lengths)},
        "sets": {"vocab": [vocab.low, vocab.high], "eot": vocab.eot,
                 "drawn": "numpy default_rng([seed, length, 0 test | 1 source]).choice(vocab, length, replace=False)"},
        "lengths": per_length,
    }
