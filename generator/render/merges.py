"""`merges` figures: BPE building one word from its bytes, step by step, with the real merges of
the model's merge list (generator/bpe.py replays them and checks the end against the tokenizer)."""

from __future__ import annotations

from .. import bpe, schema
from ..lessons.directives import Directive
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure
from .format import tok, whole
from .ref_common import int_arg

REFS = {"steps": (0, 0), "start": (0, 0), "rank": (1, 1), "pair": (1, 1), "result": (0, 0), "merges": (0, 0), "word": (0, 0), "bytes": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.rank(step) }}
ARGS: dict[str, tuple[str, ...]] = {"rank": ("step",), "pair": ("step",)}


def piece(text: str) -> dict:
    return {"text": text, "display": schema.display_token(text), "spoken": schema.spoken_token(text)}


def render(d: Directive, ctx: Ctx) -> str:
    try:
        start, steps = bpe.merge_steps(d.model, d.word)
    except bpe.NotOneWord as e:
        raise LessonError(d.where, f"merges: {e}", 'give one word, with its leading space if it has one: `word: " playing"`') from None
    n = ctx.next_number()
    total = len(bpe.merge_list(d.model))
    ctx.register(d, Figure("merges", n, d, numbers={"start": start, "steps": steps, "total": total}))
    rows = [{"rank": whole(s.rank), "left": piece(s.left), "right": piece(s.right), "pieces": [piece(p) for p in s.pieces]} for s in steps]
    payload = {"steps": len(steps)}
    return templating.render("merges.html", n=n, d=d, word=piece(d.word), start=[piece(p) for p in start], rows=rows,
                             total=whole(total), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    steps = nums["steps"]
    if ref.name == "steps":
        return str(len(steps))
    if ref.name == "start":
        return str(len(nums["start"]))
    if ref.name == "merges":
        return whole(nums["total"])
    if ref.name == "bytes":  # the tokens BPE starts from, one per byte value
        return whole(len(bpe.byte_chars()))
    if ref.name == "word":
        return tok(piece(fig.directive.word))
    if ref.name == "result":
        last = steps[-1].pieces if steps else nums["start"]
        return " + ".join(tok(piece(p)) for p in last)
    step = steps[int_arg(ref, ref.args[0], "step", 1, len(steps)) - 1]
    if ref.name == "rank":
        return whole(step.rank)
    return f"{tok(piece(step.left))} + {tok(piece(step.right))}"
