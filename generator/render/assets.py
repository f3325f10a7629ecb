"""The files a built page loads besides itself, under assets/generated/ (CONTRACT.md, "Files in the
built site"): Plotly's cartesian partial bundle (vendored in generator/assets/vendor/, checked
against its sha256 there; `make vendor` refreshes it), colorscale.js (format.CIVIDIS as
COURSE_COLORSCALE), course.js and course.css, and for every trace a figure shows, its download copy
`traces/<model>/<key>.json` (the stored file's own bytes) and its parts, one per head,
`traces/<model>/<key>/<layer>-<head>.js`, and `traces/<model>/<key>/weights.js`.

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
from . import format as fmt
from . import play_model
from .asset_files import AssetError, read_bytes, read_json, shown
from .context import trace_weights
from .script import course_js, shipped_js

PACKAGE_ASSETS = Path(__file__).resolve().parents[1] / "assets"
COPIED = ("course.css",)  # course.js is joined from its parts (script.py)
VENDOR = PACKAGE_ASSETS / "vendor"
PLOTLY_JS = "plotly-cartesian.min.js"  # its name in the site
# The stored file's encoded fields that a head's part carries as they are (traces/README.md).
ENCODED_PART_FIELDS = ("q", "k", "v", "scores", "weights", "out")
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


VENDOR_FIX = "run `make vendor`, or restore generator/assets/vendor/ from git"


def plotly_js() -> bytes:
    """The vendored cartesian partial bundle, after checking its sha256 against VENDOR.json."""
    manifest_path = VENDOR / "VENDOR.json"
    manifest = read_json(manifest_path, VENDOR_FIX)
    name, digest = manifest.get("file"), manifest.get("sha256")
    if not isinstance(name, str) or name != PLOTLY_JS or not isinstance(digest, str):
        raise AssetError(manifest_path, f"does not name the bundle {PLOTLY_JS} and its sha256", VENDOR_FIX)
    data = read_bytes(VENDOR / name, VENDOR_FIX)
    if hashlib.sha256(data).hexdigest() != digest:
        raise AssetError(VENDOR / name, "does not match the sha256 in VENDOR.json (damaged or cut short)", VENDOR_FIX)
    return data


def _encoded_layers(trace: dict) -> list | None:
    """Per (layer, head): the stored file's own q, k, v, scores, weights and out objects, so that
    decoding gives the store loader's numbers (the weights are the ones the page prints:
    render.context.trace_weights). None for a trace the store did not decode (one held only in
    memory)."""
    stored = getattr(trace, "stored_layers", None)
    if stored is None:
        return None
    # k and v are stored once per key/value head (schema 5): query head h's are its group's.
    return [
        [{f: head[f] if f in head else layer["kvHeads"][h // (len(layer["heads"]) // len(layer["kvHeads"]))][f]
          for f in ENCODED_PART_FIELDS} for h, head in enumerate(layer["heads"])]
        for layer in stored
    ]


def _plain_layers(trace: dict) -> list:
    """The decoded fields as nested lists (a trace held only in memory, as tests make them)."""
    weights = trace_weights(trace).tolist()  # (layer, head, query, key)
    return [
        [{**{f: h[f] for f in schema.HEAVY_HEAD_FIELDS if f in h and f != "attnConcat"}, "weights": weights[l][i]}
         for i, h in enumerate(layer["heads"])]
        for l, layer in enumerate(trace["layers"])
    ]


def _part_meta(trace: dict) -> dict:
    d = int(trace["meta"]["headDim"])
    return {"headDim": d, "scaledMaskedFactor": d**-0.5}


def _part_js(name: str, part: dict) -> bytes:
    """`window.courseTraceParts["<name>"] = …`, a classic script (file:// loads it too)."""
    body = fmt.json_for_script(part, separators=(",", ":"))
    return (f"{PART_PREFIX}\nwindow.courseTraceParts[{json.dumps(name)}] = {body};\n").encode("ascii")


# Every part starts with this line; the one-file chapters join a trace's parts in one script and
# keep it once (site/downloads.py part_script).
PART_PREFIX = "window.courseTraceParts = window.courseTraceParts || {};"
WEIGHTS_PART = "weights"  # <key>/weights.js: every head's page weights


def head_part_name(layer: int, head: int) -> str:
    """The file name of one head's part in the trace's part folder (layer and head from 0)."""
    return f"{layer}-{head}.js"


def head_parts(trace: dict) -> dict[str, bytes]:
    """A trace's parts, file name -> bytes (CONTRACT.md, "Files in the built site"): one per head,
    `<layer>-<head>.js`, which course.js loads when that head is first shown (its q, k, v, scores,
    out and page weights, the numbers the figure and the Code views need of it), and `weights.js`,
    every head's page weights, which "All heads" loads. Encoded (a quarter of the plain size) for a
    trace the store decoded, else plain. Only numbers and the key: no text."""
    key = str(trace["key"])
    layers = _encoded_layers(trace)
    encoded = layers is not None
    if not encoded:
        layers = _plain_layers(trace)
    head = {"schemaVersion": trace["schemaVersion"]} if encoded else {}
    meta = _part_meta(trace)
    files = {}
    for l, heads in enumerate(layers):
        for h, fields in enumerate(heads):
            files[head_part_name(l, h)] = _part_js(
                f"{key}/{l}-{h}", {**head, "key": key, "meta": meta, "layer": l, "head": h, "fields": fields})
    weights = [[fields["weights"] for fields in heads] for heads in layers]  # (layer, head)
    files[f"{WEIGHTS_PART}.js"] = _part_js(f"{key}/{WEIGHTS_PART}", {**head, "key": key, "weights": weights})
    return dict(sorted(files.items(), key=lambda kv: part_order(kv[0])))


def part_order(name: str) -> tuple:
    """weights.js first, then the heads by (layer, head) as numbers: the order the one-file
    chapter inlines them in."""
    stem = name[:-3]
    if stem == WEIGHTS_PART:
        return (0, 0, 0)
    l, h = stem.split("-")
    return (1, int(l), int(h))


def heavy_part_js(trace: dict) -> bytes:
    """Every part of a trace joined, as the one-file chapter inlines them (and `make bench` sizes
    the whole trace)."""
    return join_parts(list(head_parts(trace).values()))


def join_parts(parts: list[bytes]) -> bytes:
    """Parts (each `PART_PREFIX` then one assignment) as one script, the prefix kept once."""
    prefix = (PART_PREFIX + "\n").encode("ascii")
    body = b"".join(p[len(prefix):] if p.startswith(prefix) else p for p in parts)
    return prefix + body


def download_copy(trace: dict) -> bytes:
    """The trace's download copy: the stored file's bytes as the store read them, else (a trace
    held only in memory) the trace as compact JSON."""
    raw = getattr(trace, "raw", None)
    if raw is not None:
        return raw
    return (json.dumps(trace, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def trace_asset_paths(trace: dict, generated: Path) -> tuple[Path, Path]:
    """The trace's download copy `<key>.json` and its part folder `<key>/`."""
    folder = generated / "traces" / trace["model"]
    return folder / f"{trace['key']}.json", folder / str(trace["key"])


def trace_asset_files(trace: dict, generated: Path) -> dict[Path, bytes]:
    """Every file of a trace under `generated`: its download copy, then its parts."""
    jpath, pdir = trace_asset_paths(trace, generated)
    files = {jpath: download_copy(trace)}
    files.update({pdir / name: data for name, data in head_parts(trace).items()})
    return files


def write_trace_assets(trace: dict, generated: Path, only_missing: bool = False) -> list[Path]:
    """The trace's download copy and parts under `generated` (each atomically, only when its
    bytes change); returns the files written. Files of the part folder that no head names any
    more are removed."""
    jpath, pdir = trace_asset_paths(trace, generated)
    if only_missing and jpath.is_file() and (pdir / f"{WEIGHTS_PART}.js").is_file():
        return []  # the Markdown extension (mkdocs serve): a trace written before is complete
    files = trace_asset_files(trace, generated)
    written = []
    for path, data in files.items():
        if only_missing and path.is_file():
            continue
        if write_if_changed(path, data):
            written.append(path)
    if pdir.is_dir():
        for p in sorted(pdir.iterdir()):
            if p.is_file() and p not in files and not p.name.startswith("."):
                p.unlink()
    return written


def static_assets() -> dict[str, bytes]:
    """Every file of assets/generated/ that no trace makes, each from the package files it reads;
    a damaged one is an AssetError naming it (one line, a fix), whichever writer reads it."""
    return {name: _made(name, make) for name, make in _static_makers().items()}


def static_asset_names() -> tuple[str, ...]:
    """The names of :func:`static_assets`' files, without making them."""
    return tuple(_static_makers())


def _static_makers() -> dict:
    makers = {
        PLOTLY_JS: plotly_js,
        "colorscale.js": lambda: fmt.colorscale_js().encode("utf-8"),
        "course.js": lambda: shipped_js(course_js()).encode("utf-8"),
        # the playground's (play.html loads them; no other page does): render/play_model.py
        play_model.SCRIPT: lambda: shipped_js(play_model.play_js()).encode("utf-8"),
        play_model.ASSET: play_model.play_model_js,
    }
    for name in COPIED:
        makers[name] = lambda src=PACKAGE_ASSETS / name: read_bytes(src)
    return makers


def _made(name: str, make) -> bytes:
    """make(), with any failure as the one line of an AssetError: a damaged file it read is named by
    its reader; a template, or anything unforeseen, names what was being written."""
    from jinja2 import TemplateError

    try:
        return make()
    except AssetError:
        raise
    except TemplateError as exc:
        where = getattr(exc, "filename", None) or f"generator/render/templates/{getattr(exc, 'name', None) or '?'}"
        line = getattr(exc, "lineno", None)
        raise AssetError(where, f"cannot be used to write {name}{f' (line {line})' if line else ''}: {str(exc)[:160]}") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError, LookupError) as exc:
        where = getattr(exc, "filename", None) or PACKAGE_ASSETS
        raise AssetError(where, f"{name} could not be written from it ({type(exc).__name__}: {str(exc)[:160]})",
                         f"restore {shown(PACKAGE_ASSETS.parent)} from git") from None


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
