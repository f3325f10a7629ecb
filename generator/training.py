"""Train the course's tiny model: a byte-level BPE tokenizer and a 4 × 4 × 128 GPT-2.

`python -m generator train-tiny` (or `make tiny-model`) runs it. The model is a plain
`transformers.GPT2LMHeadModel`, so the one tracer serves it and GPT-2 small alike.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

EOT = "<|endoftext|>"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared/data/tinystories/stories.txt"
PACKAGE_MODEL_DIR = Path(__file__).resolve().parent / "tiny_model"


@dataclass
class TrainConfig:
    vocab_size: int = 4096  # BPE vocabulary, EOT included
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # heads per block
    n_embd: int = 128  # residual width; head size = n_embd / n_head = 32
    n_positions: int = 256  # context length
    # Residual, embedding and attention dropout. 0.1 was tried against the overfitting of 13 epochs
    # over 1M tokens and did worse within these steps (validation 2.97 vs 2.89 nats/token at step 1400).
    dropout: float = 0.0
    seed: int = 1234  # one seed drives the split, the init and the batches
    val_fraction: float = 0.05  # share of stories held out for validation
    batch_size: int = 24  # sequences per step
    steps: int = 2000  # optimiser steps (fixed, so the run is reproducible)
    lr: float = 3e-3  # peak learning rate
    min_lr: float = 3e-4  # cosine floor
    warmup: int = 100  # linear warm-up steps
    weight_decay: float = 0.1  # AdamW, on matrices only
    grad_clip: float = 1.0  # global norm
    eval_every: int = 200  # steps between validation estimates
    eval_batches: int = 8  # batches per validation estimate
    threads: int = 2  # torch CPU threads
    val_stories_for_bpc: int = 0  # 0 = every held-out story
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- data


def read_stories(corpus: Path) -> list[str]:
    """Stories from a text file in which a line holding only EOT separates stories."""
    stories, current = [], []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if line.strip() == EOT:
            stories.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    stories.append("\n".join(current).strip())
    return [s for s in stories if s]


def hub_stories(limit: int | None = None) -> list[str]:
    """The full TinyStories training split from the Hugging Face Hub (needs a network)."""
    from datasets import load_dataset  # optional: only where the hub is reachable

    ds = load_dataset("roneneldan/TinyStories", split="train")
    texts = (row["text"].strip() for row in ds)
    out = [t for t in texts if t]
    return out[:limit] if limit else out


def split_stories(stories: list[str], cfg: TrainConfig) -> tuple[list[str], list[str]]:
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


def encode_corpus(tok, stories: list[str]) -> list[int]:
    """One long stream: EOT, story, EOT, story, ... (EOT starts every story)."""
    eot = tok.token_to_id(EOT)
    ids: list[int] = []
    for enc in tok.encode_batch(stories):
        ids.append(eot)
        ids.extend(enc.ids)
    return ids


# ---------------------------------------------------------------- model


def build_model(cfg: TrainConfig, eot_id: int):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(cfg.seed)
    config = GPT2Config(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.n_positions,
        n_embd=cfg.n_embd,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        resid_pdrop=cfg.dropout,
        embd_pdrop=cfg.dropout,
        attn_pdrop=cfg.dropout,
        bos_token_id=eot_id,
        eos_token_id=eot_id,
        tie_word_embeddings=True,
    )
    return GPT2LMHeadModel(config)


def lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


def bits_per_character(model, tok, stories: list[str], n_ctx: int) -> dict:
    """Tokenizer-independent loss: each story scored alone from an EOT start, up to n_ctx."""
    import torch

    eot = tok.token_to_id(EOT)
    total_nats, total_chars, total_tokens = 0.0, 0, 0
    model.eval()
    with torch.no_grad():
        for story in stories:
            ids = [eot] + tok.encode(story).ids
            ids = ids[:n_ctx]
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


def sha256_text(stories: list[str]) -> str:
    h = hashlib.sha256()
    for s in stories:
        h.update(s.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def train(cfg: TrainConfig, stories: list[str], out_dir: Path, source: str) -> dict:
    """Train tokenizer and model, write checkpoint, tokenizer and log into out_dir."""
    import torch
    from tqdm import tqdm

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    started = time.time()

    train_stories, val_stories = split_stories(stories, cfg)
    tok = train_tokenizer(train_stories, cfg.vocab_size)
    eot = tok.token_to_id(EOT)
    train_ids = torch.tensor(encode_corpus(tok, train_stories))  # (corpus_token,)
    val_ids = torch.tensor(encode_corpus(tok, val_stories))  # (val_token,)

    model = build_model(cfg, eot)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.95),
    )
    batch_gen = torch.Generator().manual_seed(cfg.seed)
    T = cfg.n_positions

    def batch(ids, gen):
        starts = torch.randint(0, len(ids) - T - 1, (cfg.batch_size,), generator=gen)  # (batch,)
        x = torch.stack([ids[s : s + T] for s in starts])  # (batch, token)
        y = torch.stack([ids[s + 1 : s + T + 1] for s in starts])  # (batch, token)
        return x, y

    def val_loss() -> float:
        gen = torch.Generator().manual_seed(cfg.seed + 1)  # the same val batches every time
        model.eval()
        with torch.no_grad():
            losses = []
            for _ in range(cfg.eval_batches):
                x, y = batch(val_ids, gen)
                logits = model(x).logits  # (batch, token, vocab)
                losses.append(float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())))
        model.train()
        return sum(losses) / len(losses)

    log_steps, log_val = [], []
    running, last_val = None, float("nan")
    model.train()
    bar = tqdm(range(cfg.steps), desc="train tiny", unit="step", dynamic_ncols=True)
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        x, y = batch(train_ids, batch_gen)
        logits = model(x).logits  # (batch, token, vocab)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        value = float(loss)
        running = value if running is None else 0.95 * running + 0.05 * value
        tokens_seen = (step + 1) * cfg.batch_size * T
        log_steps.append({"step": step + 1, "loss": round(value, 4), "tokens": tokens_seen})
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            last_val = val_loss()
            log_val.append(
                {"step": step + 1, "loss": round(last_val, 4), "tokens": tokens_seen,
                 "wallSeconds": round(time.time() - started, 1)}
            )
        bar.set_postfix(train=f"{running:.3f}", val=f"{last_val:.3f}")

    bpc_stories = val_stories[: cfg.val_stories_for_bpc] if cfg.val_stories_for_bpc else val_stories
    bpc = bits_per_character(model, tok, bpc_stories, cfg.n_positions)

    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save(str(out_dir / "tokenizer.json"))
    log = {
        "config": {k: v for k, v in asdict(cfg).items() if k != "extra"},
        "source": source,
        "corpusSha256": sha256_text(stories),
        "stories": {"train": len(train_stories), "validation": len(val_stories)},
        "tokens": {"train": int(train_ids.numel()), "validation": int(val_ids.numel())},
        "nParams": sum(p.numel() for p in model.parameters()),
        "steps": log_steps,
        "validation": log_val,
        "heldOut": bpc,
        "wallSeconds": round(time.time() - started, 1),
        "torch": torch.__version__,
    }
    (out_dir / "training_log.json").write_text(json.dumps(log, indent=1) + "\n", encoding="utf-8")
    return log
