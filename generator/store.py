"""Trace store stage: JSON trace files on disk, one folder per model, with an index.

This module must not import torch or transformers: the site build imports it.

Layout (traces/README.md is the full description)::

    traces/<model>/<key>.json   one trace: compact, deterministic JSON, newline-terminated
    traces/<model>/index.json   {"schemaVersion", "model", "meta", "traces": [{text, ids?, file, nTokens}]}

``key`` is the first 12 hex digits of the sha256 of the JSON text of
``[model, revision, schemaVersion, text, ids or null]``, so a new checkpoint (tiny) or a new
schema gives new files. Every write is atomic (temp file in the same folder, fsync, os.replace),
the trace before the index, so a killed run leaves a store whose index lists only files that
exist; stray temp files are ignored by the loader and removed by :meth:`TraceStore.prune`.

One writer at a time per store; any number of readers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import schema

INDEX_NAME = "index.json"
TMP_SUFFIX = ".tmp"
KEY_LENGTH = 12
KEY_RE = re.compile(r"^[0-9a-f]{%d}$" % KEY_LENGTH)
TRACE_FILE_RE = re.compile(r"^[0-9a-f]{%d}\.json$" % KEY_LENGTH)  # other files (heads.json) are not traces
MODEL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")  # a folder name under traces/, never a path
MAX_TRACE_BYTES = 20 * 1024 * 1024  # a trace over this is refused: it would go into every page's download
MAX_INDEX_BYTES = 5 * 1024 * 1024
ROW_SUM_TOL = 1e-3  # stored weights are int16 × scale (error ≤ 1.6e-5 each); a row of them sums to 1 within this
INT16_MAX = 32767
SCALE_DIGITS = 2  # significant digits of an encoded array's scale, so that int16 × scale is a short decimal
WEIGHTS_SCALE = 4e-5  # weights ∈ [0, 1] as int16 0..25000: 0, 1 and every multiple of 0.00004 exact, error ≤ 2e-5
REPAIR_FIX = "run `make traces`: it retraces what it can and rebuilds the index"

_DOC_ORDER = ("schemaVersion", "key", "model", "text", "ids", "meta", "tokens", "layers", "predictions")
_TOKEN_ORDER = ("id", "text", "display", "spoken")
_ENTRY_ORDER = ("text", "ids", "file", "nTokens")


class StoreError(Exception):
    pass


class DamagedFile(StoreError):
    """A file of the store that cannot be trusted. ``str()`` is one line: path, problem, fix."""

    def __init__(self, path: Path | str, problem: str, fix: str = REPAIR_FIX):
        self.path, self.problem, self.fix = Path(path), problem, fix
        super().__init__(f"{path}: {problem}. Fix: {fix}")


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(path: Path, limit: int, fix: str = REPAIR_FIX):
    """The JSON value in `path`, or DamagedFile: over `limit` bytes, not UTF-8, not JSON (a
    truncated file), or holding NaN/Infinity."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise DamagedFile(path, f"cannot be read ({e.strerror or e})", fix) from None
    if size > limit:
        raise DamagedFile(path, f"is {size:,} bytes, over the limit of {limit:,}", fix)
    try:
        text = path.read_bytes().decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise DamagedFile(path, "is not UTF-8 text", fix) from None
    except ValueError as e:
        msg = str(e).splitlines()[0] if str(e) else "not JSON"
        raise DamagedFile(path, f"is not valid JSON, perhaps cut short ({msg[:120]})", fix) from None


def check_model_name(model: str) -> str:
    if not isinstance(model, str) or not MODEL_NAME_RE.match(model):
        raise StoreError(f"{model!r} is not a model name (lowercase letters, digits and '-', at most 32)")
    return model


def _grid(path: Path, name: str, rows, shape: tuple[int, int], triangle: bool = False):
    """A float64 array of `rows` with exactly `shape`; in a triangle grid, cells above the
    diagonal must be null (None) and come back as 0."""
    import numpy as np

    if triangle:
        if not isinstance(rows, list) or len(rows) != shape[0]:
            raise DamagedFile(path, f"{name} has {len(rows) if isinstance(rows, list) else 'no'} rows, not {shape[0]}")
        clean = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != shape[1] or any(x is not None for x in row[i + 1 :]):
                raise DamagedFile(path, f"{name} row {i} is not {shape[1]} cells with nulls above the diagonal")
            clean.append(row[: i + 1] + [0.0] * (shape[1] - i - 1))
        rows = clean
    try:
        a = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise DamagedFile(path, f"{name} is not a grid of numbers") from None
    if a.shape != shape:
        raise DamagedFile(path, f"{name} has shape {a.shape}, not {shape}")
    if not np.isfinite(a).all():
        raise DamagedFile(path, f"{name} holds a value that is not a finite number")
    return a


def check_trace(doc, path: Path, model: str, text: str, ids=None) -> dict:
    """`doc`, read from `path`, if it is the trace of (model, text, ids) that the current schema
    describes: key = file name, shapes consistent with its meta, weights rows that are
    distributions. Otherwise DamagedFile, one line."""
    import numpy as np

    if not isinstance(doc, dict):
        raise DamagedFile(path, "is not a trace (not a JSON object)")
    if doc.get("schemaVersion") != schema.SCHEMA_VERSION:
        raise DamagedFile(path, f"has schemaVersion {doc.get('schemaVersion')!r}, not {schema.SCHEMA_VERSION}")
    key = doc.get("key")
    if not isinstance(key, str) or not KEY_RE.match(key) or f"{key}.json" != path.name:
        raise DamagedFile(path, f"names its key {str(key)[:40]!r}, which is not its file name")
    if doc.get("model") != model or doc.get("text") != text or _ids_key(doc.get("ids")) != _ids_key(ids):
        raise DamagedFile(path, f"holds the trace of {str(doc.get('text'))[:60]!r} ({doc.get('model')!r}), "
                                f"not of {text[:60]!r} ({model!r}) that the index points it to")
    meta = doc.get("meta")
    try:
        L, H, d = (int(meta[k]) for k in ("nLayer", "nHead", "headDim"))
    except (TypeError, KeyError, ValueError):
        raise DamagedFile(path, "has no usable meta (nLayer, nHead, headDim)") from None
    tokens = doc.get("tokens")
    if not isinstance(tokens, list) or not tokens or not all(
        isinstance(t, dict) and isinstance(t.get("id"), int) and isinstance(t.get("text"), str) and isinstance(t.get("display"), str)
        for t in tokens
    ):
        raise DamagedFile(path, "has no list of tokens with id, text and display")
    T = len(tokens)
    if ids is not None and [t["id"] for t in tokens] != [int(i) for i in ids]:
        raise DamagedFile(path, "holds token ids other than the ones it was asked for")
    layers = doc.get("layers")
    if not isinstance(layers, list) or len(layers) != L:
        raise DamagedFile(path, f"has {len(layers) if isinstance(layers, list) else 'no'} layers, its meta says {L}")
    for l, layer in enumerate(layers):
        hs = layer.get("heads") if isinstance(layer, dict) else None
        if not isinstance(hs, list) or len(hs) != H:
            raise DamagedFile(path, f"layer {l} has {len(hs) if isinstance(hs, list) else 'no'} heads, its meta says {H}")
        _grid(path, f"layer {l} attnConcat", layer.get(schema.camel("attn_concat")), (T, H * d))
        for h, head in enumerate(hs):
            where = f"layer {l} head {h}"
            if not isinstance(head, dict):
                raise DamagedFile(path, f"{where} is not an object")
            for a in schema.HEAD_ACTIVATIONS:
                square = a.shape == ("query", "key")
                grid = _grid(path, f"{where} {a.camel}", head.get(a.camel), (T, T) if square else (T, d),
                             triangle=a.camel == "scaledMasked")
                if a.camel == "weights":
                    if np.triu(grid, 1).any():
                        raise DamagedFile(path, f"{where} has weight on a later token, which the mask forbids")
                    if grid.min() < -1e-9 or grid.max() > 1 + 1e-9:
                        raise DamagedFile(path, f"{where} has a weight outside [0, 1] ({grid.min():.3g} to {grid.max():.3g})")
                    worst = float(np.abs(grid.sum(axis=1) - 1).max())
                    if worst > ROW_SUM_TOL:
                        raise DamagedFile(path, f"{where} has a weights row that sums to 1 ± {worst:.3g}, not a share of attention")
    preds = doc.get("predictions")
    if not isinstance(preds, list) or len(preds) != T:
        raise DamagedFile(path, f"has {len(preds) if isinstance(preds, list) else 'no'} prediction rows for {T} tokens")
    return doc


def _check_index(index, path: Path, model: str) -> dict:
    def bad(problem: str):
        raise DamagedFile(path, problem)

    if not isinstance(index, dict):
        bad("is not an index (not a JSON object)")
    if index.get("model") != model:
        bad(f"is the index of {str(index.get('model'))[:40]!r}, in the folder of {model!r}")
    if not isinstance(index.get("meta"), dict) or not isinstance(index["meta"].get("revision"), str):
        bad("has no meta with a revision")
    entries = index.get("traces")
    if not isinstance(entries, list):
        bad("has no list of traces")
    for n, e in enumerate(entries):
        ok = (
            isinstance(e, dict)
            and isinstance(e.get("text"), str)
            and isinstance(e.get("file"), str)
            and TRACE_FILE_RE.match(e["file"])
            and (e.get("ids") is None or (isinstance(e["ids"], list) and all(type(i) is int for i in e["ids"])))
        )
        if not ok:
            bad(f"entry {n} is not {{text, ids?, file: <12 hex digits>.json}}")
    return index


class MissingTrace(StoreError, LookupError):
    def __init__(self, model: str, text: str, ids: tuple[int, ...] | None = None, root: Path | None = None):
        self.model, self.text, self.ids, self.root = model, text, ids, root
        super().__init__(model, text)

    def __str__(self) -> str:
        what = f"{self.text!r}" + (f" (ids {list(self.ids)[:8]}…)" if self.ids else "")
        where = f" in {self.root}" if self.root else ""
        return f"no trace of {what} for model {self.model!r}{where}; run `python -m generator traces` (make traces)"


@functools.total_ordering
@dataclass(frozen=True, eq=True)
class TraceRequest:
    """One sentence to trace for one model; `ids` for scoring texts given as token ids."""

    model: str
    text: str
    ids: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.ids is not None and not isinstance(self.ids, tuple):
            object.__setattr__(self, "ids", tuple(int(i) for i in self.ids))

    def _order(self):
        return (self.model, self.text, self.ids is not None, self.ids or ())

    def __lt__(self, other):
        if not isinstance(other, TraceRequest):
            return NotImplemented
        return self._order() < other._order()


# ---------------------------------------------------------------- keys, rounding, serialisation


def trace_key(model: str, revision: str, schema_version: int, text: str, ids=None) -> str:
    payload = [model, revision, int(schema_version), text, None if ids is None else [int(i) for i in ids]]
    blob = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:KEY_LENGTH]


def round_sig(x: float, digits: int = schema.SIGNIFICANT_DIGITS) -> float:
    """x to `digits` significant digits, as float(f"{x:.{digits}g}"); -0.0 becomes 0.0."""
    if not math.isfinite(x):
        raise ValueError(f"non-finite float {x!r} in a trace (masked cells must be None)")
    return float(f"{x:.{digits}g}") + 0.0


def round_floats(obj, digits: int = schema.SIGNIFICANT_DIGITS):
    """A copy of a JSON-like value with every float rounded by :func:`round_sig`."""
    fmt = f".{digits}g"
    if isinstance(obj, float):
        return round_sig(obj, digits)
    if isinstance(obj, list):
        if obj and all(type(x) is float for x in obj):  # the hot path: a row of floats
            try:
                out = [float(format(x, fmt)) + 0.0 for x in obj]
            except (ValueError, OverflowError):
                out = [round_sig(x, digits) for x in obj]
            if any(math.isinf(x) or math.isnan(x) for x in out):
                raise ValueError("non-finite float in a trace (masked cells must be None)")
            return out
        return [round_floats(x, digits) for x in obj]
    if isinstance(obj, dict):
        return {k: round_floats(v, digits) for k, v in obj.items()}
    return obj


# ---------------------------------------------------------------- encoded arrays (schema 3)
#
# traces/README.md ("Encoded arrays") is the description. Per head the file stores q, k, v,
# scores, weights and out, each as {"int16": base64 of little-endian int16, "scale": s,
# "shape": [rows, cols]}; value = int16 × scale. Weights have "tril": true (only the cells on and
# below the diagonal, row by row) and the fixed scale WEIGHTS_SCALE. scaledMasked (= scores / √headDim, null above the
# diagonal) and attnConcat (= the heads' out side by side) are not stored: the loader restores
# them. A head's out is the model's own c_proj input, attnConcat's h-th block of columns.


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


def _masked_to_zero(rows) -> list:
    return [[0.0 if x is None else x for x in row] for row in rows]


def _encode_layer(layer: dict, d: int, l: int) -> dict:
    """One layer as the file stores it (see above). Refuses (StoreError) a layer whose dropped
    fields are not what the loader would restore: scaledMasked ≠ scores/√d, out ≠ attnConcat's
    block, weight above the diagonal."""
    import numpy as np

    heads = layer["heads"]
    concat = np.asarray(layer[schema.camel("attn_concat")], dtype=np.float64)  # (token, width)
    T = concat.shape[0]
    below = np.tril(np.ones((T, T), dtype=bool))  # (query, key)
    encoded = []
    for h, head in enumerate(heads):
        where = f"layer {l} head {h}"
        block = concat[:, h * d : (h + 1) * d]  # (token, head_dim): what the model fed c_proj
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
        encoded.append({
            "q": encode_array(head["q"]),
            "k": encode_array(head["k"]),
            "v": encode_array(head["v"]),
            "scores": encode_array(scores),
            "weights": encode_array(weights, tril=True, scale=WEIGHTS_SCALE),
            "out": encode_array(block),
        })
    assert all(tuple(e) == schema.STORED_HEAD_FIELDS for e in encoded)
    return {"heads": encoded}


def _decode_array(path: Path, where: str, obj, shape: tuple[int, int], tril: bool = False):
    """The float64 array an encoded object holds, checked: DamagedFile, one line, otherwise."""
    import base64
    import binascii

    import numpy as np

    if not isinstance(obj, dict) or not isinstance(obj.get("int16"), str):
        raise DamagedFile(path, f"{where} is not an encoded array {{int16, scale, shape}}")
    scale = obj.get("scale")
    if type(scale) not in (int, float) or not math.isfinite(scale) or scale <= 0:
        raise DamagedFile(path, f"{where} has scale {str(scale)[:20]}, not a finite positive number")
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
    if not tril:
        return flat.reshape(shape)
    full = np.zeros(shape, dtype=np.float64)
    full[np.tril_indices(shape[0], m=shape[1])] = flat
    return full


def decode(doc, path: Path):
    """The plain document of a schema-3 file: every encoded array as nested lists, scaledMasked
    restored from scores (None above the diagonal), attnConcat from the heads' out. A document
    of another schema, or one too broken to decode, is returned as it is for :func:`check_trace`
    to name what is wrong; a broken encoded array is DamagedFile here."""
    import numpy as np

    if not isinstance(doc, dict) or doc.get("schemaVersion") != schema.SCHEMA_VERSION:
        return doc
    try:
        H, d = int(doc["meta"]["nHead"]), int(doc["meta"]["headDim"])
        T = len(doc["tokens"])
        layers = doc["layers"]
        if not isinstance(layers, list) or d <= 0 or T <= 0:
            return doc
    except (TypeError, KeyError, ValueError):
        return doc
    out_layers = []
    for l, layer in enumerate(layers):
        hs = layer.get("heads") if isinstance(layer, dict) else None
        if not isinstance(hs, list) or len(hs) != H:
            return doc  # check_trace names it
        if schema.camel("attn_concat") in layer:
            raise DamagedFile(path, f"layer {l} stores attnConcat, which schema {schema.SCHEMA_VERSION} restores from the heads' out")
        heads, outs = [], []
        for h, head in enumerate(hs):
            where = f"layer {l} head {h}"
            if not isinstance(head, dict) or set(head) != set(schema.STORED_HEAD_FIELDS):
                got = sorted(head) if isinstance(head, dict) else "not an object"
                raise DamagedFile(path, f"{where} holds {str(got)[:80]}, not {', '.join(schema.STORED_HEAD_FIELDS)}")
            arr = {}
            for f in schema.STORED_HEAD_FIELDS:
                square = f in ("scores", "weights")
                arr[f] = _decode_array(path, f"{where} {f}", head[f], (T, T) if square else (T, d), tril=f == "weights")
            sdec = scale_decimals(head["scores"]["scale"]) + 1
            sm = np.round(arr["scores"] * d**-0.5, sdec).tolist()
            for i, row in enumerate(sm):
                row[i + 1 :] = [None] * (T - i - 1)
            plain = {a.camel: (sm if a.camel == "scaledMasked" else arr[a.camel].tolist()) for a in schema.HEAD_ACTIVATIONS}
            heads.append(plain)
            outs.append(arr["out"])
        out_layers.append({"heads": heads, schema.camel("attn_concat"): np.concatenate(outs, axis=1).tolist()})
    return {**doc, "layers": out_layers}



def _ordered(d: dict, order) -> dict:
    """d with the keys of `order` first (in that order), then the rest sorted."""
    out = {k: d[k] for k in order if k in d}
    out.update({k: d[k] for k in sorted(d) if k not in out})
    return out


def _canonical_meta(meta: dict) -> dict:
    order = list(schema.META_FIELDS.values()) + ["standIn"]
    out = _ordered(meta, order)
    for k, v in out.items():
        if isinstance(v, dict):
            out[k] = dict(sorted(v.items()))
    return out


def canonical(doc: dict, key: str) -> dict:
    """The document as the file holds it: fixed key order, its key, the big arrays encoded
    (:func:`_encode_layer`), every other float rounded to 5 significant digits."""
    out = dict(doc)
    out["key"] = key
    out["meta"] = _canonical_meta(doc["meta"])
    out["tokens"] = [_ordered(t, _TOKEN_ORDER) for t in doc["tokens"]]
    d = int(doc["meta"]["headDim"])
    out["layers"] = [_encode_layer(layer, d, l) for l, layer in enumerate(doc["layers"])]
    out["predictions"] = [[_ordered(p, schema.PREDICTION_FIELDS) for p in row] for row in doc["predictions"]]
    return round_floats(_ordered(out, _DOC_ORDER))


def dumps(obj) -> bytes:
    """Compact, deterministic JSON, UTF-8, newline-terminated."""
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _ids_key(ids) -> tuple[int, ...] | None:
    return None if ids is None else tuple(int(i) for i in ids)


def _entry_sort(e: dict):
    return (e["text"], "ids" in e, e.get("ids") or [])


# ---------------------------------------------------------------- the store


class TraceStore:
    """Traces under `root` (normally the repository's traces/)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self._index_cache: dict[str, tuple[tuple[int, int], dict]] = {}

    # ---- reading

    def index_path(self, model: str) -> Path:
        return self.root / check_model_name(model) / INDEX_NAME

    def _index(self, model: str) -> dict | None:
        """The model's index, checked (DamagedFile when it cannot be trusted), or None."""
        p = self.index_path(model)
        try:
            st = p.stat()
        except FileNotFoundError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        hit = self._index_cache.get(model)
        if hit and hit[0] == stamp:
            return hit[1]
        index = read_json(p, MAX_INDEX_BYTES)
        if isinstance(index, dict) and index.get("schemaVersion") != schema.SCHEMA_VERSION:
            return {"schemaVersion": index.get("schemaVersion")}  # an old store: treated as absent
        index = _check_index(index, p, model)
        index["_byKey"] = {(e["text"], _ids_key(e.get("ids"))): e for e in index.get("traces", [])}
        self._index_cache[model] = (stamp, index)
        return index

    def _current_index(self, model: str) -> dict | None:
        index = self._index(model)
        if index is None or index.get("schemaVersion") != schema.SCHEMA_VERSION:
            return None
        return index

    def models(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if MODEL_NAME_RE.match(p.name) and (p / INDEX_NAME).is_file())

    def model_meta(self, model: str) -> dict | None:
        index = self._current_index(model)
        return None if index is None else dict(index["meta"])

    def entries(self, model: str) -> list[dict]:
        index = self._current_index(model)
        return [] if index is None else [dict(e) for e in index["traces"]]

    def lookup(self, model: str, text: str, ids=None, revision: str | None = None) -> Path | None:
        """The file of the indexed trace of (model, text, ids), current schema only; with
        `revision`, only if that trace was made from that revision."""
        index = self._current_index(model)
        if index is None:
            return None
        entry = index["_byKey"].get((text, _ids_key(ids)))
        if entry is None:
            return None
        if revision is not None and entry["file"] != trace_key(model, revision, schema.SCHEMA_VERSION, text, ids) + ".json":
            return None
        path = self.root / model / entry["file"]
        return path if path.is_file() else None

    def has(self, model: str, text: str, ids=None, revision: str | None = None) -> bool:
        return self.lookup(model, text, ids, revision) is not None

    def load(self, model: str, text: str, ids=None) -> dict:
        """The checked trace (:func:`check_trace`); MissingTrace or DamagedFile otherwise."""
        path = self.lookup(model, text, ids)
        if path is None:
            raise MissingTrace(model, text, _ids_key(ids), self.root)
        return check_trace(decode(read_json(path, MAX_TRACE_BYTES), path), path, model, text, ids)

    def usable(self, model: str, text: str, ids=None, revision: str | None = None) -> bool:
        """Whether the trace is there, of `revision`, and loads and checks; a damaged one is
        False (so `make traces` retraces it)."""
        if not self.has(model, text, ids, revision):
            return False
        try:
            self.load(model, text, ids)
        except DamagedFile:
            return False
        return True

    def rebuild_index(self, model: str) -> int:
        """Rewrite the model's index from the trace files that read and check, newest revision
        first; returns how many it lists. For a damaged index.json."""
        folder = self.root / check_model_name(model)
        self.index_path(model).unlink(missing_ok=True)
        self._index_cache.pop(model, None)
        found = []
        for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if not TRACE_FILE_RE.match(p.name):
                continue
            try:
                doc = decode(read_json(p, MAX_TRACE_BYTES), p)
                doc = check_trace(doc, p, model, doc.get("text") if isinstance(doc, dict) else "", doc.get("ids") if isinstance(doc, dict) else None)
                key = trace_key(model, doc["meta"]["revision"], schema.SCHEMA_VERSION, doc["text"], doc.get("ids"))
            except (DamagedFile, KeyError, TypeError):
                continue
            if f"{key}.json" == p.name:
                found.append((p.stat().st_mtime_ns, doc, p.name))
        if not found:
            return 0
        revision = max(found, key=lambda f: f[0])[1]["meta"]["revision"]
        for _, doc, name in sorted(found, key=lambda f: f[2]):
            if doc["meta"]["revision"] == revision:
                self._add_to_index(doc, name)
        return len(self.entries(model))

    def load_request(self, request: TraceRequest) -> dict:
        return self.load(request.model, request.text, request.ids)

    # ---- writing

    def encode(self, doc: dict) -> tuple[str, bytes]:
        """(key, file bytes) of a trace document as :func:`generator.tracing.trace` returns it."""
        meta = doc["meta"]
        key = trace_key(doc["model"], meta["revision"], doc["schemaVersion"], doc["text"], doc.get("ids"))
        return key, dumps(canonical(doc, key))

    def write(self, doc: dict) -> Path:
        """Write one trace, then the model's index. Returns the trace's path."""
        model = check_model_name(doc["model"])
        if doc.get("schemaVersion") != schema.SCHEMA_VERSION:
            raise StoreError(f"trace has schemaVersion {doc.get('schemaVersion')}, store writes {schema.SCHEMA_VERSION}")
        if doc["meta"].get("model") != model:
            raise StoreError(f"trace of model {model!r} carries meta of {doc['meta'].get('model')!r}")
        key, data = self.encode(doc)
        path = self.root / model / f"{key}.json"
        atomic_write(path, data)
        self._add_to_index(doc, path.name)
        return path

    def _add_to_index(self, doc: dict, file: str) -> None:
        model, meta = doc["model"], _canonical_meta(doc["meta"])
        revision = meta["revision"]
        old = self._index(model)
        entries = []
        if old is not None and old.get("schemaVersion") == schema.SCHEMA_VERSION:
            for e in old.get("traces", []):
                # keep only entries made from this revision whose files still exist
                want = trace_key(model, revision, schema.SCHEMA_VERSION, e["text"], e.get("ids")) + ".json"
                if e["file"] == want and (self.root / model / e["file"]).is_file():
                    entries.append({k: e[k] for k in _ENTRY_ORDER if k in e})
        new = {"text": doc["text"]}
        if doc.get("ids") is not None:
            new["ids"] = [int(i) for i in doc["ids"]]
        new["file"] = file
        new["nTokens"] = len(doc["tokens"])
        entries = [e for e in entries if (e["text"], _ids_key(e.get("ids"))) != (new["text"], _ids_key(new.get("ids")))]
        entries.append(new)
        entries.sort(key=_entry_sort)
        index = {"schemaVersion": schema.SCHEMA_VERSION, "model": model, "meta": meta, "traces": entries}
        atomic_write(self.index_path(model), dumps(index))
        self._index_cache.pop(model, None)

    def unused(self, model: str, used) -> list[dict]:
        """Index entries whose (text, ids) is not in `used` (a set of TraceRequest-like keys)."""
        keep = {(r.text, _ids_key(r.ids)) for r in used}
        return [e for e in self.entries(model) if (e["text"], _ids_key(e.get("ids"))) not in keep]

    def forget(self, model: str, entries: list[dict]) -> list[Path]:
        """Drop `entries` from the model's index (atomically), then delete their files."""
        index = self._current_index(model)
        if index is None or not entries:
            return []
        gone = {(e["text"], _ids_key(e.get("ids"))) for e in entries}
        kept = [{k: e[k] for k in _ENTRY_ORDER if k in e} for e in index["traces"]
                if (e["text"], _ids_key(e.get("ids"))) not in gone]
        new = {"schemaVersion": schema.SCHEMA_VERSION, "model": model, "meta": index["meta"], "traces": kept}
        atomic_write(self.index_path(model), dumps(new))  # the index first: it never lists a deleted file
        self._index_cache.pop(model, None)
        removed = []
        for e in entries:
            p = self.root / model / e["file"]
            if p.is_file():
                p.unlink()
                removed.append(p)
        return removed

    def prune(self, model: str) -> list[Path]:
        """Remove trace files (`<key>.json`) the index does not list (older revisions) and stray
        temp files. Other files in the folder (heads.json, index.json) are left alone."""
        folder = self.root / model
        if not folder.is_dir() or self._current_index(model) is None:
            return []
        listed = {e["file"] for e in self.entries(model)} | {INDEX_NAME}
        removed = []
        for p in sorted(folder.iterdir()):
            stray_tmp = p.name.startswith(".") and p.name.endswith(TMP_SUFFIX)
            if p.is_file() and (stray_tmp or (TRACE_FILE_RE.match(p.name) and p.name not in listed)):
                p.unlink()
                removed.append(p)
        return removed
