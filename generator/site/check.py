"""`python -m generator check` (make check): every lesson checked as the build reads it, without
building the site.

Each page goes through Python-Markdown with mkdocs.yml's own extensions and options (the course's
fences, references and glossary terms, against the committed tokenizers and the traces), but no
theme, no MkDocs build and nothing written: assets a page would write go to a temporary folder
that is removed. The glossary and every page's fences are read first (lessons.pages.parse_file).
Every mistake is one line `path:line: problem. Fix: remedy`, a page's mistakes at once (up to
lessons.errors.MAX_SHOWN), then the pending figures as the build groups them. The notebook of each
page checked again is run as Run all runs it (generator/notebooks/run.py, cached by content): one
that fails is a mistake at the line of the figure whose part fails. The exit status is 1 when anything
is wrong, so editors and pre-commit hooks can call it (.pre-commit-hooks.yaml).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import build_log, notebook_files, publish
from .config_check import SITE_TEXTS, ConfigError, config_error, inherit_error
from ..lessons import pages
from ..lessons.errors import LessonError, collected, error_lines
from ..lessons.source import iter_markdown, shown_path
from ..store import TRACE_FILE_RE, StoreError


MKDOCS_BUILTIN_EXTENSIONS = ("toc", "tables", "fenced_code")  # what MkDocs always loads first
MAX_DIGEST_BYTES = 16 * 1024 * 1024  # the store's files are capped below this; a bigger one is its reader's to refuse
CACHE = Path("build") / ".check-cache.json"  # pages that passed, under a stamp of everything read


def read_config(config_file: str) -> dict:
    """What check needs of mkdocs.yml (docs_dir, markdown_extensions and their mdx_configs, the nav,
    the site texts and extra), read
    with MkDocs' own YAML loader (!ENV, !!python/name, INHERIT) but without loading the theme and
    plugins, which the pages' Markdown never sees. ConfigError (a ValueError): one line naming the
    file and, for a YAML mistake, its line."""
    from mkdocs.exceptions import ConfigurationError
    from mkdocs.utils.yaml import yaml_load

    inherited = inherit_error(config_file)
    if inherited:  # MkDocs would recurse, or fail with a TypeError, reading it
        raise inherited
    try:
        with open(config_file, "rb") as f:
            raw = yaml_load(f)
    except OSError as exc:
        raise ConfigError(config_file, f"cannot be read ({exc.strerror or exc})", "run make check from the course's folder, where mkdocs.yml is") from None
    except ConfigurationError as exc:
        raise config_error(config_file, exc) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{config_file}:1", "is not a mapping of settings", "write one `key: value` setting per line, as the repository's mkdocs.yml does")
    names, configs = list(MKDOCS_BUILTIN_EXTENSIONS), {}
    for item in raw.get("markdown_extensions") or []:
        name, conf = (next(iter(item.items())) if isinstance(item, dict) and len(item) == 1 else (item, None))
        if not isinstance(name, str):
            raise ConfigError(config_file, f"markdown_extensions holds {item!r}, not an extension name", "list each extension as `  - name` or `  - name:` with its options under it")
        if name not in names:
            names.append(name)
        if isinstance(conf, dict):
            configs[name] = dict(conf)
    docs = Path(config_file).resolve().parent / str(raw.get("docs_dir") or "docs")
    texts = {key: raw.get(key) for key in (*SITE_TEXTS, "extra")}  # what publish.settings_problem reads of them
    return {"docs_dir": str(docs), "markdown_extensions": names, "mdx_configs": configs, "nav": raw.get("nav"), **texts}


def settings_problem(config_file: str) -> str | None:
    """MkDocs' own check of every setting, as `make site` makes it (a setting of the wrong type, a
    theme or plugin that is not there, site_dir holding the lessons), and the site_url check: one
    line naming mkdocs.yml and the setting's line, or None. It loads the theme and plugins (about
    0.4 s), which the pages' Markdown never sees, so that check and site refuse the same files."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException

    with publish.setting_errors() as held:
        try:
            cfg = load_config(config_file=config_file)
        except (Abort, MkDocsException) as exc:
            return publish.config_error(config_file, exc, held)
    return publish.settings_problem(cfg, config_file, cfg.get("site_url"))


def check(config_file: str = "mkdocs.yml", strict: str | None = None, use_cache: bool = True) -> int:
    """Check every page of the course that `config_file` builds; print one line per mistake on
    stderr. Returns the exit status: 0, or 1 when anything is wrong."""
    import markdown

    from ..render.templating import NO_HTML

    start = time.perf_counter()
    publish.setup_logging()
    try:
        failing = build_log.strict_models(strict)
    except ValueError as exc:  # a usage mistake
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        cfg = read_config(config_file)
    except ConfigError as exc:  # one line, status 1, as for a lesson's mistake
        print(f"error: {exc}", file=sys.stderr)
        return 1
    problem = settings_problem(config_file)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    errors: list[str] = []
    try:
        publish.check_glossary(cfg)
        errors += publish.reading_path_problems(cfg)
    except LessonError as exc:
        errors += error_lines(exc)
    docs = Path(cfg["docs_dir"])
    files = iter_markdown(docs)
    stamp = world_stamp(config_file, cfg) if use_cache else None
    passed = read_cache(stamp)
    scratch = Path(tempfile.mkdtemp(prefix="course-check-"))
    configs = {name: dict(conf) for name, conf in cfg["mdx_configs"].items()}
    configs.setdefault("generator.markdown.course", {})["assets_dir"] = str(scratch)  # never content/
    no_html = NO_HTML.set(True)
    pending_lines: list[str] = []
    checked: list[Path] = []  # pages checked again that passed: their notebooks run below
    try:
        for path in files:
            shown = shown_path(path)
            key = page_key(path)
            if key in passed:  # unchanged since it passed, and so is everything it reads
                pending_lines += passed[key]
                continue
            with build_log.grouped_warnings() as held:
                found: list[LessonError] = []
                try:
                    pages.parse_file(path, shown)  # the fences and their options, at their lines
                except LessonError as exc:  # and on: the page's other mistakes are found against the traces
                    found.append(exc)
                try:
                    md = markdown.Markdown(extensions=cfg["markdown_extensions"], extension_configs=configs)
                    md.convert(_page_text(path))  # references and terms, against tokenizers and traces
                except LessonError as exc:  # CourseBuildError is a LessonError
                    found.append(exc)
                except StoreError as exc:  # a damaged store file: named once, after the page's own mistakes
                    errors += error_lines(collected(found)) if found else []
                    errors.append(str(exc))
                    continue
                except Exception as exc:  # a bug is one line too, naming the page
                    if not found:  # (a file that is not UTF-8 was said by parse_file already)
                        errors.append(f"{shown}:1: internal error while checking: {type(exc).__name__}: {exc}"[:300])
                        continue
                if found:  # each mistake once (both passes read the figures), at most MAX_SHOWN, one line each
                    errors += error_lines(collected(found))
                    continue
            mine = [f"{p.model}\t{p.what}\t{p.text or ''}\t{p.at}" for p in held.pending]
            passed[key] = mine
            pending_lines += mine
            checked.append(path)
        traces_dir = (cfg["mdx_configs"].get("generator.markdown.course") or {}).get("traces_dir", "traces")
        try:  # every notebook runs, or its lesson fails the check (numpy only; cached by content)
            failures = notebook_files.check_notebooks(checked, docs, Path(traces_dir), scratch)
        except (LessonError, StoreError) as exc:
            failures = [exc]
        failed_pages = {getattr(exc, "page", None) for exc in failures}
        errors += [str(exc) for exc in failures]
        for path in checked:  # a page whose notebook fails (or any, where the run said not which) is checked again
            if None in failed_pages or path.relative_to(docs).with_suffix(".html").as_posix() in failed_pages:
                passed.pop(page_key(path), None)
    finally:
        NO_HTML.reset(no_html)
        shutil.rmtree(scratch, ignore_errors=True)
    if stamp is not None:
        write_cache(stamp, {k: v for k, v in passed.items() if k in {page_key(p) for p in files}})
    # one mistake in a file every page reads (the glossary, a trace index) is one line, said once
    errors = list(dict.fromkeys(errors))
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    held = build_log.Held()
    for line in pending_lines:
        model, what, text, at = line.split("\t")
        held.pending.append(build_log.Pending(model, what, text or None, at))
    held.report()
    pending = sorted(set(held.models()) & (failing or set()))
    took = time.perf_counter() - start
    verdict = f"{len(errors)} mistake(s)" if errors else "no mistakes"
    if pending:
        verdict += f", figures of {', '.join(pending)} pending (--strict={strict})"
    print(f"check: {len(files)} page(s), {verdict} ({took:.1f} s)", file=sys.stderr)
    return 1 if errors or pending else 0


# ---------------------------------------------------------------- what a page's check reads


def _stat(path: Path) -> list:
    try:
        st = path.stat()
        return [path.as_posix(), st.st_mtime_ns, st.st_size]
    except OSError:
        return [path.as_posix(), None, None]


def page_key(path: Path) -> str:
    return json.dumps(_stat(path))


def world_stamp(config_file: str, cfg: dict) -> str:
    """A digest of every file a page's check reads besides the page itself: mkdocs.yml, the
    glossary, the whole trace store, the training log and the committed tokenizers, and the
    generator's own code and templates. Any change rechecks every page."""
    course = cfg["mdx_configs"].get("generator.markdown.course") or {}
    lesson = cfg["mdx_configs"].get("generator.markdown.lesson") or {}
    package = Path(__file__).resolve().parents[1]
    roots = [Path(course.get("traces_dir", "traces")), package]
    files = [Path(config_file), Path(lesson.get("glossary", "content/glossary.yml"))]
    if course.get("training_log"):
        files.append(Path(course["training_log"]))
    for root in roots:
        files += sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if root.is_dir() else [root]
    # the store's indexes and per-model files say which sentence is which: their bytes count, so
    # that an edit that keeps a file's size and time (two entries swapped, `cp -p`) is seen too
    store_files = sorted(p for p in roots[0].rglob("*.json") if p.is_file() and not TRACE_FILE_RE.match(p.name)) if roots[0].is_dir() else []
    contents = [[p.as_posix(), _digest(p)] for p in store_files]
    return hashlib.sha256(json.dumps([_stat(p) for p in files] + contents + [sys.version]).encode()).hexdigest()


def _digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read(MAX_DIGEST_BYTES)).hexdigest()
    except OSError:
        return None


def read_cache(stamp: str | None) -> dict[str, list[str]]:
    if stamp is None:
        return {}
    try:
        data = json.loads(CACHE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("stamp") != stamp or not isinstance(data.get("passed"), dict):
        return {}
    return {k: v for k, v in data["passed"].items() if isinstance(v, list) and all(isinstance(x, str) and x.count("\t") == 3 for x in v)}


def write_cache(stamp: str, passed: dict[str, list[str]]) -> None:
    """Atomically; a checkout where build/ cannot be written simply checks every page each time."""
    try:
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        tmp = CACHE.with_name(f"{CACHE.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"stamp": stamp, "passed": passed}, sort_keys=True), encoding="utf-8")
        os.replace(tmp, CACHE)
    except OSError:
        pass


def _page_text(path: Path) -> str:
    """A page's text as MkDocs hands it to Markdown: without its front matter."""
    from mkdocs.utils import meta

    text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    return meta.get_data(text)[0]


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check every lesson, fence, reference and glossary term without building the site")
    p.add_argument("-f", "--config-file", default="mkdocs.yml")
    p.add_argument("--strict", nargs="?", const="1", default=None, metavar="MODELS",
                   help="a pending figure is a mistake too (--strict=tiny: a pending tiny figure)")
    p.add_argument("files", nargs="*", help="ignored (pre-commit passes the changed files; every page is checked)")
    p.add_argument("--no-cache", action="store_true", help=f"check every page again (default: a page that passed is skipped while it, and everything it reads, is unchanged; {CACHE})")
    p.set_defaults(func=lambda args: check(args.config_file, strict=args.strict, use_cache=not args.no_cache))

