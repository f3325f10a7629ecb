"""The playground's model asset: the tiny model's committed weights and tokenizer as one classic
script (`play-model.js`, `window.coursePlayModel = {…}`) that the playground page loads from
file:// after its first paint (generator/assets/play/ runs it in the page).

Read with numpy from the committed safetensors file (its header parsed here: 8 bytes of length,
then JSON, then the raw little-endian tensors), so `make site` needs no torch and no safetensors.
Float32, as stored: float16 weights move the attention weights by up to about 1e-3 (measured on
the committed traces, `python -m generator.render.play_model --measure` prints it), ten times the
playground's exactness bar of 1e-4.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np

from .. import tokens
from . import format as fmt
from .asset_files import AssetError, read_bytes, read_json, read_text, shown

TINY_DIR = Path(__file__).resolve().parents[1] / "tiny_model"
WEIGHTS = TINY_DIR / "model.safetensors"
CONFIG = TINY_DIR / "config.json"
TOKENIZER = TINY_DIR / "tokenizer.json"
MAX_HEADER = 1 << 20  # the tiny model's header is about 5 kB
DTYPES = {"F32": "<f4", "F16": "<f2"}
ASSET = "play-model.js"  # its name under assets/generated/
SCRIPT = "play.js"  # the playground's script, joined from generator/assets/play/ (PLAY_PARTS)
PLAY_DIR = Path(__file__).resolve().parents[1] / "assets" / "play"
# Its parts, in join order: one closure, as course.js's. bpe.js and forward.js touch no DOM, so
# the joined script also runs under node (the tokenizer test); page.js runs only in a page.
PLAY_PARTS = ("bpe.js", "forward.js", "runner.js", "scores.js", "ablation.js", "page.js", "split.js", "controller.js")


def model_fix(path: Path) -> str:
    """The remedy for a damaged file of the committed tiny model."""
    return f"restore it from git (git checkout -- {shown(path)}), or run `make tiny-model` to train the model again"


class WeightsError(AssetError):
    """The committed safetensors file is not what this reader expects (one line naming it)."""

    def __init__(self, path: Path, problem: str):
        super().__init__(path, problem, model_fix(path))


def _whole(x) -> bool:
    return type(x) is int and x >= 0


def read_safetensors(path: Path = WEIGHTS) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as float32 numpy arrays, checked against the file."""
    data = read_bytes(path, model_fix(path))
    if len(data) < 8:
        raise WeightsError(path, "shorter than a safetensors header")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER or 8 + n > len(data):
        raise WeightsError(path, f"header of {n} bytes does not fit the file")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise WeightsError(path, f"unreadable header ({str(e)[:120]})") from None
    if not isinstance(header, dict):
        raise WeightsError(path, "unreadable header (not a JSON object)")
    body = memoryview(data)[8 + n:]
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        ok = (isinstance(spec, dict) and isinstance(spec.get("shape"), list) and all(_whole(d) for d in spec["shape"])
              and isinstance(spec.get("data_offsets"), list) and len(spec["data_offsets"]) == 2
              and all(_whole(x) for x in spec["data_offsets"]))
        if not ok:
            raise WeightsError(path, f"{name[:60]} is not {{dtype, shape, data_offsets}} in the header")
        dtype, shape, (a, b) = DTYPES.get(spec.get("dtype")), spec["shape"], spec["data_offsets"]
        if dtype is None:
            raise WeightsError(path, f"{name} has dtype {str(spec.get('dtype'))[:20]!r}; expected F32 or F16")
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if not (0 <= a <= b <= len(body)) or b - a != size:
            raise WeightsError(path, f"{name}'s offsets {a}..{b} do not hold shape {shape}")
        out[name.removeprefix("transformer.")] = np.frombuffer(body[a:b], dtype).reshape(shape).astype(np.float32)
    return out


def tiny_config() -> dict:
    """config.json of the committed tiny model, with the sizes this module uses checked."""
    doc = read_json(CONFIG, model_fix(CONFIG))
    for key in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size"):
        if type(doc.get(key)) is not int or not 0 < doc[key] <= 1 << 20:
            raise AssetError(CONFIG, f"has no usable {key} (a positive whole number)", model_fix(CONFIG))
    if doc["n_embd"] % doc["n_head"]:
        raise AssetError(CONFIG, f"n_embd {doc['n_embd']} is not a multiple of n_head {doc['n_head']}", model_fix(CONFIG))
    eps = doc.get("layer_norm_epsilon")
    if type(eps) not in (int, float) or not 0 < eps < 1:
        raise AssetError(CONFIG, "has no usable layer_norm_epsilon (a small positive number)", model_fix(CONFIG))
    return doc


def tensor_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """What each tensor of tensor_order must measure for the model config.json describes."""
    e, v, p = config["n_embd"], config["vocab_size"], config["n_positions"]
    inner = config.get("n_inner") or 4 * e
    per_layer = {"ln_1.weight": (e,), "ln_1.bias": (e,), "attn.c_attn.weight": (e, 3 * e), "attn.c_attn.bias": (3 * e,),
                 "attn.c_proj.weight": (e, e), "attn.c_proj.bias": (e,), "ln_2.weight": (e,), "ln_2.bias": (e,),
                 "mlp.c_fc.weight": (e, inner), "mlp.c_fc.bias": (inner,), "mlp.c_proj.weight": (inner, e), "mlp.c_proj.bias": (e,)}
    out = {"wte.weight": (v, e), "wpe.weight": (p, e)}
    out.update({f"h.{l}.{k}": s for l in range(config["n_layer"]) for k, s in per_layer.items()})
    out.update({"ln_f.weight": (e,), "ln_f.bias": (e,)})
    return out


def checked_weights(config: dict) -> dict[str, np.ndarray]:
    """The committed weights, every tensor the page needs there, of the shape config.json gives
    it, and finite."""
    weights = read_safetensors()
    shapes = tensor_shapes(config)
    missing = [n for n in shapes if n not in weights]
    if missing:
        raise WeightsError(WEIGHTS, f"missing {', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}, which config.json's model has")
    for name, want in shapes.items():
        if weights[name].shape != want:
            raise WeightsError(WEIGHTS, f"{name} has shape {list(weights[name].shape)}, but config.json's model needs {list(want)}")
        if not np.isfinite(weights[name]).all():
            raise WeightsError(WEIGHTS, f"{name} holds a value that is not a finite number")
    return weights


def tokenizer_problem(exc: Exception) -> AssetError:
    """tokens.NoTokenizer for the tiny model, as the one line naming tokenizer.json."""
    text = str(exc).removeprefix("tiny: ").removeprefix(shown(TOKENIZER)).strip() or "cannot be read"
    return AssetError(TOKENIZER, text, model_fix(TOKENIZER))


def tokenizer_tables(config: dict) -> tuple[list[str], list[str]]:
    """(each id's byte-level text, the merges in rank order) of tokenizer.json, checked against
    config.json's vocabulary size."""
    def bad(problem: str):
        raise AssetError(TOKENIZER, problem, model_fix(TOKENIZER))

    tok = read_json(TOKENIZER, model_fix(TOKENIZER))
    model = tok.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    merges = model.get("merges") if isinstance(model, dict) else None
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        bad("has no model.vocab (an object) and model.merges (a list)")
    if sorted(i for i in vocab.values() if type(i) is int) != list(range(len(vocab))):
        bad("model.vocab does not number its tokens 0, 1, 2 … once each")
    if len(vocab) != config["vocab_size"]:
        bad(f"has {len(vocab)} tokens, but config.json says vocab_size {config['vocab_size']}")
    if not all(isinstance(m, str) or (isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m)) for m in merges):
        bad("model.merges is not a list of pairs of tokens")
    try:
        tokens.tokenizer("tiny")
    except tokens.NoTokenizer as exc:
        raise tokenizer_problem(exc) from None
    by_id = [""] * len(vocab)
    for text, i in vocab.items():
        by_id[i] = text
    return by_id, [m if isinstance(m, str) else " ".join(m) for m in merges]


def tensor_order(n_layer: int) -> list[str]:
    """The tensors the page needs, in the order they are packed (the unembedding is wte, tied)."""
    per_layer = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                 "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                 "mlp.c_proj.weight", "mlp.c_proj.bias"]
    return ["wte.weight", "wpe.weight"] + [f"h.{l}.{p}" for l in range(n_layer) for p in per_layer] + [
        "ln_f.weight", "ln_f.bias"]


def model_doc(dtype: str = "float32") -> dict:
    """What play-model.js assigns: config, tensor table, base64 weights, the tokenizer's vocabulary
    (byte-level strings by id) and merges (in rank order)."""
    config = tiny_config()
    weights = checked_weights(config)
    names = tensor_order(int(config["n_layer"]))
    table, chunks, offset = [], [], 0
    for name in names:
        a = np.ascontiguousarray(weights[name], dtype="<f4" if dtype == "float32" else "<f2")
        table.append({"name": name, "shape": list(a.shape), "offset": offset})
        offset += a.size
        chunks.append(a.tobytes())
    by_id, merges = tokenizer_tables(config)
    means, record = head_means(weights, int(config["n_head"]))
    return {
        "config": {k: config[k] for k in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size", "layer_norm_epsilon")},
        "revision": tokens.shown(WEIGHTS),
        "dtype": dtype,
        "tensors": table,
        "weights": base64.b64encode(b"".join(chunks)).decode("ascii"),
        "vocab": by_id,
        "merges": merges,
        "eot": tokens.EOT,
        # mean-ablation's reference: each head's mean output (layer, head, head_dim), 8 digits
        # (float32 holds about 7: the same on every machine, whatever its BLAS sums last)
        "headMeans": [[[float(f"{x:.8g}") for x in hd] for hd in layer] for layer in means],
        "meanReference": record,
    }


def play_model_js(dtype: str = "float32") -> bytes:
    body = fmt.json_for_script(model_doc(dtype), separators=(",", ":"))
    return f"window.coursePlayModel = {body};\n".encode("ascii")


def play_js() -> str:
    """The playground's classic script: its parts in one closure; `coursePlay` is its one global."""
    from .ablation import live_template
    from .causal_data import signed_rule
    from .script import without_comments_or_indents

    # without the parts' comment lines and indentation, as course.js (the page's script stays under a chapter's 1.8 MB)
    body = "\n".join(without_comments_or_indents(read_text(PLAY_DIR / name)) for name in PLAY_PARTS)
    # the ablation figure's markup, from its own template (fig-2, its cells linked to the attention figure, fig-1)
    config = tiny_config()
    template = live_template(2, int(config["n_layer"]), int(config["n_head"]), 1)
    body = "  var ABLATION_TEMPLATE = " + fmt.json_for_script(template) + ";\n\n" + body
    # signed_style's constants, from causal_data (the one copy: ablation.js colours by them)
    body = "  var SIGNED_RULE = " + fmt.json_for_script(signed_rule(), separators=(",", ":")) + ";\n" + body
    return ("/* play.js: the tiny model in the reader's page (the playground, play.html). Loaded only there.\n"
            " * Parts: generator/assets/play/ (" + ", ".join(PLAY_PARTS) + "), joined by generator/render/play_model.py. */\n"
            "(function (root) {\n  'use strict';\n\n" + body
            + "  root.coursePlay = { Tokenizer: Tokenizer, Model: Model, page: typeof startPage === 'function' ? startPage : null };\n"
            "  if (root.document && typeof startPage === 'function') startPage();\n"
            "})(typeof window !== 'undefined' ? window : globalThis);\n")


def head_means(weights: dict[str, np.ndarray] | None = None, n_head: int | None = None) -> tuple[np.ndarray, dict]:
    """Each head's mean output over heads.SCORING_SENTENCES, for the page's mean-ablation: as
    generator/model/causal.py's head_means takes it (every position but 0, <|endoftext|>, each
    text read after <|endoftext|>), here with numpy in float64 from the float32 weights, and its
    record as the traces' `causal.meanReference` has it (the test holds the two equal).
    Returns means (layer, head, head_dim) and the record."""
    from .. import heads

    config = tiny_config()
    n_head = n_head or int(config["n_head"])
    w = {k: v.astype(np.float64) for k, v in (weights or checked_weights(config)).items()}
    total, n = None, 0
    for text in heads.SCORING_SENTENCES:
        try:
            ids = [t.id for t in tokens.encode("tiny", text)]
        except tokens.NoTokenizer as exc:  # the file the asset step reads: named, with its fix
            raise tokenizer_problem(exc) from None
        concat = _forward(w, ids, n_head)[1]  # (layer, token, width)
        part = concat[:, 1:].sum(axis=1)  # (layer, width)
        total = part if total is None else total + part
        n += len(ids) - 1
    L, W = total.shape
    means = (total / n).reshape(L, n_head, W // n_head)  # (layer, head, head_dim)
    record = {"texts": "heads.SCORING_SENTENCES", "version": heads.SCORING_SET_VERSION,
              "sha": heads.texts_digest(heads.SCORING_SENTENCES), "positions": n}
    return means, record


def measure() -> None:
    """Float32 against float16 weights, on every committed tiny trace (numpy, float64 arithmetic):
    the largest difference in attention weights from the trace."""
    from ..store.traces import TraceStore

    store = TraceStore(Path("traces"))
    w32 = {k: v.astype(np.float64) for k, v in read_safetensors().items()}
    w16 = {k: v.astype(np.float16).astype(np.float64) for k, v in w32.items()}
    worst = {"float32": 0.0, "float16": 0.0}
    for entry in store.entries("tiny"):
        t = store.load("tiny", entry["text"], entry.get("ids"))
        ids = [tk["id"] for tk in t["tokens"]]
        want = np.array([[h["weights"] for h in layer["heads"]] for layer in t["layers"]])  # (layer, head, q, k)
        for name, w in (("float32", w32), ("float16", w16)):
            worst[name] = max(worst[name], float(np.abs(_forward(w, ids)[0] - want).max()))
    print({k: f"{v:.2e}" for k, v in worst.items()})


def _forward(w, ids, n_head=4):
    """The tiny model in numpy: attention weights (layer, head, q, k) and each layer's head
    outputs side by side, c_proj's input (layer, token, width)."""
    x = w["wte.weight"][ids] + w["wpe.weight"][: len(ids)]  # (token, width)
    T, W = x.shape
    d = W // n_head
    n_layer = sum(1 for k in w if k.endswith(".ln_1.weight"))
    mask = np.triu(np.ones((T, T), bool), 1)
    out, concats = [], []
    for l in range(n_layer):
        p = f"h.{l}."
        h = _ln(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # (token, 3 width)
        q, k, v = (qkv[:, i * W:(i + 1) * W].reshape(T, n_head, d).transpose(1, 0, 2) for i in range(3))  # (head, token, d)
        s = np.where(mask, -np.inf, q @ k.transpose(0, 2, 1) / np.sqrt(d))  # (head, q, k)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        out.append(a)
        concat = (a @ v).transpose(1, 0, 2).reshape(T, W)  # (token, width)
        concats.append(concat)
        x = x + concat @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = _ln(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]  # (token, 4 width)
        m = 0.5 * m * (1 + np.tanh(np.sqrt(2 / np.pi) * (m + 0.044715 * m**3)))
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return np.stack(out), np.stack(concats)  # (layer, head, q, k), (layer, token, width)


def _ln(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


if __name__ == "__main__":
    measure()
