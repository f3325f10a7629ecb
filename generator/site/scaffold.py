"""`python -m generator lesson NAME` (make lesson NAME=...): a new lesson to start from.

It writes content/NAME.md from generator/assets/lesson-template.md (one figure of each common
kind on an example sentence, and a reference that reads each one's numbers), adds the page to
mkdocs.yml's nav before the glossary, and traces the page's tiny sentences that traces/ lacks when
the models extra is installed (`python -m generator traces --models tiny`; the template's example
sentences are committed ones, so a new page shows real figures at once and traces/ stays as it is). Both files are written atomically, the page first; a name already taken, an
unreadable nav or a page already listed stops it in one line before anything is written.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from string import Template

TEMPLATE = Path(__file__).resolve().parents[1] / "assets" / "lesson-template.md"
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_MAX = 64  # characters: a file name and an address a reader can still read
RESERVED = {"404": "the site's own page for a missing address (404.html)"}
NAV_ITEM_RE = re.compile(r"^(?P<indent>[ \t]+)- ")
GLOSSARY_ITEM_RE = re.compile(r"^[ \t]+- [^\n]*:\s*glossary\.md\s*$")


class ScaffoldError(ValueError):
    """One line: `path: problem. Fix: remedy`."""


def title_of(name: str) -> str:
    words = name.replace("-", " ")
    return words[:1].upper() + words[1:]


def lesson_text(name: str, title: str | None = None) -> str:
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(name=name, title=title or title_of(name))


def add_to_nav(config_text: str, config_file: str, title: str, page: str) -> tuple[str, bool]:
    """mkdocs.yml's text with `- "title": page` in its nav, at its top level before the glossary
    (else last), and whether it went before the glossary. The text is edited, not re-dumped, so
    its comments and tags stay as they are; the edit is read back as YAML, and refused unless its
    nav is the old one with the page added."""
    lines = config_text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if re.match(r"^nav:\s*(#.*)?$", line))
    except StopIteration:
        raise ScaffoldError(f"{config_file}: has no `nav:` block to add the page to. Fix: add `nav:` with the pages, as the repository's mkdocs.yml has") from None
    end = start + 1
    while end < len(lines) and (NAV_ITEM_RE.match(lines[end]) or (lines[end].startswith((" ", "\t")) and lines[end].strip())):
        end += 1
    items = [i for i in range(start + 1, end) if NAV_ITEM_RE.match(lines[i])]
    if not items:
        raise ScaffoldError(f"{config_file}:{start + 1}: the nav lists no pages. Fix: list them as `  - Title: page.md` lines")
    old_nav = nav_of(config_text, config_file)
    if any(re.search(rf":\s*{re.escape(page)}\s*$", lines[i]) for i in items):
        raise ScaffoldError(f"{config_file}: the nav lists {page} already. Fix: choose another NAME")
    indent = NAV_ITEM_RE.match(lines[items[0]])["indent"]
    top = [i for i in items if NAV_ITEM_RE.match(lines[i])["indent"] == indent]  # not a section's children
    at = next((i for i in top if GLOSSARY_ITEM_RE.match(lines[i])), end)
    quoted = '"' + title.replace("\\", "\\\\").replace('"', '\\"') + '"'
    new_text = "\n".join(lines[:at] + [f"{indent}- {quoted}: {page}"] + lines[at:])
    new_nav = nav_of(new_text, config_file)
    if len(new_nav) != len(old_nav) + 1 or {title: page} not in new_nav:
        raise ScaffoldError(f"{config_file}:{start + 1}: the page could not be added to this nav by editing its lines. "
                            f"Fix: add `- {quoted}: {page}` to the nav by hand")
    return new_text, at != end


def nav_of(config_text: str, config_file: str) -> list:
    """The nav of mkdocs.yml's text, read as MkDocs reads it (its tags too)."""
    import yaml
    from mkdocs.exceptions import ConfigurationError
    from mkdocs.utils.yaml import yaml_load

    try:
        raw = yaml_load(config_text)
    except (ConfigurationError, yaml.YAMLError) as exc:
        raise ScaffoldError(f"{config_file}: is not valid YAML ({' '.join(str(exc).split())}). Fix: mend it, then run this again") from None
    nav = raw.get("nav") if isinstance(raw, dict) else None
    if not isinstance(nav, list):
        raise ScaffoldError(f"{config_file}: its `nav:` is not a list of pages. Fix: list them as `  - Title: page.md` lines")
    return nav


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def models_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def new_lesson(name: str, content: Path, config_file: str, trace: bool = True) -> int:
    if not NAME_RE.match(name or "") or len(name) > NAME_MAX:
        shown = name if len(name or "") <= NAME_MAX else name[:NAME_MAX] + "…"
        print(f"error: NAME={shown!r} is not a page name. Fix: use lower-case letters, digits and hyphens, at most {NAME_MAX}, "
              "like `make lesson NAME=my-lesson`", file=sys.stderr)
        return 2
    if name in RESERVED:
        print(f"error: NAME={name!r} is taken by {RESERVED[name]}. Fix: choose another NAME", file=sys.stderr)
        return 2
    page = content / f"{name}.md"
    rel = page.relative_to(content).as_posix()
    try:
        if page.exists():
            raise ScaffoldError(f"{page.as_posix()}: exists already. Fix: choose another NAME, or edit that lesson")
        config = Path(config_file)
        try:
            config_text = config.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScaffoldError(f"{config_file}: cannot be read ({exc.strerror or exc}). Fix: run it from the repository's root") from None
        new_config, before_glossary = add_to_nav(config_text, config_file, title_of(name), rel)
    except ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write_atomically(page, lesson_text(name))
    write_atomically(config, new_config)
    where = "before the glossary" if before_glossary else "at its end"
    print(f"wrote {page.as_posix()} and added it to the nav of {config_file} ({where})", file=sys.stderr)
    if not trace:
        return 0
    missing = untraced(page, config_file)
    if not missing:
        print(f"every sentence of {rel} is traced already: `make serve` shows its figures now", file=sys.stderr)
        return 0
    if not models_installed():
        print(f"{len(missing)} sentence(s) of {rel} not traced, and the models extra is not installed: `make serve` "
              "(it installs the extra) traces them on save, or run `make traces`", file=sys.stderr)
        return 0
    traces_dir = str(traces_folder(config_file))
    cmd = [sys.executable, "-m", "generator", "traces", "--models", ",".join(sorted({m for m, _ in missing})),
           "--content", str(content), "--traces-dir", traces_dir]
    return subprocess.call(cmd)


def traces_folder(config_file: str) -> Path:
    from .check import read_config

    course = read_config(config_file)["mdx_configs"].get("generator.markdown.course") or {}
    return Path(course.get("traces_dir", "traces"))


def untraced(page: Path, config_file: str) -> list[tuple[str, str]]:
    """(model, sentence) of the page's figures that the store lacks (GPT-2's are left to `make traces`)."""
    from ..lessons import pages
    from ..store import TraceStore

    store = TraceStore(traces_folder(config_file))
    wanted = dict.fromkeys(pair for d in pages.parse_file(page) for pair in pages.directive_sentences(d))
    return [(m, t) for m, t in wanted if m == "tiny" and not store.has(m, t)]


def add_parser(sub) -> None:
    p = sub.add_parser("lesson", help="write content/NAME.md from the lesson template and add it to the nav (make lesson NAME=...)")
    p.add_argument("name", nargs="?", default="", help="the page's file name without .md: lower-case letters, digits, hyphens")
    p.add_argument("--content", default="content", help="the lessons' folder (docs_dir)")
    p.add_argument("-f", "--config-file", default="mkdocs.yml")
    p.add_argument("--no-trace", action="store_true", help="do not trace the page's sentences")
    p.set_defaults(func=lambda args: new_lesson(args.name, Path(args.content), args.config_file, trace=not args.no_trace))
