"""The build log of `make site` and `make serve`: pending-figure warnings grouped into one line per
model, and strictness per model (`make site STRICT=tiny`).

The course extension warns once per missing thing per page (render.context.Missing.warning, on
the mkdocs.plugins.generator logger). During a build those records are held back here, before
MkDocs counts them, and said after the build as one line per model:

    WARNING -  gpt2: 3 figures pending (2 sentences not traced, head scores) at content/gpt2.md:54, 86, 246. It needs the model download: ...

Strictness is then decided per model: STRICT=1 fails on anything pending, STRICT=tiny on a pending
tiny figure only (GPT-2's stay warnings: its weights cannot be had on every machine). Every other
warning still reaches MkDocs, whose --strict fails on it in both modes.
"""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..registry import MODELS
from ..render.context import Missing

MISSING_LOGGER = "mkdocs.plugins.generator"
log = logging.getLogger("mkdocs.course")

# The shapes of Missing.warning's lines: "<at>: <what> ... model <name> ...".
_WHAT = [
    (re.compile(r"no trace of (?P<text>.+) for model (?P<model>[\w.-]+); "), "sentence"),
    (re.compile(r"no head scores for model (?P<model>[\w.-]+) "), "head scores"),
    (re.compile(r"no traces of model (?P<model>[\w.-]+), "), "model numbers"),
    (re.compile(r"the (?P<model>tiny) model's training log "), "training log"),
]
_AT = re.compile(r"^(?P<at>.+?): (?=no trace|no head scores|the tiny model's training log)")


class StrictFailure(Exception):
    """STRICT= found pending figures of a model it was told to fail on."""


@dataclass(frozen=True)
class Pending:
    model: str
    what: str  # "sentence", "head scores", "model numbers", "training log"
    text: str | None
    at: str  # "content/a.md:3, 9; content/b.md:4"


def parse(message: str) -> Pending | None:
    """The Pending a Missing.warning line says, or None for any other message."""
    m = _AT.match(message)
    if not m:
        return None
    rest = message[m.end():]
    for pattern, what in _WHAT:
        w = pattern.match(rest)
        if w:
            return Pending(w["model"], what, w.groupdict().get("text"), m["at"])
    return None


def merge_places(ats: list[str]) -> str:
    """'content/a.md:3, 9, 12; content/b.md:4' from several such lists, lines in order."""
    lines: dict[str, set[int]] = {}
    for at in ats:
        for part in at.split("; "):
            path, sep, nums = part.rpartition(":")
            if not sep or not all(n.strip().isdigit() for n in nums.split(",")):
                lines.setdefault(part, set())
                continue
            lines.setdefault(path, set()).update(int(n) for n in nums.split(","))
    return "; ".join(f"{p}:{', '.join(map(str, sorted(ns)))}" if ns else p for p, ns in lines.items())


@dataclass
class Held(logging.Filter):
    """A logger filter that keeps Missing warnings back (and lets every other record through)."""

    pending: list[Pending] = field(default_factory=list)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            p = parse(record.getMessage())
            if p is not None:
                self.pending.append(p)
                return False
        return True

    def models(self) -> list[str]:
        return list(dict.fromkeys(p.model for p in self.pending))

    def line(self, model: str) -> str:
        mine = [p for p in self.pending if p.model == model]
        sentences = {p.text for p in mine if p.what == "sentence"}
        parts = [f"{len(sentences)} sentence{'s' if len(sentences) != 1 else ''} not traced"] if sentences else []
        parts += list(dict.fromkeys(p.what for p in mine if p.what != "sentence"))
        remedy = Missing(model, Missing.TRACE).remedy()
        if any(p.what == "training log" for p in mine):
            remedy += " The training log needs `make tiny-model`."
        places = merge_places([p.at for p in mine])
        n = sum(max(1, part.count(",") + 1) for part in places.split("; "))  # one figure per line named
        return f"{model}: {n} figure{'s' if n != 1 else ''} pending ({', '.join(parts)}) at {places}. {remedy}"

    def report(self, skip: set[str] = frozenset(), said: set[str] | None = None) -> None:
        """One warning per model, but none for `skip` (models being traced right now) and none
        already in `said` (make serve says a line again only when it changes); `said` is updated."""
        for model in self.models():
            if model in skip:
                continue
            line = self.line(model)
            if said is not None:
                if line in said:
                    continue
                said.add(line)
            log.warning(line)


def strict_models(strict: str | bool | None) -> set[str] | None:
    """The models whose pending figures fail the build: None (not strict), every model (STRICT=1),
    or the named ones (STRICT=tiny, STRICT=tiny,gpt2). ValueError for an unknown name."""
    if strict in (None, False, "", "0"):
        return None
    if strict in (True, "1", "all", "yes", "true"):
        return set(MODELS)
    names = {s.strip() for s in str(strict).split(",") if s.strip()}
    unknown = sorted(names - set(MODELS))
    if unknown:
        raise ValueError(f"STRICT={strict}: unknown model {unknown[0]!r}; give 1 (nothing pending at all) or one of {', '.join(sorted(MODELS))}")
    return names


@contextmanager
def grouped_warnings():
    """Hold back Missing warnings during a build; yield the Held filter. The caller decides when
    to report (after its strictness check)."""
    logger = logging.getLogger(MISSING_LOGGER)
    held = Held()
    logger.addFilter(held)
    try:
        yield held
    finally:
        logger.removeFilter(held)
