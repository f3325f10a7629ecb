"""What every prose reference shares: its one-line errors, whole-number arguments, and the
'pending' it shows while its figure's traces are missing. Each figure kind's module says which
references it answers (REFS: name -> (fewest, most) arguments) and answers them (ref())."""

from __future__ import annotations

import re

from markupsafe import Markup

from ..lessons.errors import LessonError
from ..lessons.directives import parse_token_ref
from ..lessons.refs import Ref
from .context import Panel
from .token_names import resolve_token

PENDING_REF = Markup('<span class="course-pending-ref">pending</span>')
TRACING_REF = Markup('<span class="course-pending-ref course-tracing">tracing…</span>')  # make serve is tracing its figure


def ref_fail(ref: Ref, problem: str, fix: str):
    raise LessonError(ref.where, f"reference {{{{ {ref.raw} }}}}: {problem}", fix)


def int_arg(ref: Ref, value: str, what: str, lo: int, hi: int) -> int:
    if hi < lo:  # nothing to count: "from 1 to 0" would be no help
        ref_fail(ref, f"there is no {what} to name here (the figure has none)", f"remove the reference, or change the figure so that it has a {what}")
    if not re.fullmatch(r"\d+", value) or not lo <= int(value) <= hi:
        ref_fail(ref, f"{what} {value!r} is not a number from {lo} to {hi}", f"write a whole number from {lo} to {hi}")
    return int(value)


def check_arity(ref: Ref, kind: str, names: dict[str, tuple[int, int]], args: dict[str, tuple[str, ...]] | None = None) -> None:
    """The reference's name is one `kind` answers, with an allowed number of arguments; the fix
    writes the reference with its arguments named (the kind's ARGS), as the reference for authors does."""
    if ref.name not in names:
        allowed = ", ".join(sorted(names)) or "none"
        ref_fail(ref, f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} figure has no '{ref.name}'", f"use one of: {allowed}")
    lo, hi = names[ref.name]
    if not lo <= len(ref.args) <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        named = (args or {}).get(ref.name, ())
        if hi == 0:
            fix = "write it without arguments"
        elif named:
            shown = ", ".join(n if i < lo else f"[{n}]" for i, n in enumerate(named))
            fix = f"write `{{{{ {ref.target}.{ref.name}({shown}) }}}}`" + (" ([x]: optional)" if hi > lo else "")
        else:
            fix = "see the figure's references in docs/reference.md"
        ref_fail(ref, f"'{ref.name}' takes {want} argument{'s' if hi != 1 else ''}, not {len(ref.args)}", fix)


def token_arg(ref: Ref, panel: Panel, arg: str, what: str) -> int:
    """The 0-based position of the token a reference's argument names, in `panel`."""
    label = f"reference {{{{ {ref.raw} }}}}"
    return resolve_token(parse_token_ref(arg, ref.where, label), panel.tokens, ref.where, f"{label}: {what}")
