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
    architecture: str = "gpt2"  # transformers' model_type: "gpt2" or "llama" (model/arch.py has one adapter each)
    n_kv_head: int = 0  # key/value heads, each shared by n_head / n_kv_head query heads (0: one per query head)
    trained_here: bool = False  # the course's own checkpoint, committed under generator/<name>_model/
    short_name: str = ""  # in running text and captions' model menus

    @property
    def kv_heads(self) -> int:
        return self.n_kv_head or self.n_head

    @property
    def rotary(self) -> bool:
        """Positions by rotating queries and keys (Llama), not by a learned table (GPT-2)."""
        return self.architecture == "llama"


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("tiny", None, None, "the course's tiny GPT-2 (4 layers × 4 heads × width 128), trained on TinyStories", 4, 4, 256,
                  caption_name="Tiny model, trained for this course", trained_here=True, short_name="the tiny model"),
        ModelSpec("gpt2", GPT2_HF_NAME, GPT2_REVISION, "GPT-2 small (12 layers × 12 heads × width 768), OpenAI's weights", 12, 12, 1024,
                  caption_name="GPT-2 small, trained by OpenAI", short_name="GPT-2 small"),
        ModelSpec("tiny-rope", None, None,
                  "the course's tiny Llama-style model (4 layers × 4 query heads sharing 2 key/value heads × width 128, "
                  "rotary positions), trained on TinyStories", 4, 4, 256,
                  caption_name="Tiny rotary model, trained for this course", architecture="llama", n_kv_head=2,
                  trained_here=True, short_name="the tiny rotary model"),
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
    "tiny-rope": Vocab(eot=0, low=1024, high=4096),  # the tiny model's tokenizer
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
    "tiny-rope": Path(__file__).resolve().parent / "tiny_rope_model" / "config.json",
}


def model_dir(model: str) -> Path:
    """The committed checkpoint folder of one of the course's own models (config, weights, tokenizer, log)."""
    return CONFIG_FILES[model].parent


def tokenizer_files(model: str) -> tuple[Path, ...]:
    """A model's committed tokenizer: tokenizer.json (a `tokenizers` file) beside a checkpoint trained
    here (tiny-rope's is the tiny model's, byte for byte); GPT-2's vocab.json and merges.txt."""
    d = model_dir(model)
    return (d / "tokenizer.json",) if MODELS[model].trained_here else (d / "vocab.json", d / "merges.txt")


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


def n_params_llama(n_layer: int, width: int, n_head: int, n_kv_head: int, head_dim: int, inner: int, vocab: int) -> int:
    """Parameters of a Llama with tied embeddings and no biases (the tiny rotary model: 1,250,432)."""
    per_block = (
        width  # input_layernorm (RMSNorm: a gain, no bias)
        + width * n_head * head_dim  # q_proj
        + 2 * width * n_kv_head * head_dim  # k_proj, v_proj: one per key/value head
        + n_head * head_dim * width  # o_proj
        + width  # post_attention_layernorm
        + 3 * width * inner  # gate_proj, up_proj, down_proj
    )
    return vocab * width + n_layer * per_block + width  # embed_tokens, layers, norm


# config.json keys of each architecture, in the order config_facts reads them:
# layers, heads, width, context, vocabulary
CONFIG_KEYS = {
    "gpt2": ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size"),
    "llama": ("num_hidden_layers", "num_attention_heads", "hidden_size", "max_position_embeddings", "vocab_size"),
}


def config_facts(model: str) -> dict:
    """{nLayer, nHead, nKvHead, width, headDim, nCtx, vocabSize, nParams, positions, ropeTheta}
    from the model's config.json (positions: "learned" or "rotary"; ropeTheta None for learned)."""
    path = CONFIG_FILES[model]
    cfg = json.loads(path.read_text(encoding="utf-8"))
    arch = cfg.get("model_type", "gpt2")
    L, H, W, C, V = (int(cfg[k]) for k in CONFIG_KEYS[arch])
    if arch == "gpt2":
        return {"nLayer": L, "nHead": H, "nKvHead": H, "width": W, "headDim": W // H, "nCtx": C, "vocabSize": V,
                "nParams": n_params(L, W, C, V), "positions": "learned", "ropeTheta": None}
    kv, d = int(cfg.get("num_key_value_heads") or H), int(cfg.get("head_dim") or W // H)
    theta = float((cfg.get("rope_parameters") or {}).get("rope_theta", cfg.get("rope_theta", 10000.0)))
    return {"nLayer": L, "nHead": H, "nKvHead": kv, "width": W, "headDim": d, "nCtx": C, "vocabSize": V,
            "nParams": n_params_llama(L, W, H, kv, d, int(cfg["intermediate_size"]), V), "positions": "rotary", "ropeTheta": theta}


# ---------------------------------------------------------------- checkpoint tensors

# config.json keys that fix a checkpoint's tensors, per architecture (model/checkpoint.py compares a
# folder's config with the committed one on these), with the default of a key a config may leave out.
CHECKPOINT_SHAPE_KEYS = {
    "gpt2": ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size", "n_inner"),
    "llama": ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size", "head_dim",
              "intermediate_size", "max_position_embeddings", "vocab_size"),
}
# The prefix save_pretrained puts before the stack's tensors, and buffers some exports carry that are
# not parameters (GPT-2's causal-mask buffers).
CHECKPOINT_PREFIX = {"gpt2": "transformer.", "llama": "model."}
CHECKPOINT_BUFFERS = {"gpt2": r"^h\.\d+\.attn\.(bias|masked_bias)$", "llama": r"^layers\.\d+\.self_attn\.rotary_emb\.inv_freq$"}


def config_architecture(cfg: dict) -> str:
    """The architecture a config.json describes (its model_type; GPT-2's own configs have one, and
    an old one without it is GPT-2's)."""
    return cfg.get("model_type", "gpt2")


def checkpoint_shape(cfg: dict) -> dict[str, int]:
    """The shape keys of a config.json (CHECKPOINT_SHAPE_KEYS of its architecture), defaults filled
    in; KeyError, TypeError or ValueError when one it needs is missing or not a number."""
    arch = config_architecture(cfg)
    if arch == "gpt2":
        out = {k: cfg[k] for k in CHECKPOINT_SHAPE_KEYS[arch] if k != "n_inner"}
        out["n_inner"] = cfg.get("n_inner") or 4 * cfg["n_embd"]
        return out
    out = {k: cfg.get(k) for k in CHECKPOINT_SHAPE_KEYS[arch]}
    out["num_key_value_heads"] = out["num_key_value_heads"] or cfg["num_attention_heads"]
    out["head_dim"] = out["head_dim"] or cfg["hidden_size"] // cfg["num_attention_heads"]
    return out


def expected_tensors(architecture: str, shape: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """The parameters of a checkpoint of `shape` (checkpoint_shape), named as save_pretrained writes
    them without CHECKPOINT_PREFIX, the tied lm_head left out."""
    out: dict[str, tuple[int, ...]] = {}
    if architecture == "gpt2":
        d, inner = shape["n_embd"], shape["n_inner"]
        out = {"wte.weight": (shape["vocab_size"], d), "wpe.weight": (shape["n_positions"], d), "ln_f.weight": (d,), "ln_f.bias": (d,)}
        for i in range(shape["n_layer"]):
            out |= {
                f"h.{i}.ln_1.weight": (d,), f"h.{i}.ln_1.bias": (d,),
                f"h.{i}.attn.c_attn.weight": (d, 3 * d), f"h.{i}.attn.c_attn.bias": (3 * d,),
                f"h.{i}.attn.c_proj.weight": (d, d), f"h.{i}.attn.c_proj.bias": (d,),
                f"h.{i}.ln_2.weight": (d,), f"h.{i}.ln_2.bias": (d,),
                f"h.{i}.mlp.c_fc.weight": (d, inner), f"h.{i}.mlp.c_fc.bias": (inner,),
                f"h.{i}.mlp.c_proj.weight": (inner, d), f"h.{i}.mlp.c_proj.bias": (d,),
            }
        return out
    d, inner = shape["hidden_size"], shape["intermediate_size"]
    q, kv = shape["num_attention_heads"] * shape["head_dim"], shape["num_key_value_heads"] * shape["head_dim"]
    out = {"embed_tokens.weight": (shape["vocab_size"], d), "norm.weight": (d,)}
    for i in range(shape["num_hidden_layers"]):  # torch's Linear stores (out, in)
        p = f"layers.{i}."
        out |= {
            p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
            p + "self_attn.q_proj.weight": (q, d), p + "self_attn.k_proj.weight": (kv, d),
            p + "self_attn.v_proj.weight": (kv, d), p + "self_attn.o_proj.weight": (d, q),
            p + "mlp.gate_proj.weight": (inner, d), p + "mlp.up_proj.weight": (inner, d), p + "mlp.down_proj.weight": (d, inner),
        }
    return out
