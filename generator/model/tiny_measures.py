"""What is measured of the tiny model while and after it trains (generator/model/training.py runs it):
its loss per character on held-out stories, over all of them and over only those that share no run
of :data:`DEDUP_NGRAM` words with a training story, and the best head of each kind on the fixed
scoring set of generator/heads.py."""

from __future__ import annotations

import hashlib
import math
import re

from .. import heads

EOT = "<|endoftext|>"
DEDUP_NGRAM = 8  # a held-out story sharing this many words in a row with a training story is left out
DEDUP_RULE = ("no {n} words in a row shared with any training story (words: the text lowercased, "
              "cut at every character that is not a letter or a digit)")
WORD_RE = re.compile(r"[^\W_]+")  # runs of letters and digits


def bits_per_character(model, tok, stories: list[str], n_ctx: int) -> dict:
    """Tokenizer-independent loss: each story scored alone from an EOT start, up to n_ctx."""
    import torch

    eot = tok.token_to_id(EOT)
    total_nats, total_chars, total_tokens = 0.0, 0, 0
    model.eval()
    with torch.no_grad():
        for story in stories:
            ids = ([eot] + tok.encode(story).ids)[:n_ctx]
            x = torch.tensor([ids])  # (1, token)
            logits = model(x).logits[0, :-1]  # (token - 1, vocab)
            nll = torch.nn.functional.cross_entropy(logits, x[0, 1:], reduction="sum")
            total_nats += float(nll)
            total_chars += len(tok.decode(ids[1:]))
            total_tokens += len(ids) - 1
    model.train()
    return {
        "bitsPerChar": total_nats / math.log(2) / total_chars,
        "natsPerToken": total_nats / total_tokens,
        "stories": len(stories),
        "chars": total_chars,
        "tokens": total_tokens,
    }


# ---------------------------------------------------------------- held-out figures without shared phrases


def words(text: str) -> list[str]:
    """The words the de-duplication compares: `text` lowercased, cut at every character that is
    not a letter or a digit ("Lily's red ball." -> lily, s, red, ball)."""
    return WORD_RE.findall(text.lower())


def ngram_hashes(text: str, n: int = DEDUP_NGRAM) -> set[int]:
    """Every run of `n` words in `text`, each as a 64-bit hash (blake2b, so the same in every
    process; a story of fewer than `n` words has none)."""
    w = words(text)
    return {
        int.from_bytes(hashlib.blake2b(" ".join(w[i : i + n]).encode("utf-8"), digest_size=8).digest(), "little")
        for i in range(len(w) - n + 1)
    }


def dedup_held_out(train: list[str], held: list[str], n: int = DEDUP_NGRAM) -> list[str]:
    """The held-out stories, in order, that share no run of `n` words with any training story."""
    seen: set[int] = set()
    for story in train:
        seen.update(ngram_hashes(story, n))
    return [story for story in held if seen.isdisjoint(ngram_hashes(story, n))]


def held_out_dedup(model, tok, train: list[str], held: list[str], n_ctx: int, n: int = DEDUP_NGRAM) -> dict:
    """:func:`bits_per_character` over the held-out stories that :func:`dedup_held_out` keeps,
    with the rule and how many stories it started from."""
    kept = dedup_held_out(train, held, n)
    if not kept:
        raise ValueError(f"every one of the {len(held)} held-out stories shares {n} words in a row with a training story")
    out = bits_per_character(model, tok, kept, n_ctx)
    out.update({"heldOutStories": len(held), "ngram": n, "rule": DEDUP_RULE.format(n=n)})
    return out


def with_evaluation(doc: dict, dedup: dict, sample: dict) -> dict:
    """The log `doc` with `heldOutDedup` and `validationSample` right after `heldOut` (replacing
    any earlier ones), so that a retrain and `evaluate-tiny` write the same bytes."""
    extra = {"heldOutDedup": dedup, "validationSample": sample}
    out: dict = {}
    for k, v in doc.items():
        if k in extra:
            continue
        out[k] = v
        if k == "heldOut":
            out.update(extra)
    out.update({k: v for k, v in extra.items() if k not in out})
    return out


def validation_sample(cfg) -> dict:
    """What each logged validation loss (`validation`, the points of the training chart) is
    measured on: the same `batches` of full-length windows of held-out text every time."""
    windows = cfg.eval_batches * (cfg.batch_tokens // cfg.n_positions)
    return {"batches": cfg.eval_batches, "windows": windows, "windowTokens": cfg.n_positions, "tokens": windows * cfg.n_positions}


# ---------------------------------------------------------------- head scores while training


def scoring_ids(tok) -> list[tuple[str, list[int]]]:
    """(kind group, ids) of the fixed scoring set, tokenized as the tracer will: EOT first."""
    eot = tok.token_to_id(EOT)
    out = [("natural", [eot] + tok.encode(text).ids) for text in heads.SCORING_SENTENCES]
    vocab = heads.VOCABS["tiny"]
    out += [("repeated", list(heads.repeated_random_ids(vocab, k))) for k in range(heads.N_RANDOM)]
    return out


def head_scores(model, texts: list[tuple[str, list[int]]]) -> dict:
    """The best head of each kind on the scoring texts: {kind: {layer, head, score}}, 0-based."""
    import numpy as np
    import torch

    model.eval()
    model.set_attn_implementation("eager")  # only eager attention returns the weights
    grids = []
    with torch.no_grad():
        for group, ids in texts:
            out = model(torch.tensor([ids]), output_attentions=True)
            w = torch.stack([a[0] for a in out.attentions]).numpy()  # (layer, head, query, key)
            grids.append((group, w.astype(np.float64), ids))
    model.set_attn_implementation("sdpa")
    model.train()
    best = {}
    for kind in heads.KINDS:
        group = "repeated" if kind in heads.REPEATED_KINDS else "natural"
        mat = heads.score(kind, [(w, ids) for g, w, ids in grids if g == group])  # (layer, head)
        l, h = np.unravel_index(int(np.argmax(mat)), mat.shape)
        best[kind] = {"layer": int(l), "head": int(h), "score": round(float(mat[l, h]), 4)}
    return best


def scoring_chance(texts: list[tuple[str, list[int]]]) -> dict:
    out = {}
    for kind in heads.KINDS:
        group = "repeated" if kind in heads.REPEATED_KINDS else "natural"
        out[kind] = round(heads.chance(kind, [ids for g, ids in texts if g == group]), 4)
    return out
