"""What a prose number is bound to: the figure it came from, and where in it (course.js's
prose-refs.js outlines that place when the reader hovers or focuses the number while the figure
shows its state, and on a click sets the figure to that state and scrolls it into view; follow.js
names the state after the number while the figure shows another: CONTRACT.md, "Text that
follows the figure"). Only prose gets bindings; a reference inside code stays plain text
(markdown/course.py's CodeRefPostprocessor), and a pending one stays `pending`.

What each reference kind is bound to (the authors' reference, `python -m generator reference`,
says the same):

* **a cell** — `weight(from, to)` of an `attention` or `compare` figure: the heatmap cell and the
  table cell of that weight (compare: in the sentence the reference names), with the figure's
  layer, head and token set to the reference's; `score(kind, layer, head)` of a `scoreboard`:
  that head's cell of the kind's score table.
* **the figure, with its state** — every other number of an `attention` or `compare` figure
  (`layer`, `head`, `score`, `scaled`, `top`, `valuenorm`, `moved`, `selfmean`, `tokens`,
  `othernorms`): the figure is outlined, and its layer and head (and, for a reference that names
  a `from` token, its token) are set to the reference's. The figure shows weights, not scores, so
  a score has no cell of its own. `headsfirst` and `allheads` are about every head: they set
  only the token.
* **the figure** — a number of any other figure kind (a reference whose text holds a digit): the
  figure is outlined, its state is left as it is; while the reader has changed a `score-split` or
  `softmax` figure from the state it opened on, its numbers are marked away and a press puts it
  back (follow.js, followOpening).
* **nothing** — references that write words, not numbers (`sentence`, `rule`, `token`, `argmax`,
  `compare`, a verdict), `{{ model.* }}` and `{{ page.* }}` (no figure holds them), and every
  reference inside code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..lessons.refs import Ref
from . import attention, templating
from .context import Ctx, Figure
from .format import token_spoken
from .ref_common import int_arg, token_arg

ATTENTION_KINDS = ("attention", "compare")
CELL = "cell"
STATE = "state"
FIGURE = "figure"
# attention / compare references that write words: never bound
WORD_REFS = frozenset({"sentence", "rule", "token", "argmax", "compare"})
# attention / compare references whose first argument is the row (`from`) they read
ROW_REFS = frozenset({"weight", "score", "scaled", "top", "moved", "headsfirst", "allheads"})
# numbers about every head of the model (the "All heads" view), not the figure's one head
EVERY_HEAD_REFS = frozenset({"headsfirst", "allheads"})
TAG_RE = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Binding:
    """Where a prose number comes from: `level` is CELL, STATE or FIGURE; `attrs` the data-*
    attributes prose-refs.js reads; `says` what a screen reader hears after the number."""

    fig: str  # the figure's element id, "fig-3"
    level: str
    says: str
    attrs: dict = field(default_factory=dict)


def binding(ref: Ref, ctx: Ctx, out: str) -> Binding | None:
    """The binding of reference `ref`, rendered as `out`, or None (see the module's list)."""
    if ref.target in ("model", "page"):
        return None
    fig = ctx.figures.get(ref.target)
    if fig is None or fig.pending:
        return None
    if fig.kind in ATTENTION_KINDS:
        return attention_binding(ref, fig)
    if fig.kind == "scoreboard" and ref.name == "score":
        kind = ref.args[0]
        layer, head = int(ref.args[1]) - 1, int(ref.args[2]) - 1  # the reference has checked them
        says = f"from figure {fig.number}: the {kind} score of layer {layer + 1}, head {head + 1}"
        return Binding(f"fig-{fig.number}", CELL, says, {"data-score": kind, "data-layer": layer, "data-head": head})
    if not re.search(r"[0-9]", TAG_RE.sub("", str(out))):
        return None  # words, not a number
    return Binding(f"fig-{fig.number}", FIGURE, f"from figure {fig.number}")


def attention_binding(ref: Ref, fig: Figure) -> Binding | None:
    if ref.name in WORD_REFS:
        return None
    args, panel_no = ref.args, 0
    if fig.kind == "compare" and len(args) > attention.REFS[ref.name][1]:
        panel_no = int_arg(ref, args[-1], "sentence", 1, 2) - 1
        args = args[:-1]
    panel = fig.panels[panel_no]
    layer, head = fig.layer, fig.head
    place = f"layer {layer + 1}, head {head + 1}"
    if fig.kind == "compare":
        place += f", sentence {panel_no + 1}"
    attrs = {"data-layer": layer, "data-head": head, "data-panel": panel_no}
    fid = f"fig-{fig.number}"
    if ref.name == "weight":
        q, k = (token_arg(ref, panel, a, what) for a, what in ((args[0], "from"), (args[1], "to")))
        says = f"from figure {fig.number}, {place}: the weight from {token_spoken(panel.tokens[q])} to {token_spoken(panel.tokens[k])}"
        return Binding(fid, CELL, says, attrs | {"data-q": q, "data-k": k})
    says = f"from figure {fig.number}, {place}"
    if ref.name in EVERY_HEAD_REFS:  # the row's token is set, the head the reader looks at stays
        attrs = {"data-panel": panel_no}
        says = f"from figure {fig.number}, every head" + (f", sentence {panel_no + 1}" if fig.kind == "compare" else "")
    if ref.name in ROW_REFS:
        q = token_arg(ref, panel, args[0], "from")
        attrs["data-q"] = q
        says += f", row {token_spoken(panel.tokens[q])}"
    return Binding(fid, STATE, says, attrs)


def bound_html(b: Binding, out: str) -> str:
    """`out` (the reference's HTML) inside its binding."""
    if templating.NO_HTML.get():  # `make check`: the number as it is
        return out
    return templating.render("ref.html", b=b, value=templating.html(out))

