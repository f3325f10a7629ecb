"""The tiny models' data: the story files, the held-out split, the tokenizer and the token stream.
generator/model/training.py trains on them; the recipes and the split are its TrainConfig's."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

EOT = "<|endoftext|>"


# ---------------------------------------------------------------- data


def read_stories(corpus: Path) -> list[str]:
    """Stories from a text file in which a line holding only EOT separates stories."""
    stories, current = [], []
    for line in Path(corpus).read_text(encoding="utf-8").splitlines():
        if line.strip() == EOT:
            stories.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    stories.append("\n".join(current).strip())
    return [s for s in stories if s]


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_corpora(paths) -> tuple[list[str], list[dict]]:
    """Every story of every file, in order, and one record per file (name, stories, sha256)."""
    stories, sources = [], []
    for p in paths:
        part = read_stories(Path(p))
        stories += part
        sources.append({"file": Path(p).name, "stories": len(part), "sha256": file_sha256(Path(p))})
    return stories, sources


def hub_stories(limit: int | None = None) -> list[str]:
    """The full TinyStories training split from the Hugging Face Hub (needs a network)."""
    from datasets import load_dataset  # optional: only where the hub is reachable

    ds = load_dataset("roneneldan/TinyStories", split="train")
    texts = (row["text"].strip() for row in ds)
    out = [t for t in texts if t]
    return out[:limit] if limit else out


def split_stories(stories: list[str], cfg) -> tuple[list[str], list[str]]:
    order = list(range(len(stories)))
    random.Random(cfg.seed).shuffle(order)
    n_val = max(1, int(len(stories) * cfg.val_fraction))
    val_ids = set(order[:n_val])
    train = [s for i, s in enumerate(stories) if i not in val_ids]
    val = [s for i, s in enumerate(stories) if i in val_ids]
    return train, val


# ---------------------------------------------------------------- tokenizer


def train_tokenizer(stories: list[str], vocab_size: int):
    """Byte-level BPE whose tokens carry their leading space, as GPT-2's do."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(stories, trainer=trainer)
    return tok


def encode_corpus(tok, stories: list[str]) -> tuple[list[int], list[int]]:
    """One long stream EOT, story, EOT, story, ... and the offset of each story's EOT."""
    eot = tok.token_to_id(EOT)
    ids: list[int] = []
    starts: list[int] = []
    for enc in tok.encode_batch(stories):
        starts.append(len(ids))
        ids.append(eot)
        ids.extend(enc.ids)
    return ids, starts



def sha256_text(stories: list[str]) -> str:
    h = hashlib.sha256()
    for s in stories:
        h.update(s.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()
