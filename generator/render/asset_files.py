"""The package files the asset step reads (the tiny model's weights, config and tokenizer, the
vendored Plotly bundle, course.js's and play.js's parts, course.css, the templates), read here so
that any way one is damaged (missing, a folder in its place, empty, cut short, not UTF-8, not JSON,
not the shape it should be) is an :class:`AssetError`: one line naming the file, what is wrong and
a fix, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from ..lessons.errors import LessonError
from ..store import files
from ..tokens import shown  # a path as the repository names it (generator/tiny_model/tokenizer.json)

MAX_BYTES = 64 * 1024 * 1024  # the largest, the Plotly bundle and the tiny weights, are a few MB


def restore(path: Path) -> str:
    return f"restore it from git: git checkout -- {shown(path)}"


class AssetError(LessonError):
    """A file the asset step reads is damaged. str(): `path: problem. Fix: remedy`."""

    def __init__(self, path: Path | str, problem: str, fix: str | None = None):
        self.path = Path(path)
        super().__init__(shown(self.path), problem, fix or restore(self.path))


def read_bytes(path: Path, fix: str | None = None) -> bytes:
    """The store's bounded read (store.files.read_bytes: a regular file, at most MAX_BYTES), its
    damage told as an AssetError; an empty file is damage here too."""
    try:
        data = files.read_bytes(path, MAX_BYTES, fix or restore(path))
    except files.DamagedFile as e:
        raise AssetError(path, e.problem, e.fix) from None
    if not data:
        raise AssetError(path, "is empty", fix)
    return data


def read_text(path: Path, fix: str | None = None) -> str:
    data = read_bytes(path, fix)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssetError(path, f"is not UTF-8 text (byte {e.start})", fix) from None


def read_json(path: Path, fix: str | None = None) -> dict:
    """The JSON object in `path`."""
    text = read_text(path, fix)
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        raise AssetError(path, f"is not valid JSON, perhaps cut short ({str(e).splitlines()[0][:120]})", fix) from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise AssetError(path, "is nested too deep to be what the course reads here", fix) from None
    if not isinstance(doc, dict):
        raise AssetError(path, f"is not a JSON object but a JSON {type(doc).__name__}", fix)
    return doc


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")
