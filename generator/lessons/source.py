"""Where each piece of a lesson comes from: the one fence scanner, the one finder of a page's file
and first line, front matter, and how paths are shown in messages."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import LessonError

GENERATED = Path("assets") / "generated"  # under the docs folder; written by the build, not lessons

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


# ---------------------------------------------------------------- files


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
        text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError):
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
    try:
        data = yaml.safe_load(m.group(1) or "")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line + 1 if mark else 1)
        problem = getattr(exc, "problem", None) or "cannot be read"
        raise LessonError(f"{shown}:{line}", f"front matter: malformed YAML: {problem}", "write `key: value` lines and quote values that contain ':' or '#'") from None
    if data is not None and not isinstance(data, dict):
        raise LessonError(f"{shown}:2", f"front matter must be `key: value` lines, not a {type(data).__name__}", "write `description: ...`")
    removed = text[: m.end()]
    body = text[m.end():]
    stripped = body.lstrip("\n")
    return stripped, removed.count("\n") + (len(body) - len(stripped))
