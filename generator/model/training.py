"""Train the course's tiny model: a byte-level BPE tokenizer and a 4 × 4 × 128 GPT-2.

`python -m generator train-tiny` (or `make tiny-model`) runs it. The model is a plain
`transformers.GPT2LMHeadModel`, so the one tracer serves it and GPT-2 small alike.

Three choices shape the heads the course shows (docs/architecture.md, "The tiny model", has the measurements):

* **Position 0 is `<|endoftext|>`.** Every training window starts at a story's `<|endoftext|>`,
  and every trace starts with it too (:mod:`generator.model.tracing`), so the model sees in the course
  exactly what it saw in training, and a head that parks attention on position 0 parks it on the
  same token every time (an attention sink).
* **A share of windows holds a repeated stretch** (:attr:`TrainConfig.repeat_share`): a span of
  the window's own text, or of random tokens, appears a second time later in the window. Copying
  what came before is what makes induction heads form (Olsson et al., 2022); TinyStories alone
  repeats too little for a model this small to find them in the steps these machines allow.
* **Position embeddings start as sinusoids** (Vaswani et al., 2017) scaled to the token
  embeddings' size, then train freely: "the token before" is then a fixed rotation from the start,
  which previous-token heads need first.

The run is resumable: it saves its whole state (weights, optimiser, random generators, the log so
far) every :attr:`TrainConfig.checkpoint_minutes` into ``build/tiny-run/``, and the same command
continues a stopped run from there, giving the same bytes as an uninterrupted one.

Held-out quality is measured twice (:func:`evaluate`, `python -m generator evaluate-tiny`; the run
calls it too): over every held-back story, and over only those that share no run of
:data:`DEDUP_NGRAM` words with any training story. TinyStories repeats itself, so a held-back pool
drawn from the same files holds stories that reuse whole phrases of training stories (and the odd
near-copy), which flatter the first figure; the few that pass the test are atypical, which makes
the second one harsh (docs/architecture.md, "The tiny model", has both).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import heads
from .training_data import encode_corpus, file_sha256, hub_stories, read_corpora, read_stories, sha256_text, split_stories, train_tokenizer  # noqa: F401 (the CLI and tests use them through here)
from .tiny_measures import DEDUP_NGRAM, bits_per_character, head_scores, held_out_dedup, scoring_chance, scoring_ids, validation_sample, with_evaluation

EOT = "<|endoftext|>"
_SHARED = Path(__file__).resolve().parents[2].parent / "shared/data/tinystories"
DEFAULT_CORPORA = (_SHARED / "stories.txt", _SHARED / "more-stories.txt")
PACKAGE_MODEL_DIR = Path(__file__).resolve().parents[1] / "tiny_model"
DEFAULT_RUN_DIR = Path(__file__).resolve().parents[2] / "build" / "tiny-run"
# The course's own models, each a recipe on the same tokenizer and stories (TRAINED_MODELS below).
TRAINED_MODEL_DIRS = {
    "tiny": PACKAGE_MODEL_DIR,
    "tiny-rope": Path(__file__).resolve().parents[1] / "tiny_rope_model",
}
RUN_DIRS = {
    "tiny": DEFAULT_RUN_DIR,
    "tiny-rope": Path(__file__).resolve().parents[2] / "build" / "tiny-rope-run",
}
RESUME_FORMAT = 1  # bump when the saved state changes shape


@dataclass
class TrainConfig:
    vocab_size: int = 4096  # BPE vocabulary, EOT included
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # heads per block
    n_embd: int = 128  # residual width; head size = n_embd / n_head = 32
    n_positions: int = 256  # context length, and the length of the training windows once grown
    dropout: float = 0.0  # residual, embedding and attention dropout (3.4 M tokens overfit little)
    seed: int = 1234  # one seed drives the split, the init and the batches
    val_fraction: float = 0.05  # share of stories held out for validation
    batch_tokens: int = 4096  # tokens per step; windows per step = batch_tokens / window length
    # (from step, window length): short windows first. A query at position i starts out spreading
    # its attention over i tokens, so the gradient that would single out the token before it is
    # diluted i times; in 32-token windows it is 8 times stronger than in 256-token ones, and
    # previous-token heads form sooner (measured: 0.27 against 0.15 after 250 steps).
    window_schedule: tuple = ((0, 32), (1500, 64), (3000, 128), (4500, 256))
    steps: int = 9000  # optimiser steps (fixed, so the run is reproducible)
    lr: float = 3e-3  # peak learning rate
    min_lr: float = 1e-4  # cosine floor
    warmup: int = 200  # linear warm-up steps
    weight_decay: float = 0.1  # AdamW, on matrices only
    grad_clip: float = 1.0  # global norm
    repeat_share: float = 0.75  # share of windows holding a repeated stretch (see the module doc)
    repeat_random: float = 0.6  # of those, the share whose stretch is random tokens, not the window's text
    repeat_min: int = 4  # shortest repeated stretch, tokens (and at least window / 16)
    repeat_max: int = 80  # longest repeated stretch, tokens (and at most window / 3)
    sinusoidal_positions: bool = True  # start the position embeddings as scaled sinusoids
    eval_every: int = 250  # steps between validation estimates
    eval_batches: int = 8  # batches per validation estimate
    scores_every: int = 250  # steps between head-type scores on the scoring texts
    threads: int = 2  # torch CPU threads
    checkpoint_minutes: float = 5.0  # wall minutes between resumable saves
    # "gpt2": transformers' GPT2LMHeadModel (learned positions, LayerNorm, one key and value per head).
    # "llama": transformers' LlamaForCausalLM (rotary positions, RMSNorm, gated MLP, grouped keys).
    architecture: str = "gpt2"
    n_kv_head: int = 0  # llama: key/value heads, each shared by n_head / n_kv_head query heads (0 = n_head)
    intermediate_size: int = 0  # llama: gated MLP width (0 = 4 × n_embd); 344 ≈ 8/3 × 128 matches GPT-2's MLP parameters
    rope_theta: float = 10000.0  # llama: base of the rotation frequencies (Llama 2's value)
    tokenizer_from: str = ""  # a committed model whose tokenizer.json is reused ("" = train one on the split)
    extra: dict = field(default_factory=dict)


def recipe(model: str) -> TrainConfig:
    """The committed recipe of one of the course's own models."""
    if model == "tiny":
        return TrainConfig()
    if model == "tiny-rope":
        # Same size class, data, schedule and repeated windows as "tiny"; what changes is the
        # architecture of 2023's open models: rotary positions, RMSNorm, a gated MLP, and 4 query
        # heads sharing 2 key/value heads. No sinusoidal start: a rotary model has no position table.
        return TrainConfig(architecture="llama", n_kv_head=2, intermediate_size=344, sinusoidal_positions=False,
                           tokenizer_from="tiny")
    raise ValueError(f"no training recipe for model {model!r} (known: {', '.join(TRAINED_MODEL_DIRS)})")


# ---------------------------------------------------------------- model


def sinusoids(n_positions: int, width: int, scale: float):
    """(position, width) sin/cos table at width/2 evenly spaced frequencies in (0, π), times `scale`.

    Evenly spaced, not the geometric ladder of Vaswani et al. (2017), whose many slow waves make
    neighbouring positions look alike: here any two positions closer than width apart are
    orthogonal (width apart, they point opposite ways), so a head can single out the one token
    before, and the step from one position to the next is still one fixed rotation, the same
    everywhere. The half-step offset makes the table repeat only after 2 × width positions."""
    import torch

    pos = torch.arange(n_positions, dtype=torch.float32)[:, None]  # (position, 1)
    half = width // 2
    freq = math.pi * (torch.arange(half, dtype=torch.float32) + 0.5) / half  # (width/2,)
    table = torch.zeros(n_positions, width)  # (position, width)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table * scale


def build_model(cfg: TrainConfig, eot_id: int):
    import torch

    torch.manual_seed(cfg.seed)
    if cfg.architecture == "llama":
        return build_llama(cfg, eot_id)
    if cfg.architecture != "gpt2":
        raise ValueError(f"unknown architecture {cfg.architecture!r} (gpt2 or llama)")
    from transformers import GPT2Config, GPT2LMHeadModel

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
        attn_implementation="sdpa",  # fast for training; head_scores switches to eager to read weights
    )
    model = GPT2LMHeadModel(config)
    if cfg.sinusoidal_positions:
        # sqrt(2) × the init std: the same root-mean-square as the token embeddings.
        with torch.no_grad():
            model.transformer.wpe.weight.copy_(sinusoids(cfg.n_positions, cfg.n_embd, config.initializer_range * math.sqrt(2)))
    return model


def build_llama(cfg: TrainConfig, eot_id: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.n_embd,
        intermediate_size=cfg.intermediate_size or 4 * cfg.n_embd,
        num_hidden_layers=cfg.n_layer,
        num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_kv_head or cfg.n_head,
        head_dim=cfg.n_embd // cfg.n_head,
        max_position_embeddings=cfg.n_positions,
        rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
        attention_dropout=cfg.dropout,
        bos_token_id=eot_id,
        eos_token_id=eot_id,
        tie_word_embeddings=True,
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config)


def window_at(step: int, cfg: TrainConfig) -> int:
    """The training window length at `step` (see TrainConfig.window_schedule)."""
    return max(T for start, T in cfg.window_schedule if start <= step)


def lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


class Batches:
    """Training windows: each starts at a story's EOT and runs on for `window` tokens; a share of
    them gets a repeated stretch. All randomness comes from one torch.Generator, whose state is
    saved with the run."""

    def __init__(self, ids, starts, cfg: TrainConfig, gen):
        import torch

        self.ids = torch.as_tensor(ids)  # (corpus_token,)
        T = cfg.n_positions
        self.starts = torch.as_tensor([s for s in starts if s + T + 1 <= len(ids)])  # (window,)
        self.cfg, self.gen = cfg, gen

    def _int(self, low: int, high: int) -> int:
        import torch

        return int(torch.randint(low, high, (1,), generator=self.gen))

    def _repeat(self, seq, targets) -> None:
        """Copy a stretch of `seq` (T + 1 tokens) later into it, in place; for random tokens the
        first copy's targets are masked, since nothing can predict them."""
        import torch

        cfg, T = self.cfg, len(targets)
        L = self._int(max(cfg.repeat_min, T // 16), min(cfg.repeat_max, T // 3) + 1)
        src = self._int(1, T // 2 - L)
        dst = self._int(src + L, T + 1 - L)
        if float(torch.rand(1, generator=self.gen)) < cfg.repeat_random:
            seq[src : src + L] = torch.randint(1, cfg.vocab_size, (L,), generator=self.gen)  # (L,)
            targets[src - 1 : src + L - 1] = -100
        seq[dst : dst + L] = seq[src : src + L]

    def __call__(self, window: int | None = None, repeats: bool = True):
        import torch

        cfg = self.cfg
        T = window or cfg.n_positions
        pick = torch.randint(0, len(self.starts), (cfg.batch_tokens // T,), generator=self.gen)  # (batch,)
        xs, ys = [], []
        for s in self.starts[pick].tolist():
            seq = self.ids[s : s + T + 1].clone()  # (token + 1,)
            targets = torch.ones(T, dtype=torch.long)  # (token,) 1 = scored, -100 = masked
            if repeats and float(torch.rand(1, generator=self.gen)) < cfg.repeat_share:
                self._repeat(seq, targets)
            xs.append(seq[:-1])
            ys.append(torch.where(targets == -100, targets, seq[1:]))
        return torch.stack(xs), torch.stack(ys)  # (batch, token), (batch, token)


def log_text(doc: dict) -> str:
    """training_log.json's text."""
    return json.dumps(doc, indent=1) + "\n"


def config_from_log(config: dict) -> TrainConfig:
    """The TrainConfig a log's `config` records (fields it lacks keep their defaults)."""
    known = {f for f in TrainConfig.__dataclass_fields__ if f != "extra"}
    cfg = TrainConfig(**{k: v for k, v in config.items() if k in known})
    cfg.window_schedule = tuple(tuple(p) for p in cfg.window_schedule)
    return cfg


def evaluate(model_dir: Path = PACKAGE_MODEL_DIR, corpora=DEFAULT_CORPORA, say=print) -> dict:
    """Measure the checkpoint in `model_dir` on the held-out stories that share no run of
    DEDUP_NGRAM words with a training story (:func:`held_out_dedup`), and write `heldOutDedup` and
    `validationSample` into its training_log.json (atomically; the same bytes every run).
    The corpus files must be the ones the log names (same sha256), so that the split is the same."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    model_dir = Path(model_dir)
    log_path = model_dir / "training_log.json"
    doc = json.loads(log_path.read_text(encoding="utf-8"))
    stories, source = read_corpora(corpora)
    logged = doc.get("source")
    if isinstance(logged, list) and [(s["file"], s["sha256"]) for s in logged] != [(s["file"], s["sha256"]) for s in source]:
        raise ValueError(f"{log_path} was trained on {', '.join(s['file'] + ' ' + s['sha256'][:12] for s in logged)}, "
                         f"not on {', '.join(s['file'] + ' ' + s['sha256'][:12] for s in source)}")
    if doc.get("corpusSha256") not in (None, sha256_text(stories)):
        raise ValueError(f"the stories read are not the ones {log_path} was trained on (corpusSha256)")
    cfg = config_from_log(doc.get("config", {}))
    torch.set_num_threads(cfg.threads)
    train_stories, val_stories = split_stories(stories, cfg)
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), attn_implementation="sdpa")  # as training measured it
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    if len(val_stories) != doc.get("stories", {}).get("validation", len(val_stories)):
        raise ValueError(f"the split gives {len(val_stories)} held-out stories, {log_path} says {doc['stories']['validation']}")
    logged_bpc = doc.get("heldOut", {}).get("bitsPerChar")
    if logged_bpc is not None:  # the same measurement over all held-out stories: is this the logged checkpoint?
        again = bits_per_character(model, tok, val_stories, cfg.n_positions)["bitsPerChar"]
        if abs(again - logged_bpc) > 1e-4:
            say(f"warning: over all held-out stories this checkpoint gives {again:.4f} bits/char, the log {logged_bpc:.4f}")
    dedup = held_out_dedup(model, tok, train_stories, val_stories, cfg.n_positions)
    out = with_evaluation(doc, dedup, validation_sample(cfg))
    tmp = log_path.with_suffix(".json.tmp")
    tmp.write_text(log_text(out), encoding="utf-8")
    os.replace(tmp, log_path)
    say(f"{shown(log_path)}: {dedup['stories']} of {dedup['heldOutStories']} held-out stories share no "
        f"{dedup['ngram']} words in a row with a training story; on them {dedup['bitsPerChar']:.3f} bits/char, "
        f"{dedup['natsPerToken']:.3f} nats/token" + (f" (on all: {logged_bpc:.3f} bits/char)" if logged_bpc is not None else ""))
    return out


def shown(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- the run


def _atomic_torch_save(obj, path: Path) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _run_fingerprint(cfg: TrainConfig, corpus_sha: str) -> str:
    recipe = {k: v for k, v in asdict(cfg).items() if k not in ("extra", "threads", "checkpoint_minutes")}
    return hashlib.sha256(json.dumps([recipe, corpus_sha, RESUME_FORMAT], sort_keys=True).encode()).hexdigest()[:16]


def train(cfg: TrainConfig, stories: list[str], out_dir: Path, source, run_dir: Path | None = DEFAULT_RUN_DIR,
          say=print) -> dict:
    """Train tokenizer and model, write checkpoint, tokenizer and log into out_dir. With a
    `run_dir`, resume from its saved state when that state is of the same recipe and corpus."""
    import torch
    from tqdm import tqdm

    torch.set_num_threads(cfg.threads)
    corpus_sha = sha256_text(stories)
    fingerprint = _run_fingerprint(cfg, corpus_sha)
    state_path = Path(run_dir) / "state.pt" if run_dir else None
    state = None
    if state_path and state_path.is_file():
        state = torch.load(state_path, weights_only=False)
        if state.get("fingerprint") != fingerprint:
            say(f"{state_path}: a run of another recipe or corpus; starting afresh")
            state = None

    train_stories, val_stories = split_stories(stories, cfg)
    if cfg.tokenizer_from:  # the same tokens as that model, so that traces and figures compare
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(TRAINED_MODEL_DIRS[cfg.tokenizer_from] / "tokenizer.json"))
    else:
        tok = train_tokenizer(train_stories, cfg.vocab_size)
    eot = tok.token_to_id(EOT)
    train_ids, train_starts = encode_corpus(tok, train_stories)
    val_ids, val_starts = encode_corpus(tok, val_stories)
    texts = scoring_ids(tok)

    model = build_model(cfg, eot)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.95),
    )
    gen = torch.Generator().manual_seed(cfg.seed)
    batches = Batches(train_ids, train_starts, cfg, gen)
    log = {"steps": [], "validation": [], "headScores": [], "computeSeconds": 0.0}
    first = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        gen.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        log, first = state["log"], state["step"]
        say(f"resuming {state_path} at step {first} of {cfg.steps}")
    else:
        torch.manual_seed(cfg.seed)

    def val_loss() -> float:
        vgen = torch.Generator().manual_seed(cfg.seed + 1)  # the same validation windows every time
        vb = Batches(val_ids, val_starts, cfg, vgen)
        model.eval()
        with torch.no_grad():
            losses = []
            for _ in range(cfg.eval_batches):
                x, y = vb(cfg.n_positions, repeats=False)
                logits = model(x).logits  # (batch, token, vocab)
                losses.append(float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())))
        model.train()
        return sum(losses) / len(losses)

    def save(step: int) -> None:
        if state_path:
            _atomic_torch_save(
                {"fingerprint": fingerprint, "step": step, "model": model.state_dict(), "optimizer": opt.state_dict(),
                 "generator": gen.get_state(), "torch_rng": torch.get_rng_state(), "log": log},
                state_path,
            )

    model.train()
    tick = time.time()
    last_save = tick
    running = None
    bar = tqdm(range(first, cfg.steps), desc=f"train {cfg.architecture}", unit="step", dynamic_ncols=True, initial=first, total=cfg.steps)
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        x, y = batches(window_at(step, cfg))
        logits = model(x).logits  # (batch, token, vocab)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        value = float(loss.detach())  # the number alone (float() of a tensor that needs grad warns)
        running = value if running is None else 0.95 * running + 0.05 * value
        tokens_seen = (step + 1) * cfg.batch_tokens
        log["steps"].append({"step": step + 1, "loss": round(value, 4), "tokens": tokens_seen})
        done = step + 1 == cfg.steps
        if (step + 1) % cfg.eval_every == 0 or done:
            log["validation"].append({"step": step + 1, "loss": round(val_loss(), 4), "tokens": tokens_seen})
        if (step + 1) % cfg.scores_every == 0 or done:
            log["headScores"].append({"step": step + 1, "tokens": tokens_seen, "best": head_scores(model, texts)})
            best = log["headScores"][-1]["best"]
            bar.write(f"step {step + 1}: " + ", ".join(f"{k} {v['score']:.2f} (L{v['layer'] + 1}H{v['head'] + 1})" for k, v in best.items()))
        now = time.time()
        log["computeSeconds"] = round(log["computeSeconds"] + (now - tick), 1)
        tick = now
        if now - last_save > cfg.checkpoint_minutes * 60 and not done:
            save(step + 1)
            last_save = time.time()
        bar.set_postfix(train=f"{running:.3f}", val=f"{log['validation'][-1]['loss'] if log['validation'] else float('nan'):.3f}")

    held = bits_per_character(model, tok, val_stories, cfg.n_positions)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save(str(out_dir / "tokenizer.json"))
    doc = {
        "config": {k: v for k, v in asdict(cfg).items() if k != "extra"},
        "source": source,
        "corpusSha256": corpus_sha,
        "stories": {"train": len(train_stories), "validation": len(val_stories)},
        "tokens": {"train": len(train_ids), "validation": len(val_ids)},
        "nParams": sum(p.numel() for p in model.parameters()),
        "steps": log["steps"],
        "validation": log["validation"],
        "headScores": log["headScores"],
        "headChance": scoring_chance(texts),
        "heldOut": held,
        "wallSeconds": log["computeSeconds"],
        "torch": torch.__version__,
    }
    doc = with_evaluation(doc, held_out_dedup(model, tok, train_stories, val_stories, cfg.n_positions), validation_sample(cfg))
    (out_dir / "training_log.json").write_text(log_text(doc), encoding="utf-8")
    save(cfg.steps)
    return doc
