"""A checkpoint folder checked before transformers loads it, against the committed config.

transformers fills a missing tensor with random numbers (it only warns), and it allocates a
model of whatever size a config asks for. So before any load, and so before any trace is written:
the folder's config.json must give the committed shape, and model.safetensors must hold exactly
the tensors of that shape, no more, no fewer, each of its shape, with its bytes all there. The
safetensors header is JSON after an 8-byte length, read here without torch. A pickle
(pytorch_model.bin) is refused: unpickling can run code, and safetensors is what every model ships.
Which tensors a shape has is the registry's table per architecture (registry.expected_tensors).
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

from ..registry import CHECKPOINT_BUFFERS, CHECKPOINT_PREFIX, CHECKPOINT_SHAPE_KEYS, CONFIG_FILES, MODELS, checkpoint_shape, config_architecture
from ..registry import expected_tensors as registry_expected_tensors
from ..store.files import DamagedFile, read_json

MAX_CONFIG_BYTES = 1 << 20
MAX_HEADER_BYTES = 16 << 20  # GPT-2 small's header is about 15 kB
FIX = "use the model's own save_pretrained folder (config.json + model.safetensors), or restore it from git"


def architecture(name: str) -> str:
    return MODELS[name].architecture


def committed_shape(name: str) -> dict[str, int]:
    """The shape keys (registry.CHECKPOINT_SHAPE_KEYS of its architecture) of the committed config."""
    return {k: int(v) for k, v in checkpoint_shape(json.loads(CONFIG_FILES[name].read_text(encoding="utf-8"))).items()}


def expected_tensors(shape: dict[str, int], arch: str) -> dict[str, tuple[int, ...]]:
    """The parameters of a checkpoint of `shape`, named as save_pretrained writes them (without the
    stack's prefix), the tied lm_head left out: registry.expected_tensors."""
    return registry_expected_tensors(arch, shape)


def config_problem(name: str, folder: Path) -> str | None:
    """Why folder/config.json is not the committed shape of `name`, or None."""
    path = folder / "config.json"
    try:
        cfg = read_json(path, MAX_CONFIG_BYTES, FIX)
    except DamagedFile as exc:
        return str(exc)
    if not isinstance(cfg, dict):
        return f"{path}: is not a JSON object"
    arch = architecture(name)
    if config_architecture(cfg) != arch:
        return f"{path}: is a config of architecture {str(config_architecture(cfg))[:30]!r}, not {arch!r} as the committed {CONFIG_FILES[name].parent.name}/config.json"
    want = committed_shape(name)
    try:
        got_shape = checkpoint_shape(cfg)
    except (KeyError, TypeError, ValueError):
        got_shape = {}
    for k in CHECKPOINT_SHAPE_KEYS[arch]:
        got = got_shape.get(k, cfg.get(k))
        if not isinstance(got, int) or isinstance(got, bool) or got != want[k]:
            return f"{path}: {k} is {got!r}, not {want[k]} as in the committed {CONFIG_FILES[name].parent.name}/config.json"
    return None


def header(path: Path) -> tuple[dict, int]:
    """(the safetensors header, the byte length of the data after it); ValueError naming what is wrong."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise ValueError("is shorter than a safetensors header")
        (n,) = struct.unpack("<Q", raw)
        if n > MAX_HEADER_BYTES or 8 + n > size:
            raise ValueError(f"has a header of {n:,} bytes in a file of {size:,}: cut short, or not safetensors")
        try:
            doc = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ValueError("has a header that is not JSON: not safetensors") from None
    if not isinstance(doc, dict):
        raise ValueError("has a header that is not a JSON object")
    return doc, size - 8 - n


def weights_problem(name: str, folder: Path) -> str | None:
    """Why folder/model.safetensors is not a whole checkpoint of the committed shape, or None."""
    path = folder / "model.safetensors"
    if os.path.lexists(path) and not path.is_file():  # a FIFO, a device, a folder, a dangling link
        return f"{path}: is not a regular file (a device, FIFO, folder or broken link)"
    if not path.is_file():
        if (folder / "pytorch_model.bin").is_file():
            return (f"{folder / 'pytorch_model.bin'}: a pickle checkpoint is not read (unpickling can run code); "
                    "save the model with save_pretrained(safe_serialization=True) to get model.safetensors")
        return f"{path}: is missing"
    try:
        doc, data_bytes = header(path)
    except (OSError, ValueError) as exc:
        return f"{path}: {exc}"
    doc.pop("__metadata__", None)
    arch = architecture(name)
    want = expected_tensors(committed_shape(name), arch)
    buffers = re.compile(CHECKPOINT_BUFFERS[arch])
    got: dict[str, tuple[int, ...]] = {}
    for key, entry in doc.items():
        short = key.removeprefix(CHECKPOINT_PREFIX[arch])
        if short == "lm_head.weight" or buffers.match(short):
            continue
        try:
            shape = tuple(int(x) for x in entry["shape"])
            begin, end = (int(x) for x in entry["data_offsets"])
        except (TypeError, KeyError, ValueError):
            return f"{path}: tensor {key!r} has no usable shape and offsets"
        if end > data_bytes or begin > end:
            return f"{path}: tensor {key!r} runs past the end of the file (cut short?)"
        got[short] = shape
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [k for k in want if k in got and got[k] != want[k]]
    if missing:
        return f"{path}: {len(missing)} of the {len(want)} tensors are missing (first: {missing[0]})"
    if extra:
        return f"{path}: {len(extra)} unexpected tensor(s) (first: {extra[0]})"
    if wrong:
        k = wrong[0]
        return f"{path}: tensor {k} is {list(got[k])}, not {list(want[k])}"
    return None


def checkpoint_problem(name: str, folder: Path) -> str | None:
    """The first thing wrong with a checkpoint folder of model `name`, or None when it is whole."""
    return config_problem(name, folder) or weights_problem(name, folder)
