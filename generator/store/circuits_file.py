"""The per-model causal files, read and written without torch: ``circuits.json`` (composition
scores, kind scores with each head removed, the in-context-learning score) and ``patching.json``
(each head's output swapped between two sentences). generator/model/causal.py computes them at
`make traces`; the site build reads them back here, checked, never trusted.

Both are compact deterministic JSON (:data:`DIGITS` significant digits), written atomically. Layers and heads
count from 0 in the files; the pages count from 1.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import DamagedFile, TraceStore, atomic_write, dumps, read_json, round_floats
from .files import BEYOND, plausible_array

CIRCUITS_FILE = "circuits.json"
PATCHING_FILE = "patching.json"
FORMAT_VERSION = 2  # 2: the `robust` block (four ways of removing a head, intervals, a length sweep)
# Significant digits kept: the store's rule (traces/README.md). With 7, a retrace on another machine
# changed the files in their last digits (float32 sums in another order); 5 digits are stable.
DIGITS = 5
MAX_BYTES = 8 * 1024 * 1024
FIX = "run `make traces`, which rewrites it from the model"  # the one fix of every damaged circuits.json or patching.json

# circuits.json: name -> the axes of its array (kind = heads.KINDS, ablated = every head, layer × head)
CIRCUIT_ARRAYS = {
    "cleanScores": ("kind", "layer", "head"),
    "ablatedScores": ("ablation", "ablated", "kind", "layer", "head"),
    "iclClean": ("copy",),
    "iclAblated": ("ablation", "ablated", "copy"),
    "composition": ("composition", "layer", "head", "layer", "head"),
}
PATCH_ARRAYS = {"cleanA": ("token", "target"), "cleanB": ("token", "target"), "patched": ("layer", "head", "token", "target")}


def _plain(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def path_of(root: Path | str, model: str, name: str) -> Path:
    return Path(root) / model / name


def write_circuits(store: TraceStore, model: str, doc: dict, revision: str) -> Path:
    body = {"formatVersion": FORMAT_VERSION, "model": model, "revision": revision, **_plain(doc)}
    p = path_of(store.root, model, CIRCUITS_FILE)
    atomic_write(p, dumps(round_floats(body, DIGITS)))
    return p


def _array(path: Path, name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DamagedFile(path, f"{name} is not an array of numbers", FIX) from None
    if a.shape != shape:
        raise DamagedFile(path, f"{name} has shape {a.shape}, not {shape}", FIX)
    if not plausible_array(a):
        raise DamagedFile(path, f"{name} holds a value that is not a finite number or is {BEYOND}", FIX)
    return a


def _head(doc, path: Path, model: str, revision: str | None) -> None:
    if not isinstance(doc, dict) or doc.get("formatVersion") != FORMAT_VERSION or doc.get("model") != model:
        raise DamagedFile(path, f"is not a format-{FORMAT_VERSION} file of model {model!r}", FIX)
    if revision is not None and doc.get("revision") != revision:
        raise DamagedFile(path, f"was made from revision {str(doc.get('revision'))[:16]!r}, not the traces' {revision[:16]!r}", FIX)


def _read(store: TraceStore, model: str, name: str) -> tuple[dict | None, Path]:
    """The file `name` of `model` and its path: None where there is none, else a dict of this
    format, model and the traces' revision (DamagedFile, one line, otherwise)."""
    path = path_of(store.root, model, name)
    try:
        path.stat()
    except FileNotFoundError:
        return None, path
    if not path.is_file():
        raise DamagedFile(path, "is not a regular file", FIX)
    doc = read_json(path, MAX_BYTES, FIX)
    _head(doc, path, model, (store.model_meta(model) or {}).get("revision"))
    return doc, path


def load_circuits(store: TraceStore, model: str, kinds: tuple[str, ...], n_layer: int, n_head: int) -> dict | None:
    """circuits.json of `model`, its arrays numpy and checked against the model's shape, or None
    when there is none. DamagedFile (one line) when it cannot be trusted."""
    doc, path = _read(store, model, CIRCUITS_FILE)
    if doc is None:
        return None
    ablations = doc.get("ablations")
    if not isinstance(ablations, list) or not ablations or not set(ablations) <= {"zero", "mean"}:
        raise DamagedFile(path, "has no list of ablations (zero, mean)", FIX)
    if doc.get("kinds") != list(kinds):
        raise DamagedFile(path, f"scores the kinds {str(doc.get('kinds'))[:60]}, not {', '.join(kinds)}", FIX)
    if doc.get("compositionKinds") != ["q", "k", "v"]:
        raise DamagedFile(path, "has no compositionKinds [q, k, v]", FIX)
    base = doc.get("compositionBaseline")
    if type(base) not in (int, float) or not math.isfinite(base) or not 0 <= base <= 1:
        raise DamagedFile(path, "has no compositionBaseline between 0 and 1", FIX)
    if "compositionPositions" in doc and not isinstance(doc["compositionPositions"], str):
        raise DamagedFile(path, "has a compositionPositions that is not a sentence (a rotary model's note on its composition scores)", FIX)
    dims = {"kind": len(kinds), "layer": n_layer, "head": n_head, "ablation": len(ablations),
            "ablated": n_layer * n_head, "copy": 2, "composition": 3}
    out = dict(doc)
    for name, axes in CIRCUIT_ARRAYS.items():
        out[name] = _array(path, name, doc.get(name), tuple(dims[a] for a in axes))
    for name in ("cleanScores", "ablatedScores", "composition"):
        a = out[name]
        if a.min() < -1e-6 or a.max() > 1 + 1e-6:
            raise DamagedFile(path, f"{name} holds {a.min():.3g} to {a.max():.3g}, and a score lies between 0 and 1", FIX)
    if min(out["iclClean"].min(), out["iclAblated"].min()) < 0:
        raise DamagedFile(path, "a loss is negative", FIX)
    out["robust"] = _robust(path, doc.get("robust"), n_layer, n_head)
    return out


ROBUST_METHODS = ("zero", "mean", "indist", "resample")  # generator/model/robust.py's METHODS


def _robust(path: Path, block, n_layer: int, n_head: int) -> dict:
    """The `robust` block checked: its methods, seeds and, per length of the sweep, arrays of
    (value, low, high) with low ≤ value ≤ high."""
    if not isinstance(block, dict) or tuple(block.get("methods") or ()) != ROBUST_METHODS:
        raise DamagedFile(path, f"has no robust block with the methods {', '.join(ROBUST_METHODS)}", FIX)
    cfg = block.get("config")
    if not isinstance(cfg, dict) or not all(type(cfg.get(k)) is int and cfg[k] > 0 for k in ("n_texts", "n_sources", "n_boot")) \
            or type(cfg.get("seed")) is not int:
        raise DamagedFile(path, "robust.config lacks its seed or set sizes", FIX)
    kinds = block.get("scoredKinds")
    lengths = block.get("lengths")
    if not isinstance(kinds, list) or not isinstance(lengths, list) or not lengths \
            or [e.get("length") if isinstance(e, dict) else None for e in lengths] != cfg.get("lengths"):
        raise DamagedFile(path, "robust.lengths does not match robust.config.lengths", FIX)
    M, A = len(ROBUST_METHODS), n_layer * n_head
    shapes = {"cleanLoss": (2, 3), "loss": (M, A, 3), "rise": (M, A, 3), "scores": (len(kinds), n_layer, n_head, 3)}
    out = dict(block, lengths=[])
    for e in lengths:
        arrays = {"length": int(e["length"])}
        for name, shape in shapes.items():
            a = _array(path, f"robust length {e['length']} {name}", e.get(name), shape)
            if (a[..., 1] > a[..., 0] + 1e-6 * (1 + abs(a[..., 0]))).any() or (a[..., 2] < a[..., 0] - 1e-6 * (1 + abs(a[..., 0]))).any():
                raise DamagedFile(path, f"robust length {e['length']} {name}: an interval does not hold its value", FIX)
            arrays[name] = a
        if arrays["loss"][..., 0].min() < 0 or arrays["cleanLoss"][..., 0].min() < 0:
            raise DamagedFile(path, f"robust length {e['length']}: a loss is negative", FIX)
        out["lengths"].append(arrays)
    return out


# ---------------------------------------------------------------- patching.json


def pair_key(a: str, b: str, targets) -> list:
    return [a, b, [int(t) for t in targets]]


def load_patching_doc(store: TraceStore, model: str) -> dict | None:
    doc, path = _read(store, model, PATCHING_FILE)
    if doc is None:
        return None
    if not isinstance(doc.get("pairs"), list):
        raise DamagedFile(path, "has no list of pairs", FIX)
    return doc


def write_patching(store: TraceStore, model: str, revision: str, entries: list[dict]) -> Path:
    entries = sorted((_plain(e) for e in entries), key=lambda e: (e["a"], e["b"], e["targets"]))
    body = {"formatVersion": FORMAT_VERSION, "model": model, "revision": revision, "pairs": entries}
    p = path_of(store.root, model, PATCHING_FILE)
    atomic_write(p, dumps(round_floats(body, DIGITS)))
    return p


def find_pair(store: TraceStore, model: str, a: str, b: str, targets, n_tokens: int, n_layer: int, n_head: int) -> dict | None:
    """The patching entry of (a, b, targets), its arrays numpy and checked, or None."""
    doc = load_patching_doc(store, model)
    if doc is None:
        return None
    path = path_of(store.root, model, PATCHING_FILE)
    want = pair_key(a, b, targets)
    found = None
    for n, e in enumerate(doc["pairs"]):
        if not isinstance(e, dict):
            raise DamagedFile(path, f"pair {n} is not an object", FIX)
        if [e.get("a"), e.get("b"), e.get("targets")] != want:
            continue
        if found is not None:  # which one a figure showed would depend on their order
            raise DamagedFile(path, f"pairs {found[0]} and {n} are both of {a[:40]!r} and {b[:40]!r}", FIX)
        found = (n, e)
    if found is None:
        return None
    n, e = found
    dims = {"token": n_tokens, "target": len(want[2]), "layer": n_layer, "head": n_head}
    out = dict(e)
    for name, axes in PATCH_ARRAYS.items():
        out[name] = _array(path, f"pair {n} {name}", e.get(name), tuple(dims[x] for x in axes))
    return out
