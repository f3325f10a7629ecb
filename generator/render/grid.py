"""One head's attention on one traced sentence, as attention and compare figures draw it: the
ranking behind the summary and the top-3 list, the pickers, the page's JSON and the provenance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from markupsafe import Markup

from .. import schema
from .context import Ctx, Panel
from .format import compact, f2, page_tokens, tok, token_shown


def ranked(row, i: int) -> list[int]:
    """Keys j <= i by weight descending, ties by position ascending."""
    return sorted(range(i + 1), key=lambda j: -row[j])


def top_entries(row, i: int, k: int = 3) -> list[int]:
    """The first k of ranked(); entries after the first whose 2-decimal text is 0.00 are dropped."""
    order = ranked(row, i)[:k]
    return order[:1] + [j for j in order[1:] if f2(row[j]) != "0.00"]


def entries_html(row, i: int, tokens: list[dict], k: int = 3) -> Markup:
    """'Lily 0.66, ·her 0.12, ·wanted 0.10' (tokens as spans)."""
    return Markup(", ").join(Markup(f"{tok(tokens[j])} {f2(row[j])}") for j in top_entries(row, i, k))


@dataclass
class Grid:
    """What the _grid.html macros draw: `panel` in (layer, head), focus row `focus` (0-based)."""

    panel: Panel
    layer: int
    head: int
    focus: int

    @property
    def tokens(self) -> list[dict]:
        return self.panel.tokens

    @property
    def weights(self) -> np.ndarray:
        return self.panel.weights[self.layer, self.head]  # (query, key)

    def rows(self) -> list:
        return self.weights.tolist()

    def entries(self, i: int) -> Markup:
        return entries_html(self.weights[i], i, self.tokens)

    def selects(self, partners: list | None = None) -> list[tuple[str, str, list[tuple[int, str]], int]]:
        """(control, label, [(value, text)], chosen) for the token, layer and head pickers.
        `partners` (compare): for each of this panel's tokens, the other sentence's token that
        stands for it, or None; named too where it differs ("1: Lily / Ben")."""
        n_layer, n_head = self.panel.weights.shape[:2]

        def name(j: int, t: dict) -> str:
            other = partners[j] if partners else None
            mine = token_shown(t)
            return mine if other is None or token_shown(other) == mine else f"{mine} / {token_shown(other)}"

        return [
            ("token", "Token", [(j, f"{j}: {name(j, t)}") for j, t in enumerate(self.tokens)], self.focus),
            ("layer", "Layer", [(j, f"Layer {j + 1}") for j in range(n_layer)], self.layer),
            ("head", "Head", [(j, f"Head {j + 1}") for j in range(n_head)], self.head),
        ]


def light_data(panel: Panel, layer: int, head: int) -> dict:
    """The course-data JSON of one attention panel: what the first paint needs. Of the weights,
    (layer, head, query, key), only the shown head's grid is here, every other head is null: a
    head's part (assets.head_parts) brings its grid when the head is first shown, and weights.js
    every head's for "All heads", so that a figure's first load stays small on GPT-2's 12 × 12
    heads too (CONTRACT.md, "Shipped weights")."""
    t = panel.trace
    n_layer, n_head = panel.weights.shape[:2]
    weights: list[list] = [[None] * n_head for _ in range(n_layer)]
    weights[layer][head] = [[compact(v) for v in row] for row in panel.weights[layer, head].tolist()]
    return {
        "key": t["key"],
        "model": t["model"],
        "text": t["text"],
        "meta": t["meta"],
        "tokens": page_tokens(t["tokens"]),
        "weights": weights,
    }


def trace_url(ctx: Ctx, panel: Panel, ext: str = "json") -> str:
    return f"{ctx.assets_url}traces/{panel.model}/{panel.key}.{ext}"


def parts_url(ctx: Ctx, panel: Panel) -> str:
    """`data-parts`: the trace's part folder (assets.head_parts), without a trailing slash."""
    return f"{ctx.assets_url}traces/{panel.model}/{panel.key}"


def provenance(ctx: Ctx, panels: list[Panel], caption: str | None, shown: Grid | None = None, others: tuple = ()) -> dict:
    """What _parts.html's provenance macro writes: the model as readers know it, then behind a
    disclosure its revision, the versions that traced it and the trace download links. `shown`:
    the grid an attention or compare figure opens on; its caption then starts with the head and
    token shown, which course.js rewrites as the reader changes them (CONTRACT.md, "Text that
    follows the figure"). `others`: a compare figure's other grids, whose token there is named
    too where it is another ("token ·Lily / ·Ben")."""
    meta = panels[0].meta
    also = []
    if shown is not None:
        named = {shown.tokens[shown.focus]["text"]}
        for g in others:
            t = g.tokens[g.focus]
            if t["text"] not in named:
                named.add(t["text"])
                also.append(t)
    return {
        "caption": caption,
        "shown": None if shown is None else {"layer": shown.layer, "head": shown.head, "token": shown.tokens[shown.focus], "also": also},
        "model": panels[0].model,
        "hf_name": meta.get("hfName"),
        "revision": schema.short_revision(meta.get("revision") or "unknown"),
        "versions": [f"{name} {version}" for name, version in sorted((meta.get("libraryVersions") or {}).items())],
        "schema_version": meta.get("schemaVersion"),
        "urls": [trace_url(ctx, p) for p in panels],
    }
