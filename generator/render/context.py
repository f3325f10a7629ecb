"""What rendering one page carries from figure to figure: the Ctx, each rendered Figure (for the
prose references), each traced sentence as a Panel, and what is Missing (for the warnings)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import heads
from ..registry import MODELS
from ..lessons.directives import Directive
from ..store.codec import on_weights_grid, weight_grid
from ..lessons.errors import LessonError
from .format import label_tokens

STANDIN_ENV = "COURSE_ALLOW_STANDIN"


@dataclass
class Panel:
    """One traced sentence as a figure uses it."""

    trace: dict
    weights: np.ndarray  # (layer, head, query, key), as the trace file stores them (trace_weights), masked cells 0

    # the trace's own fields, by the names the renderers use; a repeated token carries its
    # position, so every label made from a panel tells ·red₃ from ·red₇ (format.label_tokens)
    tokens = functools.cached_property(lambda self: label_tokens(self.trace["tokens"]))
    key = property(lambda self: self.trace["key"])
    model = property(lambda self: self.trace["model"])
    meta = property(lambda self: self.trace["meta"])


@dataclass
class Figure:
    """What prose references need to know about one rendered figure."""

    kind: str
    number: int
    directive: Directive
    pending: bool = False
    panels: list[Panel] = field(default_factory=list)
    layer: int | None = None  # 0-based
    head: int | None = None  # 0-based
    focus: int | None = None  # 0-based (compare: the shared index, clamped per panel)
    numbers: dict = field(default_factory=dict)  # stepper / softmax / scoreboard numbers


@dataclass(frozen=True)
class Missing:
    """Something a page needs that the store does not have yet; the build warns once per page."""

    model: str
    what: str  # one of the kinds below
    text: str | None = None  # the sentence, for TRACE

    TRACE = "trace"
    HEAD_SCORES = "head scores"
    TRAINING_LOG = "training log"
    MODEL = "model traces"  # a model reference ({{ model.gpt2.nLayer }}) with no trace at all
    VECTORS = "vectors"  # chapter 2's traces/<model>/vectors.json lacks the sentence or word `text`

    def remedy(self) -> str:
        """What to do here: the models trained here are committed and trace in seconds; GPT-2 needs
        its weights, which these machines cannot download."""
        if MODELS[self.model].trained_here:  # committed: the tiny model and the tiny rotary one
            return f"Run `make traces` ({MODELS[self.model].short_name} runs here in seconds)."
        return "It needs the model download: run `make traces` where the hub is reachable, or set COURSE_GPT2_PATH to a local copy."

    def warning(self, at: str, training_log_path: str) -> str:
        if self.what == Missing.TRAINING_LOG:
            return f"{at}: the tiny model's training log {training_log_path} is missing; the page shows 'pending'. Run `make tiny-model`."
        if self.what == Missing.HEAD_SCORES:
            return f"{at}: no head scores for model {self.model} (traces/{self.model}/heads.json); the page shows a pending box. {self.remedy()}"
        if self.what == Missing.VECTORS:
            return f"{at}: traces/{self.model}/vectors.json lacks {self.text}; the page shows a pending box. {self.remedy()}"
        if self.what == Missing.MODEL:
            return f"{at}: no traces of model {self.model}, so its numbers show 'pending'. {self.remedy()}"
        return f"{at}: no trace of {self.text!r} for model {self.model}; the page shows a 'traces pending' box. {self.remedy()}"


@dataclass
class Ctx:
    """Everything rendering one page needs. `store` is a generator.store.TraceStore (or None)."""

    store: Any = None
    page: str = "page.md"  # the page's path as authors see it, for messages
    assets_url: str = "assets/generated/"  # relative URL from the page to content/assets/generated/
    play_url: str | None = None  # play.html from the page, where the course has the playground (content/play.md)
    training_log: dict | None = None
    training_log_path: str = "generator/tiny_model/training_log.json"
    allow_standin: bool | None = None  # None: the COURSE_ALLOW_STANDIN environment variable
    figures: dict[str, Figure] = field(default_factory=dict)  # by directive id
    # ids of this page's figures that failed (None: one without a readable id): their own mistake is
    # said, and a reference, a diagram's `here` or an ablation's `grid` naming one adds none
    failed_ids: set = field(default_factory=set)
    count: int = 0
    missing: dict[Missing, list[str]] = field(default_factory=dict)  # -> wheres
    on_trace: Callable[[dict], None] | None = None  # called with every trace a figure uses
    head_scores: dict = field(default_factory=dict)  # model -> heads.HeadScores | None, read once
    tokens_listed: dict = field(default_factory=dict)  # (model, sentence) -> the pending figure that lists its tokens
    job_heads: list = field(default_factory=list)  # (where, kind, "L2H3"): heads a figure names for a job
    causal_heads: set = field(default_factory=set)  # "L2H3": heads a causal number on the page is about
    guesses: list = field(default_factory=list)  # the page's `guess` blocks, graded once the page is rendered (render/guess.py)
    pattern_only: set = field(default_factory=set)  # wheres of figures marked `pattern-only: true`: their jobs need no test
    tracing: frozenset = frozenset()  # (model, sentence) `make serve` is tracing now: "tracing…", not an error
    # models `make serve` traces on save, and the (model, sentence) its tracer refused: a sentence of
    # such a model with no trace, saved after the scan that queues new sentences, is traced on the next
    traced_on_save: frozenset = frozenset()
    untraceable: frozenset = frozenset()

    def being_traced(self, model: str, text: str) -> bool:
        """Whether `make serve` is tracing this sentence, or will on its next build ("tracing…")."""
        return (model, text) in self.tracing or (model in self.traced_on_save and (model, text) not in self.untraceable)

    def standin_ok(self) -> bool:
        if self.allow_standin is not None:
            return self.allow_standin
        return os.environ.get(STANDIN_ENV, "").strip().lower() in {"1", "true", "yes", "on"}

    def scores(self, model: str, where: str, kind: str):
        """The model's heads.json from the page's store (read once per page), or None."""
        if model not in self.head_scores:
            try:
                self.head_scores[model] = None if self.store is None else heads.load_scores(self.store, model, allow_stand_in=self.standin_ok())
            except heads.StandInRefused as exc:
                raise standin_refused(where, f"{kind}: {exc}, not the real model") from None
        return self.head_scores[model]

    def note_missing(self, missing: Missing, where: str) -> None:
        self.missing.setdefault(missing, []).append(where)

    def next_number(self) -> int:
        self.count += 1
        return self.count

    def register(self, d: Directive, fig: Figure) -> None:
        if d.id is None:
            return
        if d.id in self.figures:
            first = self.figures[d.id].directive.where
            raise LessonError(d.where, f"{d.kind}: id '{d.id}' is used twice on this page (first at {first})", "give each figure its own id")
        self.figures[d.id] = fig


# Keyed by the trace object itself (held, so its id stays unique): two traces that share a key
# (the same sentence and revision with other numbers, as in tests) never share weights.
_WEIGHTS_CACHE: dict[int, tuple[dict, np.ndarray]] = {}


def trace_weights(trace: dict) -> np.ndarray:
    """(layer, head, query, key) weights as the trace file stores them (codec.on_weights_grid: the
    loaded weights themselves; an in-memory trace's put on the file's grid), None -> 0. Every
    weight a page prints and ships is one of these."""
    hit = _WEIGHTS_CACHE.get(id(trace))
    if hit is not None and hit[0] is trace:
        return hit[1]
    w = on_weights_grid(weight_grid(trace))  # (layer, head, query, key)
    if len(_WEIGHTS_CACHE) > 64:
        _WEIGHTS_CACHE.clear()
    _WEIGHTS_CACHE[id(trace)] = (trace, w)
    return w


def standin_refused(where: str, problem: str) -> LessonError:
    """The error for numbers of the random-init stand-in on a page."""
    return LessonError(
        where,
        problem,
        f"run `make traces` on a machine with the model (the stand-in is for tests: {STANDIN_ENV}=1)",
    )


def load_panel(d: Directive, model: str, text: str, ctx: Ctx, ids=None) -> Panel | None:
    """The trace of (model, text) as a Panel, or None (noted in ctx.missing) when not traced.
    `ids` picks a trace given by token ids (the scoring texts of random tokens)."""
    trace = None
    if ctx.store is not None:
        try:
            trace = ctx.store.load(model, text, ids)
        except LookupError:  # store.MissingTrace
            trace = None
    if trace is None:
        ctx.note_missing(Missing(model, Missing.TRACE, text), d.where)
        return None
    if trace.get("meta", {}).get("standIn") and not ctx.standin_ok():
        raise standin_refused(d.where, f"{d.kind}: the trace of {text!r} for model {model} comes from the random-init stand-in, not the real model")
    if ctx.on_trace is not None:
        ctx.on_trace(trace)
    return Panel(trace, trace_weights(trace))


def sentence_pairs(text) -> frozenset:
    """`make serve`'s list of sentences for the build (one `model<TAB>sentence` per line), as pairs."""
    return frozenset(tuple(line.split("\t", 1)) for line in str(text or "").split("\n") if "\t" in line)
