"""`ablation` figures: a layers × heads grid of what removing each head does to one measured
quantity at one position (a logit difference, a log-probability or the KL divergence), zero- or
mean-ablation, from the trace's causal block (generator/model/causal.py)."""

from __future__ import annotations

from markupsafe import Markup

from ..lessons.refs import Ref
from . import templating
from .causal_data import (
    ablation_effects, clean_measure, focused_panel, head_arg, head_label, head_words, measure_html, measure_name, ranked_heads,
    signed_style, target_tokens, verdict,
)
from .context import Ctx, Figure
from .format import diff2, f2, minus2, tok
from .grid import provenance
from .ref_common import int_arg, ref_fail, token_arg

# clean: the measure in the clean run; effect(head[, mode]): its change when the head is removed;
# ablated(head[, mode]): its value then; top(n[, mode]): the n heads that move it most, with their
# changes; others(head[, mode]): the largest change any other head makes; verdict(head[, mode]):
# "carries most of" / "carries part of" / "carries a small part of" / "works against", from the
# share of the clean value that goes with the head; head(n[, mode]): the n-th of them, in words.
REFS = {"clean": (0, 0), "effect": (1, 2), "ablated": (1, 2), "top": (1, 2), "others": (1, 2),
        "verdict": (1, 2), "head": (1, 2), "measure": (0, 0), "token": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.effect(head, ablation) }}
ARGS: dict[str, tuple[str, ...]] = {
    "effect": ("head", "ablation"), "ablated": ("head", "ablation"), "top": ("n", "ablation"),
    "others": ("head", "ablation"), "verdict": ("head", "ablation"), "head": ("rank", "ablation"),
}
ABLATION_WORDS = {"zero": "replaced by zeros", "mean": "replaced by its average output over the natural scoring sentences"}


def measure_text(value: float, targets: list[dict]) -> str:
    """The measure itself: a logit difference with its sign (+7.32), a log-probability with a true
    minus (−0.19)."""
    return diff2(value) if len(targets) == 2 else minus2(value)


def effect_text(value: float, targets: list[dict]) -> str:
    """A cell's number: a signed change of a logit difference or log-probability; a KL divergence
    (no targets) is the distance itself, never below 0, so it has no sign."""
    return diff2(value) if targets else f2(value)


def render(d, ctx: Ctx) -> str:
    targets = target_tokens(d.model, d.targets, d.where, d.kind)
    panel, pos, pending = focused_panel(d, ctx, targets)
    if panel is None:
        return pending
    grid_fig = None
    if d.grid is not None:
        grid_fig = ctx.figures.get(d.grid)
        if grid_fig is None and d.grid in ctx.failed_ids:  # that figure's own mistake is said: no second one here
            pass
        elif grid_fig is None or grid_fig.kind != "attention":
            from ..lessons.errors import LessonError
            raise LessonError(d.where, f"ablation: grid '{d.grid}' is not the id of an attention figure above", "give `grid:` the id of an earlier attention figure, or leave it out")
    n = ctx.next_number()
    fig = Figure("ablation", n, d, panels=[panel], focus=pos, numbers={"targets": targets})
    ctx.register(d, fig)
    modes = panel.trace["causal"]["ablations"]
    order = [d.ablation] + [m for m in modes if m != d.ablation]
    grids = []
    for mode in order:
        eff = ablation_effects(panel, pos, targets, mode)
        scale = max(abs(float(eff.max())), abs(float(eff.min())), 1e-9)
        rows = []
        for l in range(eff.shape[0]):
            cells = []
            for h in range(eff.shape[1]):
                link = None
                if grid_fig is not None and grid_fig.panels and grid_fig.panels[0].trace["text"] == panel.trace["text"]:
                    link = f"#fig-{grid_fig.number}:layer={l + 1},head={h + 1},token={pos}"
                cells.append({"text": effect_text(float(eff[l, h]), targets), "style": signed_style(float(eff[l, h]), scale),
                              "label": head_label(l, h), "link": link})
            rows.append(cells)
        top = ranked_heads(eff)[0]
        grids.append({"mode": mode, "words": ABLATION_WORDS[mode], "rows": rows, "top": head_words(top[0], top[1]),
                      "top_effect": effect_text(top[2], targets)})
    clean = clean_measure(panel, pos, targets)
    main = grids[0]
    return templating.render(
        "ablation.html", n=n, model=d.model, token=tok(panel.tokens[pos]), measure=measure_name(targets),
        clean=None if clean is None else measure_text(clean, targets),
        main=main, others=grids[1:], n_head=len(main["rows"][0]), prov=provenance(ctx, [panel], d.caption),
    )


def _mode(ref: Ref, fig: Figure, args: list[str]) -> str:
    modes = fig.panels[0].trace["causal"]["ablations"]
    mode = args[0] if args else fig.directive.ablation
    if mode not in modes:
        ref_fail(ref, f"{mode!r} is not an ablation the trace holds ({', '.join(modes)})", "write zero or mean")
    return mode


def ref(ref: Ref, fig: Figure) -> str:
    panel, pos, targets = fig.panels[0], fig.focus, fig.numbers["targets"]
    L, H = panel.weights.shape[:2]
    clean = clean_measure(panel, pos, targets)
    if ref.name == "measure":
        return measure_html(targets)
    if ref.name == "token":
        return str(tok(panel.tokens[pos]))
    if ref.name == "clean":
        if clean is None:
            ref_fail(ref, "the KL divergence of the clean run is 0", "use effect(...) or top(...)")
        return measure_text(clean, targets)
    if ref.name in ("top", "head"):
        count = int_arg(ref, ref.args[0], "count" if ref.name == "top" else "rank", 1, L * H)
        ranked = ranked_heads(ablation_effects(panel, pos, targets, _mode(ref, fig, ref.args[1:])))
        if ref.name == "head":
            l, h, _ = ranked[count - 1]
            return head_words(l, h)
        return ", ".join(f"{head_label(l, h)} {effect_text(e, targets)}" for l, h, e in ranked[:count])
    l, h = head_arg(ref, ref.args[0], L, H)
    eff = ablation_effects(panel, pos, targets, _mode(ref, fig, ref.args[1:]))
    e = float(eff[l, h])
    if ref.name == "effect":
        return effect_text(e, targets)
    if ref.name == "others":
        rest = [abs(float(eff[a, b])) for a in range(L) for b in range(H) if (a, b) != (l, h)]
        return f2(max(rest))
    if clean is None:
        ref_fail(ref, f"'{ref.name}' needs a measured logit difference or log-probability, not the KL divergence", "give the figure `targets:`")
    if ref.name == "ablated":
        return measure_text(clean + e, targets)
    if len(targets) != 2:
        ref_fail(ref, "a verdict needs a logit difference (two targets)", "give the figure `targets: [her, his]`")
    if len(ref.args) == 1:  # a verdict with no method claims to hold whichever way the head is removed
        modes = panel.trace["causal"]["ablations"]
        words = {m: verdict(-float(ablation_effects(panel, pos, targets, m)[l, h]), clean) for m in modes}
        if len(modes) < 2 or len(set(words.values())) > 1:
            said = ", ".join(f"with {m}: {w!r}" for m, w in words.items())
            ref_fail(ref, f"the verdict on {ref.args[0]} is not the same under every way of removing it ({said})",
                     f"scope it: {{{{ {ref.target}.verdict({ref.args[0]}, zero) }}}}, and say in words which removal it holds for")
    return verdict(-e, clean)


SLOT = "\u27e6{}\u27e7"  # ⟦name⟧: where the playground writes a number (generator/assets/play/ablation.js)


def live_template(n: int, n_layer: int, n_head: int, grid: int | None) -> str:
    """This figure as ablation.html writes it, for the playground to fill in the page: its number
    `n`, zero-ablation first and mean in the details, each cell linked to attention figure
    `grid`, slots where the sentence's token, measure and numbers go, no provenance line (the
    page writes its own). Every cell's text and colour, and each slot, are set there as text."""
    slot = SLOT.format
    token = Markup(f'<span class="course-tok" aria-label="{slot("token-spoken")}">{slot("token")}</span>')
    grids = []
    for mode in ("zero", "mean"):
        rows = [[{"text": slot("cell"), "style": "", "label": head_label(l, h),
                  "link": None if grid is None else f"#fig-{grid}:layer={l + 1},head={h + 1},token={slot('pos')}"}
                 for h in range(n_head)] for l in range(n_layer)]
        grids.append({"mode": mode, "words": ABLATION_WORDS[mode], "rows": rows, "top": slot(f"top.{mode}"),
                      "top_effect": slot(f"effect.{mode}")})
    return templating.render("ablation.html", n=n, model="tiny", token=token, measure=slot("measure"), clean=slot("clean"),
                             main=grids[0], others=grids[1:], n_head=n_head, prov=None)
