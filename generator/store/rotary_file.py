"""traces/<model>/rotary.json: a rotary head's score against the distance between query and key
(generator/model/rotary.py computes it; no torch here).

Only a rotary model has one. Fields: format, model, revision, nLayer, nHead, nKvHead, headDim,
nCtx, ropeTheta, maxDistance; `meanOver` (the scoring sentences), `meanLongest` (the farthest
apart a pair of them stands), `mean` ([layer][head] ->
maxDistance + 1 scores: every pair of those sentences placed at distance 0, 1, …, averaged); and
`sentences`, one per sentence a `rope-distance` figure names: text, ids, tokens (their texts), and
`pairs`, each {query, key, distance (query − key), score ([layer][head], the real score),
curve ([layer][head] -> nCtx scores, the same query and key at distance 0..nCtx − 1)}. Every
number has 5 significant digits (store/files.round_floats), so a re-run writes the same bytes. The
reader checks every field and that each pair's real score is its curve at its real distance, so a
damaged file is one DamagedFile line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import schema
from .files import DamagedFile, plausible, read_checked, write_rounded

FILE = "rotary.json"
MAX_BYTES = 8 * 1024 * 1024
FIX = "run `make traces`: it rewrites rotary.json from the model"
REAL_RTOL = 1e-3  # a pair's real score and its curve at the real distance, both rounded to 5 digits


def path(root: Path | str, model: str) -> Path:
    return Path(root) / model / FILE


def write(root: Path | str, model: str, doc: dict) -> Path:
    """Round to 5 significant digits, check and write atomically; a document that fails its own
    check is never written."""
    return write_rounded(path(root, model), doc, lambda d, p: check(d, p, model))


@dataclass(frozen=True)
class Rotary:
    """A checked rotary.json."""

    doc: dict
    file: Path

    @property
    def revision(self) -> str:
        return self.doc["revision"]

    def mean(self, layer: int, head: int) -> list[float]:
        """The mean curve of (layer, head), counting from 1."""
        return self.doc["mean"][layer - 1][head - 1]

    def sentence(self, text: str) -> dict | None:
        return next((s for s in self.doc["sentences"] if s["text"] == text), None)

    def pair(self, text: str, query: int, key: int) -> dict | None:
        s = self.sentence(text)
        return None if s is None else next((p for p in s["pairs"] if (p["query"], p["key"]) == (query, key)), None)

    def named(self) -> list[tuple[str, int, int]]:
        """(sentence, query, key) of every example, sorted."""
        return sorted((s["text"], p["query"], p["key"]) for s in self.doc["sentences"] for p in s["pairs"])


_CACHE: dict[Path, tuple[tuple[int, int, int], Rotary]] = {}


def read(root: Path | str, model: str) -> Rotary | None:
    """The model's rotary.json, checked, or None where there is none."""
    p = path(root, model)

    def make(doc) -> Rotary:
        check(doc, p, model)
        return Rotary(doc, p)

    return read_checked(p, _CACHE, MAX_BYTES, FIX, make)


def _bad(p: Path, problem: str):
    raise DamagedFile(p, problem, FIX)


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _numbers(value, shape: tuple[int, ...], p: Path, what: str) -> None:
    """`value` is nested lists of exactly `shape`, of finite numbers, or DamagedFile."""
    if not shape:
        if not plausible(value):
            _bad(p, f"{what} is not a finite number within ±1e9")
        return
    if not isinstance(value, list) or len(value) != shape[0]:
        _bad(p, f"{what} is not a list of {shape[0]}")
    for x in value:
        _numbers(x, shape[1:], p, what)


def check(doc, p: Path, model: str) -> None:
    """Every field of a rotary.json, or DamagedFile."""
    if not isinstance(doc, dict):
        _bad(p, "is not a JSON object")
    if doc.get("format") != schema.ROTARY_FORMAT:
        _bad(p, f"has format {doc.get('format')!r}, not {schema.ROTARY_FORMAT}")
    if doc.get("model") != model:
        _bad(p, f"is of model {doc.get('model')!r}, not {model!r}")
    if not isinstance(doc.get("revision"), str) or not doc["revision"]:
        _bad(p, "has no revision")
    sizes = ("nLayer", "nHead", "nKvHead", "headDim", "nCtx", "ropeTheta", "maxDistance")
    if not all(_whole(doc.get(n)) and doc[n] > 0 for n in sizes):
        _bad(p, f"has no whole positive {', '.join(sizes)}")
    L, H, G, C, D = doc["nLayer"], doc["nHead"], doc["nKvHead"], doc["nCtx"], doc["maxDistance"]
    if H % G or D >= C:
        _bad(p, f"has {H} query heads for {G} key/value heads, or a max distance {D} not under the context {C}")
    if not isinstance(doc.get("meanOver"), list) or not doc["meanOver"] or not all(isinstance(t, str) for t in doc["meanOver"]):
        _bad(p, "has no list of the sentences its mean is over")
    if not _whole(doc.get("meanLongest")) or not 0 < doc["meanLongest"] < C:
        _bad(p, "has no whole meanLongest (the farthest pair of its mean's sentences) within the context")
    _numbers(doc.get("mean"), (L, H, D + 1), p, "mean")
    if not isinstance(doc.get("sentences"), list):
        _bad(p, "has no list of sentences")
    seen = set()
    for n, s in enumerate(doc["sentences"]):
        where = f"sentence {n + 1}"
        if not isinstance(s, dict) or set(s) != {"text", "ids", "tokens", "pairs"} or not isinstance(s["text"], str) \
                or not isinstance(s["ids"], list) or not s["ids"] or not all(_whole(i) and i >= 0 for i in s["ids"]) \
                or not isinstance(s["tokens"], list) or len(s["tokens"]) != len(s["ids"]) \
                or not all(isinstance(t, str) for t in s["tokens"]) or len(s["ids"]) > C:
            _bad(p, f"{where} has no text, token ids and token texts of one length within the context")
        if s["text"] in seen:
            _bad(p, f"lists {s['text']!r} twice")
        seen.add(s["text"])
        if not isinstance(s["pairs"], list) or not s["pairs"]:
            _bad(p, f"{where} has no pairs")
        T = len(s["ids"])
        for e in s["pairs"]:
            if not isinstance(e, dict) or set(e) != {"query", "key", "distance", "score", "curve"} \
                    or not all(_whole(e[x]) for x in ("query", "key", "distance")) \
                    or not 0 <= e["key"] <= e["query"] < T or e["distance"] != e["query"] - e["key"]:
                _bad(p, f"{where} has a pair without a query, a key at or before it, and their distance")
            name = f"{where} pair #{e['query']}→#{e['key']}"
            _numbers(e["score"], (L, H), p, f"{name} score")
            _numbers(e["curve"], (L, H, C), p, f"{name} curve")
            for l in range(L):
                for h in range(H):
                    real, at = e["score"][l][h], e["curve"][l][h][e["distance"]]
                    if abs(real - at) > REAL_RTOL * (1 + abs(real)):
                        _bad(p, f"{name}: layer {l + 1}, head {h + 1}'s real score {real} is not its curve at distance "
                                f"{e['distance']} ({at})")
