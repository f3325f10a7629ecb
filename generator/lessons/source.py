"""Where each piece of a lesson comes from: the one fence scanner, the one finder of a page's file
and first line, front matter, and how paths are shown in messages."""

from __future__ import annotations

import functools
import importlib.util
import math
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..store.files import DamagedFile, read_bytes
from .errors import LessonError, a_type

SOURCE_FIX = "replace it with the Markdown or YAML file itself, readable and under the size limit (split a longer page)"

GENERATED = Path("assets") / "generated"  # under the docs folder; written by the build, not lessons

# ---------------------------------------------------------------- characters a lesson cannot hold

ALLOWED_CONTROLS = "\t\n"


def bad_char(text: str) -> tuple[int, str] | None:
    """(0-based index, description) of the first character a lesson may not hold, or None:
    control characters (NUL, and STX/ETX, which Python-Markdown uses as placeholder markers)
    other than tab and newline, and lone surrogates (halves of a UTF-16 pair, not characters)."""
    for i, c in enumerate(text):
        o = ord(c)
        if (o < 0x20 or 0x7F <= o <= 0x9F) and c not in ALLOWED_CONTROLS:
            return i, f"the control character U+{o:04X}"
        if 0xD800 <= o <= 0xDFFF:
            return i, f"the lone surrogate U+{o:04X} (half of a UTF-16 pair, not a character)"
    return None


# ---------------------------------------------------------------- fences

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w-]+)?[^\n`]*$")


def walk_lines(lines: list[str]):
    """Yield (index, line, role, fence_match) for each line: role is 'open', 'body', 'close' or
    'prose'; fence_match is the opening fence's match while inside a fence. A fence closes on a
    line of only its character, at least as many as opened it, at any indent."""
    opened = None
    for i, line in enumerate(lines):
        if opened is None:
            m = FENCE_OPEN.match(line)
            if m:
                opened = m
                yield i, line, "open", m
            else:
                yield i, line, "prose", None
        elif line.strip().startswith(opened["fence"]) and not line.strip().strip(opened["fence"][0]):
            yield i, line, "close", opened
            opened = None
        else:
            yield i, line, "body", opened


@dataclass(frozen=True)
class FenceBlock:
    kind: str  # the info string's first word ("" for none)
    body: str  # without the fence's indent
    line: int  # 1-based line of the opening fence
    indent: str


def iter_fences(text: str):
    """Every fenced block of a Markdown text (at any indent), with its line number."""
    body: list[str] = []
    for i, line, role, fence in walk_lines(text.split("\n")):
        if role == "open":
            body, start = [], i
        elif role == "body":
            indent = fence["indent"]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
        elif role == "close":
            yield FenceBlock(fence["lang"] or "", "\n".join(body), start + 1, fence["indent"])
            fence = None
    # an unclosed fence runs to the end of the text, as Markdown reads it
    if fence is not None and role != "close":
        yield FenceBlock(fence["lang"] or "", "\n".join(body), start + 1, fence["indent"])


# ---------------------------------------------------------------- where Markdown would not see a figure

# A line that opens a block whose content is indented by 4: a content tab, an admonition or a
# collapsible, a list item.
CONTAINER_RE = re.compile(r"^[ \t]*(?:===|!!!|\?\?\?\+?|[-*+][ \t]|\d+[.)][ \t])")
QUOTED_FENCE_RE = re.compile(r"^[ \t]*>[ \t>]*(?:`{3,}|~{3,})[ \t]*(?P<lang>[\w-]+)")
TAG_START_RE = re.compile(r"<(?:!--|/?[A-Za-z][A-Za-z0-9-]*(?=[\s/>]))")
REF_START_RE = re.compile(r"\{\{(?P<body>.*?)\}\}")
CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")


def width(indent: str) -> int:
    """Columns of leading whitespace as Markdown counts them (a tab goes to the next multiple of 4)."""
    w = 0
    for c in indent:
        w = (w // 4 + 1) * 4 if c == "\t" else w + 1
    return w


def _html_spans(line: str, in_comment: bool) -> tuple[list[tuple[int, int, str]], bool]:
    """(start, end, 'comment' | 'tag') of the HTML comments and tags of one line (a comment may
    go on from the line before and past the line's end; a tag counts only when it closes on
    its line), and whether a comment is still open at the end."""
    spans, i = [], 0
    if in_comment:
        end = line.find("-->")
        if end < 0:
            return [(0, len(line), "comment")], True
        spans.append((0, end + 3, "comment"))
        i = end + 3
    while True:
        m = TAG_START_RE.search(line, i)
        if not m:
            return spans, False
        if m.group(0) == "<!--":
            end = line.find("-->", m.end())
            if end < 0:
                spans.append((m.start(), len(line), "comment"))
                return spans, True
            spans.append((m.start(), end + 3, "comment"))
            i = end + 3
            continue
        j, quote = m.end(), None
        while j < len(line) and (quote or line[j] != ">"):
            if line[j] in "\"'":
                quote = None if quote == line[j] else (quote or line[j])
            j += 1
        if j < len(line):
            spans.append((m.start(), j + 1, "tag"))
        i = m.end() if j >= len(line) else j + 1


def check_layout(lines: list[str], shown: str, first_line: int = 1, kinds=(), fence_check=None) -> None:
    """Refuse, with its line, what Markdown would not read the way the course does: a character a
    lesson may not hold (bad_char), a fence never closed (at the end, or in the middle of the page:
    see _left_open), a figure fence (`kinds`) that Markdown reads as code (indented at the top
    level) or that sits in a blockquote, and a `{{ }}` reference inside an HTML tag or comment,
    where it cannot be filled in. `fence_check(kind, body, "path:line")` is called for every
    closed fence that is not one of `kinds` (directives.check_code_fence)."""
    open_at = None
    in_comment = False
    earlier: list[tuple[int, str]] = []  # (width, line) of the non-blank lines so far
    body: list[str] = []
    for i, line, role, fence in walk_lines(lines):
        lineno = first_line + i
        where = f"{shown}:{lineno}"
        bad = bad_char(line)
        if bad:
            raise LessonError(where, f"the line holds {bad[1]} at column {bad[0] + 1}", "remove it; a lesson is plain, printable text")
        if role == "open":
            open_at, body = (lineno, fence), []
            lang = fence["lang"] or ""
            w = width(fence["indent"])
            if lang in kinds and w >= 4 and not _in_container(earlier, w):
                raise LessonError(where, f"the ```{lang} fence is indented, so Markdown reads it as code", "start the fence at the left margin (indent it by 4 spaces only inside a content tab, an admonition or a list item)")
        elif role == "body":
            if _left_open(fence, line, body, kinds):
                _never_closed(shown, *open_at)
            indent = fence["indent"]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
        elif role == "close":
            lang = fence["lang"] or ""
            if fence_check is not None and lang not in kinds:
                fence_check(lang, "\n".join(body), f"{shown}:{open_at[0]}")
            open_at = None
        elif role == "prose":
            _check_heading_id(line, lines, i, where)
            quoted = QUOTED_FENCE_RE.match(line)
            if quoted and quoted["lang"] in kinds:
                raise LessonError(where, f"the ```{quoted['lang']} fence is inside a blockquote, where the course does not read figures", "move the figure out of the blockquote (a `!!! note` admonition with the fence indented by 4 spaces works)")
            visible = CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)
            spans, in_comment = _html_spans(visible, in_comment)
            for rm in REF_START_RE.finditer(visible):
                inside = [kind for start, end, kind in spans if start <= rm.start() < end]
                if inside:
                    what = "an HTML comment" if inside[0] == "comment" else "an HTML tag (an attribute)"
                    raise LessonError(where, f"the reference {{{{ {rm['body'].strip()} }}}} is inside {what}, where it cannot be filled in", "write it in the page's text, outside HTML tags and comments (or delete it if it is commented out)")
        if line.strip():
            earlier.append((width(line[: len(line) - len(line.lstrip())]), line))
    if open_at is not None:
        _never_closed(shown, *open_at)


# A heading's id: toc's slug of its text (markup left out), or its own {#id}; figure ids are
# fig-1, fig-2, ... (render/context.py), and a second element with one took the figure's place
# for the scripts (getElementById) and the table of contents.
ATX_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE_RE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
OWN_ID_RE = re.compile(r"\{:?[^}]*#(?P<id>[\w-]+)[^}]*\}[ \t]*$")
FIGURE_ID_RE = re.compile(r"^fig-\d+$")


def heading_id(text: str) -> str:
    """The id toc gives a heading of this text (its default slugify), or the {#id} it names."""
    from markdown.extensions.toc import slugify

    own = OWN_ID_RE.search(text)
    if own:
        return own["id"]
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its words
    plain = re.sub(r"[*_`]", "", plain)
    return slugify(plain, "-")


def _check_heading_id(line: str, lines: list[str], i: int, where: str) -> None:
    """A heading (# or underlined) whose id would be a figure's: one line at the heading."""
    atx = ATX_HEADING_RE.match(line)
    setext = (not atx and line.strip() and i + 1 < len(lines) and SETEXT_UNDERLINE_RE.match(lines[i + 1])
              and not line.lstrip().startswith(("-", "*", "+", ">", "|")))
    if not (atx or setext):
        return
    text = atx["text"] if atx else line.strip()
    hid = heading_id(text)
    if FIGURE_ID_RE.match(hid):
        raise LessonError(where, f"the heading {text[:60]!r} would take the id {hid}, which the course gives a page's figure {hid[4:]}",
                          "reword the heading, or give it another id: `## Fig 1 {#first-figure}`")


def _never_closed(shown: str, lineno: int, fence) -> None:
    lang = fence["lang"] or ""
    raise LessonError(f"{shown}:{lineno}", f"the {fence['fence']}{lang} fence opened here is never closed", f"end it with a line {fence['fence']}")


# In a figure's YAML body, after a blank line: what YAML could still go on with (a comment, a
# `key:`, a list item, an indented or flow continuation). Anything else is the page's prose,
# swallowed because the figure's closing fence is missing.
YAML_GOES_ON_RE = re.compile(r"^(?:[ \t]|#|-(?:[ \t]|$)|[\[{\]}]|[\w\"'-][^:]*:(?:[ \t]|$))")


def _left_open(fence, line: str, body: list[str], kinds) -> bool:
    """Whether a body line shows that the fence around it was never closed: a line that opens a
    fence with an info string, inside a figure (YAML has no use for one) or naming a figure kind
    (a code fence left open runs into the next figure), or prose after a blank line in a figure."""
    outer = fence["lang"] or ""
    inner = FENCE_OPEN.match(line)
    if inner and inner["lang"]:
        if outer in kinds:
            return True
        if inner["lang"] in kinds and inner["fence"][0] == fence["fence"][0] and len(inner["fence"]) >= len(fence["fence"]):
            return True
    if outer in kinds and body and not body[-1].strip() and line.strip():
        text = line[len(fence["indent"]):] if line.startswith(fence["indent"]) else line.lstrip()
        return not YAML_GOES_ON_RE.match(text)
    return False


def _in_container(earlier: list[tuple[int, str]], w: int) -> bool:
    """Whether a line indented by `w` belongs to a content tab, an admonition or a list item: the
    nearest earlier line indented less opens one, and `w` is its content's indent (+0 to 3)."""
    for ew, line in reversed(earlier):
        if ew < w:
            return bool(CONTAINER_RE.match(line)) and 4 <= w - ew <= 7
    return False


def decode(data: bytes, shown: str) -> str:
    """A lesson file's text (UTF-8, a BOM allowed), or a LessonError naming the line and byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise LessonError(f"{shown}:{line}", f"the file is not UTF-8 text (byte 0x{data[exc.start]:02X} at column {column})", "save the file as UTF-8") from None


# ---------------------------------------------------------------- files

MAX_SOURCE_BYTES = 32 * 2**20  # a lesson or the glossary; the largest lesson is about 60 kB


def read_source(path: Path, shown: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a lesson or glossary file, or a LessonError at its line 1: the store's bounded
    read (a regular file only, since a FIFO would hang the build and /dev/zero never ends; a symlink
    is followed; at most limit + 1 bytes are read)."""
    try:
        return read_bytes(path, limit, SOURCE_FIX)
    except DamagedFile as exc:
        raise LessonError(f"{shown}:1", exc.problem, exc.fix) from None


def iter_markdown(content_dir: Path) -> list[Path]:
    """The lesson files of a docs folder, sorted, without the generated assets."""
    content_dir = Path(content_dir)
    if not content_dir.is_dir():
        return []
    return sorted(p for p in content_dir.rglob("*.md") if GENERATED.parts[0] not in p.relative_to(content_dir).parts[:1])


def shown_path(path: Path) -> str:
    """A path as messages name it: relative to the working directory where it can be."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


_TEXT_CACHE: dict[Path, tuple[tuple[int, int], str]] = {}


def read_text(path: Path) -> str | None:
    """A file's text with \\n line ends (cached by mtime and size), or None when unreadable."""
    try:
        st = path.stat()
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _TEXT_CACHE.get(path)
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        text = read_source(path, str(path)).decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (LessonError, UnicodeDecodeError):
        return None
    _TEXT_CACHE[path] = (stamp, text)
    return text


_ONLY_FRONT_MATTER = re.compile(r"\A(?:---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*\n)?\s*\Z", re.S)


def find_source(page_text: str, docs_dir: Path, hint: str | None = None) -> tuple[Path, int] | None:
    """(file, line of the page's first line) of the docs_dir file the page text comes from.

    MkDocs hands Markdown the file's text without its front matter, so the page is a suffix of
    the file; the line offset is the number of lines before it. `hint` (a path relative to
    docs_dir, which Zensical provides) is tried first."""
    pt = page_text.replace("\r\n", "\n").rstrip()
    if not pt.strip():
        return None
    hinted = Path(docs_dir) / hint if hint else None
    candidates = ([hinted] if hinted else []) + iter_markdown(docs_dir)
    best: tuple[int, Path, int] | None = None
    for path in candidates:
        ft = read_text(path)
        if ft is None:
            continue
        ft = ft.rstrip()
        if not ft.endswith(pt):
            continue
        prefix = ft[: len(ft) - len(pt)]
        rank = 0 if path == hinted else (1 if _ONLY_FRONT_MATTER.match(prefix) else 2)
        if best is None or rank < best[0]:
            best = (rank, path, prefix.count("\n") + 1)
        if rank == 0:
            break
    return None if best is None else (best[1], best[2])


# ---------------------------------------------------------------- front matter

FRONT_RE = re.compile(r"^-{3}[ \t]*\n(.*?\n)?(?:\.{3}|-{3})[ \t]*(?:\n|$)", re.DOTALL)


def split_front_matter(text: str, shown: str) -> tuple[str, int]:
    """Return (body, number of lines removed). MkDocs strips a valid YAML block before Markdown
    sees the page and silently leaves an invalid one in place; so a block still here is either
    valid (plain Markdown, as in tests) and removed, or a mistake, reported with its line."""
    if not re.match(r"-{3}[ \t]*\n", text):
        return text, 0
    m = FRONT_RE.match(text)
    if not m:
        raise LessonError(f"{shown}:1", "the front matter that starts here is never closed", "end it with a line `---`, or remove the first line if it is not front matter")
    _check_front_matter_text(m.group(1) or "", shown)
    try:
        data = yaml.safe_load(m.group(1) or "")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line + 1 if mark else 1)
        problem = getattr(exc, "problem", None) or "cannot be read"
        raise LessonError(f"{shown}:{line}", f"front matter: malformed YAML: {problem}", "write `key: value` lines and quote values that contain ':' or '#'") from None
    except ValueError as exc:  # a value YAML reads as a date or number that cannot be one (2020-13-45)
        raise LessonError(f"{shown}:{_unreadable_line(m.group(1) or '')}", f"front matter: {exc}", "write a real date as YYYY-MM-DD, or quote the value") from None
    if data is not None and not isinstance(data, dict):
        raise LessonError(f"{shown}:2", f"front matter must be `key: value` lines, not {a_type(data)}", "write `description: ...`")
    _check_theme_keys(data or {}, m.group(1) or "", shown)
    removed = text[: m.end()]
    body = text[m.end():]
    stripped = body.lstrip("\n")
    return stripped, removed.count("\n") + (len(body) - len(stripped))


# The theme writes front matter values (description, title, author ...) into the page's HTML as
# they are, in <meta content="..."> and <title>: front matter is data, so these may not appear.
FRONT_MATTER_UNSAFE = '<>"'
CHARACTER_REFERENCE_RE = re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);?")  # &amp; &#38; &lt


def _check_front_matter_text(block: str, shown: str) -> None:
    """Every key and value of a front matter block is plain text: no anchors or aliases (MkDocs
    would expand an alias bomb), no < > or " (written unescaped into <meta> and <title>)."""
    try:
        for event in yaml.parse(block, Loader=yaml.SafeLoader):
            line = 1 + event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise LessonError(f"{shown}:{line}", "front matter: YAML anchors and aliases (&name, *name) are not allowed", "write each value out in full")
            if isinstance(event, yaml.ScalarEvent):
                unsafe = [c for c in FRONT_MATTER_UNSAFE if c in event.value]
                bad = bad_char(event.value)
                if unsafe:
                    raise LessonError(f"{shown}:{line}", f"front matter: {event.value[:40]!r} holds {unsafe[0]!r}, which the theme writes into the page's HTML as it is", "write plain text without < > or \" (front matter is data, not HTML)")
                entity = CHARACTER_REFERENCE_RE.search(event.value)
                if entity:  # "&amp;" is written as it is too, and the browser shows "&"
                    raise LessonError(f"{shown}:{line}", f"front matter: {event.value[:40]!r} holds {entity[0]!r}, which the page's HTML would read as a character reference",
                                      "write the character itself (& followed by a space is plain text)")
                if bad:
                    raise LessonError(f"{shown}:{line}", f"front matter: a value holds {bad[1]}", "remove it")
                if "{{" in event.value:  # the theme writes it as it is: readers would see the braces
                    raise LessonError(f"{shown}:{line}", "front matter: a reference {{ … }} is not filled in here (front matter is data)", "write plain text; put the number in the page's text")
    except yaml.YAMLError:
        return  # split_front_matter reports malformed YAML with its line


def _unreadable_line(block: str) -> int:
    """The file line of the first value of a front matter block that YAML parses but cannot make
    into a value (a date that is no date), else the block's first line."""
    loader = yaml.SafeLoader(block)
    try:
        stack = [loader.get_single_node()]
        while stack:
            node = stack.pop(0)
            if isinstance(node, yaml.ScalarNode):
                try:
                    loader.construct_object(node, deep=True)
                except ValueError:
                    return 1 + node.start_mark.line + 1
            elif isinstance(node, yaml.MappingNode):
                stack.extend(part for pair in node.value for part in pair)
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return 2


# Front matter keys the theme (Material) reads as more than text, and what each must be: a wrong
# type passes YAML and then stops the build with a traceback inside the theme.
OVERRIDES = Path("overrides")  # mkdocs.yml's theme.custom_dir, from where the course is built
OWN_OVERRIDES = Path(__file__).resolve().parents[2] / "overrides"  # this repository's


@functools.cache
def _theme_templates() -> Path | None:
    """Material's templates folder, found without importing it (asked only by a `template:` key)."""
    spec = importlib.util.find_spec("material")
    return Path(spec.submodule_search_locations[0]) / "templates" if spec and spec.submodule_search_locations else None


def _key_line(block: str, key: str) -> int:
    for i, line in enumerate(block.split("\n")):
        if re.match(rf"{re.escape(key)}\s*:", line):
            return 2 + i
    return 2


def _check_theme_keys(data: dict, block: str, shown: str) -> None:
    def fail(key: str, problem: str, fix: str) -> None:
        raise LessonError(f"{shown}:{_key_line(block, key)}", f"front matter: {problem}", fix)

    hide = data.get("hide")
    if hide is not None and not (isinstance(hide, list) and all(isinstance(x, str) for x in hide)):
        fail("hide", f"'hide' must be a list of parts of the page, not {hide!r}", "write `hide: [toc]` (navigation, toc, footer, path, tags, feedback)")
    search = data.get("search")
    if search is not None:
        boost = search.get("boost", 1) if isinstance(search, dict) else None
        ok = isinstance(search, dict) and set(search) <= {"exclude", "boost"} and isinstance(search.get("exclude", False), bool) \
            and isinstance(boost, (int, float)) and not isinstance(boost, bool) and math.isfinite(boost) and 0 < boost <= 100
        if not ok:
            fail("search", f"'search' must be a mapping of exclude (true or false) and boost (a number above 0, at most 100), not {search!r}",
                 "write `search: {exclude: true}` or `search: {boost: 2}`")
    for key in ("title", "description"):  # the theme writes them into <title> and <meta> as text
        value = data.get(key)
        if key in data and not isinstance(value, str):
            fail(key, f"'{key}' must be text, not {value!r}", f"write `{key}: …` with plain text")
    template = data.get("template")
    if template is not None:
        found = isinstance(template, str) and re.fullmatch(r"[\w./-]+\.html", template) and ".." not in template and (
            any((d / template).is_file() for d in (OVERRIDES, OWN_OVERRIDES, _theme_templates()) if d is not None))
        if not found:
            fail("template", f"'template' {template!r} is not a template of the theme or of {OVERRIDES.as_posix()}/", "leave it out (main.html is the default) or name a file there")


def check_front_matter(text: str, shown: str) -> None:
    """The front matter of a whole lesson file (if any), checked as split_front_matter does."""
    split_front_matter(text, shown)
