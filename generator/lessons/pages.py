"""Whole lesson files: every directive of a file, validated, and every (model, sentence) the
lessons need traced."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..store import TraceRequest
from . import causal_kinds, split_kinds
from .directives import SPECS, Attention, Compare, Directive, Predictions, check_code_fence, parse_directive
from .errors import LessonError, collected
from .errors import fail as _fail
from .refs import iter_refs
from .source import check_layout, decode, iter_fences, iter_markdown, read_source, shown_path, split_front_matter


# parse_file's last answer per file, by the name it shows: (the text it parsed, its figures). One
# `make traces` reads every lesson's figures five times (the requests, the causal ones, then the
# vectors, score-split and rotary steps), and the site build twice; the text is read every time, so
# an edited file (whatever its timestamps) is parsed again. One entry per name a file is shown by
# (at most two: callers that pass none show its path), so `make serve`, which runs for hours, keeps
# about the course. Callers share the figures: nothing may change one (its `options` are dicts).
_PARSED: dict[str, tuple[str, tuple[Directive, ...]]] = {}


def parse_file(path: Path, display_path: str | None = None) -> list[Directive]:
    """Every course directive in one Markdown file, validated, after the file itself: UTF-8, its
    front matter, and where Markdown would read it otherwise (source.check_layout). A mistake
    in the file itself stops there; the figures' mistakes are all raised together
    (errors.collected: a LessonErrors for several). A file read before with the same text gives
    the same figures without parsing it again (_PARSED)."""
    shown = display_path or str(path)
    text = decode(read_source(path, shown), shown).replace("\r\n", "\n").replace("\r", "\n")
    last = _PARSED.get(shown)
    if last is not None and last[0] == text:
        return list(last[1])
    found = _parse_text(text, shown)
    _PARSED[shown] = (text, tuple(found))
    return found


def _parse_text(text: str, shown: str) -> list[Directive]:
    body, removed = split_front_matter(text, shown)
    check_layout(body.split("\n"), shown, 1 + removed, SPECS, check_code_fence)
    found, errors = [], []
    for block in iter_fences(text):  # every figure's mistake, so that the author sees them all at once
        if block.kind in SPECS:
            try:
                found.append(parse_directive(block.kind, block.body, f"{shown}:{block.line}"))
            except LessonError as e:
                errors.append(e)
    for check in (lambda: check_ids(found), lambda: list(iter_refs(text, shown))):  # the references' syntax only:
        try:                                                                    # what one means needs the traces
            check()
        except LessonError as e:
            errors.append(e)
    error = collected(errors)
    if error is not None:
        raise error
    return found


def parse_content(content_dir: Path | str) -> list[Directive]:
    """Every figure of every lesson under `content_dir`, in page order (LessonError at the first mistake)."""
    return [d for p in iter_markdown(Path(content_dir)) for d in parse_file(p, shown_path(p))]


def check_lessons(content_dir: Path) -> int:
    """Parse every lesson of a docs folder (parse_file); the first page with a mistake raises
    its mistakes (a LessonError, or LessonErrors for several). Returns the number of figures."""
    return sum(len(parse_file(path, shown_path(path))) for path in iter_markdown(content_dir))


def check_ids(directives: list[Directive]) -> None:
    seen: dict[str, str] = {}
    for d in directives:
        if d.id is None:
            continue
        if d.id in seen:
            _fail(d.where, f"{d.kind}: id '{d.id}' is used twice on this page (first at {seen[d.id]})", "give each figure its own id")
        seen[d.id] = d.where


@dataclass(frozen=True)
class Requested:
    """One (model, sentence) a lesson needs traced, and where the lesson asks for it."""

    model: str
    text: str
    source: str  # "path:line"

    @property
    def request(self) -> TraceRequest:
        """What the trace step asks the store for."""
        return TraceRequest(self.model, self.text)


def collect(content_dir: Path) -> list[Requested]:
    """Every (model, sentence) pair the lessons use, first use first, each once."""
    seen: dict[tuple[str, str], Requested] = {}
    for path in iter_markdown(content_dir):
        shown = path.relative_to(content_dir.parent).as_posix() if content_dir.parent in path.parents else str(path)
        for d in parse_file(path, shown):
            for model, text in directive_sentences(d):
                seen.setdefault((model, text), Requested(model, text, d.where))
    return list(seen.values())


def directive_sentences(d: Directive) -> list[tuple[str, str]]:
    if isinstance(d, Attention):
        return [(d.model, d.sentence)]
    if isinstance(d, (Compare, Predictions)):
        return [(d.model, s) for s in d.sentences]
    return causal_kinds.sentences(d) + split_kinds.sentences(d)


@dataclass(frozen=True)
class Followed:
    """Token names a figure asks the trace of (model, sentence) to follow, and where."""

    model: str
    text: str
    names: tuple[str, ...]
    source: str  # "path:line"


def collect_causal(content_dir: Path) -> tuple[list[Followed], list[tuple[str, str, str, tuple[str, ...], str]]]:
    """What the causal figures need beyond the traces themselves: the target tokens each
    sentence's trace must follow, and every patching pair (model, sentence A, sentence B,
    targets, "path:line")."""
    followed: list[Followed] = []
    pairs = []
    for path in iter_markdown(content_dir):
        shown = path.relative_to(content_dir.parent).as_posix() if content_dir.parent in path.parents else str(path)
        for d in parse_file(path, shown):
            followed += [Followed(m, t, names, d.where) for m, t, names in causal_kinds.targets(d)]
            if isinstance(d, causal_kinds.Patching):
                pairs.append((d.model, d.sentences[0], d.sentences[1], d.targets, d.where))
    return followed, pairs
