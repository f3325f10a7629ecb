"""traces/<model>/vectors.json: chapter 2's vectors, as `make traces` froze them (no torch here).

generator/model/vectors.py computes the document from the tiny model; this module names the file,
turns a lesson's word into the vocabulary entry it means, writes the document (rounded as the
store rounds, deterministic bytes, atomically) and reads it back, checking every field: a file
that is not what it should be is one DamagedFile line naming it. The layout is in
traces/README.md ("vectors.json").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import schema, tokens
from .files import DamagedFile, plausible, read_checked, write_rounded

FILE = "vectors.json"
FORMAT = 1  # the document's `format`; a reader refuses any other
MAX_BYTES = 4 * 1024 * 1024
FIX = "run `make traces`: it rewrites vectors.json from the tiny model"


@dataclass(frozen=True)
class VectorsConfig:
    """What `make traces` freezes for chapter 2 (changing it changes vectors.json)."""

    nearest: int = 8  # neighbours kept per word (a figure shows up to all of them)
    map_tokens: int = 300  # common tokens on the 2-D map: enough to see groups, few enough to hover


CONFIG = VectorsConfig()


def path(root: Path | str, model: str) -> Path:
    return Path(root) / model / FILE


class UnknownWord(ValueError):
    """A lesson word that is not one entry of the vocabulary; str() says how it splits."""


def word_token(model: str, word: str) -> tuple[int, str]:
    """(id, text) of the vocabulary entry a lesson word names: '·her' and ' her' the spaced entry,
    'her' the spaced one (how a word stands mid-sentence) where it exists, else the bare one."""
    spaced = word.startswith((" ", "·"))
    bare = word[1:] if spaced else word
    tries = [" " + bare] if spaced else [" " + bare, bare]
    for text in tries:
        encoded = tokens.tokenizer(model).encode(text, add_special_tokens=False)
        if len(encoded.ids) == 1 and tokens.token_text(model, encoded.ids[0]) == text:
            return int(encoded.ids[0]), text
    pieces = tokens.tokenizer(model).encode(tries[0], add_special_tokens=False).ids
    shown = " + ".join(repr(tokens.token_text(model, i)) for i in pieces)
    raise UnknownWord(f"{word!r} is not one token of {model}'s vocabulary ({tries[0]!r} is {shown})")


def write(root: Path | str, model: str, doc: dict) -> Path:
    """Round, check and write the document atomically; a document that fails its own check is
    never written."""
    return write_rounded(path(root, model), doc, lambda d, p: check(d, p, model))


@dataclass(frozen=True)
class Vectors:
    """A checked vectors.json."""

    doc: dict
    file: Path

    @property
    def revision(self) -> str:
        """The tiny model's revision the numbers were read from (it must match the traces')."""
        return self.doc["revision"]

    @property
    def width(self) -> int:
        return self.doc["width"]

    def sentence(self, text: str) -> dict | None:
        return next((s for s in self.doc["sentences"] if s["text"] == text), None)

    def word(self, word: str) -> dict | None:
        return next((w for w in self.doc["words"] if w["word"] == word), None)


_CACHE: dict[Path, tuple[tuple[int, int, int], Vectors]] = {}


def read(root: Path | str, model: str) -> Vectors | None:
    """The model's vectors.json, checked, or None where there is none."""
    p = path(root, model)

    def make(doc) -> Vectors:
        check(doc, p, model)
        check_claims(doc, p, model)
        return Vectors(doc, p)

    return read_checked(p, _CACHE, MAX_BYTES, FIX, make)


# ---------------------------------------------------------------- checks


def check(doc, p: Path, model: str) -> None:
    """Every field of a vectors.json, or DamagedFile (one line, naming the file)."""

    def bad(problem: str):
        raise DamagedFile(p, problem, FIX)

    if not isinstance(doc, dict):
        bad("is not a vectors.json (not a JSON object)")
    if doc.get("format") != FORMAT:
        bad(f"has format {doc.get('format')!r}, not {FORMAT}")
    if doc.get("model") != model:
        bad(f"is for model {doc.get('model')!r}, not {model!r}")
    width = doc.get("width")
    if not _whole(width) or width < 1:
        bad("has no width")
    if not isinstance(doc.get("revision"), str) or not doc["revision"]:
        bad("names no model revision")
    vocab = doc.get("vocabSize")
    if not _whole(vocab) or vocab < 2:
        bad("has no vocabSize")

    def token(t, where):
        if not isinstance(t, dict) or not _whole(t.get("id")) or not 0 <= t["id"] < vocab or not all(isinstance(t.get(k), str) for k in ("text", "display", "spoken")):
            bad(f"{where} is not a token {{id, text, display, spoken}}")
        if t["display"] != schema.display_token(t["text"]) or t["spoken"] != schema.spoken_token(t["text"]):
            bad(f"{where}'s display or spoken text is not its text's")  # the pages show them as they are stored

    def vector(v, where, n=width):
        if not isinstance(v, list) or len(v) != n or not all(plausible(x) for x in v):
            bad(f"{where} is not a list of {n} finite numbers within ±1e9")

    ln = doc.get("layerNorm")
    if not isinstance(ln, dict) or not plausible(ln.get("eps")):
        bad("has no layerNorm {weight, bias, eps}")
    vector(ln.get("weight"), "layerNorm.weight")
    vector(ln.get("bias"), "layerNorm.bias")
    sentences = doc.get("sentences")
    if not isinstance(sentences, list):
        bad("has no list of sentences")
    for i, s in enumerate(sentences):
        where = f"sentences[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("text"), str) or not isinstance(s.get("tokens"), list) or not s["tokens"]:
            bad(f"{where} has no text and tokens")
        for j, t in enumerate(s["tokens"]):
            token(t, f"{where}.tokens[{j}]")
        for part in ("token", "position", "sum", "normalised", "ln1"):
            rows = s.get(part)
            if not isinstance(rows, list) or len(rows) != len(s["tokens"]):
                bad(f"{where}.{part} does not have one row per token")
            for j, row in enumerate(rows):
                vector(row, f"{where}.{part}[{j}]")
    words = doc.get("words")
    if not isinstance(words, list):
        bad("has no list of words")
    for i, w in enumerate(words):
        where = f"words[{i}]"
        if not isinstance(w, dict) or not isinstance(w.get("word"), str):
            bad(f"{where} names no word")
        token(w.get("token"), f"{where}.token")
        vector(w.get("vector"), f"{where}.vector")
        near = w.get("nearest")
        if not isinstance(near, list) or not near:
            bad(f"{where}.nearest is not a list of neighbours")
        for j, n in enumerate(near):
            token(n.get("token") if isinstance(n, dict) else None, f"{where}.nearest[{j}]")
            if not plausible(n.get("cosine")) or not -1.0001 <= n["cosine"] <= 1.0001:
                bad(f"{where}.nearest[{j}].cosine is not a number from -1 to 1")
        if [n["cosine"] for n in near] != sorted((n["cosine"] for n in near), reverse=True):
            bad(f"{where}.nearest is not sorted from the closest")
    m = doc.get("map")
    if not isinstance(m, dict) or not isinstance(m.get("tokens"), list) or not isinstance(m.get("marks"), list) or not isinstance(m.get("rule"), str):
        bad("has no map {rule, tokens, marks, explained}")
    vector(m.get("explained"), "map.explained", 2)
    for key in ("tokens", "marks"):
        for j, t in enumerate(m[key]):
            token(t, f"map.{key}[{j}]")
            if not plausible(t.get("x")) or not plausible(t.get("y")):
                bad(f"map.{key}[{j}] has no x and y")


def check_claims(doc: dict, p: Path, model: str) -> None:
    """Each sentence's tokens and each word's token are the ones the committed tokenizer gives
    that text, and each is listed once: a figure asked for one sentence never shows another's
    vectors. (Without a usable tokenizer the step that needs it says so; this check is skipped.)"""

    def bad(problem: str):
        raise DamagedFile(p, problem, FIX)

    try:
        seen: set = set()
        for i, s in enumerate(doc["sentences"]):
            if s["text"] in seen:
                bad(f"sentences[{i}] lists {s['text'][:60]!r} a second time")
            seen.add(s["text"])
            want = [t.id for t in tokens.encode(model, s["text"])]
            if [t["id"] for t in s["tokens"]] != want:
                bad(f"sentences[{i}] holds tokens other than those of {s['text'][:60]!r}")
        seen = set()
        for i, w in enumerate(doc["words"]):
            if w["word"] in seen:
                bad(f"words[{i}] lists {w['word'][:40]!r} a second time")
            seen.add(w["word"])
            try:
                want_id = word_token(model, w["word"])[0]
            except UnknownWord:
                bad(f"words[{i}] is {w['word'][:40]!r}, which is not one token of the vocabulary")
            if w["token"]["id"] != want_id:
                bad(f"words[{i}] holds the vector of token {w['token']['id']}, not of {w['word'][:40]!r} (token {want_id})")
    except tokens.NoTokenizer:
        return


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)
