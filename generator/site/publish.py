"""Asset and site steps: `python -m generator assets` and `python -m generator site`.

`assets` writes content/assets/generated/ (render/assets.py says what goes there) for every trace
the lessons use, and removes what no lesson uses any more.

`site` first parses every lesson (lessons.pages.check_lessons: a page with mistakes stops it, each
mistake one line), writes the assets into a temporary folder (not content/), runs MkDocs into another
temporary folder next to site_dir, puts the fresh assets into the built site, and only when all
of that succeeds moves the site into place and brings content/assets/generated/ up to date (for
`mkdocs serve`): a failed build writes nothing, neither site_dir nor content/.

No torch here.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import time
from pathlib import Path

from .. import heads
from ..lessons import pages
from ..lessons.errors import LessonError, error_lines
from ..lessons.source import GENERATED, iter_markdown, shown_path
from ..render import pending
from ..render.asset_files import AssetError
from ..render.assets import trace_asset_paths, write_if_changed, write_static_assets, write_trace_assets
from ..store import StoreError, TraceStore
from . import build_log, downloads, notebook_files
from .site_folder import linked_folder_problem, output_names_problem, remove_leftovers, site_dir_problem
from .config_check import config_error, extensions_problem, inherit_error, setting_errors, site_settings_problem  # noqa: F401 (check and serve ask it here too)


def used_traces(content_dir: Path, traces_dir: Path) -> list[tuple[str, str, tuple[int, ...] | None]]:
    """(model, text, ids) of every trace a lesson figure shows: each figure's sentences, and the
    example traces that heads.json names for each scoreboard's model (ids for random tokens).
    A page with a broken block is skipped here: the site build reports the mistake with its file
    and line."""
    seen: dict[tuple, None] = {}
    boards: dict[str, None] = {}
    for path in iter_markdown(content_dir):
        try:
            found = pages.parse_file(path)
        except (LessonError, OSError, UnicodeDecodeError):
            continue
        for d in found:
            for model, text in pages.directive_sentences(d):
                seen.setdefault((model, text, None), None)
            if d.kind == "scoreboard":
                boards.setdefault(d.model, None)
    for model in boards:
        for r in heads.example_requests(traces_dir, model):
            seen.setdefault((r.model, r.text, r.ids), None)
    return list(seen)


def write_assets(content_dir: Path | str = "content", traces_dir: Path | str = "traces", out=None, generated: Path | None = None) -> list[Path]:
    """Everything under content_dir/assets/generated/ (or under `generated`). Returns the files
    written."""
    content_dir, traces_dir = Path(content_dir), Path(traces_dir)
    generated = content_dir / GENERATED if generated is None else Path(generated)
    written = write_static_assets(generated)
    store = TraceStore(traces_dir)
    keep: set[Path] = set()
    for model, text, ids in used_traces(content_dir, traces_dir):
        try:
            trace = store.load(model, text, ids)
        except LookupError:
            continue  # the build reports it, with the page's line
        keep.update(trace_asset_paths(trace, generated))
        written += write_trace_assets(trace, generated)
    # remove download copies and part folders no lesson uses any more (and the one-file parts,
    # traces/<model>/<key>.js, of builds before the per-head parts)
    tdir = generated / "traces"
    if tdir.is_dir():
        for p in sorted(tdir.rglob("*")):
            # a kept part folder's own stale files went in write_trace_assets
            if p.is_file() and p not in keep and p.parent not in keep:
                p.unlink()
        for d in sorted((p for p in tdir.rglob("*") if p.is_dir()), reverse=True):
            if not any(d.iterdir()):
                d.rmdir()
    return written


# ---------------------------------------------------------------- site


SITE_URL_ENV = "COURSE_SITE_URL"
# scheme, host (letters, digits, dots, hyphens), an optional port and a plain path: nothing a
# template could be made to read as markup (Material writes site_url unescaped into 404.html)
SITE_URL_RE = re.compile(r"^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$")


def site_url_problem(url) -> str | None:
    """Why a site_url (mkdocs.yml's, usually from $COURSE_SITE_URL) cannot be used, or None."""
    if url in (None, ""):
        return None
    if not isinstance(url, str) or not SITE_URL_RE.match(url):
        shown = repr(url)[:80]
        return (f"mkdocs.yml: site_url ({SITE_URL_ENV}) is {shown}, not a well-formed http(s) URL. "
                f"Fix: set {SITE_URL_ENV} to an address like https://example.org/course/, or unset it")
    return None


def nav_problem(nav, docs_dir: str, config_file: str) -> str | None:
    """Why mkdocs.yml's nav or docs_dir cannot give the course its pages (a page the nav names is
    not there; the nav is not a list; the docs folder is missing), said once, naming the file and
    the line of the entry; None when it can. `make check` and the build both ask it."""
    docs = Path(docs_dir)
    if not docs.is_dir():
        return f"{config_file}: docs_dir {shown_path(docs)} is not a folder. Fix: point docs_dir at the lessons' folder (content)"
    if nav is None:
        return None
    if not isinstance(nav, list):
        return f"{config_file}: nav is not a list of pages. Fix: list them as `  - Title: page.md` lines"

    def files(items, links: bool = False):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item
            if isinstance(value, list):
                yield from files(value, links)
            elif isinstance(value, str) and links == bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value)):
                yield value

    for link in files(nav, links=True):  # a menu's address is clicked as it is: only the web's and mail's
        if not re.match(r"^(https?|mailto):", link, re.I):
            line = _line_of(config_file, link)
            return (f"{config_file}{f':{line}' if line else ''}: the nav links to {link[:60]!r}, which is not an http(s) or mailto "
                    "address. Fix: link to a page of the course or a web address")
    for page in (p for p in files(nav) if not re.match(r"^/|^#", p)):
        if not (docs / page).resolve().is_relative_to(docs.resolve()):  # MkDocs only warns, and leaves it out
            line = _line_of(config_file, page)
            return (f"{config_file}{f':{line}' if line else ''}: the nav lists {page}, which is outside {shown_path(docs)}. "
                    f"Fix: list only pages in {shown_path(docs)}")
        if not (docs / page).is_file():
            line = _line_of(config_file, page)
            return (f"{config_file}{f':{line}' if line else ''}: the nav lists {page}, which is not in {shown_path(docs)}. "
                    f"Fix: write the page, or remove its line from the nav")
    return None


def settings_problem(cfg, config_file: str, site_url=None) -> str | None:
    """The course's own checks of mkdocs.yml once it is read, in one order for `make site`, `make
    check`, `make serve` and the Zensical build, so that each names the same first mistake: the
    site_url (`make serve` gives its own), the extensions and options the lessons need, the nav,
    and the site texts and scripts the theme writes into every page."""
    return (site_url_problem(site_url) or extensions_problem(cfg, config_file)
            or nav_problem(cfg.get("nav"), cfg["docs_dir"], config_file) or linked_folder_problem(cfg["docs_dir"])
            or output_names_problem(cfg["docs_dir"]) or site_settings_problem(cfg, config_file))


def pages_lacking_a_model(docs: Path, traces_dir: Path | str) -> set[str]:
    """The pages (relative to docs) whose every figure needs a model this copy of the course was
    built without (render/pending.lacks_model): chapter 4 where GPT-2's weights could not be had.
    A page with a broken block is left to the build, which names its line."""
    store = TraceStore(Path(traces_dir))
    out = set()
    for path in iter_markdown(docs):
        try:
            found = pages.parse_file(path)
        except (LessonError, OSError, UnicodeDecodeError):
            continue
        models = [getattr(d, "model", None) for d in found if d.kind != "guess"]  # a guess reads other figures
        if models and all(m and pending.lacks_model(store, m) for m in models):
            out.add(path.relative_to(docs).as_posix())
    return out


def marked_nav(nav, lacking: set[str]):
    """mkdocs.yml's nav with the title of each page in `lacking` marked (templates/nav_title.html),
    so a reader sees in the navigation which chapter needs weights this copy lacks."""
    if not isinstance(nav, list):
        return nav
    out = []
    for item in nav:
        if isinstance(item, dict) and len(item) == 1:
            (title, value), = item.items()
            if isinstance(value, list):
                item = {title: marked_nav(value, lacking)}
            elif isinstance(value, str) and value in lacking and isinstance(title, str):
                item = {pending.nav_title(title): value}
        out.append(item)
    return out


def _line_of(config_file: str, text: str) -> int | None:
    try:
        for i, line in enumerate(Path(config_file).read_text(encoding="utf-8").splitlines(), 1):
            if re.search(rf":\s*['\"]?{re.escape(text)}['\"]?\s*(#.*)?$", line) or line.strip() == f"- {text}":
                return i
    except OSError:
        pass
    return None


def glossary_path(cfg) -> Path | None:
    """The glossary the lesson extension reads, or None when the course does not use it."""
    if "generator.markdown.lesson" not in list(cfg.get("markdown_extensions") or []):
        return None
    from ..markdown.lesson import DEFAULT_CONTENT_DIR

    conf = (cfg.get("mdx_configs") or {}).get("generator.markdown.lesson") or {}
    return Path(conf.get("glossary") or DEFAULT_CONTENT_DIR / "glossary.yml")


def check_glossary(cfg) -> None:
    """The glossary the lesson extension reads, checked before MkDocs runs, so that a mistake in
    it names glossary.yml alone (inside MkDocs it would surface under the first page built)."""
    from ..markdown.lesson import load_glossary

    path = glossary_path(cfg)
    if path is not None:
        load_glossary(path)


def reading_path_problems(cfg) -> list[str]:
    """The learner's path, course-wide (markdown.reading_path): terms before their introduction,
    questions answered above themselves, build words in reader text. One line each."""
    from ..markdown import reading_path

    return [str(e) for e in reading_path.check_course(cfg["docs_dir"], cfg.get("nav"), glossary_path(cfg))]


def mdx_option(cfg, name: str, default: str) -> str:
    conf = (cfg.get("mdx_configs") or {}).get("generator.markdown.course") or {}
    return conf.get(name, default)


# MkDocs says "Error reading page 'x.md':" alone on a line before a BuildError's own message; the
# course's message names the file and line already, so a lesson mistake stays one line.
BARE_PAGE_ERROR = re.compile(r"Error (?:reading|building) page '[^']*':")


class EachLineFormatter(logging.Formatter):
    """A message of several lines (a page's mistakes, lessons.errors.LessonErrors, which MkDocs
    logs as one ERROR) as one prefixed line each, so that every mistake reads as its own line."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        head = super().format(logging.makeLogRecord({**record.__dict__, "msg": "", "args": None}))
        lines = text.split("\n")
        return "\n".join([lines[0]] + [head + line for line in lines[1:]])


class CurrentStderr(logging.StreamHandler):
    """A handler that writes to sys.stderr as it is when a record comes, not as it was when the
    handler was made (as logging's own last-resort handler does): a build run in the same process
    after its stderr was swapped and closed (a test's capture, an editor's) wrote into the closed
    stream, and its downloads step failed with "I/O operation on closed file"."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):  # StreamHandler.__init__ sets it; the property always reads the current one
        pass


def setup_logging() -> None:
    logger = logging.getLogger("mkdocs")
    if not any(getattr(h, "_course", False) for h in logger.handlers):
        h = CurrentStderr()
        h.setFormatter(EachLineFormatter("%(levelname)-8s-  %(message)s"))
        h.addFilter(lambda record: not BARE_PAGE_ERROR.fullmatch(record.getMessage()))
        h.setLevel(logging.INFO)
        h._course = True  # type: ignore[attr-defined]
        logger.addHandler(h)
        logger.setLevel(logging.INFO)


def report_errors(lines, status: int = 1) -> int:
    """Each line as `error: …` on stderr; `status`, the exit status the build returns."""
    for line in lines:
        print(f"error: {line}", file=sys.stderr)
    return status


def build_site(config_file: str = "mkdocs.yml", strict: str | bool = False, site_dir: str | None = None, with_downloads: bool = True) -> int:
    """assets + `mkdocs build` (+ the offline downloads, generator/site/downloads.py) into a temporary
    folder, moved over site_dir on success. Returns an exit status; on failure the previous
    site_dir is left as it was. `strict`: False; True or "1" (any warning fails, a pending figure
    included); or model names, "tiny" (any warning fails but a pending figure of another model,
    which stays a warning; build_log.strict_models)."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException

    setup_logging()
    try:
        failing = build_log.strict_models(strict)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    inherited = inherit_error(config_file)
    if inherited:  # MkDocs would recurse, or fail with a TypeError, reading it
        print(f"error: {inherited}", file=sys.stderr)
        return 1
    with setting_errors() as held:
        try:
            cfg = load_config(config_file=config_file, strict=failing is not None)
        except (Abort, MkDocsException) as exc:  # a YAML mistake or a wrong setting, at its line
            print(f"error: {config_error(config_file, exc, held)}", file=sys.stderr)
            return 1
    problem = settings_problem(cfg, config_file, cfg.get("site_url"))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    final = Path(site_dir or cfg["site_dir"]).resolve()
    docs = Path(cfg["docs_dir"])
    traces_dir = mdx_option(cfg, "traces_dir", "traces")
    problem = site_dir_problem(final, config_file, docs, Path(traces_dir))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:  # the store is read here first: a damaged index is its one line, as everywhere after
        cfg["nav"] = marked_nav(cfg.get("nav"), pages_lacking_a_model(docs, traces_dir))
    except (LessonError, StoreError) as exc:
        return report_errors(error_lines(exc))
    remove_leftovers(final)
    tmp = final.with_name(f".{final.name}.building-{os.getpid()}")
    stage = final.with_name(f".{final.name}.assets-{os.getpid()}")  # the assets, until the build succeeds
    for folder in (tmp, stage):
        shutil.rmtree(folder, ignore_errors=True)
    try:
        return _build_into(cfg, docs, traces_dir, final, tmp, stage, failing, strict, with_downloads)
    finally:  # whatever happened (a failure not foreseen below included), no temporary folder stays
        for folder in (tmp, stage):
            shutil.rmtree(folder, ignore_errors=True)


def _build_into(cfg, docs: Path, traces_dir: str, final: Path, tmp: Path, stage: Path, failing, strict, with_downloads: bool) -> int:
    """build_site's steps, building in `tmp` with the assets in `stage`; the caller removes both
    when this returns or raises (on success `tmp` has become `final`)."""
    from mkdocs.commands import build as mkbuild
    from mkdocs.exceptions import Abort, MkDocsException

    try:
        pages.check_lessons(docs)
        check_glossary(cfg)
        path_problems = reading_path_problems(cfg)
        if path_problems:  # every one, as `make check` lists them
            return report_errors(path_problems)
        clash = downloads.name_clash(p.relative_to(docs).with_suffix(".html").as_posix() for p in iter_markdown(docs)) if with_downloads else None
        if clash:  # before anything is built: one of the two chapters would be lost
            raise downloads.DownloadError(clash)
        write_assets(docs, traces_dir, generated=stage)
    except (LessonError, StoreError, heads.StandInRefused, downloads.DownloadError) as exc:  # one line each, naming the file
        return report_errors(error_lines(exc))  # a page's mistakes at once (lessons.errors.LessonErrors)
    pause_point("assets")
    # the extension writes a missing trace asset into the stage too, never into content/
    cfg["mdx_configs"].setdefault("generator.markdown.course", {})["assets_dir"] = str(stage)
    cfg["site_dir"] = str(tmp)
    try:
        with build_log.grouped_warnings() as held:
            mkbuild.build(cfg)
        held.report()
        failed = sorted(set(held.models()) & (failing or set()))
        if failed:
            raise Abort(f"STRICT={strict}: figures of {', '.join(failed)} are pending")
        shutil.rmtree(tmp / GENERATED, ignore_errors=True)  # MkDocs copied content/'s, maybe stale
        shutil.copytree(stage, tmp / GENERATED)
        pause_point("built")
    except (Abort, MkDocsException, SystemExit) as exc:
        msg = str(exc) or type(exc).__name__
        print(f"error: the site was not built ({msg}); {final} is unchanged", file=sys.stderr)
        return 1
    try:  # each chapter's notebook, before the zip that holds them
        written = notebook_files.write_notebooks(docs, Path(traces_dir), tmp, bundles=with_downloads)
        notebook_files.run_written(written, docs, tmp)  # every notebook runs, or the build says where it fails
        pause_point("notebooks")
    except (LessonError, StoreError, heads.StandInRefused, OSError, ValueError) as exc:
        print(f"error: the notebooks failed ({exc}); {final} is unchanged", file=sys.stderr)
        return 1
    if with_downloads:
        try:
            downloads.build_downloads(tmp, final.parent / "downloads", site_url=cfg.get("site_url"))
        except Exception as exc:  # whatever fails, the old site must stay and the reason be said
            print(f"error: the offline downloads failed ({exc}); {final} is unchanged", file=sys.stderr)
            return 1
        pause_point("downloads")
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    pause_point("between-renames")  # no `final` here: the next build puts the old site back
    os.replace(tmp, final)
    pause_point("renamed")
    shutil.rmtree(old, ignore_errors=True)
    pause_point("old-removed")
    try:
        sync_generated(stage, docs / GENERATED)
    except OSError as exc:  # a read-only checkout still builds; `mkdocs serve` makes its own
        print(f"warning: could not update {docs / GENERATED}: {exc}", file=sys.stderr)
    print(f"site written to {final}", file=sys.stderr)
    return 0


# tests only: the stage where the build stops (tests/test_crash_safety.py kills it there)
PAUSE_ENV = "COURSE_BUILD_PAUSE_AT"
PAUSE_STAGES = ("assets", "built", "notebooks", "downloads", "between-renames", "renamed", "old-removed")


def pause_point(stage: str) -> None:
    """Where $COURSE_BUILD_PAUSE_AT names this stage, say so on stderr and sleep until killed: the
    crash-safety test kills `make site` at each stage without guessing at timing."""
    if os.environ.get(PAUSE_ENV) == stage:
        print(f"paused at {stage}", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)


def sync_generated(stage: Path, generated: Path) -> list[Path]:
    """Make `generated` hold exactly the files of `stage` (a file is rewritten only when its bytes
    change, so `mkdocs serve` does not rebuild in a loop). Returns the files written."""
    files = {p.relative_to(stage) for p in stage.rglob("*") if p.is_file()}
    written = [generated / rel for rel in sorted(files) if write_if_changed(generated / rel, (stage / rel).read_bytes())]
    if generated.is_dir():
        for p in sorted(generated.rglob("*"), reverse=True):
            if p.is_file() and p.relative_to(generated) not in files:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    return written


# ---------------------------------------------------------------- command line


def add_parsers(sub, engines: dict | None = None) -> None:
    """`assets` and `site`; `engines` maps another --engine's name to its build function
    (zensical_build.build_zensical), called as f(config_file, strict=, site_dir=)."""
    engines = engines or {}
    p = sub.add_parser("assets", help="write content/assets/generated/ (Plotly, course.js/css, colour scale, trace files)")
    p.add_argument("--content", default="content", help="the lessons' folder (docs_dir)")
    p.add_argument("--traces", default="traces", help="the trace store")
    p.set_defaults(func=_cmd_assets)

    p = sub.add_parser("site", help="assets + mkdocs build into build/site (the old site stays if the build fails)")
    p.add_argument("--strict", nargs="?", const="1", default=None, metavar="MODELS",
                   help="fail on warnings: --strict (make site STRICT=1) fails on any pending figure too; "
                        "--strict=tiny (STRICT=tiny) on a pending tiny figure, GPT-2's stay warnings")
    p.add_argument("-f", "--config-file", default="mkdocs.yml")
    p.add_argument("-d", "--site-dir", default=None, help="default: site_dir of mkdocs.yml")
    p.add_argument("--no-downloads", action="store_true", help="skip the offline zip and one-file chapters")
    p.add_argument("--engine", choices=("mkdocs", *engines), default="mkdocs",
                   help="zensical (make site ENGINE=zensical): build with Zensical into build/zensical-site "
                        "(generator/site/zensical_build.py); build/site is not touched")
    p.set_defaults(func=_cmd_site, engines=engines)


def _cmd_assets(args) -> int:
    """Every asset made in a folder beside content/assets/generated/ first, so that a damaged
    file read on the way (AssetError, StoreError: one line) leaves the old folder as it was."""
    generated = Path(args.content) / GENERATED
    stage = generated.with_name(f".{generated.name}.assets-{os.getpid()}")
    try:
        shutil.rmtree(stage, ignore_errors=True)
        write_assets(args.content, args.traces, generated=stage)
        written = sync_generated(stage, generated)
    except (AssetError, StoreError) as exc:  # a package file the asset step reads, or the store's
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {generated}: cannot be written ({exc.strerror or exc}). Fix: make the folder writable", file=sys.stderr)
        return 1
    except LessonError as exc:
        return report_errors(error_lines(exc), status=2)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    print(f"assets: {len(written)} file(s) written under {generated}", file=sys.stderr)
    return 0


def _cmd_site(args) -> int:
    if args.engine != "mkdocs":  # another engine's build (cli.py passes it: it sits above this module)
        return args.engines[args.engine](args.config_file, strict=args.strict, site_dir=args.site_dir)
    return build_site(args.config_file, strict=args.strict, site_dir=args.site_dir, with_downloads=not args.no_downloads)
