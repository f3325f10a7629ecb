"""The rendering stage: a parsed directive and the traces it names -> HTML (CONTRACT.md).

One module per figure kind, each with ``render(directive, ctx)``, the references it answers
(``REFS``: name -> (fewest, most) arguments) and ``ref(ref, figure)``; its HTML comes from
``templates/<kind>.html``. :data:`KINDS` is the registry. Nothing here reads Markdown or writes
files, and nothing imports torch. Every lesson mistake raises
:class:`generator.lessons.errors.LessonError` (one line: ``path:line: problem. Fix: remedy``).
"""

from __future__ import annotations

import re
from types import ModuleType

from ..lessons.directives import DIRECTIVE_KINDS, Directive
from ..lessons.refs import Ref
from . import attention, compare, models, pending, predictions, scoreboard, softmax, stepper, training
from . import embedding, layernorm, merges, neighbours, token_split, vector_map  # chapters 1 and 2
from . import ablation, attribution, circuit, lens, patching  # the causal chapter
from .context import Ctx
from .refs import check_arity, ref_fail

KINDS: dict[str, ModuleType] = {
    "attention": attention,
    "compare": compare,
    "stepper": stepper,
    "softmax": softmax,
    "scoreboard": scoreboard,
    "training": training,
    "predictions": predictions,
    "tokens": token_split,  # chapter 1
    "merges": merges,
    "embedding": embedding,  # chapter 2
    "layernorm": layernorm,
    "neighbours": neighbours,
    "map": vector_map,
    "ablation": ablation,  # the causal chapter
    "attribution": attribution,
    "patching": patching,
    "lens": lens,
    "circuit": circuit,
}
assert set(KINDS) == set(DIRECTIVE_KINDS), "every directive kind has one renderer"


def render(d: Directive, ctx: Ctx) -> str:
    """HTML of one directive. Raises LessonError on lesson mistakes."""
    return KINDS[d.kind].render(d, ctx)


def render_ref(ref: Ref, ctx: Ctx) -> str:
    """HTML for one `{{ ... }}` reference, from the figures already rendered on the page."""
    if ref.target == "model":
        return models.ref(ref, ctx)
    fig = ctx.figures.get(ref.target)
    if fig is None:
        known = ", ".join(sorted(ctx.figures)) or "none"
        ref_fail(ref, f"no figure with id '{ref.target}' on this page (ids here: {known})", "give the figure `id: " + ref.target + "` or use one of the ids above")
    module = KINDS[fig.kind]
    check_arity(ref, fig.kind, module.REFS)
    if fig.pending:  # its arguments checked against the tokens known without the trace
        return pending.check_ref(ref, fig, module.REFS)
    out = module.ref(ref, fig)
    if fig.kind in CAUSAL_KINDS:  # the heads this number is about back the jobs figures name
        ctx.causal_heads.update(heads_named(" ".join(ref.args) + " " + str(out)))
        if fig.kind == "circuit":
            ctx.causal_heads.add(f"L{fig.layer + 1}H{fig.head + 1}")
    return out


CAUSAL_KINDS = ("ablation", "attribution", "patching", "circuit")
_HEAD_NAME = re.compile(r"\bL(\d+)H(\d+)\b|\blayer (\d+), head (\d+)")
ONLY_A_PATTERN = "only a pattern"


def heads_named(text: str) -> set[str]:
    """Every head a text names, as L2H3 or as 'layer 2, head 3'."""
    return {f"L{m[1] or m[3]}H{m[2] or m[4]}" for m in _HEAD_NAME.finditer(text)}


def untested_jobs(ctx: Ctx, page_html: str) -> list[tuple[str, str, str]]:
    """The heads that figures on the page name for a job (`pick: {best: kind}`, a scoreboard's
    examples) with no causal number about them on the page, unless the page says in so many words
    that a grid is only a pattern."""
    if ONLY_A_PATTERN in " ".join(page_html.lower().split()):
        return []
    return [j for j in ctx.job_heads if j[2] not in ctx.causal_heads]
