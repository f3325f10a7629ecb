"""`python -m generator serve` (make serve): the MkDocs live preview, tracing as the author writes.

It is mkdocs.commands.serve's loop (a LiveReloadServer on a temporary site folder) with these
changes, read off MkDocs 1.6's source:

* before each build, the lessons are scanned (lessons.pages.collect) for sentences whose trace is
  missing; a background Tracer traces them with the model kept loaded between saves, writes them
  atomically into traces/ (TraceStore.write), and the traces/ watch rebuilds the page, which the
  browser then reloads with the real heatmap. Once the model is loaded, a build waits for the
  tracer (a tiny trace takes a fraction of a second), and a build after a save waits for the
  model still loading as the server starts too, so one save makes one rebuild, one reload and
  one line per mistake (a page of "tracing…" first would mean a second build, which printed the
  page's mistakes again). A build that only a trace asked for (no save since) does not repeat
  the last build's mistakes;
* traces/ is watched (its index.json and heads.json files: a trace is visible once its index
  lists it), so a trace made by another process (`make traces`) shows without touching a lesson;
  a change this process has already built is not built twice;
* content/assets/generated/ is written by publish.write_assets before each build and is not
  watched, so the build's own output never triggers another build;
* downloads/ (the one-file chapters, the notebooks' zips, the course's zip) is made by `make site`
  only: a link to it in the preview loses its `download` attribute (Chromium cancels a download
  that gets a 404, silently) and opens a page that says how to make them
  (generator/assets/serve-downloads.html);
* a failed build never takes a page away: a full build is made in a fresh folder that replaces
  the served one only when it succeeds (MkDocs's own empties the folder first), and a dirty one
  rebuilds a page by dating its HTML, not deleting it. A 404 or 500 page carries the reload
  script and the overlay too, so a browser that shows one still reloads on the next good build;
* MkDocs starts watching after the first build: as the watches start, a file changed while it
  ran (a lesson saved, a trace the tracer wrote) is looked for by its time (changed_since), and
  found, makes one build.

torch is imported only by the Tracer's thread (generator/site/save_tracer.py), which loads the
tiny model as the server starts, so the first save is as quick as the next. While a sentence is
being traced its figure says "tracing…" and references to it are no error. Without the models
extra, with TRACE=0 (--no-trace), or without a model (GPT-2 here), the figures stay pending boxes
and the reason, with how to turn tracing on, is said once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from . import build_log, publish
from .build_overlay import BuildOverlay, error_page
from .config_check import config_error, inherit_error, problem_error, setting_errors
from ..lessons.errors import LessonError
from ..lessons.source import GENERATED
from ..store import StoreError
from .serve_changes import Rebuilds, changed_since, event_path, left_out_of_site
from .save_tracer import (  # noqa: F401 (the serve API)
    MODELS_EXTRA_HINT, TRACE_OFF_HINT, WATCHED_STORE_FILES, Job, Taken, Tracer, cannot_load, models_extra_problem, store_stamp,
)

log = logging.getLogger("mkdocs.course.serve")

DEFAULT_HOST = "127.0.0.1"  # MkDocs's default dev_addr
DEFAULT_PORT = 8000
WARM_WAIT_S = 10.0  # how long a build waits for a loaded model to trace what the page needs
# how long a build after a save waits for the model still loading as the server starts (torch's
# import takes seconds, more on a loaded machine): one build, and one reload, with the figure
LOADING_WAIT_S = 30.0
# ---------------------------------------------------------------- the server


DIRTY_WARNING = "A 'dirty' build is being performed"  # MkDocs's warning on every dirty build


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


@contextlib.contextmanager
def full_build(cfg, site_dir: Path):
    """A full build into a fresh folder that takes site_dir's place only when the build succeeds.
    MkDocs's own full build empties site_dir first, so a failed one (a lesson mistake saved with a
    mkdocs.yml change, say) left every page a 404 behind the overlay. No request sees the swap:
    the server holds requests while a build runs."""
    fresh = Path(tempfile.mkdtemp(prefix="course-serve-next-", dir=site_dir.parent))
    configured = cfg["site_dir"]
    cfg["site_dir"] = str(fresh)
    try:
        yield
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    finally:
        cfg["site_dir"] = configured
    old = Path(tempfile.mkdtemp(prefix="course-serve-old-", dir=site_dir.parent))
    os.rename(site_dir, old / "site")
    os.rename(fresh, site_dir)
    shutil.rmtree(old, ignore_errors=True)


class ErrorRepeats(logging.Filter):
    """A log handler's filter for one build: notes each error line (`errors`) and holds back those
    in `quiet`, the last build's, when no save came between (MkDocs logs a page's mistake itself)."""

    def __init__(self, quiet: frozenset[str]):
        super().__init__()
        self.quiet, self.errors = quiet, set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        message = record.getMessage()
        self.errors.add(message)
        return message not in self.quiet


class DroppedConnectionsQuiet:
    """A socketserver mixin: a browser that drops a connection (a reload, a closed tab) is no
    error, so its traceback is not printed into the author's terminal; any other error still is.
    The tests' HTTP servers use it too."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


# `<a href="…downloads/…" download>`: the attribute, on a link into downloads/ (any depth of ../)
DOWNLOAD_LINK = re.compile(rb'(<a\s[^>]*?href="(?:\.{1,2}/)*downloads/[^"]*"[^>]*?)\s+download(?:="[^"]*")?(?=[\s/>])')


def make_server(builder, host: str, port: int, root: str, mount_path: str, ignore: Callable[[str], bool], overlay=None,
                catch_up: Callable[[], bool] | None = None):
    """MkDocs's LiveReloadServer whose watches skip the paths `ignore` accepts (watch() is the
    same as MkDocs 1.6's, with that one test added). `catch_up`: whether a watched file changed
    before the watches started, asked once as they start."""
    import watchdog.events
    from mkdocs.livereload import LiveReloadServer

    note = (Path(__file__).resolve().parents[1] / "assets" / "serve-downloads.html").read_bytes()
    prefix = mount_path.rstrip("/") + "/downloads/"

    class CourseServer(DroppedConnectionsQuiet, LiveReloadServer):
        def serve_request(self, environ, start_response):
            """downloads/ is made by `make site`, not by the preview: a page that says where they
            are rather than a bare 404."""
            path = environ.get("PATH_INFO", "")
            if path.startswith(prefix) and not (Path(root) / path[len(mount_path.rstrip("/")) + 1:]).is_file():
                start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(note)))])
                return [note]
            return super().serve_request(environ, start_response)

        def _inject_js_into_html(self, content, epoch):
            """MkDocs's reload script, and the overlay while the latest build failed. A link to
            downloads/ loses its `download` attribute: the preview has no downloads, and Chromium
            cancels a download that gets a 404 without showing the page that says why."""
            content = DOWNLOAD_LINK.sub(rb"\1", super()._inject_js_into_html(content, epoch))
            return overlay.inject(content) if overlay is not None else content

        def _build_loop(self):
            """MkDocs's build loop, which serve() runs once its watches have started. They start
            after the first build, so a file changed while it ran (a trace the tracer wrote, a
            lesson saved) made no event: one rebuild if `catch_up` finds one."""
            if catch_up is not None and catch_up():
                self.request_rebuild()
            super()._build_loop()

        def request_rebuild(self) -> None:
            """What a watched file's change does (MkDocs's watch callback): the build loop builds next."""
            with self._rebuild_cond:
                self._want_rebuild = True
                self._rebuild_cond.notify_all()

        def watch(self, path: str, func=None, *, recursive: bool = True) -> None:
            path = os.path.abspath(path)
            if path in self._watched_paths:
                self._watched_paths[path] += 1
                return
            self._watched_paths[path] = 1

            def callback(event):
                if event.is_directory or ignore(event_path(event)):
                    return
                self.request_rebuild()

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

    inherited = inherit_error(config_file)
    if inherited:  # MkDocs would recurse, or fail with a TypeError, reading it
        print(f"error: {inherited}", file=sys.stderr)
        shutil.rmtree(site_dir, ignore_errors=True)
        return 1
    try:
        with setting_errors() as held:
            config = get_config()
    except (Abort, MkDocsException) as exc:
        print(f"error: {config_error(config_file, exc, held)}", file=sys.stderr)
        shutil.rmtree(site_dir, ignore_errors=True)
        return 1
    docs = Path(config["docs_dir"]).resolve()
    traces_dir = Path(publish.mdx_option(config, "traces_dir", "traces")).resolve()
    generated = docs / GENERATED
    tracer = None
    problem = models_extra_problem() if trace else None
    if not trace or problem:  # said once; nothing below says that a trace started
        log.info(TRACE_OFF_HINT if not trace else MODELS_EXTRA_HINT.format(problem=problem))
    else:  # torch and the tiny model load in the tracer's thread now, so the first save is quick
        tracer = Tracer(traces_dir, docs, models=models, threads=threads, preload=("tiny",))
    built = {"stamp": None}
    rebuilds = Rebuilds(docs, traces_dir, Path(site_dir))
    said: set[str] = set()  # build-log lines said already (a pending GPT-2 figure is said once)
    mount_path = urlsplit(config.site_url or "/").path
    serve_url = _serve_url(host, port, mount_path)
    config.plugins.on_startup(command="serve", dirty=False)

    overlay = BuildOverlay()
    # the last build's error lines, and the count of saves (watched files other than traces/) it
    # followed: a build that no save asked for (a trace landing) does not say the same ones again
    # "began": when the last build began (less a tick): a save older than that, it has read
    saves = {"seen": 0, "said": frozenset(), "at": -1, "began": 0.0}

    def builder(cfg=None):
        """One build; a failure is said in one line and shown over the last good page (the server
        then reloads the browsers, as after a good build, so the page gets the overlay)."""
        from mkdocs.exceptions import Abort, MkDocsException

        saves["began"] = time.time() - 0.01  # a file's mtime may lag the clock by a tick
        seen = saves["seen"]
        repeats = ErrorRepeats(saves["said"] if saves["at"] == seen else frozenset())
        handlers = [h for h in logging.getLogger("mkdocs").handlers if getattr(h, "_course", False)]
        for h in handlers:
            h.addFilter(repeats)
        try:
            try:
                build_once(cfg)
            except (Abort, MkDocsException, LessonError, StoreError) as exc:
                line = overlay.failed(exc)
                if not isinstance(exc, Abort):  # MkDocs has logged an Abort's reason itself
                    for each in line.split("\n"):  # a page's several mistakes: one line each
                        log.error(each)
                return
            overlay.cleared()
        finally:
            for h in handlers:
                h.removeFilter(repeats)
            saves["said"], saves["at"] = frozenset(repeats.errors), seen

    def build_once(cfg=None):
        if tracer is not None:
            needed, splits = tracer.missing(), tracer.missing_splits()
            if needed or splits:  # a new score-split figure's splits.json is written after its traces
                job = tracer.submit(needed, splits)
                if tracer.warm(needed):  # quick: build once, with the real figure
                    job.done.wait(WARM_WAIT_S)
                elif cfg is None and tracer.loading(needed):  # a save while the model loads: still one build
                    log.info(f"waiting for the model to load to trace {len(needed)} new sentence(s)")
                    job.done.wait(LOADING_WAIT_S)
                else:
                    log.info(f"tracing {len(needed)} new sentence(s) in the background; the page reloads when done")
        # the store's stamp, the new traces and those still being traced, taken at one moment (Taken)
        taken = tracer.take() if tracer is not None else Taken([], None, store_stamp(traces_dir), frozenset())
        dirty = rebuilds.dirty(taken.written, taken.own_stamp, taken.stamp)
        built["stamp"] = rebuilds.stamp = taken.stamp
        done = False
        try:
            done = build_pages(cfg, dirty, taken)
        finally:
            if not done and not dirty:  # the full build this change needed is still owed: the next is full too
                rebuilds.stamp = None

    def build_pages(cfg, dirty: bool, taken: Taken) -> bool:
        """The build itself; a broken mkdocs.yml raises its ConfigError (one line, in the box too).
        `taken`: what the tracer is tracing, and what it will not, as the build starts."""
        try:
            publish.write_assets(docs, traces_dir)
        except (LessonError, StoreError) as exc:  # the build below names it on its page
            log.debug(f"assets: {exc}")
        inherited = None if cfg else inherit_error(config_file)
        if inherited:  # saved with an INHERIT loop: said over the page, as any mkdocs.yml mistake
            raise inherited
        with setting_errors() as held:
            try:
                cfg = cfg or get_config()
            except (Abort, MkDocsException) as exc:  # mkdocs.yml saved broken: said over the page; the server lives on
                raise config_error(config_file, exc, held) from None
        problem = publish.settings_problem(cfg, config_file)  # the site_url is the server's own
        if problem:  # as `make site` and `make check` refuse it, before any page is read
            raise problem_error(problem)
        cfg.site_url = serve_url
        publish.check_glossary(cfg)  # a glossary mistake names glossary.yml, not the first page
        # sentences being traced, or saved since the scan for new ones (the next build traces them):
        # their figures say "tracing…", and a reference to them is no error; refused ones are errors
        course = cfg["mdx_configs"].setdefault("generator.markdown.course", {})
        course["tracing"] = "\n".join(f"{m}\t{t}" for m, t in sorted(taken.tracing))
        course["traced_on_save"] = ",".join(sorted(taken.traced_models))
        course["untraceable"] = "\n".join(f"{m}\t{t}" for m, t in sorted(taken.refused))
        with build_log.grouped_warnings() as held, (dirty_build(Path(site_dir)) if dirty else full_build(cfg, Path(site_dir))):
            build(cfg, serve_url=serve_url, dirty=dirty)
        tracing = tracer.busy_models() if tracer is not None else set()
        held.report(skip=tracing, said=said)
        return True

    def ignore(path: str) -> bool:
        p = Path(path)
        if p.is_relative_to(generated):  # the build's own output
            return True
        if left_out_of_site(docs, p):  # an editor's copy before its rename, a swap file
            return True
        if p.is_relative_to(traces_dir):  # only an index or heads.json this build has not seen
            if p.name not in WATCHED_STORE_FILES or store_stamp(traces_dir) == built["stamp"]:
                return True
        else:
            try:  # a late event (a loaded machine): the build that began after this save has read it
                if Path(path).stat().st_mtime < saves["began"]:
                    return True
            except OSError:
                pass
            saves["seen"] += 1
        rebuilds.note(path)
        return False

    def catch_up() -> bool:
        watched = [docs, traces_dir, *([config.config_file_path] if config.config_file_path else []), *config.watch]
        return bool(changed_since(watched, first_build_at, ignore, generated))

    server = make_server(builder, host, port, site_dir, mount_path, ignore, overlay, catch_up)

    live = server
    if tracer is not None:
        tracer.rebuild = live.request_rebuild

    def error_handler(code):
        """A 404 or 500 gets MkDocs's reload script and the overlay, as a page does: a browser on a
        missing page (no good build yet, say) reloads on the next good build."""
        return live._inject_js_into_html(error_page(code, Path(site_dir)), live._visible_epoch)

    server.error_handler = error_handler
    try:
        first_build_at = time.time() - 0.01  # a file's mtime may lag the clock by a tick
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
