"""Scoreboard figures (CONTRACT.md, `scoreboard`): head-type scores from traces/<model>/heads.json.

``figures.render_scoreboard`` calls :func:`render`. For each score kind the figure holds a
section with the score's definition, a layer × head heatmap table (the attention grids' fixed
0–1 colour scale, :func:`generator.figures.cell_style`) and a sortable table of every head; each
row links to ``#fig-M:layer=..,head=..`` (1-based) of an example figure rendered right after the
scoreboard: an ordinary ``attention`` figure of the scoring trace that heads.json names for that
kind (the repeated random tokens for duplicate-token and induction, a natural sentence for
previous-token and sink), opened on the kind's top head. Kinds that share a scoring trace share
one example figure.

Missing or stale heads.json: the pending box, never invented numbers. Stand-in scores are refused
unless the build allows the stand-in (COURSE_ALLOW_STANDIN). No torch.
"""

from __future__ import annotations

from . import directives as D
from . import figures as F
from . import heads
from .directives import DirectiveError

SCROLL_STYLE = "max-height:24em;overflow-y:auto"  # the full list of a big model's heads scrolls
# When kinds share an example figure, it opens on the top head of the first of these.
OPENS_ON = ("induction", "previous-token", "duplicate-token", "sink")


class _WithIds:
    """A read-only view of a TraceStore whose ``load(model, text)`` returns the trace of one
    fixed id sequence, so that figures.render_attention can draw a scoring trace given by ids."""

    def __init__(self, store, ids):
        self._store, self._ids = store, ids

    def load(self, model, text, ids=None):
        return self._store.load(model, text, self._ids if ids is None else ids)

    def __getattr__(self, name):
        return getattr(self._store, name)


def pending(d: D.Scoreboard, ctx: F.Ctx) -> str:
    n, head = F.figure_open(ctx, "scoreboard", {"data-model": d.model, "data-pending": "true"}, "course-pending")
    ctx.missing.setdefault((d.model, "(head scores)"), []).append(d.where)
    F.register(ctx, d, F.Figure("scoreboard", n, d, pending=True))
    how = (
        "running <code>make traces</code> on a machine with a network downloads "
        "<code>openai-community/gpt2</code> at the pinned revision, traces the scoring texts and writes them "
        "(or set <code>COURSE_GPT2_PATH</code> to a local copy of the model)"
        if d.model == "gpt2"
        else "running <code>make traces</code> traces the scoring texts and writes them"
    )
    return (
        f'{head}<div class="course-pending-box" role="note"><p><strong>Head scores pending.</strong> '
        f"This scoreboard ranks every head of model <strong>{F.esc(d.model)}</strong> on "
        f"{F.esc(', '.join(d.scores))}. Its scores (<code>traces/{F.esc(d.model)}/heads.json</code>) "
        f"are not computed yet: {how}.</p></div></figure>"
    )


def load(d: D.Scoreboard, ctx: F.Ctx) -> heads.HeadScores | None:
    root = getattr(ctx.store, "root", None)
    if root is None:
        return None
    try:
        return heads.load_scores(root, d.model, allow_stand_in=ctx.standin_ok())
    except heads.StandInRefused as exc:
        raise DirectiveError(
            d.where,
            f"scoreboard: {exc}, not the real model",
            f"run `make traces` on a machine with the model (the stand-in is for tests: {F.STANDIN_ENV}=1)",
        ) from None


def example_figures(d: D.Scoreboard, scores: heads.HeadScores, ctx: F.Ctx) -> tuple[dict[str, int], list[str]]:
    """Render one attention figure per distinct scoring trace; returns ({kind: figure number},
    [html of each figure in order])."""
    by_trace: dict[tuple, list[str]] = {}
    for kind in d.scores:
        ex = scores.example(kind)
        by_trace.setdefault((ex["text"], tuple(ex["ids"]) if ex["ids"] is not None else None), []).append(kind)
    numbers, html = {}, []
    for (text, ids), kinds in by_trace.items():
        lead = min(kinds, key=OPENS_ON.index)  # the kind whose top head the figure opens on
        layer, head, _ = scores.top(lead, 1)[0]
        names = " and ".join(heads.TITLES[k].lower() for k in kinds)
        caption = (
            f"The scoring text for {names}, opened on the strongest {heads.NAMES[lead]} "
            "(the links in the scoreboard's tables open other heads here)."
        )
        ad = D.Attention(
            kind="attention", where=d.where, id=None, model=d.model, sentence=text,
            pick=D.Pick("fixed", layer + 1, head + 1), caption=caption,
        )
        saved = ctx.store
        ctx.store = _WithIds(saved, ids) if ids is not None else saved
        try:
            html.append(F.render_attention(ad, ctx))
        finally:
            ctx.store = saved
        for k in kinds:
            numbers[k] = ctx.count
    return numbers, html


def heatmap_html(kind: str, scores: heads.HeadScores) -> str:
    m = scores.matrix(kind)
    title = heads.TITLES[kind]
    cols = "".join(f'<th scope="col">Head {h + 1}</th>' for h in range(scores.n_head))
    rows = []
    for layer in range(scores.n_layer):
        cells = "".join(
            f'<td data-layer="{layer}" data-head="{h}" style="{F.cell_style(float(m[layer, h]))}">{F.f2(float(m[layer, h]))}</td>'
            for h in range(scores.n_head)
        )
        rows.append(f'<tr><th scope="row">Layer {layer + 1}</th>{cells}</tr>')
    caption = f"{F.esc(title)}: the score of every head, one row per layer. Colours use the same 0 to 1 scale as the attention grids."
    corner = '<th scope="col"><span class="course-visually-hidden">Layer</span></th>'
    return (
        f'<div class="course-table-wrap"><table class="course-table course-heatmap"><caption>{caption}</caption>'
        f"<thead><tr>{corner}{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def sortable_html(kind: str, scores: heads.HeadScores, fig_number: int) -> str:
    title = heads.TITLES[kind]
    th = "".join(
        f'<th scope="col" aria-sort="{"descending" if key == "score" else "none"}"><button type="button" data-sort="{key}">{label}</button></th>'
        for key, label in (("layer", "Layer"), ("head", "Head"), ("score", "Score"))
    ) + '<th scope="col">Example</th>'
    rows = "".join(
        f'<tr><td data-value="{l + 1}">{l + 1}</td><td data-value="{h + 1}">{h + 1}</td>'
        f'<td data-value="{s:.6g}">{F.f2(s)}</td>'
        f'<td><a href="#fig-{fig_number}:layer={l + 1},head={h + 1}" data-layer="{l}" data-head="{h}">layer {l + 1}, head {h + 1}</a></td></tr>'
        for l, h, s in scores.ranked(kind)
    )
    n = scores.n_layer * scores.n_head
    label = f"{title}: all {n} heads"
    return (
        f'<div class="course-table-wrap" style="{SCROLL_STYLE}" tabindex="0" role="region" aria-label="{F.esc(label)}">'
        f'<table class="course-table course-sortable"><caption>{F.esc(title)}: every head, highest score first. '
        f"Sort by any column; each link opens that head in figure {fig_number}.</caption>"
        f"<thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def section_html(kind: str, scores: heads.HeadScores, fig_number: int) -> str:
    title = heads.TITLES[kind]
    used = scores.doc.get("scoredOn", {}).get(kind, {})
    n_traces, n_queries = len(used.get("traces", [])), used.get("queries")
    over = ""
    if n_queries:
        texts = "text" if n_traces == 1 else "texts"
        over = f" Here it is averaged over {F.whole(n_queries)} tokens of {n_traces} scoring {texts}."
    l, h, s = scores.top(kind, 1)[0]
    return (
        f'<section class="course-score" data-score="{F.esc(kind)}">'
        f'<p class="course-score-title"><strong>{F.esc(title)}</strong></p>'
        f'<p class="course-score-def">Score: {F.esc(heads.DEFINITIONS[kind])}.{over} '
        f"Highest: layer {l + 1}, head {h + 1} ({F.f2(s)}). A head that spread its attention evenly over the "
        f"tokens it can see would score {F.f2(scores.chance(kind))}.</p>"
        f"{heatmap_html(kind, scores)}{sortable_html(kind, scores, fig_number)}</section>"
    )


def render(d: D.Scoreboard, ctx: F.Ctx) -> str:
    scores = load(d, ctx)
    if scores is None:
        return pending(d, ctx)
    for kind in d.scores:
        if kind not in scores.doc["scores"]:
            raise DirectiveError(d.where, f"scoreboard: {scores.path} has no '{kind}' scores", "run `make traces` to recompute the head scores")
    n, head = F.figure_open(ctx, "scoreboard", {"data-model": d.model})
    numbers, examples = example_figures(d, scores, ctx)
    intro = (
        f'<p class="course-summary">Every head of model {F.esc(d.model)} ({scores.n_layer} layers × '
        f"{scores.n_head} heads) scored on {len(d.scores)} patterns. A score is the share of a head's attention "
        "that lands where the pattern says: 1 means all of it, 0 none.</p>"
    )
    sections = "".join(section_html(k, scores, numbers[k]) for k in d.scores)
    data = {
        "model": d.model,
        "revision": scores.revision,
        "scores": {k: scores.matrix(k).tolist() for k in d.scores},
        "chance": {k: scores.chance(k) for k in d.scores},
        "examples": {k: f"fig-{numbers[k]}" for k in d.scores},
    }
    prov = (
        f'<figcaption class="course-prov">Model {F.esc(d.model)} (revision {F.esc(scores.revision[:12])}) · '
        f'scores computed by generator/heads.py from the traces named in <code>traces/{F.esc(d.model)}/heads.json</code></figcaption>'
    )
    F.register(ctx, d, F.Figure("scoreboard", n, d, numbers={"scores": scores, "examples": numbers}))
    board = f'{head}{intro}{sections}{prov}<script type="application/json" class="course-data">{F.script_json(data)}</script></figure>'
    return board + "".join(examples)
