"""`score-split` figures: why a head looks where it looks. One head's scaled score q·k/√d for one
cell (a query token, a key token), split into the parts of the residual stream that made it
(traces/<model>/splits.json, generator/model/score_parts.py): signed bars, largest first, that add
up to the score, beside the query's row of scores and weights. The key side splits the key (the
query whole), the query side the query; layer 1's table splits both. course.js lets the reader pick
another query, key or side from the head's every cell, shipped with the figure (CONTRACT.md).

A rotary model (splits.json `positions: rotary`) has no position part and no layer-1 table: its
positions enter only through the rotation of each query and key, which the figure says in words;
its references `unrotated` and `rotation` give the cell's score with the rotation left out, and
what the rotation adds (score − unrotated)."""

from __future__ import annotations

import html as html_lib

import numpy as np

from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..store import splits_file
from . import templating
from .causal_data import head_label, head_words, signed_style
from .context import Ctx, Figure, Missing, load_panel
from .format import diff2, f2, minus2, percent, shown, tok, token_label
from .grid import provenance
from .pending import traces_pending
from .pick import pick_head
from .ref_common import int_arg, ref_fail
from .token_names import resolve_token

# score: the cell's scaled score; weight: its attention weight; share(part): one part's share
# (token, position, L2H3, MLP1, biases; a table's `position.token`: query part, then key part);
# percent(part): that share of the score; top(n): the n largest shares, in words, with their
# values; largest: the largest share's words; head: "layer 1, head 4"; query, key: the tokens;
# side: "key" / "query" / "table"; rotary models only: unrotated: the cell's score with the rotation
# left out; rotation: score − unrotated, what the turn of q and k adds.
REFS = {"score": (0, 0), "weight": (0, 0), "share": (1, 1), "percent": (1, 1), "top": (1, 1), "largest": (0, 0),
        "head": (0, 0), "query": (0, 0), "key": (0, 0), "side": (0, 0), "unrotated": (0, 0), "rotation": (0, 0)}
ARGS: dict[str, tuple[str, ...]] = {"share": ("part",), "percent": ("part",), "top": ("n",)}
DECIMALS = 5  # the shipped parts, as splits.json keeps them


def part_words(part: str, token: str) -> str:
    """A part as a reader reads it: "position of ·ball", "output of layer 1, head 4"."""
    if part == "token":
        return f"token {token}"
    if part == "position":
        return f"position of {token}"
    if part.startswith("MLP"):
        return f"output of layer {part[3:]}'s MLP"
    if part.startswith("L"):
        layer, head = part[1:].split("H")
        return f"output of layer {layer}, head {head}"
    return "biases"


def cell_index(query: int, key: int) -> int:
    """The (query, key) cell's place among the cells on and below the diagonal, row by row."""
    return query * (query + 1) // 2 + key


def bars(entry: dict, side: str, parts: list[str], query: int, key: int, tokens: list[dict]) -> list[dict]:
    """The figure's bars for one cell: name (as the references name it), words, value; sorted by
    value, largest first, ties by name."""
    c = cell_index(query, key)
    qt, kt = token_label(tokens[query]), token_label(tokens[key])
    if side == "table":
        grid = np.asarray(entry["table"], dtype=float)[:, :, c]  # (query part, key part)
        three = ["token", "position", "biases"]
        rows = [(f"{a}.{b}", f"{part_words(a, qt)} (query) with {part_words(b, kt)} (key)", float(grid[i, j]))
                for i, a in enumerate(three) for j, b in enumerate(three)]
    else:
        values = np.asarray(entry[side], dtype=float)[:, c]  # (part,)
        token = kt if side == "key" else qt
        rows = [(p, part_words(p, token), float(v)) for p, v in zip(parts, values)]
    rows.sort(key=lambda r: (-r[2], r[0]))
    return [{"name": n, "words": w, "value": v} for n, w, v in rows]


def _splits(ctx: Ctx, d):
    if ctx.store is None:
        return None
    return splits_file.read(ctx.store.root, d.model)  # a damaged file: its own one line, naming it (markdown/kept_errors.store_failure)


def render(d, ctx: Ctx) -> str:
    panel = load_panel(d, d.model, d.sentence, ctx)
    splits = _splits(ctx, d) if panel is not None else None
    entry = None
    if panel is not None:
        layer, head = pick_head(d.pick, panel, d.where, d.kind, ctx)
        entry = splits.head(d.sentence, layer + 1, head + 1) if splits is not None and splits.revision == panel.meta["revision"] else None
        sentence = splits.sentence(d.sentence) if entry is not None else None
        if entry is None or sentence["ids"] != [t["id"] for t in panel.trace["tokens"]]:
            ctx.note_missing(Missing(d.model, Missing.TRACE, d.sentence), d.where)
            entry = None
    if entry is None:
        return traces_pending(d, ctx, d.model, [d.sentence])
    tokens = panel.tokens
    query = len(tokens) - 1 if d.token is None else resolve_token(d.token, tokens, d.where, f"{d.kind}: token")
    weights = panel.weights[layer, head]  # (query, key)
    if d.key is None:
        key = int(np.argmax(weights[query, : query + 1]))
    else:
        key = resolve_token(d.key, tokens, d.where, f"{d.kind}: key")
        if key > query:
            raise LessonError(d.where, f"{d.kind}: key #{key} comes after token #{query}, and a token cannot look ahead",
                              "choose a key at or before the token")
    parts = splits.parts(layer + 1)
    rows = bars(entry, d.side, parts, query, key, tokens)
    score = float(entry["score"][cell_index(query, key)])
    n = ctx.next_number()
    rotary = splits.positions == "rotary"
    unrotated = float(entry["scoreUnrotated"][cell_index(query, key)]) if rotary else None
    ctx.register(d, Figure("score-split", n, d, panels=[panel], layer=layer, head=head, focus=query,
                           numbers={"key": key, "rows": rows, "score": score, "side": d.side, "unrotated": unrotated}))
    scale = max(max(abs(r["value"]) for r in rows), 1e-9)
    shown_rows = [r | {"text": diff2(r["value"]), "style": signed_style(r["value"], scale),
                       "width": round(100 * abs(r["value"]) / scale, 1), "negative": r["value"] < 0} for r in rows]
    cells = range(query + 1)
    row = [{"token": tok(tokens[j]), "score": minus2(float(entry["score"][cell_index(query, j)])),
            "weight": f2(float(weights[query, j])), "chosen": j == key} for j in cells]
    data = {
        "layer": layer + 1, "head": head + 1, "side": d.side, "query": query, "key": key,
        "tokens": [token_label(t) for t in tokens], "parts": parts,
        "score": [round(float(x), DECIMALS) for x in entry["score"]],
        "weights": [[round(float(weights[i, j]), 5) for j in range(i + 1)] for i in range(len(tokens))],
        "key_split": entry["key"], "query_split": entry["query"],
    }
    if "table" in entry:
        data["table"] = entry["table"]
    if rotary:
        data["score_unrotated"] = entry["scoreUnrotated"]
    return templating.render(
        "score_split.html", n=n, model=d.model, rotary=rotary, head=head_words(layer, head), label=head_label(layer, head),
        query=tok(tokens[query]), key=tok(tokens[key]), side=d.side, rows=shown_rows, score=minus2(score),
        largest=shown_rows[0], row=row, payload=data, prov=provenance(ctx, [panel], d.caption),
    )


def _row(ref: Ref, rows: list[dict], name: str, rotary: bool = False) -> dict:
    for r in rows:
        if r["name"] == name:
            return r
    if rotary and name.split(".")[0] in ("position", "biases"):
        ref_fail(ref, f"this model has no {name.split('.')[0]} part: its positions enter only through the rotation of "
                      "query and key", "use {{ id.rotation }} for what the rotation adds, or name one of: "
                      + ", ".join(r["name"] for r in rows))
    ref_fail(ref, f"no part {name!r} in this figure", f"name one of: {', '.join(r['name'] for r in rows)}")


def ref(ref: Ref, fig: Figure) -> str:
    rows, score, key = fig.numbers["rows"], fig.numbers["score"], fig.numbers["key"]
    panel = fig.panels[0]
    if ref.name == "score":
        return minus2(score)
    if ref.name == "weight":
        return f2(float(panel.weights[fig.layer, fig.head, fig.focus, key]))
    if ref.name == "head":
        return head_words(fig.layer, fig.head)
    if ref.name == "query":
        return str(tok(panel.tokens[fig.focus]))
    if ref.name == "key":
        return str(tok(panel.tokens[key]))
    if ref.name == "side":
        return fig.numbers["side"]
    if ref.name == "largest":  # a part's words hold a token's text: escaped into the reference's HTML
        return html_lib.escape(rows[0]["words"])
    if ref.name in ("unrotated", "rotation"):
        unrotated = fig.numbers["unrotated"]
        if unrotated is None:
            ref_fail(ref, f"{fig.directive.model} has learned positions, so its scores have no rotation to leave out",
                     "use share(position) for what its position embedding adds")
        return minus2(unrotated) if ref.name == "unrotated" else diff2(score - unrotated)
    if ref.name == "top":
        k = int_arg(ref, ref.args[0], "count", 1, len(rows))
        order = sorted(rows, key=lambda r: (-abs(shown(r["value"])), r["name"]))[:k]
        return ", ".join(f"{html_lib.escape(r['words'])} {diff2(r['value'])}" for r in order)
    r = _row(ref, rows, ref.args[0], fig.numbers["unrotated"] is not None)
    if ref.name == "share":
        return diff2(r["value"])
    if shown(score) == 0:
        ref_fail(ref, "the score is 0.00, so a part has no share of it", "use share(...)")
    return percent(r["value"] / score)
