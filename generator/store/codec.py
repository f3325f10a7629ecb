"""The encoded arrays of a trace file: int16 × scale in base64 inside the JSON, and their exact inverse.

traces/README.md ("Encoded arrays") is the description. Per query head the file stores q,
scores, weights and out (and qUnrotated for a rotary model), per key/value head k and v (and
kUnrotated for a rotary model), each as {"int16": base64 of little-endian int16, "scale": s,
"shape": [rows, cols]}; value = int16 × scale. Weights have "tril": true (only the cells on and
below the diagonal, row by row) and the fixed scale WEIGHTS_SCALE. scaledMasked (= scores / √headDim, null above the
diagonal) and attnConcat (= the heads' out side by side) are not stored: the loader restores
them. A head's out is the model's own c_proj input, attnConcat's h-th block of columns.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from .. import schema
from .files import BEYOND, DamagedFile, StoreError, plausible_array

INT16_MAX = 32767


SCALE_DIGITS = 2  # significant digits of an encoded array's scale, so that int16 × scale is a short decimal


WEIGHTS_SCALE = 4e-5  # weights ∈ [0, 1] as int16 0..25000: 0, 1 and every multiple of 0.00004 exact, error ≤ 2e-5


def encode_scale(max_abs: float) -> float:
    """The smallest number of SCALE_DIGITS significant digits ≥ max_abs / 32767 (1.0 for an
    all-zero array): int16 × scale then covers ±max_abs and is a short decimal."""
    if not math.isfinite(max_abs):
        raise ValueError("non-finite float in a trace")
    if max_abs == 0:
        return 1.0
    s0 = max_abs / INT16_MAX
    e = math.floor(math.log10(s0)) - (SCALE_DIGITS - 1)
    m = math.ceil(s0 / 10.0**e - 1e-9)
    scale = float(f"{m}e{e}")
    while scale * INT16_MAX < max_abs:  # float rounding of the decimal; at most once
        m += 1
        scale = float(f"{m}e{e}")
    return scale


def scale_decimals(scale: float) -> int:
    """Decimals that int16 × scale needs when scale has SCALE_DIGITS significant digits."""
    return max(0, (SCALE_DIGITS - 1) - math.floor(math.log10(scale)))


def encode_array(a, tril: bool = False, scale: float | None = None) -> dict:
    """{"int16", "scale", "shape"[, "tril"]} of a 2-D float array; |int16 × scale − a| ≤ scale / 2.
    `scale` defaults to :func:`encode_scale` of the array's largest |value|."""
    import base64

    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"an encoded array is 2-D, not of shape {a.shape}")
    flat = a[np.tril_indices(a.shape[0], m=a.shape[1])] if tril else a.ravel()
    mx = float(np.abs(flat).max()) if flat.size else 0.0
    if scale is None:
        scale = encode_scale(mx)
    elif not mx <= scale * INT16_MAX:
        raise ValueError(f"an array of max |x| = {mx:.3g} does not fit int16 × {scale}")
    ints = np.clip(np.rint(flat / scale), -INT16_MAX, INT16_MAX).astype("<i2")
    out = {"int16": base64.b64encode(ints.tobytes()).decode("ascii"), "scale": scale, "shape": [int(n) for n in a.shape]}
    if tril:
        out["tril"] = True
    return out


def on_weights_grid(a):
    """Weights as a trace file stores and its loader decodes them: int16 × WEIGHTS_SCALE, rounded to
    the scale's decimals (the identity on a loaded trace's weights). A page shows and ships exactly
    these, so that each 2-decimal number it prints is the stored weight's own rounding, not a
    rounding of a rounding (0.86504 is 0.87; a 4-decimal 0.8650 would print 0.86)."""
    import numpy as np

    return np.round(np.rint(np.asarray(a, dtype=np.float64) / WEIGHTS_SCALE) * WEIGHTS_SCALE, scale_decimals(WEIGHTS_SCALE)) + 0.0


def _masked_to_zero(rows) -> list:
    return [[0.0 if x is None else x for x in row] for row in rows]


def kv_layout(meta: dict) -> tuple[int, int, str]:
    """(nHead, nKvHead, positions) of a trace's meta; ValueError when they do not fit together."""
    H = int(meta["nHead"])
    G = int(meta.get("nKvHead") or H)
    positions = meta.get("positions", "learned")
    if G <= 0 or H % G or positions not in schema.POSITIONS:
        raise ValueError(f"nHead {H}, nKvHead {G}, positions {positions!r}")
    return H, G, positions


def group_of(h: int, H: int, G: int) -> int:
    """The key/value head query head h reads (transformers' repeat_kv order: consecutive heads share)."""
    return h // (H // G)


def _kv_heads(heads: list, H: int, G: int) -> list[dict]:
    """Per key/value head its k, v and kUnrotated, from the first query head of its group (a
    document whose layers carry no kvHeads: every head repeats its group's)."""
    return [{f: heads[g * (H // G)][f] for f in ("k", "v", "kUnrotated") if f in heads[g * (H // G)]} for g in range(G)]


def encode_layer(layer: dict, meta: dict, l: int) -> dict:
    """One layer as the file stores it (see above). Refuses (StoreError) a layer whose dropped
    fields are not what the loader would restore: scaledMasked ≠ scores/√d, out ≠ attnConcat's
    block, weight above the diagonal, a head whose k or v is not its group's, an unrotated q or k
    that differs from q or k in a learned-position model."""
    import numpy as np

    d = int(meta["headDim"])
    H, G, positions = kv_layout(meta)
    heads = layer["heads"]
    kv_heads = layer.get("kvHeads") or _kv_heads(heads, H, G)
    if len(kv_heads) != G:
        raise StoreError(f"layer {l}: {len(kv_heads)} key/value heads, meta says nKvHead {G}")
    concat = np.asarray(layer[schema.camel("attn_concat")], dtype=np.float64)  # (token, width)
    T = concat.shape[0]
    below = np.tril(np.ones((T, T), dtype=bool))  # (query, key)
    encoded = []
    for h, head in enumerate(heads):
        where = f"layer {l} head {h}"
        g = group_of(h, H, G)
        if head.get("kvHead", g) != g:
            raise StoreError(f"{where}: kvHead is {head.get('kvHead')!r}, not {g} (head {h} of {H} sharing {G} key/value heads)")
        for f in ("k", "v") + (("kUnrotated",) if positions == "rotary" else ()):
            if f in head and not np.array_equal(np.asarray(head[f]), np.asarray(kv_heads[g][f])):
                raise StoreError(f"{where}: {f} is not key/value head {g}'s, which the loader gives it")
        if positions == "learned":
            for f, same in (("qUnrotated", "q"), ("kUnrotated", "k")):
                if f in head and not np.array_equal(np.asarray(head[f]), np.asarray(head[same])):
                    raise StoreError(f"{where}: {f} differs from {same} in a model without rotary positions")
        block = concat[:, h * d : (h + 1) * d]  # (token, head_dim): what the model fed its out-projection
        scores = np.asarray(head["scores"], dtype=np.float64)  # (query, key)
        sm = head["scaledMasked"]
        if any(x is not None for i, row in enumerate(sm) for x in row[i + 1 :]):
            raise StoreError(f"{where}: scaledMasked has a number above the diagonal (masked cells are None)")
        sm = np.asarray(_masked_to_zero(sm), dtype=np.float64)
        if np.abs(sm - scores * d**-0.5)[below].max() > 1e-5 * (1 + np.abs(scores).max()):
            raise StoreError(f"{where}: scaledMasked is not scores / √{d}, so it cannot be restored from scores")
        own_out = np.asarray(head["out"], dtype=np.float64)
        if own_out.shape != block.shape or np.abs(own_out - block).max() > 1e-4 * (1 + np.abs(block).max()):
            raise StoreError(f"{where}: out is not block {h} of attnConcat, so one cannot stand for the other")
        weights = np.asarray(head["weights"], dtype=np.float64)
        if np.triu(weights, 1).any():
            raise StoreError(f"{where}: weight above the diagonal (on a later token)")
        e = {
            "q": encode_array(head["q"]),
            "scores": encode_array(scores),
            "weights": encode_array(weights, tril=True, scale=WEIGHTS_SCALE),
            "out": encode_array(block),
        }
        if positions == "rotary":
            e["qUnrotated"] = encode_array(head["qUnrotated"])
        encoded.append(e)
    kv_encoded = [{f: encode_array(kv[f]) for f in schema.stored_kv_fields(positions)} for kv in kv_heads]
    assert all(tuple(e) == schema.stored_head_fields(positions) for e in encoded)
    return {"heads": encoded, "kvHeads": kv_encoded}


def decode_array(path: Path, where: str, obj, shape: tuple[int, int], tril: bool = False):
    """The float64 array an encoded object holds, checked: DamagedFile, one line, otherwise."""
    import base64
    import binascii

    import numpy as np

    if not isinstance(obj, dict) or not isinstance(obj.get("int16"), str):
        raise DamagedFile(path, f"{where} is not an encoded array {{int16, scale, shape}}")
    scale = obj.get("scale")
    if type(scale) not in (int, float) or not math.isfinite(scale) or scale < sys.float_info.min:
        raise DamagedFile(path, f"{where} has scale {str(scale)[:20]}, not a finite positive number of normal size")
    if obj.get("shape") != list(shape):
        raise DamagedFile(path, f"{where} has shape {str(obj.get('shape'))[:30]}, not {list(shape)}")
    if bool(obj.get("tril", False)) != tril:
        raise DamagedFile(path, f"{where} {'lacks' if tril else 'has'} \"tril\"")
    n = shape[0] * (shape[0] + 1) // 2 if tril else shape[0] * shape[1]
    try:
        raw = base64.b64decode(obj["int16"], validate=True)
    except (binascii.Error, ValueError):
        raise DamagedFile(path, f"{where} is not valid base64") from None
    if len(raw) != 2 * n:
        raise DamagedFile(path, f"{where} holds {len(raw) // 2} numbers, its shape needs {n}")
    flat = np.round(np.frombuffer(raw, dtype="<i2").astype(np.float64) * scale, scale_decimals(scale))
    if not plausible_array(flat):
        raise DamagedFile(path, f"{where} decodes to a number that is not finite or is {BEYOND}")
    if not tril:
        return flat.reshape(shape)
    full = np.zeros(shape, dtype=np.float64)
    full[np.tril_indices(shape[0], m=shape[1])] = flat
    return full


class DecodedTrace(dict):
    """A trace as the store decoded it: the plain document (nested lists, as check_trace and the
    figures read it), and beside it what the one read of the file gave, so that nothing reads or
    decodes the file again: `weights` (layer, head, query, key) float64, masked cells 0;
    `stored_layers`, the file's own encoded layers; `raw`, the file's bytes (set by the store).
    A copy made with dict() or {**trace} is a plain trace again, and weight_grid() rebuilds."""

    weights = None
    stored_layers = None
    raw: bytes | None = None


def weight_grid(trace: dict):
    """(layer, head, query, key) float64 weights of a trace, masked cells 0: the array decoded with
    the file when the store loaded it, else built from the document's nested lists."""
    import numpy as np

    w = getattr(trace, "weights", None)
    if w is not None:
        return w
    grid = [[[[0.0 if x is None else x for x in row] for row in h["weights"]] for h in layer["heads"]] for layer in trace["layers"]]
    return np.asarray(grid, dtype=np.float64)  # (layer, head, query, key)


def _decode_fields(path: Path, where: str, obj, fields: tuple[str, ...], T: int, d: int) -> dict:
    """The encoded arrays `fields` of one stored head or key/value head, decoded and checked."""
    if not isinstance(obj, dict) or set(obj) != set(fields):
        got = sorted(obj) if isinstance(obj, dict) else "not an object"
        raise DamagedFile(path, f"{where} holds {str(got)[:80]}, not {', '.join(fields)}")
    return {f: decode_array(path, f"{where} {f}", obj[f], (T, T) if f in ("scores", "weights") else (T, d), tril=f == "weights")
            for f in fields}


def decode(doc, path: Path):
    """The plain document of a schema-5 file: every encoded array as nested lists; per query head
    its group's k and v, kvHead, scaledMasked restored from scores (None above the diagonal), and
    qUnrotated / kUnrotated (q and k themselves for a learned-position model); per layer kvHeads
    and attnConcat from the heads' out; the causal block's arrays as numpy in their declared
    shapes. A document of another schema, or one too broken to decode, is returned as it is for
    :func:`check_trace` to name what is wrong; a broken encoded array is DamagedFile here."""
    import numpy as np

    if not isinstance(doc, dict) or doc.get("schemaVersion") != schema.SCHEMA_VERSION:
        return doc
    try:
        d = int(doc["meta"]["headDim"])
        H, G, positions = kv_layout(doc["meta"])
        T = len(doc["tokens"])
        layers = doc["layers"]
        if not isinstance(layers, list) or d <= 0 or T <= 0:
            return doc
    except (TypeError, KeyError, ValueError):
        return doc
    out_layers, weights = [], []  # weights: (layer, head, query, key)
    for l, layer in enumerate(layers):
        hs = layer.get("heads") if isinstance(layer, dict) else None
        kvs = layer.get("kvHeads") if isinstance(layer, dict) else None
        if not isinstance(hs, list) or len(hs) != H:
            return doc  # check_trace names it
        if not isinstance(kvs, list) or len(kvs) != G:
            raise DamagedFile(path, f"layer {l} has {len(kvs) if isinstance(kvs, list) else 'no'} kvHeads, its meta says nKvHead {G}")
        if schema.camel("attn_concat") in layer:
            raise DamagedFile(path, f"layer {l} stores attnConcat, which schema {schema.SCHEMA_VERSION} restores from the heads' out")
        kv_arr = [_decode_fields(path, f"layer {l} kvHead {g}", kv, schema.stored_kv_fields(positions), T, d) for g, kv in enumerate(kvs)]
        kv_plain = [{f: a.tolist() for f, a in kv.items()} for kv in kv_arr]
        if positions == "learned":
            for kv in kv_plain:
                kv["kUnrotated"] = kv["k"]
        heads, outs = [], []
        for h, head in enumerate(hs):
            arr = _decode_fields(path, f"layer {l} head {h}", head, schema.stored_head_fields(positions), T, d)
            g = group_of(h, H, G)
            sdec = scale_decimals(head["scores"]["scale"]) + 1
            sm = np.round(arr["scores"] * d**-0.5, sdec).tolist()
            for i, row in enumerate(sm):
                row[i + 1 :] = [None] * (T - i - 1)
            plain = {f: a.tolist() for f, a in arr.items()} | {"scaledMasked": sm} | kv_plain[g]
            if positions == "learned":
                plain["qUnrotated"] = plain["q"]
            heads.append({a.camel: plain[a.camel] for a in schema.HEAD_ACTIVATIONS} | {"kvHead": g})
            outs.append(arr["out"])
            weights.append(arr["weights"])
        out_layers.append({"heads": heads, "kvHeads": kv_plain, schema.camel("attn_concat"): np.concatenate(outs, axis=1).tolist()})
    if "causal" not in doc:
        raise DamagedFile(path, f"has no causal block, which schema {schema.SCHEMA_VERSION} traces hold")
    decoded = DecodedTrace({**doc, "layers": out_layers, "causal": decode_causal(path, doc["causal"], doc["meta"], T)})
    decoded.weights = np.stack(weights).reshape(len(layers), H, T, T)  # (layer, head, query, key)
    decoded.stored_layers = layers
    return decoded


# ---------------------------------------------------------------- the causal block (schema 4)


def _causal_shape(names: tuple[str, ...], dims: dict[str, int]) -> tuple[int, ...]:
    return tuple(dims[n] for n in names)


def causal_dims(block: dict, meta: dict, n_tokens: int) -> dict[str, int]:
    """The axis sizes of a causal block from its own lists and the trace's meta; ValueError,
    TypeError or KeyError when they are not there."""
    targets, ablations = block["targets"], block["ablations"]
    if not isinstance(targets, list) or not isinstance(ablations, list):
        raise TypeError("targets and ablations are lists")
    return schema.causal_dims(int(meta["nLayer"]), int(meta["nHead"]), n_tokens, len(targets), len(ablations))


def encode_causal(block: dict, meta: dict, n_tokens: int) -> dict:
    """The causal block as the file stores it: float arrays int16-encoded, rows = every axis but
    the last flattened; id arrays as nested integer lists. Refuses (StoreError) an array whose
    shape is not its declared one."""
    import numpy as np

    dims = causal_dims(block, meta, n_tokens)
    out = {f: block[f] for f in ("targets", "ablations", "parts", "meanReference")}
    out["tokenTexts"] = {str(k): block["tokenTexts"][k] for k in sorted(block["tokenTexts"], key=int)}
    for a in schema.CAUSAL_ID_ARRAYS + schema.CAUSAL_ARRAYS:
        arr = np.asarray(block[a.camel])
        shape = _causal_shape(a.shape, dims)
        if arr.shape != shape:
            raise StoreError(f"causal {a.camel} has shape {arr.shape}, not {shape} ({', '.join(a.shape)})")
        if a in schema.CAUSAL_ID_ARRAYS:
            out[a.camel] = arr.astype(int).tolist()
        else:
            out[a.camel] = encode_array(arr.reshape(-1, shape[-1]))
    assert tuple(out) == schema.CAUSAL_FIELDS
    return out


def decode_causal(path: Path, obj, meta: dict, n_tokens: int) -> dict:
    """The causal block with every array as numpy, in its declared shape; DamagedFile (one line)
    when anything is missing or of another shape."""
    import numpy as np

    if not isinstance(obj, dict) or set(obj) != set(schema.CAUSAL_FIELDS):
        got = sorted(obj)[:12] if isinstance(obj, dict) else "not an object"
        raise DamagedFile(path, f"causal holds {str(got)[:100]}, not {', '.join(schema.CAUSAL_FIELDS)}")
    try:
        dims = causal_dims(obj, meta, n_tokens)
    except (TypeError, KeyError, ValueError):
        raise DamagedFile(path, "causal has no usable targets and ablations lists") from None
    out = dict(obj)
    for a in schema.CAUSAL_ID_ARRAYS:
        shape = _causal_shape(a.shape, dims)
        try:
            arr = np.asarray(obj[a.camel])
            ok = arr.shape == shape and arr.dtype.kind == "i"
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise DamagedFile(path, f"causal {a.camel} is not a {' × '.join(map(str, shape))} array of token ids")
        out[a.camel] = arr.astype(np.int64)
    for a in schema.CAUSAL_ARRAYS:
        shape = _causal_shape(a.shape, dims)
        rows = int(np.prod(shape[:-1]))
        out[a.camel] = decode_array(path, f"causal {a.camel}", obj[a.camel], (rows, shape[-1])).reshape(shape)
    # Direct logit attribution is a split of each logit: its stored parts must still add up to it,
    # within what int16 × scale can lose on each of them.
    slack = dims["part"] * obj["dla"]["scale"] / 2 + obj["cleanLogit"]["scale"] / 2 + 1e-4
    worst = float(np.abs(out["dla"].sum(axis=0) - out["cleanLogit"]).max())
    if worst > slack:
        raise DamagedFile(path, f"causal dla does not add up to cleanLogit (off by {worst:.3g}, more than {slack:.3g})")
    return out
