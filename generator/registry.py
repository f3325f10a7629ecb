"""Every fact about a model or a score kind, once. Torch-free, imports nothing of the package.

Parsing (lessons/), loading (model/load.py), scoring (heads.py) and rendering (render/) all read
these tables, so a new model or a new score kind is one entry here (docs/architecture.md, "Where to change
what").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# ---------------------------------------------------------------- models

# The pinned revision of openai-community/gpt2: the commit its `main` branch pointed at when the
# course was written. Every GPT-2 trace key includes it; change it only together with re-tracing.
GPT2_REVISION = "607a30d783dfa663caf39e06633721c8d4cfcd7e"
GPT2_HF_NAME = "openai-community/gpt2"

# GPT-2 small's shape, for the random-init stand-in.
GPT2_SMALL_SHAPE = dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257)


@dataclass(frozen=True)
class ModelSpec:
    name: str  # the course's name for it: the `model` field of traces and of ```attention``` blocks
    hf_name: str | None  # Hugging Face repo id, None for the course's own checkpoint
    revision: str | None  # pinned commit; None where it is computed at load (tiny)
    description: str
    n_layer: int
    n_head: int
    n_ctx: int
    caption_name: str = ""  # how a figure's caption names it for readers, before its details


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("tiny", None, None, "the course's tiny GPT-2 (4 layers × 4 heads × width 128), trained on TinyStories", 4, 4, 256,
                  caption_name="Tiny model, trained for this course"),
        ModelSpec("gpt2", GPT2_HF_NAME, GPT2_REVISION, "GPT-2 small (12 layers × 12 heads × width 768), OpenAI's weights", 12, 12, 1024,
                  caption_name="GPT-2 small, trained by OpenAI"),
    )
}


# Models whose weights this course has, so chapter 2 can freeze their vectors (traces/<m>/vectors.json);
# GPT-2's are not here, and no page may invent its numbers.
VECTOR_MODELS = ("tiny",)


@dataclass(frozen=True)
class Vocab:
    """Where to draw random ordinary tokens from, and the id of <|endoftext|>."""

    eot: int
    low: int  # first id drawn from (inclusive)
    high: int  # last id drawn from (exclusive)


# GPT-2: ids below 1024 are bytes and short fragments, ids above 20000 include rare oddities.
# Tiny (4096-token BPE, EOT = 0): the first merges are fragments, later ones whole words.
VOCABS = {
    "gpt2": Vocab(eot=50256, low=1024, high=20000),
    "tiny": Vocab(eot=0, low=1024, high=4096),
}

# ---------------------------------------------------------------- score kinds

KINDS = ("previous-token", "duplicate-token", "induction", "sink")

# One-line definitions, shown on the pages next to each scoreboard. Position 0 of every trace is
# <|endoftext|>; the sentence's words start at position 1.
DEFINITIONS = {
    "previous-token": (
        "the average weight a token puts on the token just before it, over every word from the "
        "second on, in natural sentences"
    ),
    "duplicate-token": (
        "the average weight a token puts on earlier copies of itself, over the tokens that have one, "
        "in a sequence of random tokens repeated twice"
    ),
    "induction": (
        "the average weight a token puts on the token that came right after its earlier copy, over "
        "the second copy of a sequence of random tokens repeated twice"
    ),
    "sink": (
        "the average weight a token puts on <|endoftext|>, the token at position 0 before the "
        "sentence, over every word from the second on, in natural sentences"
    ),
}
TITLES = {
    "previous-token": "Previous-token heads",
    "duplicate-token": "Duplicate-token heads",
    "induction": "Induction heads",
    "sink": "Attention sinks",
}
NAMES = {  # one head of the kind, in running text
    "previous-token": "previous-token head",
    "duplicate-token": "duplicate-token head",
    "induction": "induction head",
    "sink": "attention sink",
}

# Kinds measured on the repeated random tokens; the others on the natural scoring sentences.
REPEATED_KINDS = ("duplicate-token", "induction")


# ---------------------------------------------------------------- configuration facts

# Each model's published or committed configuration: every fact of its shape, without weights.
CONFIG_FILES = {
    "tiny": Path(__file__).resolve().parent / "tiny_model" / "config.json",
    "gpt2": Path(__file__).resolve().parent / "gpt2" / "config.json",
}


def n_params(n_layer: int, width: int, n_ctx: int, vocab: int) -> int:
    """Parameters of a GPT-2 with tied input and output embeddings (GPT-2 small: 124,439,808)."""
    per_block = (
        2 * width  # ln_1
        + width * 3 * width + 3 * width  # c_attn: q, k, v
        + width * width + width  # attn c_proj
        + 2 * width  # ln_2
        + width * 4 * width + 4 * width  # mlp c_fc
        + 4 * width * width + width  # mlp c_proj
    )
    return vocab * width + n_ctx * width + n_layer * per_block + 2 * width  # wte, wpe, blocks, ln_f


def config_facts(model: str) -> dict:
    """{nLayer, nHead, width, headDim, nCtx, vocabSize, nParams} from the model's config.json."""
    path = CONFIG_FILES[model]
    cfg = json.loads(path.read_text(encoding="utf-8"))
    L, H, W, C, V = (int(cfg[k]) for k in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size"))
    return {"nLayer": L, "nHead": H, "width": W, "headDim": W // H, "nCtx": C, "vocabSize": V, "nParams": n_params(L, W, C, V)}
