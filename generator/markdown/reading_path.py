"""The learner's path through the course, checked before it is built: every glossary term is
introduced before it is used, every "Guess first" comes before its answer, and no chapter names a
build step, file or command.

* **Terms in order.** A glossary entry's `introduced: page.md#section` names the section that
  introduces the term in plain words (the anchor is the `##` heading's, as on the built page;
  `page.md` alone means the text above the page's first `##`). Reading the pages in the nav's
  order (MkDocs' own order without a nav), a term or alias used in reader text before that
  section is a mistake, with two allowances for text that looks ahead: a page's opening (above
  its first `##`: the goals, the first question) may name what the same page introduces later,
  and a table row that links to a page (the home page's list of chapters) may name what that
  page, or a page before it, introduces. One line per term and page: its first early use. The named section must exist and use the term. A term without `introduced`
  is not checked (a test requires it of every term of the course's own glossary).
* **Questions first.** A paragraph that starts `**Guess first.**` is a question, with a `guess`
  block of choices under it; its answer is
  the first collapsed `??? question` block after it, before the next `##` heading. A number the
  answer gives (a `{{ id.field(args) }}` reference, as written) must not be on the page above the
  question, or the page shows the answer before it asks. (A figure above the question may set
  it up; the numbers that answer it come after.)
* **No build words.** Reader text names no `make` target, README, Markdown file, repository
  folder, `python -m` or environment variable.

Reader text here is the page's source as a reader meets it: prose, headings, tab labels and
admonition titles, without front matter, fenced blocks, code spans, `{{ }}` references, math,
HTML tags and comments, and link targets (for terms, a link's text too: it is most often a
paper's title or a page's name).
Every mistake is a LessonError, one line `path:line: problem. Fix: remedy`.
"""

from __future__ import annotations

import bisect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..lessons import refs
from ..lessons.directives import parse_directive
from ..lessons.errors import LessonError
from ..lessons.guess_kind import refs_of
from ..lessons.source import decode, iter_markdown, read_source, shown_path, split_front_matter, walk_lines
from .lesson import GLOSSARY_MARKER, Term, load_glossary, term_pattern
from .math import MATH_INLINE_RE

HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(?P<title>.*?)[ \t]*#*[ \t]*$")
ATTR_ID_RE = re.compile(r"\{:?[^}]*#(?P<id>[\w-]+)[^}]*\}\s*$")
ATTR_RE = re.compile(r"\{:?\s*[#.][^}]*\}")
COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
TAG_RE = re.compile(r"</?[A-Za-z][^>]*>")
LINK_TARGET_RE = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|\]\[[^\]]*\]")
LINK_RE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\](?:\([^)]*\)|\[[^\]]*\])|<a\b[^>]*>.*?</a>", re.S)
ROW_LINK_RE = re.compile(r"\]\((?P<page>[^)#\s]+\.md)(?:#[^)]*)?\)")
URL_RE = re.compile(r"https?://\S+")
INLINE_MATH_RE = re.compile(MATH_INLINE_RE)
ADMONITION_RE = re.compile(r"^(\s*)(?:\?\?\?\+?|!!!)\s+[\w-]+(?:\s+[\w-]+)*")  # keep only its "title"
GUESS_RE = re.compile(r"^\s*\*\*Guess first\.?\*\*")
ANSWER_RE = re.compile(r"^\s*\?\?\?\+?\s+question\b")

# What an author types and a reader never needs (the name, the pattern).
BUILD_WORDS = (
    ("a make command", re.compile(r"\bmake\s+(?:traces|site|serve|test|bench|check|lesson|reference|tiny-model|evaluate-tiny|vendor|assets|clean)\b")),
    ("the README", re.compile(r"\bREADME\b")),
    ("a Markdown file's name", re.compile(r"(?<![\w/.-])[\w./-]+\.md\b")),
    ("a repository folder", re.compile(r"(?<![\w/.-])(?:generator|traces|content|tests|build|tools)/")),
    ("a Python command", re.compile(r"\bpython3?\s+-m\b|\bpytest\b|\bpip install\b")),
    ("an environment variable", re.compile(r"\bCOURSE_[A-Z0-9_]+")),
)


@dataclass(frozen=True)
class Page:
    path: Path
    shown: str
    rel: str  # as the nav and `introduced` name it: "causal.md"
    title: str  # the nav's title, or the file name
    lines: list[str]  # the whole file, front matter included, so indexes are line numbers - 1
    first: int  # index of the first line after the front matter


def read_page(path: Path, rel: str, title: str) -> Page:
    shown = shown_path(path)
    text = decode(read_source(path, shown), shown).replace("\r\n", "\n").replace("\r", "\n")
    _body, removed = split_front_matter(text, shown)
    # a comment can span lines: blank it out, keeping the line count
    text = COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return Page(path, shown, rel, title, text.split("\n"), removed)


def reader_lines(page: Page, code: bool = False, links: bool = True):
    """Yield (line number, reader text) for each line a reader reads, headings included; with
    `code`, code spans are kept (a command is most often written as one); without `links`, a
    link's text is left out too (a paper's title, "the head types page")."""
    body = page.lines[page.first:]
    math_end = None
    for i, line, role, _fence in walk_lines(body):
        n = page.first + i + 1
        if role != "prose":
            continue
        stripped = line.strip()
        if math_end is not None:
            if math_end in stripped:
                math_end = None
            continue
        if stripped.startswith("$$") or stripped == r"\[":
            if stripped == "$$" or stripped == r"\[" or not stripped[2:].rstrip().endswith("$$"):
                math_end = "$$" if stripped.startswith("$$") else r"\]"
            continue
        if stripped == GLOSSARY_MARKER:
            continue
        text = line if code else refs.strip_code_spans(line)
        text = refs.REF_RE.sub(" ", text)
        text = INLINE_MATH_RE.sub(" ", text)
        text = LINK_TARGET_RE.sub("] ", text) if links else LINK_RE.sub(" ", text)
        text = URL_RE.sub(" ", text)
        text = TAG_RE.sub(" ", text)
        text = ATTR_RE.sub(" ", text)
        text = ADMONITION_RE.sub(r"\1", text)
        yield n, text


# ---------------------------------------------------------------- sections and their anchors


def slug(title: str) -> str:
    """The anchor MkDocs' toc gives a heading (its default slugify, on the heading's text)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"`([^`]*)`", r"\1", title)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]", "", text)
    return slugify(text, "-")


def sections(page: Page) -> list[tuple[str, int]]:
    """(anchor, line) of each `##` section, in order; the text above the first is anchor ''."""
    out, seen = [("", page.first + 1)], set()
    for i, line, role, _fence in walk_lines(page.lines[page.first:]):
        m = HEADING_RE.match(line) if role == "prose" else None
        if not m or len(m.group(1)) != 2:
            continue
        explicit = ATTR_ID_RE.search(m["title"])
        anchor = explicit["id"] if explicit else slug(ATTR_RE.sub("", m["title"]).strip())
        base, k = anchor, 0
        while anchor in seen:  # as toc numbers a repeated heading
            k += 1
            anchor = f"{base}_{k}"
        seen.add(anchor)
        out.append((anchor, page.first + i + 1))
    return out


def section_at(secs: list[tuple[str, int]], line: int) -> int:
    """The index of the section that holds `line`."""
    k = 0
    for j, (_anchor, start) in enumerate(secs):
        if start <= line:
            k = j
    return k


# ---------------------------------------------------------------- 1. terms in order


def syllabus_row(line: str) -> str | None:
    """The page a Markdown table row links to, when it is a table row that links to one."""
    if not line.lstrip().startswith("|"):
        return None
    m = ROW_LINK_RE.search(line)
    return m["page"] if m else None


def place_name(page: Page) -> str:
    m = re.match(r"(?i)chapter\s+(\d+)", page.title)
    return f"chapter {m[1]}" if m else f"the page \"{page.title}\""


def check_term_order(pages: list[Page], terms: list[Term], glossary_shown: str) -> list[LessonError]:
    """Every use of a term before the section its glossary entry names, in the pages' order."""
    errors: list[LessonError] = []
    if not terms:
        return errors
    pattern, lookup = term_pattern(terms)
    index = {p.rel: k for k, p in enumerate(pages)}
    secs = {p.rel: sections(p) for p in pages}
    uses: dict[tuple[str, int], list[str]] = {}  # (page, section index) -> term names used there
    found = []  # (page index, section index, line, term, spelling, the page a table row links to)
    for k, page in enumerate(pages):
        # the page's reader text as one string, so a term broken across two lines is found too
        numbers, texts, starts, pos = [], [], [], 0
        for n, text in reader_lines(page, links=False):
            numbers.append(n)
            texts.append(text)
            starts.append(pos)
            pos += len(text) + 1
        for m in pattern.finditer("\n".join(texts)):
            n = numbers[bisect.bisect_right(starts, m.start()) - 1]
            term = lookup[" ".join(m.group(0).split()).casefold()]
            s = section_at(secs[page.rel], n)
            uses.setdefault((page.rel, s), []).append(term.name)
            found.append((k, s, n, term, " ".join(m.group(0).split()), syllabus_row(page.lines[n - 1])))
    where: dict[str, tuple[int, int]] = {}  # term -> (page index, section index) introducing it
    for term in terms:
        if not term.introduced:
            continue
        at = f"{glossary_shown}:{term.introduced_line}"
        rel, _, anchor = term.introduced.partition("#")
        if rel not in index:
            known = ", ".join(p.rel for p in pages)
            errors.append(LessonError(at, f"'{term.name}' is introduced in {rel}, which is not a page of the course", f"name one of its pages ({known}) and a section, as `introduced: page.md#section`"))
            continue
        anchors = [a for a, _line in secs[rel]]
        if anchor not in anchors:
            known = ", ".join(f"#{a}" for a in anchors if a)
            fix = (f"use the anchor of one of its `##` headings ({known}), or `{rel}` alone for the text above the first"
                   if known else f"write `{rel}` alone: the page has no `##` heading")
            errors.append(LessonError(at, f"'{term.name}' is introduced in {rel}#{anchor}, and {rel} has no such section", fix))
            continue
        s = anchors.index(anchor)
        if term.name not in uses.get((rel, s), []):
            errors.append(LessonError(at, f"'{term.name}' is introduced in {term.introduced}, and that section never uses it", "name the section that explains the term in plain words"))
            continue
        where[term.name] = (index[rel], s)
    reported: set[tuple[int, str]] = set()
    for k, s, n, term, spelling, row_page in found:
        intro = where.get(term.name)
        if intro is None or (k, s) >= intro:
            continue
        if s == 0 and k == intro[0]:
            continue  # a page's opening (its goals, its question) names what the page will introduce
        if row_page is not None and index.get(row_page, -1) >= intro[0]:
            continue  # a table row about a page (the home page's list of chapters) previews it
        if (k, term.name) in reported:
            continue  # one line per term and page: the first use is the one to fix first
        reported.add((k, term.name))
        page, intro_page = pages[k], pages[intro[0]]
        if k == intro[0]:
            before = f"above the section of this page that introduces it (#{intro_page_anchor(term)})"
        else:
            before = f"before {place_name(intro_page)} introduces it ({term.introduced})"
        errors.append(LessonError(
            f"{page.shown}:{n}", f"'{spelling}' is used here {before}",
            f"say it in other words here, or introduce it here in plain words and move its `introduced:` "
            f"({glossary_shown}:{term.introduced_line}) to this section"))
    return errors


def intro_page_anchor(term: Term) -> str:
    return (term.introduced or "").partition("#")[2]


# ---------------------------------------------------------------- 2. questions before answers


def check_questions(page: Page) -> list[LessonError]:
    """A "Guess first" whose collapsed answer gives a number the page has shown above it."""
    errors: list[LessonError] = []
    body = list(walk_lines(page.lines[page.first:]))
    above: dict[str, tuple[int, str]] = {}  # a reference, spaces left out -> (first line above, as written)
    for k, (i, line, role, _fence) in enumerate(body):
        n = page.first + i + 1
        if role != "prose":
            continue
        if GUESS_RE.match(line) and not offers_choices(body[k + 1:]):
            errors.append(LessonError(
                f"{page.shown}:{n}", "this \"Guess first\" offers no choices: the reader can think a guess but never give it",
                "add a `guess` block under it, before its answer, whose choices the traces grade (authoring.md, \"Let the reader give the guess\")"))
        if GUESS_RE.match(line):
            early = sorted(above[r] for r in answer_refs(body[k + 1:]) if r in above)
            if early:
                first_line, ref = early[0]
                errors.append(LessonError(
                    f"{page.shown}:{n}",
                    f"this \"Guess first\" is answered above it: its answer's {{{{ {ref} }}}} is shown at line {first_line}",
                    "ask the question before that number, or give the number after the answer"))
        for key, written in line_refs(line):
            above.setdefault(key, (n, written))
    return errors


def line_refs(line: str) -> list[tuple[str, str]]:
    """(the reference without spaces, to compare; the reference as written) for each `{{ }}` of a
    prose line."""
    return [("".join(rm["body"].split()), rm["body"].strip()) for rm in refs.REF_RE.finditer(refs.strip_code_spans(line))]


def offers_choices(rest) -> bool:
    """Whether a `guess` block follows the question before its collapsed answer, the next `##`
    heading or the next question."""
    for _i, line, role, fence in rest:
        if role == "open" and (fence["lang"] or "") == "guess":
            return True
        if role == "prose" and (line.startswith("## ") or GUESS_RE.match(line) or ANSWER_RE.match(line)):
            return False
    return False


def answer_refs(rest) -> set[str]:
    """The references of the question's answers: its first `guess` block (what decides the right
    choice, and what the verdict says) and its collapsed answer, the first `??? question` block
    after it, each before the next `##` heading or question."""
    out: set[str] = set()
    inside, indent, guess, body = False, 0, None, []
    for _i, line, role, fence in rest:
        if role == "open" and guess is None and (fence["lang"] or "") == "guess":
            guess = fence
        elif role == "body" and fence is guess:
            body.append(line)
        elif role == "close" and fence is guess:
            out.update(guess_refs(body))
        if role != "prose":
            continue
        if not inside:
            if line.startswith("## ") or GUESS_RE.match(line):
                break
            if ANSWER_RE.match(line):
                inside, indent = True, len(line) - len(line.lstrip())
            continue
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        out.update(key for key, _written in line_refs(line))
    return out


def guess_refs(body: list[str]) -> set[str]:
    """The references a `guess` block reads, spaces left out (a block with a mistake has none here:
    the build names its mistake)."""
    try:
        g = parse_directive("guess", textwrap.dedent("\n".join(body)), "")
    except LessonError:
        return set()
    return {"".join(r.split()) for r in refs_of(g)}


# ---------------------------------------------------------------- 3. no build words


def check_build_words(page: Page) -> list[LessonError]:
    errors: list[LessonError] = []
    for n, text in reader_lines(page, code=True):
        for what, pattern in BUILD_WORDS:
            m = pattern.search(text)
            if m:
                errors.append(LessonError(
                    f"{page.shown}:{n}", f"reader text names {what} ('{m.group(0)}'), which a reader never needs",
                    "say what the reader sees or does instead; build steps and files belong in the authors' docs"))
                break
    return errors


# ---------------------------------------------------------------- the whole course


def nav_pages(nav, docs: Path) -> list[tuple[str, str]]:
    """(page, title) in reading order: the nav's Markdown pages, or, without a nav, every page in
    MkDocs' own order (index.md first, then by path)."""
    out: list[tuple[str, str]] = []

    def walk(items):
        for item in items:
            title, value = next(iter(item.items())) if isinstance(item, dict) and len(item) == 1 else (None, item)
            if isinstance(value, list):
                walk(value)
            elif isinstance(value, str) and value.endswith(".md") and not re.match(r"^[a-z][a-z0-9+.-]*:|^/", value):
                out.append((value, str(title or value)))

    if isinstance(nav, list):
        walk(nav)
        return out
    files = [p.relative_to(docs).as_posix() for p in iter_markdown(docs)]
    files.sort(key=lambda rel: (rel != "index.md", rel))
    return [(rel, rel) for rel in files]


def check_course(docs_dir, nav, glossary_path) -> list[LessonError]:
    """Every mistake of the learner's path, in reading order; [] when there is none."""
    docs = Path(docs_dir)
    pages = []
    for rel, title in nav_pages(nav, docs):
        path = docs / rel
        try:
            pages.append(read_page(path, rel, title))
        except (LessonError, OSError):
            continue  # the page's own check says what is wrong with it, once
    reading = [p for p in pages if not any(l.strip() == GLOSSARY_MARKER for l in p.lines)]
    errors: list[LessonError] = []
    for page in reading:
        errors += check_questions(page) + check_build_words(page)
    if glossary_path is not None:
        glossary_path = Path(glossary_path)
        errors += check_term_order(reading, load_glossary(glossary_path), shown_path(glossary_path))
    return errors
