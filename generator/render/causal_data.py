"""What the causal figures share (ablation, attribution, patching, lens, circuit): a trace's
causal block as a figure reads it, heads named as the pages name them (L2H3, counting from 1),
the words a conclusion reference writes from the numbers, and the signed colours of their cells."""

from __future__ import annotations

import html as html_lib

import re

import numpy as np

from .. import tokens as vocab
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from . import format as fmt
from .format import NEGATIVE_RGB, POSITIVE_RGB, SOLID_FROM, TINT_ALPHA, signed_rule  # noqa: F401 (read from here too)
from .context import Ctx, Missing, Panel, load_panel
from .pending import traces_pending
from .ref_common import ref_fail
from .token_names import resolve_token

HEAD_RE = re.compile(r"^L(\d+)H(\d+)$")

# A conclusion reference ({{ ab.verdict(L2H3) }}) writes these from the share of the clean value
# that removing the head takes away (or, for attribution, the head's share of the total):
MOST = 0.5  # at least half: "carries most of"
PART = 0.2  # a fifth to a half: "carries part of"; less, but in the same direction: "carries a small part of"
VERDICTS = ("carries most of", "carries part of", "carries a small part of", "works against")


def head_label(layer: int, head: int) -> str:
    """0-based (layer, head) as the pages name it: L2H3."""
    return f"L{layer + 1}H{head + 1}"


def head_words(layer: int, head: int) -> str:
    return f"layer {layer + 1}, head {head + 1}"


def head_arg(ref: Ref, arg: str, n_layer: int, n_head: int) -> tuple[int, int]:
    """A reference's head argument, L2H3, as 0-based (layer, head)."""
    m = HEAD_RE.match(arg)
    if not m or not (1 <= int(m[1]) <= n_layer and 1 <= int(m[2]) <= n_head):
        ref_fail(ref, f"{arg!r} is not a head like L2H3 (layers 1 to {n_layer}, heads 1 to {n_head})", "name a head as L<layer>H<head>, counting from 1")
    return int(m[1]) - 1, int(m[2]) - 1


def target_tokens(model: str, names: tuple[str, ...], where: str, kind: str) -> list[dict]:
    """The vocabulary tokens a figure's `targets` name, as token dicts (id, text, display)."""
    out = []
    for name in names:
        try:
            t = vocab.vocab_token(model, name)
        except vocab.UnknownToken as e:
            raise LessonError(where, f"{kind}: targets: {e}", "name one token, like `her` for ·her") from None
        same = next((n for n, o in zip(names, out) if o["id"] == t.id), None)
        if same is not None:  # `her` and `·her` spell one token: its difference with itself is 0
            raise LessonError(where, f"{kind}: 'targets' names the same token twice ({same!r} and {name!r} are both {t.display})", "name two different tokens")
        out.append({"id": t.id, "text": t.text, "display": t.display})
    return out


def follows(panel: Panel, ids: list[int]) -> bool:
    """Whether the panel's trace follows every one of these target ids."""
    have = set(panel.trace["causal"]["targets"])
    return all(i in have for i in ids)


def focused_panel(d, ctx: Ctx, targets: list[dict]) -> tuple[Panel | None, int, str]:
    """A one-sentence causal figure's panel, the position it reads (its `token:`, else the
    sentence's last) and "". Where the trace is missing or does not follow the figure's targets:
    (None, 0, the figure's pending box), the trace noted as missing so that the tracer makes it."""
    panel = load_panel(d, d.model, d.sentence, ctx)
    if panel is not None and not follows(panel, [t["id"] for t in targets]):
        ctx.note_missing(Missing(d.model, Missing.TRACE, d.sentence), d.where)
        panel = None
    if panel is None:
        return None, 0, traces_pending(d, ctx, d.model, [d.sentence])
    pos = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    return panel, pos, ""


def column(panel: Panel, pos: int, token_id: int) -> int:
    """Where token `token_id` is among the tokens the trace follows at position `pos`."""
    row = panel.trace["causal"]["followed"][pos]
    hits = np.flatnonzero(row == token_id)
    if not hits.size:
        raise KeyError(token_id)
    return int(hits[-1])  # a target that is also in the top 5 has the same numbers in both places


def measure_name(targets: list[dict], one: str = "log P") -> str:
    """How a figure's measured quantity reads in prose: logit(·her) − logit(·his), log P(·her),
    or the KL divergence. `one` names a single target's measure: direct logit attribution splits
    a logit, whose parts add up to it, not a log-probability (`one="logit"`)."""
    if len(targets) == 2:
        return f"logit({targets[0]['display']}) − logit({targets[1]['display']})"
    if len(targets) == 1:
        return f"{one}({targets[0]['display']})"
    return "the KL divergence of the next-token distribution"


def measure_html(targets: list[dict], one: str = "log P") -> str:
    """measure_name as a prose reference writes it: HTML, the tokens' text escaped (a token is
    data: GPT-2 has "<" and "</" among its words)."""
    return html_lib.escape(measure_name(targets, one))


def clean_logit(panel: Panel, pos: int, targets: list[dict]) -> float:
    """The clean run's logit of one target at `pos`, or the first target's minus the second's."""
    logits = [float(panel.trace["causal"]["cleanLogit"][pos, column(panel, pos, t["id"])]) for t in targets]
    return logits[0] - logits[1] if len(logits) == 2 else logits[0]


def clean_measure(panel: Panel, pos: int, targets: list[dict]) -> float | None:
    c = panel.trace["causal"]
    if len(targets) == 2:
        return clean_logit(panel, pos, targets)
    if len(targets) == 1:
        return float(c["cleanLogprob"][pos, column(panel, pos, targets[0]["id"])])
    return None  # KL is 0 in the clean run: its effect is the KL itself


def ablation_effects(panel: Panel, pos: int, targets: list[dict], mode: str) -> np.ndarray:
    """(layer, head): the change in the measure at `pos` when each head is removed (mode)."""
    c = panel.trace["causal"]
    m = c["ablations"].index(mode)
    if len(targets) == 2:
        a, b = (column(panel, pos, t["id"]) for t in targets)
        return c["dLogit"][m, :, :, pos, a] - c["dLogit"][m, :, :, pos, b]
    if len(targets) == 1:
        return c["dLogprob"][m, :, :, pos, column(panel, pos, targets[0]["id"])]
    return c["kl"][m, :, :, pos]


def dla_parts(panel: Panel, pos: int, targets: list[dict]) -> np.ndarray:
    """(part,): each part's direct share of the target logit, or of the logit difference."""
    c = panel.trace["causal"]
    cols = [column(panel, pos, t["id"]) for t in targets]
    v = c["dla"][:, pos, cols[0]]
    return v - c["dla"][:, pos, cols[1]] if len(cols) == 2 else v


def verdict(removed: float, whole: float) -> str:
    """Words for how much of `whole` a head carries, when `removed` of it goes with the head (as
    the reader reads both numbers, f2)."""
    whole, removed = fmt.shown(whole), fmt.shown(removed)
    if whole == 0:
        return VERDICTS[2] if removed == 0 else VERDICTS[0]
    share = removed / whole
    if share >= MOST:
        return VERDICTS[0]
    if share >= PART:
        return VERDICTS[1]
    if share > 0:
        return VERDICTS[2]
    return VERDICTS[3]


# signed_style's constants (SOLID_FROM, POSITIVE_RGB, NEGATIVE_RGB, TINT_ALPHA, signed_rule) live in
# format.py, which also writes them into colorscale.js for course.js (window.COURSE_SIGNED_RULE);
# play.js gets them as SIGNED_RULE: one rule, three readers.


def signed_style(x: float, scale: float) -> str:
    """A cell's inline colours: blue for positive, orange for negative, stronger with |x| /
    scale. Weak cells are a translucent tint over the page, in its own text colour, so they read
    in both palettes; strong ones are solid, with black or white text, whichever reads better."""
    t = 0.0 if scale <= 0 else min(1.0, abs(x) / scale)
    end = POSITIVE_RGB if x >= 0 else NEGATIVE_RGB
    if t < SOLID_FROM:
        return f"background:rgba({end[0]},{end[1]},{end[2]},{TINT_ALPHA[0] + TINT_ALPHA[1] * t:.2f})"
    rgb = tuple(round(255 + (e - 255) * t) for e in end)
    text = (0, 0, 0) if fmt.contrast_ratio(rgb, (0, 0, 0)) >= fmt.contrast_ratio(rgb, (255, 255, 255)) else (255, 255, 255)
    hexa = "#%02x%02x%02x" % rgb
    return f"background:{hexa};color:{'#000' if text == (0, 0, 0) else '#fff'}"


def ranked_heads(effects: np.ndarray, by_size: bool = True) -> list[tuple[int, int, float]]:
    """(layer, head, effect), the largest |effect| first (as shown; ties by layer, then head)."""
    cells = [(l, h, float(effects[l, h])) for l in range(effects.shape[0]) for h in range(effects.shape[1])]
    return sorted(cells, key=lambda c: (-abs(fmt.shown(c[2])) if by_size else -fmt.shown(c[2]), c[0], c[1]))
