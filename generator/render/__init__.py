"""The rendering stage: a parsed directive and the traces it names -> HTML (CONTRACT.md).

One module per figure kind, each with ``render(directive, ctx)``, the references it answers
(``REFS``: name -> (fewest, most) arguments) and ``ref(ref, figure)``; its HTML comes from
``templates/<kind>.html``. :data:`KINDS` is the registry. Nothing here reads Markdown or writes
files, and nothing imports torch. Every lesson mistake raises
:class:`generator.lessons.errors.LessonError` (one line: ``path:line: problem. Fix: remedy``).
"""

from __future__ import annotations

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
    return module.ref(ref, fig)
