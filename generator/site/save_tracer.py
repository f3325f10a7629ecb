"""Tracing on save for `make serve` (generator/site/serve.py): the background Tracer that traces the
sentences a saved lesson needs, with each model loaded once and kept, and what it says when it
cannot. With `preload`, the tracer's thread imports torch and loads those models as soon as the
server starts, so the first save is as quick as the next ones.

torch is imported only by the Tracer's thread (generator.model.load), never at import.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..lessons import pages
from ..lessons.errors import LessonError
from ..model import trace_run
from ..store import INDEX_NAME, StoreError, TraceRequest, TraceStore, splits_file

log = logging.getLogger("mkdocs.course.serve")
# what makes a new trace visible to the build; splits.json holds what a score-split figure draws
WATCHED_STORE_FILES = (INDEX_NAME, "heads.json", splits_file.FILE)


def store_stamp(traces_dir: Path) -> tuple:
    """What the build has seen of the store: (path, mtime, size) of each model's index and heads."""
    found = []
    if traces_dir.is_dir():
        for model_dir in sorted(p for p in traces_dir.iterdir() if p.is_dir()):
            for name in WATCHED_STORE_FILES:
                try:
                    st = (model_dir / name).stat()
                except FileNotFoundError:
                    continue
                found.append((model_dir.name, name, st.st_mtime_ns, st.st_size))
    return tuple(found)

MODELS_EXTRA_HINT = (
    "tracing on save is off: the models extra is not installed ({problem}). Turn it on with "
    "`make serve` (without TRACE=0; it installs .[models], as `make traces` does) or `.venv/bin/pip install -e '.[models]'`, "
    "then restart `make serve`"
)
TRACE_OFF_HINT = (
    "tracing on save is off (TRACE=0 / --no-trace): the figures of new sentences stay pending boxes. "
    "Turn it on with `make serve` (without TRACE=0), or run `make traces` and the page reloads with them"
)


def models_extra_problem() -> str | None:
    """Why the models extra cannot be imported here (found without importing torch), or None."""
    for name in ("torch", "transformers"):
        try:
            if importlib.util.find_spec(name) is None:
                return f"No module named '{name}'"
        except (ImportError, ValueError) as exc:
            return str(exc)
    return None


@dataclass(frozen=True)
class Taken:
    """What a build takes from the tracer, at one moment, while no trace is half-recorded (written
    to the store but not yet listed): the traces written since the last build, the store's stamp
    after the tracer's last write, the store's stamp now, and the sentences still being traced.
    Each sentence is then either in the store as the build reads it or drawn as "tracing…"; the
    stamp and the list agree, so no new trace goes without its rebuild."""

    written: list[TraceRequest]
    own_stamp: tuple | None
    stamp: tuple
    tracing: frozenset[tuple[str, str]]
    traced_models: frozenset[str] = frozenset()  # models traced on save: a sentence of theirs saved after
    refused: frozenset[tuple[str, str]] = frozenset()  # the scan is traced on the next build; but not these


@dataclass
class Job:
    """Requests (-> "path:line") handed to the Tracer; `done` is set once they are written."""

    requests: dict[TraceRequest, str]
    splits: frozenset[tuple[str, str]] = frozenset()  # (model, sentence) whose score split to write after
    done: threading.Event = field(default_factory=threading.Event)
    timings: list[tuple[TraceRequest, float]] = field(default_factory=list)  # seconds per written trace


class Tracer:
    """Traces missing sentences in one background thread, with each model loaded once.

    `loader(name)` returns a models.LoadedModel or raises models.ModelUnavailable; the default
    imports generator.model.load (and so torch) on the first trace only."""

    def __init__(self, traces_dir: Path, content_dir: Path, models: tuple[str, ...] = ("tiny", "gpt2"),
                 threads: int = 1, loader: Callable | None = None, say: Callable[[str], None] | None = None,
                 preload: tuple[str, ...] = ()):
        self.store = TraceStore(traces_dir)
        self.content_dir = Path(content_dir)
        self.models = models
        self.threads = threads
        self.loader = loader
        self.say = say if say is not None else (lambda line: log.info(line))
        self.loaded: dict[str, object] = {}
        self.unavailable: dict[str, str] = {}  # model -> why, said once
        self.refused: set[TraceRequest] = set()  # untraceable sentences, said once (the page says where)
        self.queued: set[TraceRequest] = set()
        self.splitting: set[tuple[str, str]] = set()  # score splits queued or being written: "tracing…"
        self.split_tried: set[tuple[str, str]] = set()  # asked for once; a failure is not retried each build
        self.written: list[TraceRequest] = []  # written since the last build took them (take)
        self.own_stamp: tuple | None = None  # store_stamp right after this tracer's last write
        # held across a trace's write and its entry in `written`, and by take (see Taken)
        self._write_lock = threading.Lock()
        self.preload = tuple(m for m in preload if m in models)  # loaded by the thread first
        # asks the server for a build after a job that left a sentence untraced (refused, failed, no
        # model): no trace is written, so the traces/ watch sees nothing, and a page built while the
        # sentence was queued says "tracing…"
        self.rebuild: Callable[[], None] | None = None
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="course-tracer", daemon=True)
        self._thread.start()

    # ---- the build thread's side

    def missing(self) -> dict[TraceRequest, str]:
        """Sentences the lessons use whose trace is not in the store, and not already queued,
        refused, or of a model that cannot be loaded here."""
        try:
            items = pages.collect(self.content_dir)
        except (LessonError, OSError, UnicodeDecodeError):  # the build reports the mistake with its line
            return {}
        found: dict[TraceRequest, str] = {}
        for name in {it.request.model for it in items} & set(self.models):
            why = None if self.loader or name in self.unavailable or name in self.loaded else cannot_load(name)
            if why:  # said once, before anything is queued for it (and without torch)
                self.unavailable[name] = why
                self.say(f"{why}; its figures stay pending boxes while `make serve` runs")
        with self._lock:
            for it in items:
                r = it.request
                if r.model not in self.models or r.model in self.unavailable or r in self.refused or r in self.queued:
                    continue
                try:
                    if self.store.has(r.model, r.text, r.ids):
                        continue
                except StoreError:  # a damaged index: the build names it
                    continue
                found.setdefault(r, it.source)
            self.queued.update(found)
        return found

    def missing_splits(self) -> frozenset[tuple[str, str]]:
        """(model, sentence) of the lessons' score-split figures that splits.json does not hold yet
        (a new figure: `make traces` would write it), of models traced here, not asked for before."""
        from ..lessons import split_kinds

        try:
            directives = pages.parse_content(self.content_dir)
        except (LessonError, OSError, UnicodeDecodeError):  # the build reports the mistake with its line
            return frozenset()
        found = set()
        for (model, text), heads in split_kinds.needs(directives).items():
            if model not in self.models or model in self.unavailable or (model, text) in self.split_tried:
                continue
            try:
                entry = splits_file.read(self.store.root, model)
            except StoreError:  # damaged: the build names it, `make traces` rewrites it
                continue
            have = entry.sentence(text) if entry is not None else None
            if have is None or (heads is not None and not heads <= {(e["layer"] - 1, e["head"] - 1) for e in have["heads"]}):
                found.add((model, text))
        with self._lock:
            self.split_tried.update(found)
            self.splitting.update(found)
        return frozenset(found)

    def warm(self, requests) -> bool:
        """Whether every model these requests need is loaded already (so tracing is quick)."""
        return all(r.model in self.loaded for r in requests)

    def loading(self, requests) -> bool:
        """Whether every model these requests need is loaded or being loaded as the server starts
        (preload), and none has failed to load: its traces come within seconds, so a build may
        wait for them rather than build twice (a page of "tracing…", then its figure)."""
        return all(r.model in self.loaded or (r.model in self.preload and r.model not in self.unavailable) for r in requests)

    def busy_models(self) -> set[str]:
        """Models with sentences queued or being traced."""
        with self._lock:
            return {r.model for r in self.queued} | {m for m, _ in self.splitting}

    def submit(self, requests: dict[TraceRequest, str], splits: frozenset[tuple[str, str]] = frozenset()) -> Job:
        job = Job(dict(requests), frozenset(splits))
        self._jobs.put(job)
        return job

    def take(self) -> Taken:
        """The build's view of the tracer (Taken): the list of new traces is emptied."""
        with self._write_lock, self._lock:
            written, self.written = self.written, []
            return Taken(written, self.own_stamp, store_stamp(self.store.root), request_pairs(self.queued) | frozenset(self.splitting),
                         frozenset(m for m in self.models if m not in self.unavailable), request_pairs(self.refused))

    def close(self) -> None:
        self._jobs.put(None)

    # ---- the tracer thread

    def tracing_now(self) -> frozenset[tuple[str, str]]:
        """(model, sentence) queued or being traced: the build shows "tracing…" for them."""
        with self._lock:
            return request_pairs(self.queued) | frozenset(self.splitting)

    def _run(self) -> None:
        for name in self.preload:  # torch and the model, before the first save needs them
            try:
                self._model(name)
            except Exception as exc:  # a bug must not kill the preview: say it in one line
                self.say(f"loading {name} for tracing on save failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        while (job := self._jobs.get()) is not None:
            try:
                self._trace_job(job)
                if job.splits:
                    self._write_splits(job)
            except Exception as exc:  # a bug must not kill the preview: say it in one line
                self.say(f"tracing on save failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                with self._lock:  # not retried on every build (the build this asks for shows them as untraced)
                    self.refused.update(r for r in job.requests if r not in self.written and not self.store.has(r.model, r.text, r.ids))
            finally:
                with self._lock:
                    self.queued.difference_update(job.requests)
                    self.splitting.difference_update(job.splits)
                job.done.set()
                if (len(job.timings) < len(job.requests) or job.splits) and self.rebuild is not None:
                    self.rebuild()  # a split written or not: its figure stops saying "tracing…"

    def _model(self, name: str):
        if name in self.loaded or name in self.unavailable:
            return self.loaded.get(name)
        t = time.perf_counter()
        try:
            from ..model import load as models

            models.import_libraries()
        except ImportError as exc:
            why = MODELS_EXTRA_HINT.format(problem=exc)
            for m in self.models:
                self.unavailable[m] = why
            self.say(why)
            return None
        torch_s, t = time.perf_counter() - t, time.perf_counter()
        try:
            lm = (self.loader or models.load)(name)
        except models.ModelUnavailable as exc:
            self.unavailable[name] = str(exc)
            self.say(f"{exc}; its figures stay pending boxes while `make serve` runs")
            return None
        self.loaded[name] = lm
        self.say(f"{name}: torch and transformers imported in {torch_s:.2f} s, model loaded in {time.perf_counter() - t:.2f} s "
                 f"(kept loaded for tracing on save)")
        return lm

    def _trace_job(self, job: Job) -> None:
        from collections import defaultdict

        by_model: dict[str, dict[TraceRequest, str]] = defaultdict(dict)
        for r, src in job.requests.items():
            by_model[r.model][r] = src
        for name, by_req in by_model.items():
            lm = self._model(name)
            if lm is None:
                continue
            from ..model import tracing

            with trace_run.pinned_threads(self.threads):
                todo, errors = trace_run.plan(lm, self.store, by_req)
                for line in errors:
                    self.say(line)
                self.refused.update(r for r in by_req if r not in todo and not self.store.has(name, r.text, r.ids))
                for req in todo:
                    t = time.perf_counter()
                    try:
                        doc = tracing.trace(lm, req.text, req.ids)
                    except tracing.TraceCheckError as exc:
                        self.refused.add(req)
                        self.say(f"{by_req[req]}: {exc}")
                        continue
                    with self._write_lock:
                        path = self.store.write(doc)
                        with self._lock:  # no longer "tracing…" from the moment it is listed
                            self.written.append(req)
                            self.queued.discard(req)
                            self.own_stamp = store_stamp(self.store.root)
                    took = time.perf_counter() - t
                    job.timings.append((req, took))
                    self.say(f"traced {req.text[:70]!r} ({by_req[req]}) in {took:.2f} s -> {path}")


    def _write_splits(self, job: Job) -> None:
        """splits.json of each model with a new score-split figure, as `make traces` writes it
        (model/score_parts.write_for_lessons, which rewrites the file for every figure of the
        lessons), once the job's traces are in the store."""
        import io

        from ..model import score_parts

        for name in sorted({m for m, _ in job.splits}):
            if self._model(name) is None:  # cannot be loaded here: said once already
                continue
            out, err = io.StringIO(), io.StringIO()
            t = time.perf_counter()
            with trace_run.pinned_threads(self.threads):
                status = score_parts.write_for_lessons([name], self.store.root, self.content_dir, out=out, err=err)
            for line in (out.getvalue() + err.getvalue()).splitlines():
                self.say(f"{line} ({time.perf_counter() - t:.2f} s)" if status == 0 else line)


def request_pairs(requests) -> frozenset[tuple[str, str]]:
    """(model, sentence) of each request: what the build is told of them (Taken)."""
    return frozenset((r.model, r.text) for r in requests)


def cannot_load(name: str) -> str | None:
    """Why `name` cannot be loaded here, when that is known without torch (GPT-2 with no local
    copy, no cached snapshot of the pinned revision and no hub), else None."""
    from ..model import load as models  # no torch at import

    if name != "gpt2" or os.environ.get(models.GPT2_PATH_ENV):
        return None
    hub_cache = Path(os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface") / "hub")
    snapshot = hub_cache / f"models--{models.GPT2_HF_NAME.replace('/', '--')}" / "snapshots" / models.GPT2_REVISION
    if snapshot.is_dir() or (not models._offline_env() and models.hub_reachable()):
        return None
    return models._gpt2_missing_message("not in the HF cache and the hub is unreachable")
