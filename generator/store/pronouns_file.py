"""traces/<model>/pronouns.json: the her/his test over many sentences, one head removed
(generator/model/pronoun_sweep.py computes it; no torch here).

One document per model: the set measured (names female then male, templates with "{}" for the
name, the two targets, the head removed, counting from 1) and, per (template, name), the clean
logit(her) − logit(his), the value with the head's output replaced by zeros and by its
natural-text mean, and the head whose zero-removal moves it most with that change. Checked on
read (shapes from the recorded set, finite numbers, heads inside the model), so a damaged file is
one DamagedFile line naming it.
"""

from __future__ import annotations

from pathlib import Path

from .files import DamagedFile, atomic_write, dumps, plausible, read_checked, round_floats

FILE = "pronouns.json"
FORMAT_VERSION = 1  # bumped when the layout changes; an older file is damaged, `make traces` rewrites it
DIGITS = 5  # significant digits kept, as circuits.json: a retrace on another machine writes the same bytes
MAX_BYTES = 1024 * 1024
FIX = "run `make traces`: it rewrites pronouns.json from the model"
ARRAYS = ("clean", "zero", "mean", "topChange")  # (template, name) floats
SET_KEYS = ("female", "male", "templates", "targets", "head")


def path(root: Path | str, model: str) -> Path:
    return Path(root) / model / FILE


def _plain(x):
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def write(root: Path | str, model: str, revision: str, sweep: dict, n_layer: int, n_head: int) -> Path:
    """Round, check and write atomically; a document that fails its own check is never written."""
    doc = round_floats({"formatVersion": FORMAT_VERSION, "model": model, "revision": revision,
                        **{k: _plain(v) for k, v in sweep.items()}}, DIGITS)
    p = path(root, model)
    check(doc, p, model, n_layer, n_head)
    atomic_write(p, dumps(doc))
    return p


def read(root: Path | str, model: str, n_layer: int, n_head: int) -> dict | None:
    """The checked document, or None when there is no file; DamagedFile when it cannot be trusted."""
    p = path(root, model)

    def make(doc) -> dict:
        check(doc, p, model, n_layer, n_head)
        return doc

    return read_checked(p, _CACHE, MAX_BYTES, FIX, make)


_CACHE: dict[Path, tuple[tuple[int, int, int], dict]] = {}  # read_checked's: one read per file version


def _grid(doc: dict, key: str, rows: int, cols: int, p: Path) -> None:
    g = doc.get(key)
    if not isinstance(g, list) or len(g) != rows or any(not isinstance(r, list) or len(r) != cols for r in g):
        raise DamagedFile(p, f"{key} is not {rows} templates × {cols} names", FIX)
    for r in g:
        for v in r:
            if not plausible(v):
                raise DamagedFile(p, f"{key} holds {repr(v)[:24]}, not a finite number within ±1e9", FIX)


def check(doc, p: Path, model: str, n_layer: int, n_head: int) -> None:
    if not isinstance(doc, dict):
        raise DamagedFile(p, "is not a JSON object", FIX)
    if doc.get("formatVersion") != FORMAT_VERSION:
        raise DamagedFile(p, f"is not a format-{FORMAT_VERSION} file", FIX)
    if doc.get("model") != model or not isinstance(doc.get("revision"), str):
        raise DamagedFile(p, f"is not {model}'s (model {doc.get('model')!r})", FIX)
    s = doc.get("set")
    if not isinstance(s, dict) or any(k not in s for k in SET_KEYS):
        raise DamagedFile(p, f"set does not record {', '.join(SET_KEYS)}", FIX)
    for k in ("female", "male", "templates"):
        if not isinstance(s[k], list) or not s[k] or any(not isinstance(x, str) or not x for x in s[k]):
            raise DamagedFile(p, f"set.{k} is not a list of words", FIX)
    if any("{}" not in t for t in s["templates"]):
        raise DamagedFile(p, "a template has no {} for the name", FIX)
    if not (isinstance(s["targets"], list) and len(s["targets"]) == 2 and all(isinstance(t, str) for t in s["targets"])):
        raise DamagedFile(p, "set.targets is not two tokens", FIX)
    head = s["head"]
    if not (isinstance(head, list) and len(head) == 2 and 1 <= head[0] <= n_layer and 1 <= head[1] <= n_head):
        raise DamagedFile(p, f"set.head {head!r} is not a head of a {n_layer} × {n_head} model", FIX)
    rows, cols = len(s["templates"]), len(s["female"]) + len(s["male"])
    for key in ARRAYS:
        _grid(doc, key, rows, cols, p)
    th = doc.get("topHead")
    if not isinstance(th, list) or len(th) != rows or any(not isinstance(r, list) or len(r) != cols for r in th):
        raise DamagedFile(p, f"topHead is not {rows} templates × {cols} names", FIX)
    for r in th:
        for cell in r:
            if not (isinstance(cell, list) and len(cell) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in cell)
                    and 1 <= cell[0] <= n_layer and 1 <= cell[1] <= n_head):
                raise DamagedFile(p, f"topHead holds {cell!r}, not a head of a {n_layer} × {n_head} model", FIX)
