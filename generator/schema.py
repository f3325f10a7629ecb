"""Every traced activation, named once, with its shape declared once.

This is the only place that maps Python snake_case names to the camelCase names that the
JSON traces and the lessons' JavaScript API use (``trace.layers[l].heads[h].scaledMasked``).
"""

from __future__ import annotations

from dataclasses import dataclass

# 2: every trace starts with the model's <|endoftext|> at position 0, as its training windows do.
# 3: the big arrays are encoded (int16 × scale, base64) and scaledMasked / attnConcat are restored
#    by the loader (traces/README.md, "Encoded arrays"); store.TraceStore.load gives plain lists.
# 4: every trace has a `causal` block (generator/model/causal.py): ablation, direct logit attribution,
#    value norms and the logit lens, encoded like the activations (traces/README.md, "causal").
# 5: keys and values are stored once per key/value head (`layers[l].kvHeads[g]`), as a model with
#    grouped-query attention computes them; a rotary model also stores each head's query and each
#    key/value head's key before the rotation. The loader restores heads[h].k, .v (its group's),
#    .kvHead, and qUnrotated / kUnrotated (= q, k for a learned-position model). Meta gains
#    architecture, nKvHead, positions and ropeTheta.
SCHEMA_VERSION = 5

# Significant digits kept for every float stored as a JSON number (probabilities, scales). The
# activations are encoded arrays instead: int16 × scale, scale = max|x| / 32767 rounded up to two
# significant digits, so each value is within scale / 2 (tests/test_encoding.py).
SIGNIFICANT_DIGITS = 5


@dataclass(frozen=True)
class Activation:
    snake: str  # Python name
    camel: str  # JSON / JavaScript name
    shape: tuple[str, ...]  # symbolic shape, one entry per axis
    doc: str


# Per head: axes are (query, key) for token-by-token grids, (token, head_dim) for vectors.
HEAD_ACTIVATIONS: tuple[Activation, ...] = (
    Activation("q", "q", ("token", "head_dim"), "queries"),
    Activation("k", "k", ("token", "head_dim"), "keys"),
    Activation("v", "v", ("token", "head_dim"), "values"),
    Activation("scores", "scores", ("query", "key"), "raw dot products q·kᵀ (no mask, no scaling)"),
    Activation(
        "scaled_masked",
        "scaledMasked",
        ("query", "key"),
        "scores / √head_dim with the causal mask; masked cells are null (JSON has no -Infinity)",
    ),
    Activation("weights", "weights", ("query", "key"), "softmax of scaledMasked; rows sum to 1"),
    Activation("out", "out", ("token", "head_dim"), "weights · v, the head's output"),
    Activation("q_unrotated", "qUnrotated", ("token", "head_dim"),
               "the query before the rotation by its position (rotary models); = q for a learned-position model"),
    Activation("k_unrotated", "kUnrotated", ("token", "head_dim"),
               "the head's key before the rotation by its position (rotary models); = k for a learned-position model"),
)

# Per key/value head (layers[l].kvHeads[g]): the keys and values that the query heads of group g
# share (query head h reads group h // (nHead / nKvHead), transformers' repeat_kv order). GPT-2
# has one group per head.
KV_HEAD_ACTIVATIONS: tuple[Activation, ...] = (
    Activation("k", "k", ("token", "head_dim"), "keys, after the rotation for a rotary model"),
    Activation("v", "v", ("token", "head_dim"), "values"),
    Activation("k_unrotated", "kUnrotated", ("token", "head_dim"), "keys before the rotation (rotary models only)"),
)

# What a schema-5 file stores per query head and per key/value head, in this order, each as an
# encoded array; the loader restores the rest: each head's k, v (its group's), kvHead,
# scaledMasked = scores / √head_dim (null above the diagonal), the layer's attnConcat = every
# head's out side by side (out is the model's own out-projection input, block h), and for a
# learned-position model qUnrotated = q and kUnrotated = k.
STORED_HEAD_FIELDS = ("q", "scores", "weights", "out")
STORED_KV_FIELDS = ("k", "v")
ROTARY_HEAD_FIELDS = ("qUnrotated",)  # stored per head only where positions == "rotary"
ROTARY_KV_FIELDS = ("kUnrotated",)  # stored per key/value head only where positions == "rotary"
POSITIONS = ("learned", "rotary")  # meta.positions


def stored_head_fields(positions: str) -> tuple[str, ...]:
    return STORED_HEAD_FIELDS + (ROTARY_HEAD_FIELDS if positions == "rotary" else ())


def stored_kv_fields(positions: str) -> tuple[str, ...]:
    return STORED_KV_FIELDS + (ROTARY_KV_FIELDS if positions == "rotary" else ())

# Per layer.
LAYER_ACTIVATIONS: tuple[Activation, ...] = (
    Activation(
        "attn_concat",
        "attnConcat",
        ("token", "width"),
        "every head's out side by side, before the output projection c_proj",
    ),
)

# The `causal` block of a trace (generator/model/causal.py), each float array encoded as int16 × scale
# with its leading axes flattened into rows. Symbolic axes: ablation = len(causal.ablations),
# followed = the clean top TOP_K_PREDICTIONS at that position then the lesson's targets, part =
# CAUSAL_PARTS(layers, heads), stage = the embedding then each layer's output (layer + 1), lens =
# LENS_K.
CAUSAL_ARRAYS: tuple[Activation, ...] = (
    Activation("clean_logit", "cleanLogit", ("token", "followed"), "the clean run's logit of each followed token"),
    Activation("clean_logprob", "cleanLogprob", ("token", "followed"), "the clean run's log-probability of each followed token"),
    Activation("kl", "kl", ("ablation", "layer", "head", "token"),
               "KL(clean ‖ ablated) of the next-token distribution, in nats, with that head removed"),
    Activation("d_logit", "dLogit", ("ablation", "layer", "head", "token", "followed"),
               "ablated minus clean logit of each followed token"),
    Activation("d_logprob", "dLogprob", ("ablation", "layer", "head", "token", "followed"),
               "ablated minus clean log-probability of each followed token"),
    Activation("dla", "dla", ("part", "token", "followed"),
               "each part's direct share of each followed logit (ln_f's scale frozen); the parts add up to cleanLogit"),
    Activation("value_norms", "valueNorms", ("layer", "head", "token"),
               "‖v_j W_O^h‖: weights[i][j] times this is the size of what token j hands token i"),
    Activation("lens_probs", "lensProbs", ("stage", "token", "lens"), "the logit lens's top probabilities"),
)
# Token ids, stored as plain JSON integers.
CAUSAL_ID_ARRAYS: tuple[Activation, ...] = (
    Activation("followed", "followed", ("token", "followed"), "the token ids followed at each position"),
    Activation("lens_ids", "lensIds", ("stage", "token", "lens"), "the logit lens's top token ids"),
)
# The rest of the block: targets (sorted ids a lesson names), ablations (zero, mean), parts (names),
# tokenTexts ({id: text} for every id above), meanReference (what mean-ablation averaged over).
CAUSAL_FIELDS = ("targets", "ablations", "parts", "meanReference", "tokenTexts") + tuple(
    a.camel for a in CAUSAL_ID_ARRAYS + CAUSAL_ARRAYS)
LENS_K = 5


def causal_parts(n_layer: int, n_head: int) -> list[str]:
    """The parts the final residual stream is a sum of, as direct logit attribution names them:
    the embedding, every head (L1H1…, counting from 1), every MLP, then the biases (every
    attention output bias and ln_f's)."""
    return (["embedding"] + [f"L{l + 1}H{h + 1}" for l in range(n_layer) for h in range(n_head)]
            + [f"MLP{l + 1}" for l in range(n_layer)] + ["biases"])


def causal_dims(n_layer: int, n_head: int, n_tokens: int, n_targets: int, n_ablations: int) -> dict[str, int]:
    """The size of every symbolic axis of the causal arrays."""
    return {"ablation": n_ablations, "layer": n_layer, "head": n_head, "token": n_tokens,
            "followed": TOP_K_PREDICTIONS + n_targets, "part": len(causal_parts(n_layer, n_head)),
            "stage": n_layer + 1, "lens": LENS_K}


# The score split (generator/model/score_parts.py, traces/<model>/splits.json): per head, each
# scaled score q·k/√d as a sum of the parts of the residual stream entering the head's layer.
# Symbolic axes: part = split_parts(layer, head)'s length, cell = the (query, key) cells on and
# below the diagonal, row by row.
SPLIT_ARRAYS: tuple[Activation, ...] = (
    Activation("split_score", "score", ("cell",), "the head's own scaled score q·k/√d of each cell"),
    Activation("split_key", "key", ("part", "cell"),
               "q_i · k_j^p / √d: the key's parts, the query whole; the parts add up to score"),
    Activation("split_query", "query", ("part", "cell"),
               "q_i^p · k_j / √d: the query's parts, the key whole; the parts add up to score"),
    Activation("split_table", "table", ("part", "part", "cell"),
               "learned positions, layer 1 only: q_i^a · k_j^b / √d, query part a by key part b; all of them add up to score"),
    Activation("split_score_unrotated", "scoreUnrotated", ("cell",),
               "rotary positions only: the same score with the rotation left out (q and k as projected, unturned); "
               "score minus this is what the rotation makes of the score"),
)
SPLIT_POSITIONS = ("learned", "rotary")  # splits.json's `positions` (absent: learned, as written before rotary models)
SPLIT_FORMAT = 1  # bumped when splits.json's layout changes
ROTARY_FORMAT = 1  # bumped when rotary.json's layout changes (store/rotary_file.py)
SPLIT_DECIMALS = 5  # each part is rounded to 5 decimals, so 20 parts still add up to the score within 1e-4
SPLIT_ATOL = 1e-4  # how close the parts of a score add up to it, computed and stored


def split_parts(layer: int, n_head: int, positions: str = "learned") -> list[str]:
    """The parts the residual stream entering block `layer` (from 0) is a sum of: the token
    embedding, the position embedding, each earlier head (L1H1…, counting from 1), each earlier
    MLP, then the biases (earlier attention output biases, with the attention norm's and the q/k
    projections' own). A rotary model's stream has no position part (position enters only through
    the rotation of q and k) and, without biases (Llama), no biases part."""
    if positions == "rotary":
        return ["token"] + [f"L{l + 1}H{h + 1}" for l in range(layer) for h in range(n_head)] + [f"MLP{l + 1}" for l in range(layer)]
    return (["token", "position"] + [f"L{l + 1}H{h + 1}" for l in range(layer) for h in range(n_head)]
            + [f"MLP{l + 1}" for l in range(layer)] + ["biases"])


# Per token position: the model's top next-token predictions.
PREDICTION_FIELDS = ("id", "text", "display", "prob")
TOP_K_PREDICTIONS = 5

# Metadata keys, snake -> camel.
META_FIELDS: dict[str, str] = {
    "model": "model",
    "hf_name": "hfName",
    "revision": "revision",
    "architecture": "architecture",
    "n_layer": "nLayer",
    "n_head": "nHead",
    "n_kv_head": "nKvHead",
    "positions": "positions",
    "rope_theta": "ropeTheta",
    "width": "width",
    "head_dim": "headDim",
    "n_ctx": "nCtx",
    "vocab_size": "vocabSize",
    "n_params": "nParams",
    "tokenizer": "tokenizer",
    "library_versions": "libraryVersions",
    "schema_version": "schemaVersion",
    "precision": "precision",
}

TO_CAMEL: dict[str, str] = {
    a.snake: a.camel for a in HEAD_ACTIVATIONS + LAYER_ACTIVATIONS
} | META_FIELDS
TO_SNAKE: dict[str, str] = {c: s for s, c in TO_CAMEL.items()}

# Fields kept for the first paint of a figure; q, k, v, scores and out load with the Code view.
# The unrotated query and key stay with the Python side (figures that draw the rotation, notebooks):
# for a learned-position model they repeat q and k.
LIGHT_HEAD_FIELDS = ("weights",)
UNROTATED_FIELDS = ("qUnrotated", "kUnrotated")
HEAVY_HEAD_FIELDS = tuple(a.camel for a in HEAD_ACTIVATIONS if a.camel not in LIGHT_HEAD_FIELDS + UNROTATED_FIELDS)


def camel(name: str) -> str:
    """The JSON/JS name of a snake_case activation or metadata field."""
    return TO_CAMEL[name]


REVISION_DIGITS = 12  # how much of a revision (a commit, a weights hash) the pages show


LOCAL_PREFIX = "local-"  # a local copy's revision: local-<sha12 of its weights> (models.load_gpt2)


def short_revision(revision) -> str:
    """A revision as the pages show it: its first REVISION_DIGITS characters (after `local-`,
    which says what kind of revision it is and is kept whole)."""
    text = str(revision)
    prefix = LOCAL_PREFIX if text.startswith(LOCAL_PREFIX) else ""
    return prefix + text[len(prefix):][:REVISION_DIGITS]


def display_token(text: str) -> str:
    """How a token is shown: a leading space as '·', newlines and tabs made visible."""
    if text.startswith(" "):
        text = "·" + text[1:]
    return text.replace("\n", "↵").replace("\t", "⇥")


def spoken_token(text: str) -> str:
    """How a screen reader should hear a token: 'space her' for ' her'."""
    if text.startswith(" "):
        rest = text[1:]
        return f"space {rest}" if rest else "space"
    if text == "\n":
        return "newline"
    return text
