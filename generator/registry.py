"""Every fact about a model or a score kind, once. Torch-free, imports nothing of the package.

Parsing (lessons/), loading (model/load.py), scoring (heads.py) and rendering (render/) all read
these tables, so a new model or a new score kind is one entry here (docs/architecture.md, "Where to change
what").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
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
# ---------------------------------------------------------------- what a model keeps while it writes

# Bytes per stored number. The course's checkpoints are float32; models are usually run in 16 bits
# (bfloat16 or float16), which halves every cache below.
STORED_BYTES = 4
RUN_BYTES = 2


@dataclass(frozen=True)
class KvShape:
    """What attention keeps of each token while a model writes: per layer, one key and one value
    for each key/value head. Arithmetic on a configuration only: nothing here is measured."""

    n_layer: int
    n_head: int  # query heads
    n_kv_head: int  # key/value heads; each serves n_head / n_kv_head query heads
    head_dim: int  # numbers in one key (and in one value)
    n_ctx: int  # the longest text the configuration allows
    window: int | None = None  # sliding window, in tokens (None: every layer sees the whole text)
    window_layers: int = 0  # how many layers use the window

    @property
    def numbers_per_token(self) -> int:
        return 2 * self.n_layer * self.n_kv_head * self.head_dim  # a key and a value, per layer and key/value head

    @property
    def numbers_unshared(self) -> int:
        """The same without sharing: one key/value head per query head."""
        return 2 * self.n_layer * self.n_head * self.head_dim

    def bytes_per_token(self, precision: int) -> int:
        return self.numbers_per_token * precision

    def bytes_for(self, tokens: int, precision: int) -> int:
        """The whole cache after `tokens` tokens: a layer with a window keeps only its last `window`."""
        per_layer = 2 * self.n_kv_head * self.head_dim * precision
        kept = (self.n_layer - self.window_layers) * tokens + self.window_layers * min(tokens, self.window or tokens)
        return kept * per_layer

    def bytes_unshared_for(self, tokens: int, precision: int) -> int:
        """bytes_for with one key/value head per query head (windows kept as they are)."""
        return self.bytes_for(tokens, precision) // self.n_kv_head * self.n_head


def kv_shape(model: str) -> KvShape:
    """The KV cache of one of the course's models, from its config.json (config_facts)."""
    f = config_facts(model)
    return KvShape(f["nLayer"], f["nHead"], f["nKvHead"], f["headDim"], f["nCtx"])


# ---------------------------------------------------------------- current open models, as cited literature

# The fields of a few current open models' published config.json that chapter 7 uses, each with its
# source and where it was confirmed (generator/literature/open_models.yml). Configuration only: the
# course has none of their weights, so no page may show a measured number of them.
LITERATURE_FILE = Path(__file__).resolve().parent / "literature" / "open_models.yml"
WINDOW_LAYERS = {  # which layers use the sliding window: a count from the number of layers
    "none": lambda n: 0,
    "all": lambda n: n,
    "alternate": lambda n: (n + 1) // 2,  # layers 1, 3, 5 … counting from 1 (0, 2, 4 … in the config's own count)
}
_OPEN_MODEL_FIELDS = {  # field: (type, what it is, in the fix's words)
    "id": (str, "a short name for references, like llama-2-7b"),
    "name": (str, "the model's name as the page shows it"),
    "repo": (str, "the Hugging Face repository, like meta-llama/Llama-2-7b-hf"),
    "source": (str, "the URL of the repository's config.json"),
    "read": (str, "the date the values were read, as YYYY-MM-DD"),
    "confirmed": (str, "the stored copy each value was checked against"),
    "layers": (int, "num_hidden_layers"),
    "heads": (int, "num_attention_heads"),
    "kv_heads": (int, "num_key_value_heads"),
    "head_dim": (int, "head_dim, or hidden_size / num_attention_heads"),
    "context": (int, "max_position_embeddings"),
    "sliding_window": (int, "sliding_window in tokens, or null where no layer uses one"),
    "window_layers": (str, "none, all or alternate"),
    "learned_sinks": (bool, "true where each head has a learned sink logit"),
    "rope_theta": (float, "rope_theta"),
}
_ID_RE = re.compile(r"^[a-z][a-z0-9.-]*[a-z0-9]$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class LiteratureError(ValueError):
    """A mistake in the literature file: one line, ``path:line: problem. Fix: remedy`` (the same
    form as a lesson's mistake; render/kv_cache.py passes it on as one)."""

    def __init__(self, where: str, problem: str, fix: str):
        self.where, self.problem, self.fix = where, problem, fix
        super().__init__(f"{where}: {problem}. Fix: {fix}")


@dataclass(frozen=True)
class OpenModel:
    id: str
    name: str
    repo: str
    source: str
    read: str
    confirmed: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    context: int
    sliding_window: int | None
    window_layers: str
    learned_sinks: bool
    rope_theta: float

    @property
    def kv(self) -> KvShape:
        return KvShape(self.layers, self.heads, self.kv_heads, self.head_dim, self.context,
                       self.sliding_window, WINDOW_LAYERS[self.window_layers](self.layers))


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(__file__).resolve().parents[1]))
    except ValueError:
        return str(path)


def _yaml_entries(path: Path) -> list[tuple[dict, int, dict[str, int]]]:
    """Each entry of the file with its line and the line of each of its fields."""
    import yaml

    shown = _shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LiteratureError(shown, "is missing", "restore it from git (git checkout -- generator/literature/open_models.yml)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LiteratureError(shown, f"cannot be read as UTF-8 text ({type(e).__name__})", "restore it from git") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(str(getattr(e, "problem", "") or e).split())
        raise LiteratureError(f"{shown}:{line}", f"is not valid YAML ({problem})", "fix the line, or restore the file from git") from None
    if not isinstance(data, list) or not data or not isinstance(node, yaml.SequenceNode):
        raise LiteratureError(f"{shown}:1", "must be a list of models, one `- id: …` entry each", "see the entries in git for the form")
    out = []
    for item, entry in zip(node.value, data):
        line = item.start_mark.line + 1
        if not isinstance(entry, dict) or not isinstance(item, yaml.MappingNode):
            raise LiteratureError(f"{shown}:{line}", "each entry must be a mapping of fields", "write `- id: …` then one `field: value` a line")
        lines = {str(k.value): v.start_mark.line + 1 for k, v in item.value}
        out.append((entry, line, lines))
    return out


def _open_model(entry: dict, where: str, lines: dict[str, int], shown: str) -> OpenModel:
    at = lambda field: f"{shown}:{lines.get(field, int(where.rsplit(':', 1)[1]))}"  # noqa: E731
    unknown = sorted(set(map(str, entry)) - set(_OPEN_MODEL_FIELDS))
    if unknown:
        raise LiteratureError(at(unknown[0]), f"unknown field '{unknown[0]}'", f"use only: {', '.join(_OPEN_MODEL_FIELDS)}")
    missing = [f for f in _OPEN_MODEL_FIELDS if f not in entry]
    if missing:
        raise LiteratureError(where, f"the entry lacks '{missing[0]}'", f"add `{missing[0]}:` ({_OPEN_MODEL_FIELDS[missing[0]][1]})")
    values = {}
    for field, (kind, what) in _OPEN_MODEL_FIELDS.items():
        v = entry[field]
        if field == "sliding_window" and v is None:
            values[field] = None
            continue
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if field == "read" and isinstance(v, date):  # YAML reads 2026-12-06 as a date
            v = v.isoformat()
        if kind is str and isinstance(v, str):
            v = v.strip()
        ok = isinstance(v, kind) and not (kind is not bool and isinstance(v, bool)) and v != ""
        if not ok or (kind in (int, float) and v <= 0):
            shown_v = "empty" if v in (None, "") else repr(v)
            raise LiteratureError(at(field), f"'{field}' must be {'a positive whole number' if kind is int else 'a positive number' if kind is float else 'true or false' if kind is bool else 'text'}, not {shown_v}", f"write {what}")
        values[field] = v
    m = OpenModel(**values)
    if not _ID_RE.match(m.id):
        raise LiteratureError(at("id"), f"'id' {m.id!r} must be lower case letters, digits, dots and hyphens", "write an id like llama-2-7b")
    if m.heads % m.kv_heads:
        raise LiteratureError(at("kv_heads"), f"{m.kv_heads} key/value heads cannot be shared evenly by {m.heads} query heads", "check num_key_value_heads in the config")
    if not m.source.startswith(f"https://huggingface.co/{m.repo}/") or not m.source.endswith("config.json"):
        raise LiteratureError(at("source"), f"'source' must be the config.json of https://huggingface.co/{m.repo}", f"write https://huggingface.co/{m.repo}/blob/main/config.json")
    if not _DATE_RE.match(m.read):
        raise LiteratureError(at("read"), f"'read' must be a date as YYYY-MM-DD, not {m.read!r}", "write the day the values were read, like 2026-12-06")
    if m.window_layers not in WINDOW_LAYERS:
        raise LiteratureError(at("window_layers"), f"'window_layers' must be none, all or alternate, not {m.window_layers!r}", "write which layers use the window")
    if (m.sliding_window is None) != (m.window_layers == "none"):
        raise LiteratureError(at("window_layers"), f"'window_layers' is {m.window_layers} but 'sliding_window' is {m.sliding_window}",
                              "write `sliding_window: null` with `window_layers: none`, or a window with the layers that use it")
    return m


def read_open_models(path: Path | None = None) -> tuple[OpenModel, ...]:
    """The literature file (LITERATURE_FILE unless given), checked: every mistake is one
    LiteratureError at its file and line."""
    path = path or LITERATURE_FILE
    shown = _shown(path)
    models: list[OpenModel] = []
    for entry, line, lines in _yaml_entries(path):
        m = _open_model(entry, f"{shown}:{line}", lines, shown)
        if any(o.id == m.id for o in models):
            raise LiteratureError(f"{shown}:{lines.get('id', line)}", f"the id '{m.id}' is used twice", "give each model its own id")
        models.append(m)
    return tuple(models)


def open_models(path: Path | None = None) -> tuple[OpenModel, ...]:
    """The literature file, read and checked each time (it is small; `make serve` sees an edit at once)."""
    return read_open_models(path)
