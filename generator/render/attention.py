"""`attention` figures: one head on one sentence, and the references to it (shared by compare)."""

from __future__ import annotations

import base64
from dataclasses import replace

import numpy as np

from markupsafe import Markup

from ..lessons.directives import Attention
from ..lessons.values import Pick, TokenRef
from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure, load_panel
from .format import esc, f2, shown, tok
from .grid import Grid, entries_html, light_data, parts_url, provenance, ranked
from .pending import traces_pending
from .pick import check_shows, clearest_row, pick_head, rule_words
from .ref_common import int_arg, ref_fail, token_arg
from .token_names import resolve_token

REFS: dict[str, tuple[int, int]] = {
    "layer": (0, 0), "head": (0, 0), "layer0": (0, 0), "head0": (0, 0), "weight": (2, 2), "score": (2, 2),
    "scaled": (2, 2), "top": (1, 2), "argmax": (1, 1), "tokens": (0, 0), "token": (1, 1), "rule": (0, 0),
    "sentence": (0, 0), "compare": (3, 3), "valuenorm": (1, 1), "moved": (2, 2), "othernorms": (1, 1), "selfmean": (0, 0),
    "headsfirst": (2, 2), "allheads": (2, 2),
}
# the arguments' names, as the reference for authors writes them: {{ id.weight(from, to) }}
ARGS: dict[str, tuple[str, ...]] = {
    "weight": ("from", "to"), "score": ("from", "to"), "scaled": ("from", "to"), "top": ("from", "n"),
    "argmax": ("from",), "token": ("position",), "compare": ("from", "to", "than"), "valuenorm": ("token",),
    "moved": ("from", "to"), "othernorms": ("token",), "headsfirst": ("from", "to"), "allheads": ("from", "to"),
}
# valuenorm(token): ‖v_j W_O‖, the size of what this head hands on from that token (Kobayashi et
# al. 2020); moved(from, to): the weight times that size, what `to` really hands `from`;
# othernorms(token): the median valuenorm of every other token; selfmean: the head's average weight
# on the token itself, over every row but <|endoftext|>'s; headsfirst(from, to): how many of the
# model's heads give `to` the largest weight of `from`'s row ("2 of the 16"); allheads(from, to):
# the weight from `from` to `to` averaged over every head.
# `{{ id.compare(her, Ben, Lily) }}` says "about the same as" when the two weights, as shown (2
# decimals), differ by less than this; otherwise "more than" or "less than".
SAME_WITHIN = 0.05


def compare_words(a: float, b: float) -> str:
    """How weight `a` reads against weight `b`, compared at the 2 decimals the page shows."""
    diff = round(shown(a) - shown(b), 2)
    if abs(diff) < SAME_WITHIN:
        return "about the same as"
    return "more than" if diff > 0 else "less than"


def focus_of(d, tokens: list[dict], kind: str) -> int:
    """The focus row: the directive's `token`, or the last token."""
    return len(tokens) - 1 if d.token is None else resolve_token(d.token, tokens, d.where, f"{kind}: 'token'")


def example_fix(kind: str) -> str:
    return f"choose another head (`pick: {{best: {kind}, rank: 2}}`), another focus `token:` or another sentence"


def chosen(d, panel, ctx: Ctx, kind: str) -> tuple[int, int, int]:
    """(layer, head, focus) of a figure on `panel`. A best-of-kind pick is an example of its kind:
    without a `token:` it opens on the row that shows the kind most clearly, and the build fails
    unless the focus row's largest weight is where the kind looks."""
    layer, head = pick_head(d.pick, panel, d.where, kind, ctx)
    if d.pick.rule == "best" and d.token is None:
        focus = clearest_row(d.pick.kind, panel, layer, head)
    else:
        focus = focus_of(d, panel.tokens, kind)
    if d.pick.rule == "best":
        check_shows(d.pick.kind, panel, layer, head, focus, d.where, example_fix(d.pick.kind))
    return layer, head, focus


def with_pattern_note(prov: dict, d, ctx: Ctx) -> dict:
    """A figure marked `pattern-only: true` says in its caption line that its head, picked by its
    score, is only a pattern (_pattern_only.html), and its job may go untested on the page."""
    if getattr(d, "pattern_only", False):  # the scoreboard's example grids are not marked: the board says it
        ctx.pattern_only.add(d.where)
        prov["pattern_only"] = "this head was picked by its score"
    return prov


def play_link(play_url: str, text: str, layer: int, head: int, focus: int) -> str:
    """The playground on this sentence and head (generator/assets/play/page.js reads the hash:
    the sentence as base64url UTF-8, then layer and head counting from 1 and the token from 0, as
    the chapters' addresses count)."""
    s = base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")
    return f"{play_url}#s={s}&layer={layer + 1}&head={head + 1}&token={focus}"


def group_heads(panel, layer: int, head: int) -> tuple[int, list[int]]:
    """(group, its query heads), 0-based: the heads that read the key and value `head` reads. A
    schema-5 trace says each head's `kvHead`; an older one, a model whose every head has its own."""
    heads = panel.trace["layers"][layer]["heads"]
    kv = [h.get("kvHead", i) for i, h in enumerate(heads)]
    return kv[head], [i for i, g in enumerate(kv) if g == kv[head]]


def group_label(layer: int, group: int, members: list[int]) -> str:
    """What a group of query heads is called on the page, 0-based in, as a reader counts out."""
    return f"Layer {layer + 1}, heads {' and '.join(str(h + 1) for h in members)} share one key and value: group {group + 1}."


def group_labels(panel) -> list[list[dict]]:
    """Every layer's groups, each {"heads": its query heads (0-based), "label"}: what course.js
    shows when a reader takes a group figure to another layer or head (the label is computed
    here, once, not again in JavaScript)."""
    out = []
    for layer, row in enumerate(panel.trace["layers"]):
        groups: dict[int, list[int]] = {}
        for h, head in enumerate(row["heads"]):
            groups.setdefault(head.get("kvHead", h), []).append(h)
        out.append([{"heads": members, "label": group_label(layer, g, members)} for g, members in sorted(groups.items())])
    return out


def render(d: Attention, ctx: Ctx, ids=None) -> str:
    panel = load_panel(d, d.model, d.sentence, ctx, ids)
    if panel is None:
        return traces_pending(d, ctx, d.model, [d.sentence])
    layer, head, focus = chosen(d, panel, ctx, "attention")
    if d.heads == "group":
        group, members = group_heads(panel, layer, head)
        figures = [render(replace(d, heads="one"), ctx, ids) if h == head else
                   render(replace(d, heads="one", id=None, pattern_only=False, pick=Pick("fixed", layer + 1, h + 1),
                                  token=TokenRef(index=focus), caption=None), ctx, ids) for h in members]
        return templating.render("attention_group.html", figures=[Markup(f) for f in figures],
                                 label=group_label(layer, group, members), groups=group_labels(panel))
    attrs = {
        "data-trace-key": panel.key,
        "data-model": panel.model,
        "data-parts": parts_url(ctx, panel),
        "data-layer": layer,
        "data-head": head,
        "data-token": focus,
        "data-show-heads": "true" if d.show_heads else "false",
    }
    n = ctx.next_number()
    g = Grid(panel, layer, head, focus)
    prov = provenance(ctx, [panel], d.caption, g)
    if ctx.play_url and panel.model == "tiny" and panel.trace.get("ids") is None:
        prov["play"] = play_link(ctx.play_url, panel.trace["text"], layer, head, focus)
    out = templating.render(
        "attention.html", n=n, fid=f"fig-{n}", attrs=attrs, g=g,
        prov=with_pattern_note(prov, d, ctx), payload=light_data(panel, layer, head),
    )
    ctx.register(d, Figure("attention", n, d, panels=[panel], layer=layer, head=head, focus=focus))
    return out


def ref(ref: Ref, fig: Figure, panel=None) -> str:
    """An attention reference on `panel` (default: the figure's only one)."""
    panel = panel or fig.panels[0]
    args, name = ref.args, ref.name
    toks = panel.tokens
    w = panel.weights[fig.layer, fig.head]  # (query, key)

    def pair(to: int = 1) -> tuple[int, int]:
        q, k = token_arg(ref, panel, args[0], "from"), token_arg(ref, panel, args[to], "to")
        if k > q:
            ref_fail(ref, f"#{k} comes after #{q}, and a token cannot look ahead", "name an earlier token second")
        return q, k

    if name in ("layer", "head"):
        return str((fig.layer if name == "layer" else fig.head) + 1)
    if name in ("layer0", "head0"):  # for the Code views, which count from 0
        return str(fig.layer if name == "layer0" else fig.head)
    if name in ("score", "scaled"):
        q, k = pair()
        h = panel.trace["layers"][fig.layer]["heads"][fig.head]
        return f2(h["scores" if name == "score" else "scaledMasked"][q][k])
    if name == "tokens":
        return str(len(toks))
    if name == "sentence":
        return esc(panel.trace["text"])
    if name == "token":
        return tok(toks[int_arg(ref, args[0].lstrip("#"), "position", 0, len(toks) - 1)])
    if name == "rule":
        return rule_words(fig.directive.pick, fig.panels[0], fig.directive.where)
    if name == "weight":
        q, k = pair()
        return f2(w[q, k])
    if name == "compare":  # the focus's weight on the second token against its weight on the third
        return compare_words(w[pair(1)], w[pair(2)])
    if name == "top":
        q = token_arg(ref, panel, args[0], "token")
        k = int_arg(ref, args[1], "count", 1, q + 1) if len(args) > 1 else 3
        return entries_html(w[q], q, toks, k)
    if name == "argmax":
        q = token_arg(ref, panel, args[0], "token")
        return tok(toks[ranked(w[q], q)[0]])
    if name in ("headsfirst", "allheads"):
        q, k = pair()
        every = panel.weights[:, :, q, : q + 1]  # (layer, head, key)
        if name == "allheads":
            return f2(float(every[:, :, k].mean()))
        firsts = sum(1 for row in every.reshape(-1, q + 1) if ranked(row, q)[0] == k)
        return f"{firsts} of the {every.shape[0] * every.shape[1]}"
    norms = panel.trace["causal"]["valueNorms"][fig.layer, fig.head]  # (token,)
    if name == "valuenorm":
        return f2(norms[token_arg(ref, panel, args[0], "token")])
    if name == "othernorms":
        j = token_arg(ref, panel, args[0], "token")
        return f2(float(np.median(np.delete(norms, j))))
    if name == "moved":
        q, k = pair()
        return f2(float(w[q, k]) * float(norms[k]))  # the exact weight: 0.995 × 1.119 is 1.11, not 1.00 × 1.119
    if name == "selfmean":
        return f2(float(np.mean(np.diag(w)[1:])))
    raise AssertionError(name)
