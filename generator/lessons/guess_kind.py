"""The `guess` directive: the choices a "Guess first" question offers, and what, in the traces,
makes one of them right.

    ```guess
    choices:
      - say: stays much the same or grows       # what the reader picks
        when: "ab.ablated(L2H3) >= ab.clean"    # true of the traces for the right choice only
      - say: shrinks
        when: ["ab.ablated(L2H3) > 0", "ab.ablated(L2H3) < ab.clean"]   # a list: all must hold
      - say: flips
        when: "ab.ablated(L2H3) <= 0"
    answer: "It flips: {{ ab.clean }} becomes {{ ab.ablated(L2H3) }}."
    ```

or, where the right choice is a word a reference writes (a token, a head):

    ```guess
    choices: [Lily, wanted, play, with]
    right: lily.argmax(her)                   # the choice whose text this reference writes
    answer: "In this head ·her looks most at {{ lily.argmax(her) }}."
    ```

A condition is `left op right`, each side a reference without braces (`ab.clean`) or a literal
(`0`, `Lily`); `op` is one of < <= > >= = !=. Both sides numbers: compared as numbers; else only
= and != compare the texts. Pure parsing here; the references are read when the page is built
(generator/render/guess.py), where exactly one choice must hold.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from .body import show
from .errors import fail as _fail
from .values import Directive

# refs.py reads directives.py, which reads this module: a reference is kept here as written
# (one line, spaces as one) and read by refs.parse_ref when the guess is rendered (render/guess.py)
REF_BODY_RE = re.compile(r"^(?P<target>[a-z][a-z0-9_-]*)\.(?P<path>[A-Za-z][A-Za-z0-9_.]*)(?:\((?P<args>[^()]*)\))?$")  # as refs.REF_BODY_RE
REF_RE = re.compile(r"\{\{(?P<body>.*?)\}\}")  # as refs.REF_RE


def parse_ref(body: str, where: str) -> str:
    raw = " ".join(body.split())
    m = REF_BODY_RE.match(raw)
    if not m or (m["args"] is not None and any(not a.strip() for a in m["args"].split(","))):
        _fail(where, f"guess: reference {{{{ {raw} }}}} cannot be read", "write `figure-id.name(arguments)`, like `lily.argmax(her)`")
    return raw


MAX_CHOICES = 6  # more would be a quiz, not a guess
MAX_SAY_CHARS = 80
OPS = ("<=", ">=", "!=", "<", ">", "=")  # longest first, so that `<=` is not read as `<`
COND_RE = re.compile(r"^\s*(?P<left>\S(?:.*?\S)?)\s*(?P<op><=|>=|!=|<|>|=)\s*(?P<right>\S(?:.*?\S)?)\s*$")


@dataclass(frozen=True)
class Side:
    """One side of a condition: a reference, or a literal."""

    ref: str | None = None  # a reference as written, without braces
    literal: str = ""


@dataclass(frozen=True)
class Condition:
    left: Side
    op: str
    right: Side
    text: str  # as written, for messages


@dataclass(frozen=True)
class Choice:
    say: str
    when: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Guess(Directive):
    choices: tuple[Choice, ...] = ()
    right: str | None = None  # a reference as written  # `right:`: the choice whose text this reference writes
    answer: str = ""  # the answer in one or two sentences; its `{{ }}` references are filled in
    answer_refs: tuple[str, ...] = ()  # the answer's references as written


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "guess": ({"choices", "right", "answer"}, {"choices", "answer"}),
}


def _ref(text: str, where: str, name: str):
    body = text.strip()
    if body.startswith("{{") and body.endswith("}}"):
        body = body[2:-2].strip()
    if not REF_BODY_RE.match(body):
        _fail(where, f"guess: '{name}' {show(text)} is not a reference", "write a figure's reference without braces, like `lily.argmax(her)` or `ab.clean`")
    return parse_ref(body, where)


def _side(text: str, where: str) -> Side:
    if REF_BODY_RE.match(text) and "." in text and not _number(text):
        return Side(ref=parse_ref(text, where))
    return Side(literal=text)


def _number(text: str) -> bool:
    return bool(re.fullmatch(r"[+\-−]?\d[\d,]*(\.\d+)?%?", text))


def condition(text, where: str) -> Condition:
    if not isinstance(text, str):
        _fail(where, f"guess: choices: a condition must be text, not {show(text)}", 'quote it: `when: "ab.ablated(L2H3) < 0"`')
    m = COND_RE.match(text)
    if not m or any(op in m["right"] for op in ("<", ">", "=")):
        _fail(where, f"guess: choices: condition {show(text)} cannot be read", f"write `reference op value` with one of {' '.join(OPS)}, like `ab.ablated(L2H3) < 0`")
    left, right = _side(m["left"], where), _side(m["right"], where)
    if left.ref is None and right.ref is None:
        _fail(where, f"guess: choices: condition {show(text)} reads no reference, so the traces cannot decide it", "put a figure's reference on one side, like `ab.clean > 0`")
    return Condition(left, m["op"], right, text.strip())


def _choice(item, where: str, by_right: bool) -> Choice:
    if isinstance(item, (str, int, float)) and not isinstance(item, bool):
        if not by_right:
            _fail(where, f"guess: choice {show(item)} has no `when`", "give each choice `say:` and `when:`, or give the guess `right:`, a reference that writes the right choice")
        return Choice(say=_say(item, where))
    if not isinstance(item, dict):
        _fail(where, f"guess: a choice must be text or a mapping, not {show(item)}", "write `- say: flips` with `when: \"ab.ablated(L2H3) < 0\"` under it")
    unknown = sorted(set(map(str, item)) - {"say", "when"})
    if unknown:
        near = difflib.get_close_matches(unknown[0].lower(), ["say", "when"], n=1, cutoff=0.5)
        if near:
            _fail(where, f"guess: choices: unknown option {show(unknown[0])}: did you mean {near[0]}?", f"write `{near[0]}:`; a choice takes `say` and `when`")
        _fail(where, f"guess: choices: a choice has unknown option {show(unknown[0])}", "a choice takes `say` and `when`")
    if "say" not in item:
        _fail(where, "guess: a choice has no `say`", "write what the reader picks: `say: flips`")
    when = item.get("when")
    if by_right and when is not None:
        _fail(where, "guess: a choice has `when`, and the guess has `right`", "use one: `right:` for the whole guess, or `when:` on every choice")
    if not by_right and when is None:
        _fail(where, f"guess: choice {show(item['say'])} has no `when`", "add `when: \"…\"`, true of the traces for the right choice only")
    conds = () if when is None else tuple(condition(c, where) for c in (when if isinstance(when, list) else [when]))
    if not by_right and not conds:
        _fail(where, f"guess: choice {show(item['say'])} has an empty `when`", "give at least one condition")
    return Choice(say=_say(item["say"], where), when=conds)


def _say(value, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        _fail(where, f"guess: a choice's text must be text, not {show(value)}", "quote it")
    text = str(value).strip()
    if not text or len(text) > MAX_SAY_CHARS or "{{" in text:
        _fail(where, f"guess: choice {show(value)} is not a short plain text", f"write 1 to {MAX_SAY_CHARS} characters, no `{{{{ }}}}`")
    return text


def parse_guess(data: dict, common: dict, where: str) -> Guess:
    by_right = "right" in data
    right = _ref(data["right"], where, "right") if by_right and isinstance(data["right"], str) else None
    if by_right and right is None:
        _fail(where, f"guess: 'right' must be a reference, not {show(data['right'])}", "write `right: lily.argmax(her)`")
    choices = data["choices"]
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
        _fail(where, f"guess: 'choices' must be a list of 2 to {MAX_CHOICES} choices", "write `choices: [Lily, wanted, play]` with `right:`, or one `- say: … when: …` per choice")
    parsed = tuple(_choice(c, where, by_right) for c in choices)
    seen = [c.say for c in parsed]
    if len(set(seen)) != len(seen):
        _fail(where, "guess: a choice is listed twice", "list each choice once")
    answer = data["answer"]  # unlike a caption, its references are filled in (render/guess.py)
    if not isinstance(answer, str) or not answer.strip():
        _fail(where, "guess: 'answer' must be a sentence", 'write `answer: "It flips: {{ ab.clean }} becomes {{ ab.ablated(L2H3) }}."`')
    if "{{" in REF_RE.sub("", answer):
        _fail(where, "guess: a `{{` in 'answer' is never closed", "close the reference with `}}`")
    answer_refs = tuple(parse_ref(m["body"], where) for m in REF_RE.finditer(answer))
    return Guess(**common, choices=parsed, right=right, answer=" ".join(answer.split()), answer_refs=answer_refs)


def refs_of(g: Guess) -> list[str]:
    """Every reference the guess reads, as written: its right choice, its conditions, its answer."""
    out = [g.right] if g.right else []
    for c in g.choices:
        for cond in c.when:
            out += [s.ref for s in (cond.left, cond.right) if s.ref]
    return out + list(g.answer_refs)


BUILDERS = {"guess": parse_guess}
