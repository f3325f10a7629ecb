"""The files a built page loads besides itself, under assets/generated/ (CONTRACT.md, "Files in the
built site"): Plotly's cartesian partial bundle (vendored in generator/assets/vendor/, checked
against its sha256 there; `make vendor` refreshes it), colorscale.js (format.CIVIDIS as
COURSE_COLORSCALE), course.js and course.css, and for every trace a figure shows, its download copy
`traces/<model>/<key>.json` (the stored file's own bytes) and its heavy part
`traces/<model>/<key>.js`.

A trace arrives here as the store decoded it (store.codec.DecodedTrace): the file's bytes, its
encoded arrays and its weights as numpy, all from the one read. Nothing is read or parsed again.
A file is rewritten only when its bytes change, so `mkdocs serve` does not rebuild in a loop. The
Markdown extension writes a missing trace asset through here too.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .. import schema
from ..store import codec
from . import format as fmt
from . import play_model
from .context import WEIGHT_DECIMALS, trace_weights
from .script import course_js

PACKAGE_ASSETS = Path(__file__).resolve().parents[1] / "assets"
COPIED = ("course.css",)  # course.js is joined from its parts (script.py)
VENDOR = PACKAGE_ASSETS / "vendor"
PLOTLY_JS = "plotly-cartesian.min.js"  # its name in the site
# The stored file's encoded fields that a heavy part carries as they are (traces/README.md).
ENCODED_PART_FIELDS = ("q", "k", "v", "scores", "out")
STALE = ("plotly.min.js",)  # generated files of older builds, removed so the site never ships them


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` unless the file already holds exactly these bytes. True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def plotly_js() -> bytes:
    """The vendored cartesian partial bundle, after checking its sha256 against VENDOR.json."""
    manifest = json.loads((VENDOR / "VENDOR.json").read_text(encoding="utf-8"))
    data = (VENDOR / manifest["file"]).read_bytes()
    if hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise RuntimeError(f"generator/assets/vendor/{manifest['file']} does not match the sha256 in VENDOR.json; run make vendor")
    return data


# The page's weights (render.context.trace_weights: 4 decimals) as int16 × 0.0001, so that decoding
# gives back exactly the doubles the renderer printed its numbers from.
PAGE_WEIGHTS_SCALE = 10.0 ** -WEIGHT_DECIMALS


def encoded_part(trace: dict) -> dict | None:
    """What course.js needs of a trace after the first paint, encoded (CONTRACT.md, "Files"):
    the stored file's own q, k, v, scores and out objects (so decoding gives the store loader's
    numbers), every head's page weights, and the factor scaledMasked is scores times. None for a
    trace the store did not decode (one held only in memory). Only numbers and the key: no text."""
    stored = getattr(trace, "stored_layers", None)
    if stored is None:
        return None
    d = int(trace["meta"]["headDim"])
    weights = trace_weights(trace)  # (layer, head, query, key), as the page's tables print them
    layers = [
        {"heads": [{**{f: head[f] for f in ENCODED_PART_FIELDS},
                    "weights": codec.encode_array(weights[l, h], tril=True, scale=PAGE_WEIGHTS_SCALE)}
                   for h, head in enumerate(layer["heads"])]}
        for l, layer in enumerate(stored)
    ]
    return {"schemaVersion": trace["schemaVersion"], "key": trace["key"],
            "meta": {"headDim": d, "scaledMaskedFactor": d**-0.5}, "layers": layers}


def plain_part(trace: dict) -> dict:
    """The decoded fields as nested lists (a trace held only in memory, as tests make them)."""
    weights = trace_weights(trace).tolist()  # (layer, head, query, key)
    return {"layers": [
        {"heads": [{**{f: h[f] for f in schema.HEAVY_HEAD_FIELDS if f in h}, "weights": weights[l][i]}
                   for i, h in enumerate(layer["heads"])], "attnConcat": layer.get("attnConcat")}
        for l, layer in enumerate(trace["layers"])
    ]}


def heavy_part_js(trace: dict) -> bytes:
    """`window.courseTraceParts["<key>"] = …`: what the figures load after their first paint.
    Encoded (a quarter of the plain size) for a trace the store decoded, else plain."""
    part = encoded_part(trace) or plain_part(trace)
    body = fmt.json_for_script(part, separators=(",", ":"))
    key = json.dumps(str(trace["key"]))
    return (
        "window.courseTraceParts = window.courseTraceParts || {};\n"
        f"window.courseTraceParts[{key}] = {body};\n"
    ).encode("ascii")


def download_copy(trace: dict) -> bytes:
    """The trace's download copy: the stored file's bytes as the store read them, else (a trace
    held only in memory) the trace as compact JSON."""
    raw = getattr(trace, "raw", None)
    if raw is not None:
        return raw
    return (json.dumps(trace, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def trace_asset_paths(trace: dict, generated: Path) -> tuple[Path, Path]:
    folder = generated / "traces" / trace["model"]
    return folder / f"{trace['key']}.json", folder / f"{trace['key']}.js"


def write_trace_assets(trace: dict, generated: Path, only_missing: bool = False) -> list[Path]:
    """The trace's download copy and heavy part under `generated`; returns the files written."""
    jpath, jspath = trace_asset_paths(trace, generated)
    written = []
    if not (only_missing and jpath.is_file()):
        if write_if_changed(jpath, download_copy(trace)):
            written.append(jpath)
    if not (only_missing and jspath.is_file()):
        if write_if_changed(jspath, heavy_part_js(trace)):
            written.append(jspath)
    return written


def static_assets() -> dict[str, bytes]:
    files = {PLOTLY_JS: plotly_js(), "colorscale.js": fmt.colorscale_js().encode("utf-8"), "course.js": course_js().encode("utf-8")}
    # the playground's (play.html loads them; no other page does): render/play_model.py
    files[play_model.SCRIPT] = play_model.play_js().encode("utf-8")
    files[play_model.ASSET] = play_model.play_model_js()
    for name in COPIED:
        src = PACKAGE_ASSETS / name
        if src.is_file():
            files[name] = src.read_bytes()
    return files


def write_static_assets(generated: Path, only_missing: bool = False) -> list[Path]:
    written = []
    for name in STALE:
        (generated / name).unlink(missing_ok=True)
    for name, data in static_assets().items():
        path = generated / name
        if only_missing and path.is_file():
            continue
        if write_if_changed(path, data):
            written.append(path)
    return written
