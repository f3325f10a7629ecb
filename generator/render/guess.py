"""`guess` blocks: a "Guess first" question's choices, graded against the traces (CONTRACT.md,
`guess`).

A guess usually stands before the figure that answers it, and SuperFences renders every fence
before any later figure is read. So :func:`render` only keeps the guess and leaves a slot in the
page; :func:`fill`, run by the Markdown extension once the whole page is rendered, reads its
references, finds the one choice the traces make right, and puts the form in the slot. A guess
whose references have no number here (a model this copy lacks) leaves its slot empty: the
question and its collapsed answer read as they do without JavaScript.
"""

from __future__ import annotations

import html
import re
from typing import Callable

from ..lessons.directives import Directive
from ..lessons.errors import LessonError
from ..lessons.guess_kind import REF_RE, Condition, Guess, Side, refs_of
from ..lessons.refs import Ref, parse_ref
from . import templating
from .context import Ctx, Figure
from .ref_common import PENDING_REF, TRACING_REF, ref_fail

REFS: dict[str, tuple[int, int]] = {}  # a guess has no numbers of its own to refer to
ARGS: dict[str, tuple[str, ...]] = {}
SLOT = '<div class="course-guess-slot" data-slot="{}"></div>'
_TAG_RE = re.compile(r"<[^>]*>")
_NUMBER_RE = re.compile(r"^[+\-−]?\d[\d,]*(?:\.\d+)?%?$")


def render(d: Directive, ctx: Ctx) -> str:
    ctx.guesses.append(d)
    return SLOT.format(len(ctx.guesses) - 1)


def ref(ref: Ref, fig: Figure) -> str:
    ref_fail(ref, "a guess has no numbers to refer to", "refer to the figure the guess reads")


def plain(rendered: str) -> str:
    """A reference's HTML as the text a reader reads."""
    return " ".join(html.unescape(_TAG_RE.sub("", str(rendered))).split())


def number(text: str) -> float | None:
    t = text.strip()
    if not _NUMBER_RE.match(t):
        return None
    return float(t.replace("−", "-").replace(",", "").rstrip("%"))


def same_text(a: str, b: str) -> bool:
    """Texts compared as a reader writes a token: `·her`, ` her` and `her` are one."""
    return a.strip().lstrip("·").strip() == b.strip().lstrip("·").strip()


def holds(cond: Condition, value: Callable[[Side], str], where: str) -> bool:
    a, b = value(cond.left), value(cond.right)
    x, y = number(a), number(b)
    if x is not None and y is not None:
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "=": x == y, "!=": x != y}[cond.op]
    if cond.op not in ("=", "!="):
        raise LessonError(where, f"guess: condition '{cond.text}' compares '{a}' and '{b}', which are not both numbers", "compare texts with = or !=, or numbers with < and >")
    return same_text(a, b) == (cond.op == "=")


def fill(text: str, ctx: Ctx, render_ref: Callable[[Ref, Ctx], str]) -> str:
    """Each guess's slot in `text`, replaced by its graded form (or by nothing, see above)."""
    for k, g in enumerate(ctx.guesses):
        slot = SLOT.format(k)
        if slot in text:
            text = text.replace(slot, graded(g, k, ctx, render_ref))
    return text


def graded(g: Guess, k: int, ctx: Ctx, render_ref: Callable[[Ref, Ctx], str]) -> str:
    values: dict[str, str] = {}
    for raw in refs_of(g):
        out = render_ref(parse_ref(raw, g.where), ctx)
        if out in (PENDING_REF, TRACING_REF):
            return ""  # no numbers in this copy: the question and its answer box, as without JavaScript
        values[raw] = plain(out)

    def value(side: Side) -> str:
        return values[side.ref] if side.ref else side.literal

    if g.right is not None:
        right = [i for i, c in enumerate(g.choices) if same_text(c.say, values[g.right])]
    else:
        right = [i for i, c in enumerate(g.choices) if all(holds(cond, value, g.where) for cond in c.when)]
    if len(right) != 1:
        deciding = refs_of(g)[: len(refs_of(g)) - len(g.answer_refs)]
        said = ", ".join(f"{r} = {values[r]}" for r in dict.fromkeys(deciding))
        which = "no choice" if not right else " and ".join(repr(g.choices[i].say) for i in right)
        verb = "is" if len(right) < 2 else "are both" if len(right) == 2 else "are all"
        raise LessonError(g.where, f"guess: with these traces {which} {verb} right ({said})",
                          "make exactly one choice right: its `when` true of these numbers and every other's false (or `right:` writing one of the choices)")
    answer = REF_RE.sub(lambda m: values[" ".join(m["body"].split())], g.answer)
    payload = {"choices": [c.say for c in g.choices], "right": right[0], "answer": answer}
    return templating.render("guess.html", k=k, choices=payload["choices"], payload=payload)
