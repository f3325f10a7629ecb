"""`python -m generator traces`: trace every sentence the lessons ask for, into the store.

Requests come from ``lessons.pages.collect(content_dir)`` (items with ``.request``, a
TraceRequest, and ``.source``, "path:line"), from ``--sentence`` options, and from the fixed
scoring set, ``heads.scoring_requests(model)``; after a model's traces are written,
``heads.write_scores(store, model)`` rewrites its heads.json from the scoring set alone.

Exit status:

* 0: every model that could be loaded was traced. A model that cannot be loaded here
  (ModelUnavailable, e.g. GPT-2 offline) is reported in one line and listed at the end, but does
  not fail the run while another model was traced or its traces are already in the store.
* 1: a trace failed its self-check (a real bug), or generator.heads could not write its scores.
* 2: bad input: an unknown model or an untraceable (too long, empty) sentence, named by file:line.
* 3: no requested model could be loaded and some of their traces are missing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .. import heads
from ..heads import SCORING_SIZES
from ..registry import MODELS
from . import vectors
from ..lessons import pages
from ..lessons.errors import LessonError, error_lines
from ..lessons.values import sentence_option
from ..store import TRACE_FILE_RE, DamagedFile, TraceRequest, TraceStore

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMITTED_TRACES = REPO_ROOT / "traces"
STAND_IN_TRACES = REPO_ROOT / "build" / "stand-in-traces"


@dataclass(frozen=True)
class Item:
    """A request with where it came from (the shape lessons.pages.collect returns)."""

    request: TraceRequest
    source: str


def collect_items(content_dir: Path, sentences: Iterable[str], models: list[str], err=None) -> list | None:
    """Items from the lessons plus one per --sentence per model."""
    err = err or sys.stderr
    items: list = []
    try:
        items.extend(pages.collect(Path(content_dir)))
    except LessonError as e:  # a lesson's mistakes: one line each, path:line, as check and site say them
        for line in error_lines(e):
            print(f"error: {line}", file=err)
        return None
    for s in sentences:
        try:  # as a lesson's sentence is checked
            sentence_option(s, "--sentence", "traces")
        except LessonError as e:
            for line in error_lines(e):
                print(f"error: {line}", file=err)
            return None
        items.extend(Item(TraceRequest(m, s), "--sentence") for m in models)
    return items


def resolve_targets(followed: Iterable, err_lines: list[str]) -> dict[TraceRequest, tuple[int, ...]]:
    """TraceRequest -> the sorted token ids its trace must follow (the causal figures'
    `targets`, pages.collect_causal), through the committed tokenizers; a name that is no token
    is one error line naming the lesson line."""
    from ..tokens import NoTokenizer, UnknownToken, vocab_token

    out: dict[TraceRequest, set[int]] = {}
    for f in followed:
        for name in f.names:
            try:
                out.setdefault(TraceRequest(f.model, f.text), set()).add(vocab_token(f.model, name).id)
            except (UnknownToken, NoTokenizer) as e:
                err_lines.append(f"{f.source}: targets: {e}. Fix: name one token, like `her` for ·her")
    return {r: tuple(sorted(ids)) for r, ids in out.items()}


def covers(store: TraceStore, req: TraceRequest, targets: tuple[int, ...]) -> bool:
    """Whether the stored trace of `req` follows exactly `targets` (no fewer, so every figure
    has its numbers; no more, so the same lessons always give the same bytes)."""
    try:
        have = store.load(req.model, req.text, req.ids)["causal"]["targets"]
    except (LookupError, DamagedFile):
        return False
    return list(have) == sorted(set(targets))


def plan(lm, store: TraceStore, by_req: dict[TraceRequest, str], force: bool = False, err=None,
         targets: dict[TraceRequest, tuple[int, ...]] | None = None) -> tuple[list[TraceRequest], list[str]]:
    """Which of `by_req` (request -> "path:line") model `lm` must trace into `store`: those not
    there from lm's revision, or damaged (said on `err`), or not following a token of
    `targets[req]`, or all with `force`. Requests it cannot trace (too long, empty) are returned as
    one error line each, naming the lesson line. Also used by `make serve` (generator/site/serve.py)
    for the sentences it traces on save."""
    from . import tracing

    err = err or sys.stderr
    todo: list[TraceRequest] = []
    errors: list[str] = []
    for req in sorted(by_req):
        try:
            tracing.token_ids(lm, req.text, req.ids)
        except tracing.TooLong as e:
            errors.append(f"{by_req[req]}: {e}. Fix: shorten the sentence to at most {lm.n_ctx} tokens")
            continue
        except tracing.TraceError as e:
            errors.append(f"{by_req[req]}: {e}. Fix: change the sentence")
            continue
        if force or not store.has(lm.name, req.text, req.ids, revision=lm.revision):
            todo.append(req)
        elif not store.usable(lm.name, req.text, req.ids, revision=lm.revision):
            print(f"{store.lookup(lm.name, req.text, req.ids)}: damaged; retracing {req.text[:50]!r}", file=err)
            todo.append(req)
        elif not covers(store, req, (targets or {}).get(req, ())):
            todo.append(req)  # the lessons name other target tokens for this sentence now
    return todo, errors


def write_causal_files(lm, store: TraceStore, pairs: list, out, err, force: bool = False, scoring: str = "full") -> list[str]:
    """circuits.json (when missing or from another revision) and patching.json (every lesson
    pair of this model) for the loaded model; returns error lines."""
    from . import causal, circuits, tracing
    from ..store import circuits_file
    from .. import tokens
    from ..heads import SCORING_SET_VERSION
    from ..registry import KINDS

    errors: list[str] = []
    revision = lm.revision
    path = circuits_file.path_of(store.root, lm.name, circuits_file.CIRCUITS_FILE)
    try:
        current = circuits_file.load_circuits(store, lm.name, tuple(KINDS), int(lm.meta["nLayer"]), int(lm.meta["nHead"]))
    except DamagedFile:
        current = None
    if current is None or current.get("scoringSet") != SCORING_SET_VERSION:
        circuits_file.write_circuits(store, lm.name, circuits.circuits(lm, causal.reference(lm), scoring=scoring), revision)
        print(f"{lm.name}: wrote {path.name} (composition scores, kind scores and in-context learning with each head removed)", file=out)
    write_pronoun_sweep(lm, store, out, force=force, scoring=scoring)
    entries = []
    for model, a, b, names, source in pairs:
        if model != lm.name:
            continue
        try:
            ids_t = [tokens.vocab_token(model, n).id for n in names]
            ia, ib = tracing.token_ids(lm, a), tracing.token_ids(lm, b)
            if len(ia) != len(ib):
                errors.append(f"{source}: patching: {a!r} is {len(ia)} tokens and {b!r} is {len(ib)}; a head's output "
                              f"can only be moved between sentences of the same length. Fix: choose two sentences with as many tokens")
                continue
        except (tokens.UnknownToken, tracing.TraceError) as e:
            errors.append(f"{source}: patching: {e}. Fix: change the sentence or the targets")
            continue
        entries.append((None if force else kept_pair(store, lm, a, b, ids_t, len(ia))) or {"a": a, "b": b, **causal.patching(lm, ia, ib, ids_t)})
    if entries or circuits_file.path_of(store.root, lm.name, circuits_file.PATCHING_FILE).is_file():
        circuits_file.write_patching(store, lm.name, revision, entries)
    return errors


def write_pronoun_sweep(lm, store: TraceStore, out, force: bool = False, scoring: str = "full") -> None:
    """pronouns.json (the her/his test over names × templates) when missing, damaged, of another
    revision or of another set; the stand-in's small scoring set measures the small one."""
    from . import causal, pronoun_sweep
    from ..store import pronouns_file

    config = pronoun_sweep.SIZES["small" if scoring == "small" else "full"]
    L, H = int(lm.meta["nLayer"]), int(lm.meta["nHead"])
    try:
        have = None if force else pronouns_file.read(store.root, lm.name, L, H)
    except DamagedFile:
        have = None
    if have and have["revision"] == lm.revision and have["set"] == pronoun_sweep.record(config):
        return
    p = pronouns_file.write(store.root, lm.name, lm.revision, pronoun_sweep.sweep(lm, causal.reference(lm), config), L, H)
    print(f"{lm.name}: wrote {p.name} (logit(her) − logit(his) over names × templates, one head removed)", file=out)


def kept_pair(store: TraceStore, lm, a: str, b: str, targets: list[int], n_tokens: int) -> dict | None:
    """The stored patching entry of (a, b, targets), checked, when it is this model revision's:
    kept as it is, so that `make traces` on a checkout rewrites none of its committed numbers (a
    recomputation on another CPU can differ in the 5th digit)."""
    from ..store import circuits_file

    try:
        doc = circuits_file.load_patching_doc(store, lm.name)
        if doc is None or doc.get("revision") != lm.revision:
            return None
        return circuits_file.find_pair(store, lm.name, a, b, targets, n_tokens, int(lm.meta["nLayer"]), int(lm.meta["nHead"]))
    except DamagedFile:  # recomputed, and the file rewritten whole
        return None


@contextmanager
def pinned_threads(n: int = 1):
    """torch's CPU thread count set to `n` inside. The count changes float32 reductions in the
    last bits (≈1 value in 1000 differs at the 5th significant digit between 1 and 2 threads), so
    it is pinned: the same torch build then writes the same bytes on any machine, whatever its
    core count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_traces(
    models: list[str],
    store: TraceStore,
    items: list,
    force: bool = False,
    prune: bool = False,
    gpt2_path: str | None = None,
    stand_in: bool = False,
    loader: Callable | None = None,
    progress: bool | None = None,
    out=None,
    err=None,
    followed: Iterable = (),
    pairs: list = (),
    scoring: str = "full",
) -> int:
    """Trace `items` (and the scoring set, of size `scoring`: heads.SCORING_SIZES) with each of
    `models` into `store`; the exit status of the module's docstring."""
    out, err = out or sys.stdout, err or sys.stderr
    size = {} if scoring == "full" else heads.scoring_size(scoring)  # scoring_requests' keywords
    from . import load as models_mod
    from . import tracing

    loader = loader or models_mod.load

    # Unknown models anywhere in the content are errors even when not selected.
    bad = [f"--models: {models_mod.UnknownModel(m)}" for m in models if m not in models_mod.MODELS]
    if not bad:
        bad = [f"{it.source}: {models_mod.UnknownModel(it.request.model)}"
               for it in items if it.request.model not in models_mod.MODELS]
    if bad:
        for line in bad:
            print(line, file=err)
        return 2

    from tqdm import tqdm

    content_errors: list[str] = []
    check_errors: list[str] = []
    targets = resolve_targets(followed, content_errors)
    missing: dict[str, str] = {}
    traced_any = False
    # Pass 1: load each model and check every request against it (context, vocabulary), so that
    # a lesson mistake stops the run before anything is written.
    plans = []  # (name, lm, by_req, todo)
    for name in models:
        try:
            store.model_meta(name)
        except DamagedFile as e:  # repair before anything else reads it
            kept = store.rebuild_index(name)
            print(f"{e.path}: {e.problem}; rebuilt it from the {kept} trace files that check out", file=err)
        by_req: dict[TraceRequest, str] = {}
        for it in items:
            if it.request.model == name:
                by_req.setdefault(it.request, it.source)
        try:
            lm = loader(name, gpt2_path=gpt2_path, stand_in=stand_in)
        except models_mod.ModelUnavailable as e:
            print(str(e), file=err)
            meta = store.model_meta(name)
            if meta is not None:
                for r in heads.scoring_requests(name, meta, **size):
                    by_req.setdefault(r, "heads.scoring_requests")
            absent = [r for r in by_req if not store.usable(r.model, r.text, r.ids)]
            if absent:
                missing[name] = f"{name}: {len(absent)} of {len(by_req)} traces missing"
            else:
                print(f"{name}: all {len(by_req)} traces are already in {store.root}", file=out)
            continue
        for r in heads.scoring_requests(name, dict(lm.meta), **size):
            by_req.setdefault(r, "heads.scoring_requests")
        todo, errors = plan(lm, store, by_req, force=force, err=err, targets=targets)
        content_errors += errors
        plans.append((name, lm, by_req, todo))

    # Pass 2: trace, only when every request of every model is traceable.
    for name, lm, by_req, todo in ([] if content_errors else plans):
        traced_any = True
        done = 0
        desc = f"trace {name}: {len(todo)} of {len(by_req)} sentences"
        for req in tqdm(todo, desc=desc, unit="trace", disable=None if progress is None else not progress):
            try:
                store.write(tracing.trace(lm, req.text, req.ids, targets=targets.get(req, ())))
                done += 1
            except tracing.TraceCheckError as e:
                check_errors.append(f"{by_req[req]}: {e}")
        if not check_errors:
            try:
                heads.write_scores(store, name, **size)
            except Exception as e:  # a missing scoring trace, say: report it in one line
                check_errors.append(f"heads.write_scores({name}): {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        if not check_errors:
            content_errors += write_causal_files(lm, store, list(pairs), out, err, force=force, scoring=scoring)
        unused = store.unused(name, by_req)
        pruned = (store.forget(name, unused) + store.prune(name)) if prune else []
        print(
            f"{name}@{lm.revision[:12]}: {done} traced, {len(by_req) - len(todo)} kept (traced already)"
            + (f", {len(pruned)} pruned" if prune else "")
            + f" -> {store.root / name}",
            file=out,
        )
        lesson_new = [r for r in todo if by_req[r] != "heads.scoring_requests"]
        for r in lesson_new[:20]:
            print(f"  traced {r.text[:70]!r} ({by_req[r]})", file=out)
        if len(lesson_new) > 20:
            print(f"  … and {len(lesson_new) - 20} more", file=out)
        for e in (unused if prune else [])[:20]:
            print(f"  pruned {str(e.get('text'))[:70]!r}", file=out)
        listed = {e["file"] for e in store.entries(name)}
        stale = [p for p in (store.root / name).glob("*.json") if TRACE_FILE_RE.match(p.name) and p.name not in listed]
        if (unused or stale) and not prune:
            print(f"  {len(unused) + len(stale)} traces no lesson or scoring text uses are kept; "
                  f"`make traces PRUNE=1` removes them", file=out)

    for line in content_errors + check_errors:
        print(f"error: {line}", file=err)
    if missing:
        print("missing (model unavailable here):", file=err)
        for line in missing.values():
            print(f"  {line}", file=err)
    if check_errors:
        return 1
    if content_errors:
        return 2
    # a checkpoint the author pointed at (--gpt2-path, COURSE_GPT2_PATH) that could not be traced
    # is a failure even when the other model traced: the author asked for it by name
    pointed = {"gpt2"} if (gpt2_path or os.environ.get(models_mod.GPT2_PATH_ENV)) else set()
    if missing and (not traced_any or pointed & set(missing)):
        return 3
    return 0


def _score_split():
    from . import score_parts  # imports torch: only when tracing

    return score_parts


def _rotary():
    from . import rotary  # imports torch: only when tracing

    return rotary


def main_traces(args) -> int:
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    traces_dir = Path(args.traces_dir) if args.traces_dir else (STAND_IN_TRACES if args.stand_in else COMMITTED_TRACES)
    if args.stand_in and traces_dir.resolve() == COMMITTED_TRACES.resolve():
        print(f"error: --stand-in traces are random weights and never go into {COMMITTED_TRACES}; "
              f"use another --traces-dir (default {STAND_IN_TRACES})", file=sys.stderr)
        return 2
    if args.scoring_set != "full" and traces_dir.resolve() == COMMITTED_TRACES.resolve():
        print(f"error: --scoring-set {args.scoring_set} scores heads on fewer texts than the course's; its head scores "
              f"never go into {COMMITTED_TRACES}. Fix: give another --traces-dir, or leave --scoring-set out", file=sys.stderr)
        return 2
    content = Path(args.content)
    if not content.is_dir():
        print(f"error: {content}: no such folder of lessons. Fix: give --content the folder that holds the "
              f"lesson Markdown (default {REPO_ROOT / 'content'})", file=sys.stderr)
        return 2
    items = collect_items(content, args.sentence or [], models)
    if items is None:
        return 2
    followed, pairs = pages.collect_causal(content)
    with pinned_threads(args.threads), TraceStore(traces_dir).writing(say=lambda line: print(line, file=sys.stderr)) as store:
        return run_traces(models, store, items, force=args.force, prune=args.prune, gpt2_path=args.gpt2_path,
                          stand_in=args.stand_in, followed=followed, pairs=pairs, scoring=args.scoring_set) or vectors.write_for_lessons(models, traces_dir, content, stand_in=args.stand_in, force=args.force) \
            or _score_split().write_for_lessons(models, traces_dir, content, stand_in=args.stand_in, gpt2_path=args.gpt2_path, force=args.force) \
            or _rotary().write_for_lessons(models, traces_dir, content, stand_in=args.stand_in, gpt2_path=args.gpt2_path, force=args.force)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "traces",
        help="trace every sentence the lessons use into traces/",
        description=__doc__,
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    every = ",".join(MODELS)
    p.add_argument("--models", default=every, help=f"comma-separated models to trace (default {every})")
    p.add_argument("--force", action="store_true", help="retrace even when the trace is already there")
    p.add_argument("--prune", action="store_true",
                   help="remove traces that no lesson or scoring text uses (kept unless asked; make traces PRUNE=1)")
    p.add_argument("--traces-dir", default=None, help=f"the store (default {COMMITTED_TRACES.name}/)")
    p.add_argument("--content", default=str(REPO_ROOT / "content"), help="lesson Markdown to scan for requests")
    p.add_argument("--gpt2-path", default=None, help="a local GPT-2 checkpoint folder (or set COURSE_GPT2_PATH)")
    p.add_argument("--stand-in", action="store_true",
                   help="trace gpt2 with the random-weight stand-in (tests and make bench; writes to build/stand-in-traces)")
    p.add_argument("--scoring-set", choices=sorted(SCORING_SIZES), default="full",
                   help="how many scoring texts the head scores are measured on: full (the course's 4 repeated random "
                        "sequences and 8 sentences) or small (2 and 1; for tests: the same code, fewer traces; refused "
                        "for the committed traces/)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: traces are then byte-identical whatever the machine's core count)")
    p.add_argument("--sentence", action="append", help="also trace this sentence with every selected model (repeatable)")
    p.set_defaults(func=main_traces)
