"""`python -m generator serve` (make serve): the MkDocs live preview, tracing as the author writes.

It is mkdocs.commands.serve's loop (a LiveReloadServer on a temporary site folder) with three
changes, read off MkDocs 1.6's source:

* before each build, the lessons are scanned (lessons.pages.collect) for sentences whose trace is
  missing; a background Tracer traces them with the model kept loaded between saves, writes them
  atomically into traces/ (TraceStore.write), and the traces/ watch rebuilds the page, which the
  browser then reloads with the real heatmap. Once the model is loaded, a build waits for the
  tracer (a tiny trace takes a fraction of a second), so one save makes one rebuild;
* traces/ is watched (its index.json and heads.json files: a trace is visible once its index
  lists it), so a trace made by another process (`make traces`) shows without touching a lesson;
  a change this process has already built is not built twice;
* content/assets/generated/ is written by publish.write_assets before each build and is not
  watched, so the build's own output never triggers another build;
* downloads/ is made by `make site` only: a link to it in the preview opens a page that says
  where the downloads are (generator/assets/serve-downloads.html), not a bare 404.

torch is imported only when a trace is needed, by the Tracer's thread. Without the models extra
(or without a model, GPT-2 here), the figures stay pending boxes and the reason is said once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import build_log, publish
from ..model import trace_run
from ..lessons import pages
from ..lessons.errors import LessonError
from ..lessons.source import GENERATED, iter_markdown
from ..store import INDEX_NAME, StoreError, TraceRequest, TraceStore

log = logging.getLogger("mkdocs.course.serve")

DEFAULT_HOST = "127.0.0.1"  # MkDocs's default dev_addr
DEFAULT_PORT = 8000
WARM_WAIT_S = 10.0  # how long a build waits for a loaded model to trace what the page needs
WATCHED_STORE_FILES = (INDEX_NAME, "heads.json")  # what makes a new trace visible to the build
MODELS_EXTRA_HINT = (
    "tracing on save is off: the models extra is not installed ({problem}). Turn it on with "
    "`make traces` once (it installs .[models]) or `.venv/bin/pip install -e '.[models]'`, then restart `make serve`"
)


@dataclass
class Job:
    """Requests (-> "path:line") handed to the Tracer; `done` is set once they are written."""

    requests: dict[TraceRequest, str]
    done: threading.Event = field(default_factory=threading.Event)
    timings: list[tuple[TraceRequest, float]] = field(default_factory=list)  # seconds per written trace


class Tracer:
    """Traces missing sentences in one background thread, with each model loaded once.

    `loader(name)` returns a models.LoadedModel or raises models.ModelUnavailable; the default
    imports generator.model.load (and so torch) on the first trace only."""

    def __init__(self, traces_dir: Path, content_dir: Path, models: tuple[str, ...] = ("tiny", "gpt2"),
                 threads: int = 1, loader: Callable | None = None, say: Callable[[str], None] | None = None):
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
        self.written: list[TraceRequest] = []  # written since the last build took them (take_written)
        self.own_stamp: tuple | None = None  # store_stamp right after this tracer's last write
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

    def warm(self, requests) -> bool:
        """Whether every model these requests need is loaded already (so tracing is quick)."""
        return all(r.model in self.loaded for r in requests)

    def busy_models(self) -> set[str]:
        """Models with sentences queued or being traced."""
        with self._lock:
            return {r.model for r in self.queued}

    def submit(self, requests: dict[TraceRequest, str]) -> Job:
        job = Job(dict(requests))
        self._jobs.put(job)
        return job

    def take_written(self) -> tuple[list[TraceRequest], tuple | None]:
        """What this tracer wrote since the last call, and the store's stamp after its last write."""
        with self._lock:
            written, self.written = self.written, []
            return written, self.own_stamp

    def close(self) -> None:
        self._jobs.put(None)

    # ---- the tracer thread

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                self._trace_job(job)
            except Exception as exc:  # a bug must not kill the preview: say it in one line
                self.say(f"tracing on save failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            finally:
                with self._lock:
                    self.queued.difference_update(job.requests)
                job.done.set()

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
                        path = self.store.write(tracing.trace(lm, req.text, req.ids))
                    except tracing.TraceCheckError as exc:
                        self.refused.add(req)
                        self.say(f"{by_req[req]}: {exc}")
                        continue
                    took = time.perf_counter() - t
                    job.timings.append((req, took))
                    with self._lock:
                        self.written.append(req)
                        self.own_stamp = store_stamp(self.store.root)
                    self.say(f"traced {req.text[:70]!r} ({by_req[req]}) in {took:.2f} s -> {path}")


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


# ---------------------------------------------------------------- the server


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


DIRTY_WARNING = "A 'dirty' build is being performed"  # MkDocs's warning on every dirty build


class Rebuilds:
    """Which build a change needs. A full MkDocs build of the course takes seconds; a "dirty" one
    (MkDocs rebuilds only the pages whose source is newer than their HTML) well under one. A
    rebuild is dirty when all that changed is lesson Markdown and the traces this process wrote;
    the pages that use those new traces lose their HTML first, so MkDocs rebuilds them too.
    Anything else (mkdocs.yml, the glossary, a trace from another process) gets a full build.
    A dirty build leaves the search index of the last full build in place (MkDocs's would hold
    the rebuilt pages only)."""

    def __init__(self, docs: Path, traces_dir: Path, site_dir: Path):
        self.docs, self.traces_dir, self.site_dir = docs, traces_dir, site_dir
        self.changed: set[Path] = set()
        self.stamp: tuple | None = None  # the store as the last build saw it
        self._lock = threading.Lock()

    def note(self, path: str) -> None:
        with self._lock:
            self.changed.add(Path(path))

    def dirty(self, written: list[TraceRequest], own_stamp: tuple | None) -> bool:
        """Whether the next build may be dirty (and, if so, the pages using `written` are marked)."""
        with self._lock:
            changed, self.changed = self.changed, set()
        if self.stamp is None:  # the first build
            return False
        now = store_stamp(self.traces_dir)
        if now != self.stamp and now != own_stamp:  # another process changed the store
            return False
        if any(not (p.suffix == ".md" and p.is_relative_to(self.docs)) and not p.is_relative_to(self.traces_dir) for p in changed):
            return False
        self.mark_pages_using(written)
        return True

    def mark_pages_using(self, written: list[TraceRequest]) -> None:
        wanted = {(r.model, r.text) for r in written}
        if not wanted:
            return
        for path in iter_markdown(self.docs):
            try:
                found = pages.parse_file(path)
            except (LessonError, OSError, UnicodeDecodeError):
                continue  # its own build reports it
            if any(pair in wanted for d in found for pair in pages.directive_sentences(d)):
                (self.site_dir / path.relative_to(self.docs).with_suffix(".html")).unlink(missing_ok=True)


@contextlib.contextmanager
def dirty_build(site_dir: Path):
    """Keep the full build's search index over a dirty build, and MkDocs's dirty-build warning
    out of the log (the preview says once that it rebuilds only what changed)."""
    search = site_dir / "search"
    keep = Path(tempfile.mkdtemp(prefix="course-search-"))
    quiet = logging.Filter()
    quiet.filter = lambda record: not record.getMessage().startswith(DIRTY_WARNING)
    build_logger = logging.getLogger("mkdocs.commands.build")
    build_logger.addFilter(quiet)
    try:
        if search.is_dir():
            shutil.copytree(search, keep / "search")
        yield
        if (keep / "search").is_dir():
            shutil.rmtree(search, ignore_errors=True)
            shutil.copytree(keep / "search", search)
    finally:
        build_logger.removeFilter(quiet)
        shutil.rmtree(keep, ignore_errors=True)


def make_server(builder, host: str, port: int, root: str, mount_path: str, ignore: Callable[[str], bool]):
    """MkDocs's LiveReloadServer whose watches skip the paths `ignore` accepts (watch() is the
    same as MkDocs 1.6's, with that one test added)."""
    import watchdog.events
    from mkdocs.livereload import LiveReloadServer

    note = (Path(__file__).resolve().parents[1] / "assets" / "serve-downloads.html").read_bytes()
    prefix = mount_path.rstrip("/") + "/downloads/"

    class CourseServer(LiveReloadServer):
        def serve_request(self, environ, start_response):
            """downloads/ is made by `make site`, not by the preview: a page that says where they
            are rather than a bare 404."""
            path = environ.get("PATH_INFO", "")
            if path.startswith(prefix) and not (Path(root) / path[len(mount_path.rstrip("/")) + 1:]).is_file():
                start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(note)))])
                return [note]
            return super().serve_request(environ, start_response)

        def watch(self, path: str, func=None, *, recursive: bool = True) -> None:
            path = os.path.abspath(path)
            if path in self._watched_paths:
                self._watched_paths[path] += 1
                return
            self._watched_paths[path] = 1

            def callback(event):
                if event.is_directory or ignore(os.fsdecode(event.src_path)):
                    return
                with self._rebuild_cond:
                    self._want_rebuild = True
                    self._rebuild_cond.notify_all()

            handler = watchdog.events.FileSystemEventHandler()
            handler.on_any_event = callback
            self._watch_refs[path] = self.observer.schedule(handler, path, recursive=recursive)

    return CourseServer(builder=builder, host=host, port=port, root=root, mount_path=mount_path)


def serve(config_file: str = "mkdocs.yml", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          trace: bool = True, models: tuple[str, ...] = ("tiny", "gpt2"), threads: int = 1) -> int:
    from urllib.parse import urlsplit

    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException
    from mkdocs.livereload import _serve_url

    publish.setup_logging()
    site_dir = tempfile.mkdtemp(prefix="course-serve-")

    def get_config():
        return load_config(config_file=config_file, site_dir=site_dir, dev_addr=f"{host}:{port}")

    try:
        config = get_config()
    except (Abort, MkDocsException) as exc:
        print(f"error: {config_file}: {one_line(exc)}", file=sys.stderr)
        shutil.rmtree(site_dir, ignore_errors=True)
        return 1
    docs = Path(config["docs_dir"]).resolve()
    traces_dir = Path(publish.mdx_option(config, "traces_dir", "traces")).resolve()
    generated = docs / GENERATED
    tracer = Tracer(traces_dir, docs, models=models, threads=threads) if trace else None
    built = {"stamp": None}
    rebuilds = Rebuilds(docs, traces_dir, Path(site_dir))
    said: set[str] = set()  # build-log lines said already (a pending GPT-2 figure is said once)
    mount_path = urlsplit(config.site_url or "/").path
    serve_url = _serve_url(host, port, mount_path)
    config.plugins.on_startup(command="serve", dirty=False)

    def builder(cfg=None):
        if tracer is not None:
            needed = tracer.missing()
            if needed:
                job = tracer.submit(needed)
                if tracer.warm(needed):  # quick: build once, with the real figure
                    job.done.wait(WARM_WAIT_S)
                else:
                    log.info(f"tracing {len(needed)} new sentence(s) in the background; the page reloads when done")
        written, own_stamp = tracer.take_written() if tracer is not None else ([], None)
        dirty = rebuilds.dirty(written, own_stamp)
        built["stamp"] = rebuilds.stamp = store_stamp(traces_dir)
        try:
            publish.write_assets(docs, traces_dir)
        except (LessonError, StoreError) as exc:  # the build below names it on its page
            log.debug(f"assets: {exc}")
        try:
            cfg = cfg or get_config()
        except (Abort, MkDocsException) as exc:  # mkdocs.yml saved broken: the server lives on
            log.error(f"{config_file}: {one_line(exc)}. Fix: mend {config_file}; the preview keeps "
                      "the last good pages and rebuilds when it is saved again")
            return
        cfg.site_url = serve_url
        with build_log.grouped_warnings() as held, (dirty_build(Path(site_dir)) if dirty else contextlib.nullcontext()):
            build(cfg, serve_url=serve_url, dirty=dirty)
        tracing = tracer.busy_models() if tracer is not None else set()
        held.report(skip=tracing, said=said)

    def ignore(path: str) -> bool:
        p = Path(path)
        if p.is_relative_to(generated):  # the build's own output
            return True
        if p.is_relative_to(traces_dir):  # only an index or heads.json this build has not seen
            if p.name not in WATCHED_STORE_FILES or store_stamp(traces_dir) == built["stamp"]:
                return True
        rebuilds.note(path)
        return False

    server = make_server(builder, host, port, site_dir, mount_path, ignore)

    def error_handler(code):
        page = Path(site_dir) / f"{code}.html"
        return page.read_bytes() if code in (404, 500) and page.is_file() else None

    server.error_handler = error_handler
    try:
        builder(config)
        server.watch(str(docs))
        if config.config_file_path:
            server.watch(config.config_file_path)
        traces_dir.mkdir(parents=True, exist_ok=True)
        server.watch(str(traces_dir))
        log.info("a lesson edit rebuilds only the pages it changes and those that use its new traces; "
                 "mkdocs.yml, the glossary or traces from another process rebuild every page")
        server = config.plugins.on_serve(server, config=config, builder=builder)
        for item in config.watch:
            server.watch(item)
        try:
            server.serve()
        except KeyboardInterrupt:
            log.info("Shutting down...")
        finally:
            server.shutdown()
    except OSError as exc:  # the port is taken, say
        print(f"error: cannot serve on {host}:{port}: {exc.strerror or exc}. Fix: give another PORT= (make serve PORT=8001)", file=sys.stderr)
        return 1
    finally:
        if tracer is not None:
            tracer.close()
        config.plugins.on_shutdown()
        shutil.rmtree(site_dir, ignore_errors=True)
    return 0


def one_line(exc: Exception) -> str:
    """An exception's message (a YAML error spans several lines, with its marks) as one line."""
    return " ".join(str(exc).split()).rstrip(".!") or type(exc).__name__


def main_serve(args) -> int:
    models = tuple(m.strip() for m in args.models.split(",") if m.strip())
    return serve(args.config_file, host=args.host, port=args.port, trace=not args.no_trace, models=models, threads=args.threads)


def port_number(text: str) -> int:
    """A TCP port, 1-65535, for argparse (so `PORT=abc` or `PORT=99999` is one usage line)."""
    import argparse

    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return int(text)


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="live preview on 127.0.0.1:8000 that traces new sentences on save")
    p.add_argument("-f", "--config-file", default="mkdocs.yml")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    # $PORT is read as a string and checked only when serve runs: other commands never look at it
    p.add_argument("--port", type=port_number, default=os.environ.get("PORT") or str(DEFAULT_PORT),
                   help=f"port (default {DEFAULT_PORT}, or $PORT; make serve PORT=8001)")
    p.add_argument("--models", default="tiny,gpt2", help="models traced on save (default tiny,gpt2; gpt2 where its weights are)")
    p.add_argument("--no-trace", action="store_true", help="never trace on save (the preview shows pending boxes)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: the same bytes as `make traces`)")
    p.set_defaults(func=main_serve)
