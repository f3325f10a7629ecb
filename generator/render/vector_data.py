"""What chapter 2's figures share: the frozen vectors.json they read (generator/store/vectors_file.py),
checked against the traces' model revision, the pending box while it lacks what a figure needs,
and the words and tokens figures and references name."""

from __future__ import annotations

from .. import schema
from ..store import vectors_file
from ..lessons.directives import Directive
from ..lessons.refs import Ref, lookalike_note
from ..lessons.values import parse_token_ref
from ..store.files import DamagedFile
from . import templating
from .context import Ctx, Figure, Missing
from .format import whole
from .ref_common import ref_fail
from .token_names import resolve_token


def load(d: Directive, ctx: Ctx, sentences=(), words=()) -> vectors_file.Vectors | None:
    """The model's vectors.json if it holds every sentence and word asked for; else None, noted
    as missing for the build log. A file from another revision than the traces is damaged."""
    vec = vectors_file.read(ctx.store.root, d.model) if ctx.store is not None else None
    lacking = [f"the sentence {s!r}" for s in sentences if vec is None or vec.sentence(s) is None]
    lacking += [f"the word {w!r}" for w in words if vec is None or vec.word(w) is None]
    if vec is not None:
        meta = ctx.store.model_meta(d.model)
        if meta is not None and meta.get("revision") != vec.revision:
            raise DamagedFile(vec.file, f"was written from model revision {schema.short_revision(vec.revision)}, but the traces are from {schema.short_revision(meta.get('revision'))}", vectors_file.FIX)
    for what in lacking:
        ctx.note_missing(Missing(d.model, Missing.VECTORS, what), d.where)
    return None if lacking else vec


def pending(d: Directive, ctx: Ctx, what: str) -> str:
    n = ctx.next_number()
    ctx.register(d, Figure(d.kind, n, d, pending=True))
    return templating.render("vectors_pending.html", n=n, kind=d.kind, model=d.model, what=what)


def provenance(vec: vectors_file.Vectors, caption: str | None = None) -> dict:
    return {"caption": caption, "model": vec.doc["model"], "revision": schema.short_revision(vec.revision)}


def word_entry(ref: Ref, vec: vectors_file.Vectors, word: str, known) -> dict:
    """The stored entry of a word a reference names; only words the figure lists are allowed."""
    if word not in known:
        note = lookalike_note(word, [(w, w) for w in known])
        ref_fail(ref, f"the figure has no word {word!r} (its words: {', '.join(known)}){note}", "name one of the figure's words, or add it to the figure")
    return vec.word(word)


def token_index(ref: Ref, tokens: list[dict], name: str) -> int:
    """A token of a stored sentence, named as elsewhere ('her', '·her', '#6')."""
    label = f"reference {{{{ {ref.raw} }}}}"
    return resolve_token(parse_token_ref(name, ref.where, label), tokens, ref.where, f"{label}: token")


def num(x: float, decimals: int = 2) -> str:
    """A vector's number as the figures write it: fixed decimals, a true minus (−0.55, as the
    course's other signed numbers), and never "−0.00"."""
    text = f"{x:.{decimals}f}"
    if text.startswith("-"):
        text = text[1:] if not text.strip("-0.") else "\u2212" + text[1:]
    return text


def num_value(x: float, decimals: int = 2) -> float:
    """The number num() shows, as a number again (for sums a reader does by hand)."""
    return float(f"{x:.{decimals}f}")


def dim_arg(ref: Ref, value: str, width: int) -> int:
    """A dimension as readers count it, 1 to width; returns it 0-based."""
    if not value.isdigit() or not 1 <= int(value) <= width:
        ref_fail(ref, f"dimension {value!r} is not a number from 1 to {whole(width)}", "count dimensions from 1")
    return int(value) - 1
