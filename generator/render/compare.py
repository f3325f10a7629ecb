"""`compare` figures: one head on two sentences side by side, with the focus row's differences.
Its references are attention's, with the sentence (1 or 2) as an extra last argument; without
one, `compare(her, Ben, Lily)` takes each weight from the first sentence that has its token.

The sentences need not line up position by position ("One day, Lily wanted to play with her"
against "The dog saw Lily and wanted to play with her"): their tokens are aligned first, and the
figure follows the same token in both (·her at 9 in one, at 10 in the other)."""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from ..lessons.directives import Compare
from ..lessons.directives import parse_token_ref
from ..lessons.errors import LessonError
from ..lessons.refs import Ref, iter_refs
from ..lessons.source import read_text
from . import attention, templating
from .context import Ctx, Figure, Panel, load_panel
from .format import f2, shown_diff, tok
from .grid import Grid, light_data, parts_url, provenance
from .pending import traces_pending
from .ref_common import int_arg
from .token_names import token_hits

REFS = {k: (lo, hi + 1) for k, (lo, hi) in attention.REFS.items() if k != "sentence"} | {"sentence": (0, 1)}
ARGS = {k: attention.ARGS.get(k, ()) + ("sentence",) for k in REFS}  # the sentence, 1 or 2, last


@dataclass(frozen=True)
class Alignment:
    """Which token of sentence 2 stands for which of sentence 1. `pairs`: (position in 1, position
    in 2) in reading order, None where a token has no partner. Equal stretches pair up, and so do
    the tokens of a stretch that differs (Lily for Ben), one for one; what is left of a longer
    stretch (·and in "Lily and wanted") stands alone. `to2[i]`: the row sentence 2 shows while
    sentence 1 shows row i (i's partner, else the partner of the nearest partnered token before
    it); `to1[j]` the other way round."""

    pairs: tuple[tuple[int | None, int | None], ...]
    to2: tuple[int, ...]
    to1: tuple[int, ...]

    @property
    def in_step(self) -> bool:
        """Every token's partner sits at its own position: the table reads position by position."""
        return all(i == j for i, j in self.pairs)

    def payload(self) -> dict:
        """What course.js reads (the figure's `align`): the same three lists, as JSON arrays."""
        return {"pairs": [list(pair) for pair in self.pairs], "to2": list(self.to2), "to1": list(self.to1)}

    @property
    def partners(self) -> list[int | None]:
        """Each token of sentence 1's partner in sentence 2, None where it has none."""
        out: list[int | None] = [None] * len(self.to2)
        for i, j in self.pairs:
            if i is not None:
                out[i] = j
        return out


def align(a: list[dict], b: list[dict]) -> Alignment:
    texts_a, texts_b = [t["text"] for t in a], [t["text"] for t in b]  # one text, one token id
    pairs: list[tuple[int | None, int | None]] = []
    for _, i1, i2, j1, j2 in SequenceMatcher(None, texts_a, texts_b, autojunk=False).get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            pairs.append((i1 + k if i1 + k < i2 else None, j1 + k if j1 + k < j2 else None))
    return Alignment(tuple(pairs), _follow(pairs, 0, len(a)), _follow(pairs, 1, len(b)))


def _follow(pairs, side: int, n: int) -> tuple[int, ...]:
    """For each position of one side, the other side's partner, or the last partner before it."""
    out, last = [0] * n, 0
    for pair in pairs:
        mine, theirs = pair[side], pair[1 - side]
        if theirs is not None:
            last = theirs
        if mine is not None:
            out[mine] = last if theirs is None else theirs
    return tuple(out)


def diff_rows(a: Panel, b: Panel, al: Alignment, layer: int, head: int, focus: int) -> list[list[str]]:
    """Rows of the compare difference table for row `focus` of sentence 1 and its partner row in
    sentence 2: position, token 1, weight 1, token 2, weight 2, 2 − 1 (of the weights as shown),
    partners on one row.
    Positions count from 0, <|endoftext|>; "4 / 5" where the partners sit at different places."""
    ia, ib = focus, al.to2[focus]
    wa, wb = a.weights[layer, head, ia], b.weights[layer, head, ib]  # (key,) each
    rows = []
    for i, j in al.pairs:
        seen_a, seen_b = i is not None and i <= ia, j is not None and j <= ib
        if not (seen_a or seen_b):
            continue
        cells = [str(i) if i == j else f"{'–' if i is None else i} / {'–' if j is None else j}"]
        cells += [tok(a.tokens[i]), f2(wa[i])] if seen_a else ["–", "–"]
        cells += [tok(b.tokens[j]), f2(wb[j])] if seen_b else ["–", "–"]
        cells.append(shown_diff(wa[i], wb[j]) if seen_a and seen_b else "–")
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
    al = align(a.tokens, b.tokens)
    n = ctx.next_number()
    grids = [Grid(a, layer, head, focus), Grid(b, layer, head, al.to2[focus])]
    out = templating.render(
        "compare.html", n=n, fid=f"fig-{n}",
        attrs={"data-model": a.model, "data-layer": layer, "data-head": head, "data-token": focus},
        grids=grids,
        partners=[b.tokens[j] if j is not None else None for j in al.partners],
        in_step=al.in_step,
        parts=[parts_url(ctx, p) for p in panels],
        diff=diff_rows(a, b, al, layer, head, focus),
        prov=attention.with_pattern_note(provenance(ctx, panels, d.caption, grids[0], tuple(grids[1:])), d, ctx),
        payload={"panels": [light_data(p, layer, head) for p in panels],
                 "align": al.payload()},
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
