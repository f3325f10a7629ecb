"""`compare` figures: one head on two sentences side by side, with the focus row's differences.
Its references are attention's, with the sentence (1 or 2) as an extra last argument; without
one, `compare(her, Ben, Lily)` takes each weight from the first sentence that has its token."""

from __future__ import annotations

from pathlib import Path

from ..lessons.directives import Compare
from ..lessons.directives import parse_token_ref
from ..lessons.errors import LessonError
from ..lessons.refs import Ref, iter_refs
from ..lessons.source import read_text
from . import attention, templating
from .context import Ctx, Figure, Panel, load_panel
from .format import diff2, f2, tok
from .grid import Grid, light_data, provenance, trace_url
from .pending import traces_pending
from .refs import int_arg
from .tokens import token_hits

REFS = {k: (lo, hi + 1) for k, (lo, hi) in attention.REFS.items() if k != "sentence"} | {"sentence": (0, 1)}


def diff_rows(a: Panel, b: Panel, layer: int, head: int, focus: int) -> list[list[str]]:
    """Rows of the compare difference table: position, token A, weight A, token B, weight B, B − A."""
    ia, ib = min(focus, len(a.tokens) - 1), min(focus, len(b.tokens) - 1)
    wa, wb = a.weights[layer, head, ia], b.weights[layer, head, ib]  # (key,) each
    rows = []
    for j in range(max(ia, ib) + 1):
        cells = [str(j)]  # positions count from 0, <|endoftext|>
        for p, i, w in ((a, ia, wa), (b, ib, wb)):
            cells += [tok(p.tokens[j]), f2(w[j])] if j <= i else ["–", "–"]
        cells.append(diff2(wb[j] - wa[j]) if j <= ia and j <= ib else "–")
        rows.append(cells)
    return rows


# References whose first argument is the token that looks (its row).
ROW_REFS = ("weight", "score", "scaled", "top", "argmax", "compare")


def referenced_focus(d: Compare, panel: Panel, ctx: Ctx) -> int | None:
    """Where the page's prose points the figure: the position, in sentence 1, of the row its first
    reference reads (`{{ pair.weight(her, Lily) }}`: ·her). None without such a reference, or
    where the page's file cannot be read (the page's own pass reports a broken reference)."""
    text = read_text(Path(ctx.page)) if d.id is not None else None
    if text is None:
        return None
    try:
        for r in iter_refs(text, ctx.page):
            if r.target == d.id and r.name in ROW_REFS and r.args:
                hits = token_hits(parse_token_ref(r.args[0], r.where, "reference"), panel.tokens)
                if len(hits) == 1:
                    return hits[0]
    except LessonError:
        return None
    return None


def render(d: Compare, ctx: Ctx) -> str:
    panels = [load_panel(d, d.model, s, ctx) for s in d.sentences]
    if any(p is None for p in panels):
        return traces_pending(d, ctx, d.model, [s for s, p in zip(d.sentences, panels) if p is None])
    a, b = panels
    if a.weights.shape[:2] != b.weights.shape[:2]:
        raise LessonError(d.where, "compare: the two traces come from models of different shapes", "retrace both sentences with `make traces`")
    layer, head, focus = attention.chosen(d, a, ctx, "compare")  # rules are evaluated on the first sentence
    referenced = referenced_focus(d, a, ctx) if d.token is None and d.pick.rule != "best" else None
    focus = focus if referenced is None else referenced  # no `token:`: the row the prose reads, else the last
    n = ctx.next_number()
    out = templating.render(
        "compare.html", n=n, fid=f"fig-{n}",
        attrs={"data-model": a.model, "data-layer": layer, "data-head": head, "data-token": focus},
        grids=[Grid(p, layer, head, min(focus, len(p.tokens) - 1)) for p in panels],
        parts=[trace_url(ctx, p, "js") for p in panels],
        diff=diff_rows(a, b, layer, head, focus),
        prov=provenance(ctx, panels, d.caption),
        payload={"panels": [light_data(p, layer, head) for p in panels]},
    )
    ctx.register(d, Figure("compare", n, d, panels=list(panels), layer=layer, head=head, focus=focus))
    return out


def sentence_with(ref: Ref, fig: Figure, arg: str) -> Panel:
    """The first sentence holding both the focus token (the first argument) and `arg`; where none
    does, sentence 1, whose token list the error then shows."""
    for panel in fig.panels:
        if all(token_hits(parse_token_ref(a, ref.where, "reference"), panel.tokens) for a in (ref.args[0], arg)):
            return panel
    return fig.panels[0]


def compare_ref(ref: Ref, fig: Figure) -> str:
    """`{{ pair.compare(her, Ben, Lily) }}`: each weight in the first sentence that has its token
    (·her → Ben in sentence 2, ·her → Lily in sentence 1), resolved as `weight` refs are."""
    def weight(arg: str) -> float:
        one = Ref(ref.target, "weight", (ref.args[0], arg), ref.where, ref.raw)
        return float(attention.ref(one, fig, sentence_with(ref, fig, arg)))

    return attention.compare_words(weight(ref.args[1]), weight(ref.args[2]))


def ref(ref: Ref, fig: Figure) -> str:
    panel = fig.panels[0]
    if ref.name == "compare" and len(ref.args) == attention.REFS["compare"][1]:
        return compare_ref(ref, fig)
    if len(ref.args) > attention.REFS[ref.name][1]:
        panel = fig.panels[int_arg(ref, ref.args[-1], "sentence", 1, 2) - 1]
        ref = Ref(ref.target, ref.name, ref.args[:-1], ref.where, ref.raw)
    return attention.ref(ref, fig, panel)
