"""What the course needs of mkdocs.yml's `markdown_extensions`, in one list (NEEDED), and the check
that `make site`, `make check` and `make serve` all run on it before any page is read.

Without one of these the lessons still go through Markdown, but come out wrong, and the first
symptom is a misleading mistake blamed on a lesson (a `???` box read as raw HTML, a figure left a
code block, a `{: .needs-traces }` mark left as text). The check names mkdocs.yml, its line, the
extension and what it does for the course, in one line:

    mkdocs.yml:112: markdown_extensions lacks pymdownx.details (the `???` question boxes). Fix: ...
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..lessons.errors import LessonError


class ConfigError(LessonError):
    """A mistake in mkdocs.yml: one line `mkdocs.yml:line: problem. Fix: remedy` (a LessonError,
    so `make serve` shows it in the box over the page as it does a lesson's)."""


@dataclass(frozen=True)
class Need:
    name: str  # as listed under markdown_extensions
    does: str  # what it does for the course, for the author who reads the error
    options: dict = field(default_factory=dict)  # option: value the course relies on
    with_glossary_only: bool = False  # needed where the docs folder has the glossary (glossary.yml)


NEEDED = (
    Need("generator.markdown.course", "the figures, the {{ }} references and the formulas"),
    Need("generator.markdown.lesson", "the glossary pop-ups, the glossary page and {{ page.minutes }}", with_glossary_only=True),
    Need("pymdownx.superfences", "the figures' fences, one custom fence per kind"),
    Need("attr_list", "the `{: .needs-traces }` marks under passages"),
    Need("md_in_html", "Markdown inside HTML blocks (the `markdown` attribute)"),
    Need("admonition", "the `!!!` note boxes"),
    Need("pymdownx.details", "the `???` question boxes"),
    # the course's styles and its check of what a reader sees read the alternate tabs' markup
    Need("pymdownx.tabbed", "the `===` content tabs", options={"alternate_style": True}),
)
FIX = "add it as the repository's mkdocs.yml does"


def needed(docs_dir) -> list[Need]:
    """The extensions this course needs: all of NEEDED, but the lesson extension only where the
    docs folder holds the glossary it reads."""
    glossary = Path(docs_dir) / "glossary.yml"
    return [n for n in NEEDED if not n.with_glossary_only or glossary.is_file()]


def extensions_problem(cfg, config_file: str) -> str | None:
    """Why mkdocs.yml cannot build the lessons (an extension, an option it relies on, or a figure's
    fence left out or wired to another function), as one line naming the file and its line; None
    when it can. `cfg`: MkDocs's config, or check.read_config's (markdown_extensions, mdx_configs,
    docs_dir)."""
    from ..lessons.directives import DIRECTIVE_KINDS
    from ..markdown.course import fence_format, fence_validator

    names = list(cfg.get("markdown_extensions") or [])
    configs = cfg.get("mdx_configs") or {}
    text = _read(config_file)
    for need in needed(cfg.get("docs_dir") or "docs"):
        if need.name not in names:
            return f"{_at(config_file, text, r'^markdown_extensions:')}: markdown_extensions lacks {need.name} ({need.does}). Fix: {FIX}"
        options = configs.get(need.name) or {}
        for option, value in need.options.items():
            if options.get(option) != value:
                where = _at(config_file, text, rf"^\s*-\s*{re.escape(need.name)}\s*:?\s*$")
                return (f"{where}: {need.name} needs `{option}: "
                        f"{_yaml(value)}` ({need.does}). Fix: write `{option}: {_yaml(value)}` under it, as the repository's mkdocs.yml does")
    traces = (configs.get("generator.markdown.course") or {}).get("traces_dir")
    if isinstance(traces, str) and Path(traces).exists() and not Path(traces).is_dir():  # a folder not traced yet is pending, not wrong
        where = _at(config_file, text, r"^\s*traces_dir\s*:")
        return f"{where}: traces_dir {traces!r} is a file, not the folder of trace files. Fix: point traces_dir at the traces folder (traces)"
    fences = (configs.get("pymdownx.superfences") or {}).get("custom_fences") or []
    wired = {f.get("name"): f for f in fences if isinstance(f, dict)}
    for kind in DIRECTIVE_KINDS:
        fence = wired.get(kind)
        if fence is None:
            where = _at(config_file, text, r"^\s*custom_fences:", r"^\s*-\s*pymdownx\.superfences")
            return (f"{where}: pymdownx.superfences has no "
                    f"custom fence `{kind}`, so its figures would be code blocks. Fix: {FIX}")
        if fence.get("format") is not fence_format or fence.get("validator") is not fence_validator:
            where = _at(config_file, text, rf"^\s*-\s*name:\s*{re.escape(kind)}\s*$")
            return (f"{where}: the custom fence `{kind}` is not the "
                    f"course's (format: generator.markdown.course.fence_format, validator: generator.markdown.course.fence_validator), "
                    f"so its figures would not be drawn. Fix: {FIX}")
    return None


# The theme writes these settings into every page's HTML as they are (Material's partials do not
# escape them), so they may not hold what would end an attribute or open a tag.
SITE_TEXTS = ("site_name", "site_description", "site_author")
UNSAFE_TEXT = '<>"'
SCRIPTS_FIX = "list them as the repository's mkdocs.yml does"


def site_settings_problem(cfg, config_file: str) -> str | None:
    """Why the site settings the pages are made of cannot be used, as one line naming mkdocs.yml
    and the line, or None: a site text holding < > or ", and an extra.course_scripts that is not a
    list of the course's own scripts (a name that is not one, or any other address, would be a
    <script src> on every page)."""
    from ..lessons.source import GENERATED
    from ..render.assets import static_asset_names

    text = _read(config_file)
    for key in SITE_TEXTS:
        value = cfg.get(key)
        if isinstance(value, str) and any(c in value for c in UNSAFE_TEXT):
            where = _at(config_file, text, rf"^{key}\s*:")
            bad = next(c for c in UNSAFE_TEXT if c in value)
            return f"{where}: {key} holds {bad!r}, which the theme writes into every page's HTML as it is. Fix: write plain text without < > or \""
    scripts = (cfg.get("extra") or {}).get("course_scripts")
    shipped = [f"{GENERATED.as_posix()}/{name}" for name in static_asset_names() if name.endswith(".js")]
    where = _at(config_file, text, r"^\s*course_scripts\s*:", r"^extra\s*:")
    if not isinstance(scripts, list) or not all(isinstance(x, str) for x in scripts):
        return f"{where}: extra.course_scripts is not a list of the course's scripts. Fix: {SCRIPTS_FIX}"
    for script in scripts:
        if script not in shipped:
            return (f"{where}: extra.course_scripts names {script[:60]!r}, which is not one of the course's scripts "
                    f"({', '.join(shipped)}). Fix: {SCRIPTS_FIX}")
    return None


def problem_error(problem: str) -> ConfigError:
    """extensions_problem's (or publish.nav_problem's) line as the error `make serve` shows over the
    page: `where: problem. Fix: remedy` taken apart."""
    where, _, rest = problem.partition(": ")
    said, _, fix = rest.partition(" Fix: ")
    return ConfigError(where, said.rstrip("."), fix or "mend it")


@contextlib.contextmanager
def setting_errors():
    """MkDocs's own lines for a setting it refuses ("Config value 'x': ..."), held back from the
    log while mkdocs.yml loads: the list it yields gets them, and config_error says the first one
    as the one line."""
    held: list[str] = []

    def hold(record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            held.append(record.getMessage())
            return False
        return True

    logger = logging.getLogger("mkdocs.config")
    logger.addFilter(hold)
    try:
        yield held
    finally:
        logger.removeFilter(hold)


def config_error(config_file: str, exc: BaseException, held: list[str] | None = None) -> ConfigError:
    """MkDocs's error on loading mkdocs.yml as one line. A YAML mistake names the line and column
    where the author made it (yaml_mistake), not where the parser gave up; any other (a setting
    of the wrong type, say) is MkDocs's own message on one line."""
    import yaml

    seen, found = set(), exc
    while found is not None and id(found) not in seen and not isinstance(found, yaml.YAMLError):
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    if found is None:  # mkdocs.utils.yaml drops the YAMLError: parse again for its marks
        found = _yaml_error(config_file)
    if isinstance(found, yaml.YAMLError):
        line, column, problem, fix = yaml_mistake(_read(config_file), found)
        return ConfigError(f"{config_file}:{line}", f"malformed YAML at column {column}: {problem}", fix)
    for message in held or []:  # "Config value 'use_directory_urls': Expected type: ..."
        m = re.match(r"Config value '([^']+)': (.*)", message, re.S)
        if m:
            key = m.group(1).split(".")[0]
            where = _at(config_file, _read(config_file), rf"^{re.escape(key)}\s*:", last=True)  # YAML keeps the last
            return ConfigError(where, f"{m.group(1)}: {' '.join(_without_frames(m.group(2)).split()).rstrip('.')}", f"mend this setting in {config_file}")
    said = " ".join(str(exc).split()).rstrip(".!") or type(exc).__name__
    return ConfigError(config_file, said, f"mend {config_file}")


INHERIT_LINE = r"^INHERIT\s*:"


def inherit_error(config_file: str) -> ConfigError | None:
    """What is wrong with mkdocs.yml's INHERIT chain, as one ConfigError line, or None: a file that inherits
    itself (MkDocs recursed until Python stopped it) or a parent that is not a mapping of settings
    (MkDocs failed with a TypeError). Read with MkDocs' YAML loader, INHERIT left unfollowed; a
    missing parent or broken YAML is left to MkDocs, which says it in one line."""
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    if "INHERIT" not in _read(config_file):  # the common case: nothing to follow, no second parse of the file
        return None
    chain = [Path(config_file).resolve()]
    while len(chain) <= 50:
        try:
            with open(chain[-1], "rb") as f:
                raw = yaml.load(f, Loader=get_yaml_loader())
        except (OSError, yaml.YAMLError, ValueError):
            return None
        if not isinstance(raw, dict):
            if len(chain) == 1:
                return None
            return ConfigError(_at(config_file, _read(config_file), INHERIT_LINE), f"INHERIT: {chain[-1]} is not a mapping of settings",
                               "inherit a mkdocs.yml-like file, or leave INHERIT out")
        parent = raw.get("INHERIT")
        if parent is None:
            return None
        nxt = (chain[-1].parent / str(parent)).resolve()
        if nxt in chain:
            return ConfigError(_at(config_file, _read(config_file), INHERIT_LINE),
                               f"INHERIT: {nxt.name} inherits itself (through {' -> '.join(c.name for c in chain)})", "inherit a file that does not lead back here")
        if not nxt.is_file():
            return None
        chain.append(nxt)
    return ConfigError(config_file, "INHERIT: more than 50 files inherit one another", "inherit fewer files")


def _without_frames(message: str) -> str:
    """MkDocs' message with the traceback it adds when an extension fails to load ("Failed to load
    extension 'x'." then File "…", line … frames, then "KeyError: 'bogus'") cut to its first and
    last lines: the author needs the extension and the reason, not Python's frames."""
    if "Failed to load extension" not in message or 'File "' not in message:
        return message
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return f"{lines[0].rstrip('.')}: {lines[-1]}"


def _yaml_error(config_file: str):
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    try:
        with open(config_file, "rb") as f:
            yaml.load(f, Loader=get_yaml_loader())
    except yaml.YAMLError as exc:
        return exc
    except (OSError, ValueError):
        return None
    return None


# a quote opens a scalar only at the start of a value: after indentation, "- ", ": ", "[", "{" or ","
_QUOTE_OPENS = re.compile(r"""(?:^\s*|[-:,\[{]\s+|[\[{,])(["'])""")


def unclosed_quote(text: str, before: int) -> tuple[int, int] | None:
    """(line, column), 1-based, of the first quote that opens a scalar and is not closed on its
    line, in the lines up to `before`; None if there is none."""
    for n, line in enumerate(text.split("\n")[:before], 1):
        pos = 0
        while True:
            m = _QUOTE_OPENS.search(line, pos)
            if not m or "#" in _unquoted_comment_start(line[:m.start(1)]):
                break
            q, start = m.group(1), m.start(1)
            end = start + 1
            while end < len(line):
                if line[end] == q and q == "'" and line[end + 1:end + 2] == "'":
                    end += 2  # '' is a quote inside single quotes
                    continue
                if line[end] == "\\" and q == '"':
                    end += 2
                    continue
                if line[end] == q:
                    break
                end += 1
            if end >= len(line):
                return n, start + 1
            pos = end + 1
    return None


def _unquoted_comment_start(head: str) -> str:
    """"#" if `head` (a line up to a quote) holds a comment before it, else ""."""
    return "#" if re.search(r"(^|\s)#", head) else ""


def yaml_mistake(text: str, exc) -> tuple[int, int, str, str]:
    """(line, column, problem, fix) of a YAML error in `text`, at the mistake: an unclosed quote
    or bracket where it opens (the parser stops lines later), a tab where it is."""
    problem_mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    problem = " ".join(str(getattr(exc, "problem", None) or "cannot be read").split())
    context = str(getattr(exc, "context", None) or "")
    mark = problem_mark or context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    quote = unclosed_quote(text, line)
    if quote is not None:
        q = text.split("\n")[quote[0] - 1][quote[1] - 1]
        return (*quote, f"this {q} is never closed", f"close it with {q} on the same line")
    if "flow sequence" in context or "flow mapping" in context:
        closer = "]" if "sequence" in context else "}"
        if context_mark is not None:
            line, column = context_mark.line + 1, context_mark.column + 1
        return line, column, f"this {'[' if closer == ']' else '{'} is never closed ({problem})", f"close it with {closer} on the same line"
    if "\t" in problem or "'\\t'" in problem:
        return line, column, "a tab indents this line", "indent with spaces, as the lines around it are"
    if "mapping values are not allowed" in problem:
        return line, column, "a second ': ' on this line", "quote the text that holds ': ' (- \"Chapter 1: Tokens\": page.md)"
    if "expected <block end>" in problem or "could not find expected ':'" in problem:
        return line, column, f"this line does not fit the lines above it ({problem})", "line it up with the entries above it (spaces, not tabs), each as `key: value` or `- item`"
    return line, column, problem, "mend the line; mkdocs.yml is YAML (`key: value` lines, indented with spaces)"


def _read(config_file: str) -> str:
    try:
        return Path(config_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _at(config_file: str, text: str, *patterns: str, last: bool = False) -> str:
    """`config_file:line` of the first (or `last`) line matching one of `patterns`, in that order
    of preference, or the file alone."""
    lines = list(enumerate(text.split("\n"), 1))
    for pattern in patterns:
        for i, line in reversed(lines) if last else lines:
            if re.search(pattern, line):
                return f"{config_file}:{i}"
    return config_file


def _yaml(value) -> str:
    return {True: "true", False: "false"}.get(value, str(value)) if isinstance(value, bool) else str(value)
