"""traces/<model>/splits.json: each attention score split into the parts of the residual stream
that made it (generator/model/score_parts.py computes it; no torch here).

One entry per sentence that a `score-split` figure names: its text and token ids, and per head
its scaled scores and their key-side and query-side splits (layer 1's heads also the four-way
table; a rotary model's heads, which have no table, the score with the rotation left out), over
the cells on and below the diagonal, row by row (schema.SPLIT_ARRAYS). `positions` says how the
model's positions enter ("rotary"; absent: "learned", the files written before rotary models,
whose bytes stay as they were): a rotary model's parts have no position part. Every part
is rounded to schema.SPLIT_DECIMALS decimals, so the parts still add up to the score within
schema.SPLIT_ATOL; the reader checks that for every cell, so a damaged file is one DamagedFile
line naming it. traces/README.md ("splits.json") has the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import schema
from .files import BEYOND, DamagedFile, atomic_write, dumps, plausible_array, read_checked

FILE = "splits.json"
MAX_BYTES = 16 * 1024 * 1024
FIX = "run `make traces`: it rewrites splits.json from the model"


def path(root: Path | str, model: str) -> Path:
    return Path(root) / model / FILE


def _rounded(obj):
    if isinstance(obj, float):
        return round(obj, schema.SPLIT_DECIMALS) + 0.0
    if isinstance(obj, list):
        return [_rounded(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    return obj


def write(root: Path | str, model: str, doc: dict) -> Path:
    """Round, check and write the document atomically; one that fails its own check is never written."""
    doc = _rounded(doc)
    p = path(root, model)
    check(doc, p, model)
    atomic_write(p, dumps(doc))
    return p


@dataclass(frozen=True)
class Splits:
    """A checked splits.json."""

    doc: dict
    file: Path

    @property
    def revision(self) -> str:
        return self.doc["revision"]

    def sentence(self, text: str) -> dict | None:
        return next((s for s in self.doc["sentences"] if s["text"] == text), None)

    def head(self, text: str, layer: int, head: int) -> dict | None:
        """The entry of head (layer, head), counting from 1, on `text`, or None."""
        s = self.sentence(text)
        return None if s is None else next((e for e in s["heads"] if (e["layer"], e["head"]) == (layer, head)), None)

    @property
    def positions(self) -> str:
        """"learned" (a position part in the stream) or "rotary" (position only through the turn of q and k)."""
        return self.doc.get("positions", "learned")

    def parts(self, layer: int) -> list[str]:
        """The part names of layer `layer` (from 1)."""
        return self.doc["parts"][layer - 1]


_CACHE: dict[Path, tuple[tuple[int, int, int], Splits]] = {}


def read(root: Path | str, model: str) -> Splits | None:
    """The model's splits.json, checked, or None where there is none."""
    p = path(root, model)

    def make(doc) -> Splits:
        check(doc, p, model)
        return Splits(doc, p)

    return read_checked(p, _CACHE, MAX_BYTES, FIX, make)


def show_value(value) -> str:
    return repr(value)[:40]


def _bad(p: Path, problem: str):
    raise DamagedFile(p, problem, FIX)


def _grid(value, shape: tuple[int, ...], p: Path, what: str):
    """`value` as a float64 array of exactly `shape`, all finite, or DamagedFile."""
    import numpy as np

    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        _bad(p, f"{what} is not an array of numbers")
    if a.shape != shape:
        _bad(p, f"{what} has shape {list(a.shape)}, not {list(shape)}")
    if not plausible_array(a):
        _bad(p, f"{what} holds a number that is not finite or is {BEYOND}")
    return a


def check(doc, p: Path, model: str) -> None:
    """Every field of a splits.json, and that every split adds up to its score, or DamagedFile."""
    if not isinstance(doc, dict):
        _bad(p, "is not a JSON object")
    if doc.get("format") != schema.SPLIT_FORMAT:
        _bad(p, f"has format {doc.get('format')!r}, not {schema.SPLIT_FORMAT}")
    if doc.get("model") != model:
        _bad(p, f"is of model {doc.get('model')!r}, not {model!r}")
    if not isinstance(doc.get("revision"), str) or not doc["revision"]:
        _bad(p, "has no revision")
    n_layer, n_head = doc.get("nLayer"), doc.get("nHead")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in (n_layer, n_head)):
        _bad(p, "has no whole nLayer and nHead")
    positions = doc.get("positions", "learned")
    if positions not in schema.SPLIT_POSITIONS:
        _bad(p, f"has positions {show_value(positions)}, not one of {', '.join(schema.SPLIT_POSITIONS)}")
    if doc.get("parts") != [schema.split_parts(l, n_head, positions) for l in range(n_layer)]:
        _bad(p, "names other parts than schema.split_parts gives")
    if not isinstance(doc.get("sentences"), list):
        _bad(p, "has no list of sentences")
    seen = set()
    for n, s in enumerate(doc["sentences"]):
        where = f"sentence {n + 1}"
        if not isinstance(s, dict) or not isinstance(s.get("text"), str) or not isinstance(s.get("ids"), list) \
                or not s["ids"] or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in s["ids"]):
            _bad(p, f"{where} has no text and token ids")
        if s["text"] in seen:
            _bad(p, f"lists {s['text']!r} twice")
        seen.add(s["text"])
        if not isinstance(s.get("heads"), list) or not s["heads"]:
            _bad(p, f"{where} has no heads")
        T = len(s["ids"])
        cells = T * (T + 1) // 2
        pairs = set()
        for e in s["heads"]:
            if not isinstance(e, dict) or not isinstance(e.get("layer"), int) or not isinstance(e.get("head"), int) \
                    or not (1 <= e["layer"] <= n_layer and 1 <= e["head"] <= n_head) or (e["layer"], e["head"]) in pairs:
                _bad(p, f"{where} has a head entry without a layer and head of the model, or one listed twice")
            pairs.add((e["layer"], e["head"]))
            name = f"{where} L{e['layer']}H{e['head']}"
            P = len(schema.split_parts(e["layer"] - 1, n_head, positions))
            score = _grid(e.get("score"), (cells,), p, f"{name} score")
            table = positions == "learned" and e["layer"] == 1
            sides = {"key": (P, cells), "query": (P, cells)} | ({"table": (3, 3, cells)} if table else {})
            extra = {"scoreUnrotated"} if positions == "rotary" else set()
            if set(e) != {"layer", "head", "score", *sides, *extra}:
                _bad(p, f"{name} holds {sorted(e)}, not {sorted({'layer', 'head', 'score', *sides, *extra})}")
            if extra:
                _grid(e["scoreUnrotated"], (cells,), p, f"{name} scoreUnrotated")
            for side, shape in sides.items():
                split = _grid(e[side], shape, p, f"{name} {side}")
                worst = float(abs(split.reshape(-1, cells).sum(0) - score).max())
                if not worst <= schema.SPLIT_ATOL:
                    _bad(p, f"{name}: the {side} split adds up to the score within {worst:.3g} only")
