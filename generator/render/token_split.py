"""`tokens` figures: sentences cut into tokens by each model's committed tokenizer, side by side,
with ids, the leading-space dot, the count and the words the tokenizers cut differently; a
picker over the figure's sentences. No trace is needed: generator/tokens.py and bpe.py read the
tokenizer files (no torch)."""

from __future__ import annotations

from markupsafe import Markup

from .. import bpe, tokens
from ..lessons.directives import Directive
from ..lessons.refs import Ref, lookalike_note
from . import templating
from .context import Ctx, Figure
from .format import tok, whole
from .ref_common import int_arg, ref_fail

REFS = {
    "count": (1, 2), "pieces": (2, 3), "split": (2, 3), "id": (2, 3), "vocab": (1, 1), "eot": (1, 1),
    "differ": (0, 1), "sentences": (0, 0),
}
# the arguments' names, as the reference for authors writes them: {{ id.count(model, sentence) }}
ARGS: dict[str, tuple[str, ...]] = {
    "count": ("model", "sentence"), "pieces": ("model", "word", "sentence"),
    "split": ("model", "word", "sentence"), "id": ("model", "word", "sentence"), "vocab": ("model",),
    "eot": ("model",), "differ": ("sentence",),
}
NAMES = {"tiny": "the tiny model", "gpt2": "GPT-2"}  # in running text
HEADS = {"tiny": "Tiny model", "gpt2": "GPT-2"}  # above a column


def words_of(text: str) -> list[str]:
    """The sentence's words, as the differences list names them (punctuation dropped)."""
    out = []
    for w in text.split():
        w = w.strip(".,!?;:\"'()")
        if w and w not in out:
            out.append(w)
    return out


def sentence_view(text: str, models: tuple[str, ...]) -> dict:
    eot = tokens.EOT
    split = {m: bpe.split(m, text) for m in models}
    columns = []
    for m in models:
        first = {"id": tokens.bos_id(m), "text": eot, "display": eot, "spoken": "end of text"}
        pieces = [piece_dict(p) for p in split[m]]
        columns.append({"model": m, "name": HEADS.get(m, m), "tokens": [first] + pieces, "count": len(pieces)})
    differ = []
    if len(models) == 2:
        a, b = models
        for w in words_of(text):
            pa, pb = (bpe.word_pieces(split[m], text, w) for m in models)
            if pa is not None and pb is not None and [p.text for p in pa] != [p.text for p in pb]:
                differ.append({"word": w, "a": [piece_dict(p) for p in pa], "b": [piece_dict(p) for p in pb]})
    return {"text": text, "columns": columns, "differ": differ}


def piece_dict(p: bpe.Piece) -> dict:
    return {"id": p.id, "text": p.text, "display": p.display, "spoken": p.spoken}


def render(d: Directive, ctx: Ctx) -> str:
    views = [sentence_view(s, d.models) for s in d.sentences]
    n = ctx.next_number()
    vocab = {m: whole(tokens.vocab_size(m)) for m in d.models}
    ctx.register(d, Figure("tokens", n, d, numbers={"views": views}))
    payload = {"models": list(d.models), "sentences": [{"text": v["text"], "tokens": {c["model"]: c["tokens"] for c in v["columns"]}} for v in views]}
    return templating.render("tokens.html", n=n, d=d, views=views, vocab=vocab, names=NAMES, payload=payload)


def joined(pieces: list[dict]) -> Markup:
    return Markup(" + ").join(tok(p) for p in pieces)


def ref(ref: Ref, fig: Figure) -> str:
    d = fig.directive
    views = fig.numbers["views"]
    if ref.name == "sentences":
        return str(len(views))
    if ref.name == "differ":
        view = views[sentence_arg(ref, ref.args[0] if ref.args else "1", views) - 1]
        return str(len(view["differ"]))
    model = ref.args[0]
    if model not in d.models:
        ref_fail(ref, f"the figure shows no model {model!r} (its models: {', '.join(d.models)})", f"use one of: {', '.join(d.models)}")
    if ref.name == "vocab":
        return whole(tokens.vocab_size(model))
    if ref.name == "eot":
        return str(tokens.bos_id(model))
    last = {"count": 1}.get(ref.name, 2)  # where the optional sentence number stands
    view = views[sentence_arg(ref, ref.args[last], views) - 1] if len(ref.args) > last else views[0]
    column = next(c for c in view["columns"] if c["model"] == model)
    if ref.name == "count":
        return str(column["count"])
    word = ref.args[1]
    pieces = bpe.word_pieces(bpe.split(model, view["text"]), view["text"], word)
    if pieces is None:
        words = words_of(view["text"])
        note = lookalike_note(word, [(w, w) for w in words])
        ref_fail(ref, f"no word {word!r} in {view['text']!r} (its words: {', '.join(words)}){note}", "name a whole word of the sentence")
    if ref.name == "pieces":
        return str(len(pieces))
    if ref.name == "split":
        return joined([piece_dict(p) for p in pieces])
    if len(pieces) != 1:
        ref_fail(ref, f"{word!r} is {len(pieces)} tokens in {model}, so it has no single id", f"use {{{{ {ref.raw.split('.')[0]}.split({model}, {word}) }}}} to show its tokens")
    return str(pieces[0].id)


def sentence_arg(ref: Ref, value: str, views: list[dict]) -> int:
    return int_arg(ref, value, "sentence", 1, len(views))
