"""`architecture` figures: the model as a picture, drawn from its config.json (registry.config_facts,
so GPT-2 needs no weights): the embedding, then each layer's heads and MLP adding their results
into the residual stream, then the unembedding, with the parts the page's figures read marked
"here". Static SVG (architecture.html); the geometry is computed here, the words are there."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lessons.diagram_kinds import FIGURE, Architecture
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..registry import config_facts
from . import templating
from .context import Ctx, Figure
from .format import caption_name, whole
from .ref_common import ref_fail

REFS: dict[str, tuple[int, int]] = {}
ARGS: dict[str, tuple[str, ...]] = {}

# Layout, in SVG user units (px at natural size). The stream runs down at STREAM_X; each layer's
# label sits left of it, its heads and MLP right of it.
LABEL_RIGHT = 58
STREAM_X = 72
PARTS_X = 112
HEADS_WIDTH = 300  # the heads of one layer share this width; a cell is at most MAX_CELL wide
MAX_CELL, GAP = 26, 3
MLP_WIDTH = 52
BOX_HEIGHT = 30  # the embedding and unembedding
MIN_WIDTH = 300  # the boxes' sentences fit at 12 px; the tiny model fits a 343 px phone column at 11 px or more
HERE_GAP = 14  # from the marked part's row end to its "here" label


@dataclass(frozen=True)
class Shape:
    n_layer: int
    n_head: int
    width: int  # numbers per token vector
    vocab: int


def shape_of(model: str) -> Shape:
    facts = config_facts(model)
    return Shape(facts["nLayer"], facts["nHead"], facts["width"], facts["vocabSize"])


def px(x: float) -> str:
    """A coordinate as SVG text: one decimal at most, so the same shape writes the same bytes."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def marked(here: tuple[str, ...]):
    """Which heads, MLPs and places `here` names: a function (part) -> bool."""
    def test(layer: int | None = None, head: int | None = None, mlp: bool = False, place: str | None = None) -> bool:
        for part in here:
            if place is not None:
                if part == place:
                    return True
                continue
            if mlp:
                if part == f"MLP{layer}":
                    return True
                continue
            if part == "heads" or part == f"L{layer}" or part == f"L{layer}H{head}":
                return True
        return False
    return test


def here_words(part: str) -> str:
    """A marked part in words: 'layer 2, head 3', 'layer 2's MLP', 'every head'."""
    m = re.fullmatch(r"L(\d+)H(\d+)", part)
    if m:
        return f"layer {m[1]}, head {m[2]}"
    if re.fullmatch(r"L\d+", part):
        return f"the heads of layer {part[1:]}"
    if part.startswith("MLP"):
        return f"the MLP of layer {part[3:]}"
    return {"heads": "every head", "residual": "the residual stream"}.get(part, f"the {part}")


def layout(shape: Shape, here: tuple[str, ...]) -> dict:
    """Every box, cell, arrow and label of the picture, in SVG units."""
    is_here = marked(here)
    cell = min(MAX_CELL, (HEADS_WIDTH - GAP * (shape.n_head - 1)) / shape.n_head)
    heads_right = PARTS_X + shape.n_head * cell + (shape.n_head - 1) * GAP
    mlp_x = heads_right + 10
    row_end = mlp_x + MLP_WIDTH
    right = max(row_end, MIN_WIDTH)
    row = cell + 16  # a layer: its cells, then the MLP's arrow under them
    labels = []  # "here" labels: (x, y)
    y = 8.0
    embedding = {"x": px(16), "y": px(y), "w": px(right - 16), "h": px(BOX_HEIGHT), "tx": px(24), "ty": px(y + 19),
                 "here": is_here(place="embedding")}
    if embedding["here"]:
        labels.append((right + HERE_GAP, y + 19))
    stream_top = y + BOX_HEIGHT
    y = stream_top + 26
    stream_label = {"x": px(STREAM_X + 10), "y": px(stream_top + 17)}
    if is_here(place="residual"):
        labels.append((right + HERE_GAP, stream_top + 17))
    layers = []
    for layer in range(1, shape.n_layer + 1):
        mid = y + cell / 2
        under = y + cell + 6  # the MLP's result runs back to the stream under the heads
        heads = [{"x": px(PARTS_X + h * (cell + GAP)), "n": h + 1, "tx": px(PARTS_X + h * (cell + GAP) + cell / 2),
                  "here": is_here(layer, h + 1)} for h in range(shape.n_head)]
        mlp_here = is_here(layer, mlp=True)
        layers.append({
            "n": layer, "y": px(y), "bottom": px(y + cell), "cell": px(cell), "ty": px(mid + 4), "mid": px(mid), "under": px(under),
            "heads": heads, "mlp_x": px(mlp_x), "mlp_tx": px(mlp_x + MLP_WIDTH / 2), "mlp_mid": px(mlp_x + MLP_WIDTH / 2),
            "mlp_here": mlp_here, "small": cell < 20,
        })
        if any(h["here"] for h in heads) and not (layer > 1 and "heads" in here):
            labels.append((row_end + HERE_GAP, mid + 4))
        if mlp_here and not any(h["here"] for h in heads):
            labels.append((row_end + HERE_GAP, mid + 4))
        y += row
    stream_bottom = y + 4
    unembedding = {"x": px(16), "y": px(stream_bottom + 8), "w": px(right - 16), "h": px(BOX_HEIGHT), "tx": px(24),
                   "ty": px(stream_bottom + 27), "here": is_here(place="unembedding")}
    if unembedding["here"]:
        labels.append((right + HERE_GAP, stream_bottom + 27))
    width = right + (HERE_GAP + 44 if labels else 12)
    return {
        "width": px(width), "height": px(stream_bottom + 8 + BOX_HEIGHT + 8), "stream_x": px(STREAM_X),
        "stream_plus": px(STREAM_X + 7), "plus_left": px(STREAM_X - 3), "label_right": px(LABEL_RIGHT), "parts_x": px(PARTS_X - 2),
        "stream_top": px(stream_top), "stream_bottom": px(stream_bottom), "stream_here": is_here(place="residual"),
        "embedding": embedding, "unembedding": unembedding, "stream_label": stream_label, "layers": layers,
        "mlp_w": px(MLP_WIDTH), "here_labels": [(px(x), px(y)) for x, y in labels],
    }


def words(model: str, shape: Shape, here: tuple[str, ...]) -> dict:
    """The picture's title and its description in sentences: what a screen reader reads."""
    marks = [here_words(p) for p in here]
    marked_text = ""
    if marks:
        marked_text = " Marked “here”: " + (", ".join(marks[:-1]) + " and " + marks[-1] if len(marks) > 1 else marks[0]) + "."
    return {
        "title": f"{caption_name(model)} as a picture: {shape.n_layer} layers of {shape.n_head} heads and an MLP",
        "shape": f"{shape.n_layer} layers, each of {shape.n_head} heads and an MLP",
        "desc": (f"From top to bottom: the embedding turns each token into a list of {whole(shape.width)} numbers and adds "
                 f"a list for its position. These lists run down the residual stream. Layers 1 to {shape.n_layer} follow, "
                 f"one after another. In each layer, {shape.n_head} attention heads read the stream and add their results to it, "
                 f"then an MLP does the same. After the last layer, the unembedding turns each token's list into a score for "
                 f"each of the {whole(shape.vocab)} tokens the model knows: its guess at the next token.{marked_text}"),
        "width": whole(shape.width), "vocab": whole(shape.vocab),
    }


def resolve(d: Architecture, ctx: Ctx) -> tuple[str, ...]:
    """`here`, with each figure id replaced by the head that figure shows (`#lily` -> `L2H3`). A
    figure waiting for its trace has no head yet: it marks nothing until it has."""
    parts = []
    for part in d.here:
        if not part.startswith(FIGURE):
            parts.append(part)
            continue
        ident = part[len(FIGURE):]
        fig = ctx.figures.get(ident)
        if fig is None and ident in ctx.failed_ids:  # that figure's own mistake is said: no second one here
            continue
        if fig is None or fig.kind not in ("attention", "compare"):
            above = ", ".join(sorted(k for k, f in ctx.figures.items() if f.kind in ("attention", "compare"))) or "none"
            raise LessonError(d.option_where.get("here", d.where),
                              f"architecture: 'here' names '{ident}', which is no part of the model and not the id of an attention figure above (attention figures above: {above})",
                              "write a part like `L2H3`, `MLP2` or `embedding`, or the id of an attention or compare figure that comes before this one")
        if fig.layer is not None and fig.head is not None and getattr(fig.directive, "model", None) == d.model:
            parts.append(f"L{fig.layer + 1}H{fig.head + 1}")
    return tuple(dict.fromkeys(parts))


def render(d: Architecture, ctx: Ctx) -> str:
    shape = shape_of(d.model)
    here = resolve(d, ctx)
    n = ctx.next_number()
    ctx.register(d, Figure("architecture", n, d))
    return templating.render("architecture.html", n=n, d=d, g=layout(shape, here), w=words(d.model, shape, here))


def ref(ref: Ref, fig: Figure) -> str:  # REFS is empty: check_arity refuses every name first
    ref_fail(ref, "an architecture figure has no numbers to refer to", "use {{ model.tiny.nLayer }} and the like")
