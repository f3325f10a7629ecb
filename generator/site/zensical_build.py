"""`python -m generator site --engine=zensical` (make site ENGINE=zensical): the course built by
Zensical, Material for MkDocs's successor, from the real mkdocs.yml, into its own folder
(build/zensical-site by default), never touching build/site.

Zensical reads mkdocs.yml itself and renders Markdown with the same Python extensions (the
course's figures included). What differs from MkDocs, read off zensical 0.0.73's source:

* paths must lie inside the project root, the config file's folder, so the build's config (the
  real one with site_dir pointed at a temporary folder and the figures' assets at a staging
  folder) is written next to mkdocs.yml for the build, then removed;
* Zensical caches rendered pages in .cache/ (ignored by its own .gitignore), keyed on the
  Markdown, not on traces/: every build here is a clean one, so a new trace always shows;
* its templates are MiniJinja's, where an undefined attribute is an error: overrides/ uses only
  what both engines give templates (overrides/main.html says which).

As with MkDocs (publish.build_site), the lessons are checked first, the build goes to a
temporary folder that replaces the old one only on success, pending-figure warnings are one line
per model, and STRICT= fails the build the same way. The offline downloads (zip, one-file
chapters) are made from the MkDocs site only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

from . import build_log, site_folder
from .. import heads
from ..lessons import pages
from ..lessons.errors import LessonError
from ..lessons.source import GENERATED
from ..render import pending
from ..store import StoreError

DEFAULT_SITE = Path("build") / "zensical-site"


class ConfigShape(ValueError):
    """mkdocs.yml lacks a line this build rewrites."""


def build_config(text: str, site_dir: Path, assets_dir: Path) -> str:
    """The real mkdocs.yml with site_dir and the course extension's assets_dir replaced."""
    text, n = re.subn(r"^site_dir:.*$", lambda m: f"site_dir: {json.dumps(str(site_dir))}", text, count=1, flags=re.M)
    if n != 1:
        raise ConfigShape("no top-level site_dir: line")
    text, n = re.subn(r"^(\s*)- generator\.markdown\.course:\n",
                      lambda m: f"{m[0]}{m[1]}    assets_dir: {json.dumps(str(assets_dir))}\n", text, count=1, flags=re.M)
    if n != 1:
        raise ConfigShape("no `- generator.markdown.course:` entry under markdown_extensions")
    return text


NAV_PAGE_RE = re.compile(r"""^(\s*-\s*)(?:"([^"]*)"|'([^']*)'|([^"'#:][^:#]*?))\s*:\s*["']?([^"'\s#]+\.md)["']?\s*(#.*)?$""", re.M)


def marked_nav_text(text: str, lacking: set[str]) -> str:
    """mkdocs.yml's text with each nav title of a page in `lacking` marked, as publish.marked_nav
    marks MkDocs's nav (Zensical reads the file itself)."""
    def mark(m: re.Match) -> str:
        title = next(t for t in m.group(2, 3, 4) if t is not None)
        if m[5] not in lacking:
            return m[0]
        return f"{m[1]}{json.dumps(pending.nav_title(title), ensure_ascii=False)}: {m[5]}"
    return NAV_PAGE_RE.sub(mark, text)


def config_value(text: str, pattern: str, default: str) -> str:
    """One plain value of mkdocs.yml (which yaml.safe_load cannot read: it has !ENV and
    !!python/name tags; Zensical reads it itself)."""
    m = re.search(pattern, text, flags=re.M)
    return m[1].strip("'\"") if m else default


def zensical_missing() -> str | None:
    try:
        import zensical  # noqa: F401
    except ImportError as exc:
        return f"Zensical is not installed ({exc}); install it with `make site ENGINE=zensical` (it installs the zensical extra) or `.venv/bin/pip install -e '.[zensical]'`"
    return None


def build_zensical(config_file: str = "mkdocs.yml", strict: str | bool | None = None, site_dir: str | None = None) -> int:
    from . import publish  # the asset step and the MkDocs site's name
    from .check import read_config  # the nav and the glossary, for the learner's path

    why = zensical_missing()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    import zensical

    try:
        failing = build_log.strict_models(strict)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .check import read_config
    from .config_check import ConfigError

    try:  # mkdocs.yml first, as `make site` reads it: a YAML mistake, an extension the course needs
        cfg = read_config(config_file)
        problem = publish.settings_problem(cfg, config_file, os.environ.get(publish.SITE_URL_ENV))
    except ConfigError as exc:
        problem = str(exc)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    config = Path(config_file).resolve()
    root = config.parent
    final = (root / (site_dir or DEFAULT_SITE)).resolve()
    mkdocs_site = (root / "build" / "site").resolve()
    if final == mkdocs_site or mkdocs_site in final.parents:
        print(f"error: {final}: the Zensical build never writes into MkDocs's site; give another --site-dir (default {DEFAULT_SITE})", file=sys.stderr)
        return 2
    text = config.read_text(encoding="utf-8")
    docs = root / config_value(text, r"^docs_dir:\s*(\S+)", "docs")
    traces_dir = root / config_value(text, r"^\s+traces_dir:\s*(\S+)", "traces")
    problem = site_folder.site_dir_problem(final, config, docs, traces_dir)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    site_folder.remove_leftovers(final)  # of an earlier Zensical build that was killed
    tmp = final.with_name(f".{final.name}.building-{os.getpid()}")
    stage = final.with_name(f".{final.name}.assets-{os.getpid()}")
    build_cfg = root / f".zensical-build-{os.getpid()}.yml"
    for folder in (tmp, stage):
        shutil.rmtree(folder, ignore_errors=True)
    publish.setup_logging()
    try:
        pages.check_lessons(docs)
        path_problems = publish.reading_path_problems(read_config(str(config)))
        if path_problems:  # every one, as `make check` and the MkDocs build list them
            for line in path_problems:
                print(f"error: {line}", file=sys.stderr)
            return 1
        publish.write_assets(docs, traces_dir, generated=stage)
        marked = marked_nav_text(text, publish.pages_lacking_a_model(docs, traces_dir))
        build_cfg.write_text(build_config(marked, tmp, stage), encoding="utf-8")
        with build_log.grouped_warnings() as held:
            zensical.build(str(build_cfg), {"clean": True, "strict": False})
        held.report()
        failed = sorted(set(held.models()) & (failing or set()))
        if failed:
            raise build_log.StrictFailure(f"STRICT={strict}: figures of {', '.join(failed)} are pending")
        if not (tmp / "index.html").is_file():
            raise build_log.StrictFailure("Zensical wrote no index.html")
        shutil.rmtree(tmp / GENERATED, ignore_errors=True)  # Zensical copied content/'s, maybe stale
        shutil.copytree(stage, tmp / GENERATED)
    except (LessonError, StoreError, heads.StandInRefused, ConfigShape, build_log.StrictFailure, RuntimeError, OSError, ValueError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: the Zensical site was not built ({line}); {final} is unchanged", file=sys.stderr)
        return 1
    finally:
        build_cfg.unlink(missing_ok=True)
        shutil.rmtree(stage, ignore_errors=True)
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    print(f"Zensical site written to {final}", file=sys.stderr)
    return 0
