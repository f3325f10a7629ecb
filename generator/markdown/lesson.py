"""The lesson extension: glossary pop-ups, the glossary page, and each page's reading time.

A Python-Markdown extension, listed in mkdocs.yml as `generator.markdown.lesson`. It does three things:

* **Terms.** In every section of a page (the text before the first `##` heading is a section, and
  each `##` heading starts a new one), the first appearance of each glossary term becomes

      <a class="course-term" href="glossary.md#attention-head"><abbr title="definition">heads</abbr></a>

  Material's `content.tooltips` feature shows the `abbr` title as a pop-up; the link leads to the
  full entry. Text inside code, links, abbreviations, headings, tables, figures (any element with
  a `course-*` class, or any HTML block, which Markdown keeps aside), math, tab labels, summaries
  and buttons is never marked.
* **The glossary page.** A paragraph that is exactly `[[glossary]]` becomes every term, sorted,
  each a `##` heading whose id is the term's anchor, followed by its definition. Terms are not
  marked on that page.
* **Reading time.** `{{ page.minutes }}` in prose becomes the page's reading time in whole minutes
  and `{{ page.words }}` its word count (see `reading_time`): one view per section, the first tab
  of each set of content tabs, with its figures and formulas (`tabs_read`). The references are read by
  `lessons.refs.parse_ref`, the one parser of `{{ }}` syntax.

The glossary is `content/glossary.yml` (see the comment at its top). Every mistake in it, and every
unreadable front matter block, stops the build with one line `path:line: problem. Fix: remedy`
(a `LessonError`, raised through Markdown as a CourseBuildError).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path

import yaml
from markdown import Extension
from markdown.blockprocessors import BlockProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString

from ..lessons import refs
from ..lessons.directives import SPECS
from ..lessons.errors import LessonError
from ..lessons.source import bad_char, check_front_matter, decode, find_source, read_source, read_text, shown_path, split_front_matter, walk_lines
from .build_errors import reraise
from .math import MATH_INLINE_RE

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONTENT_DIR = REPO_ROOT / "content"
GLOSSARY_MARKER = "[[glossary]]"

# Reading speed for the chapter header. A figure or a display formula is read more slowly than
# prose, so each adds a fixed allowance on top of the words.
WORDS_PER_MINUTE = 200
SECONDS_PER_FIGURE = 30
SECONDS_PER_FORMULA = 15

# Elements whose text is never marked as a term.
SKIP_TAGS = {
    "a", "abbr", "button", "code", "dt", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "kbd",
    "label", "math", "option", "pre", "samp", "script", "select", "style", "summary", "svg",
    "table", "textarea", "var",
}
SKIP_CLASSES = {"arithmatex", "highlight", "tabbed-labels", "md-button"}
SKIP_CLASS_PREFIX = "course-"


# ---------------------------------------------------------------- the glossary file


@dataclass(frozen=True)
class Term:
    name: str  # as shown, e.g. "attention head"
    slug: str  # anchor on the glossary page, e.g. "attention-head"
    definition: str  # plain text, whitespace collapsed
    aliases: tuple[str, ...]
    line: int  # where the term is defined in glossary.yml
    introduced: str | None = None  # "page.md#section" that introduces it (reading_path checks the order)
    introduced_line: int = 0


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def _scalar_text(node) -> str | None:
    """The text of a YAML scalar, or None when it is null/empty."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
        return None
    text = " ".join(str(node.value).split())
    return text or None


def parse_glossary(text: str, shown: str) -> list[Term]:
    """Validate a glossary.yml text; `shown` is the path used in error messages."""

    def fail(line: int, problem: str, fix: str):
        raise LessonError(f"{shown}:{line}", problem, fix)

    bad = bad_char(text)
    if bad:
        fail(text.count("\n", 0, bad[0]) + 1, f"the line holds {bad[1]}", "remove it; the glossary is plain, printable text")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or "cannot be read"
        fail(mark.line + 1 if mark else 1, f"malformed YAML: {problem}", "write one `term:` per entry with an indented `definition:` line")
    if root is None:
        fail(1, "the glossary is empty", "add entries like `token:` with an indented `definition: ...`")
    if not isinstance(root, yaml.MappingNode):
        fail(root.start_mark.line + 1, "the glossary must be a mapping of terms to entries", "write `term:` lines at the left margin, each with an indented `definition:`")

    terms: list[Term] = []
    names: dict[str, tuple[str, int]] = {}  # casefolded name or alias -> (term, line)
    slugs: dict[str, tuple[str, int]] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        name = _scalar_text(key_node)
        if name is None:
            fail(line, "a term has an empty name", "write the term before the colon")
        if not re.search(r"[^\W\d_]", name):  # a number as a term would link every such number in the course
            fail(line, f"term '{name}' has no letter", "write the term as words (a number or a sign is no term)")
        if name.casefold() in names:
            first_name, first_line = names[name.casefold()]
            fail(line, f"term '{name}' is defined twice (first at line {first_line}, as '{first_name}')", "keep one entry and delete the other")
        definition, aliases, introduced, introduced_line = None, [], None, 0
        if isinstance(value_node, yaml.ScalarNode):
            definition = _scalar_text(value_node)
        elif isinstance(value_node, yaml.MappingNode):
            for k_node, v_node in value_node.value:
                k = _scalar_text(k_node)
                k_line = k_node.start_mark.line + 1
                if k == "definition":
                    if not isinstance(v_node, yaml.ScalarNode):
                        fail(k_line, f"term '{name}': the definition must be text", "write `definition: one or two plain sentences`")
                    definition = _scalar_text(v_node)
                elif k == "aliases":
                    items = [v_node] if isinstance(v_node, yaml.ScalarNode) else v_node.value if isinstance(v_node, yaml.SequenceNode) else None
                    if items is None:
                        fail(k_line, f"term '{name}': aliases must be a list", "write `aliases: [plural, other spelling]`")
                    for item in items:
                        alias = _scalar_text(item)
                        if alias is None:
                            fail(item.start_mark.line + 1, f"term '{name}': an alias is empty", "remove it or write the other spelling")
                        if not re.search(r"[^\W\d_]", alias):
                            fail(item.start_mark.line + 1, f"term '{name}': the alias '{alias}' has no letter", "write the other spelling as words (a number or a sign is no alias)")
                        aliases.append((alias, item.start_mark.line + 1))
                elif k == "introduced":
                    introduced, introduced_line = _scalar_text(v_node), k_line
                    if introduced is None or not re.fullmatch(r"[^\s#]+\.md(?:#[\w-]*)?", introduced):
                        fail(k_line, f"term '{name}': `introduced` must name a page and a section", "write `introduced: page.md#section-anchor`, or `page.md` for the text above its first `##`")
                else:
                    fail(k_line, f"term '{name}': unknown field {k!r}", "an entry takes `definition` and, optionally, `aliases` and `introduced`")
        else:
            fail(line, f"term '{name}': the entry must be a definition or a mapping", "write an indented `definition: ...` line")
        if definition is None:
            fail(line, f"term '{name}' has no definition", "add an indented `definition: one or two plain sentences`")
        for text_ in (name, definition, *(a for a, _ in aliases)):
            if bad_char(text_):
                fail(line, f"term {name!r} holds {bad_char(text_)[1]}", "remove it; the glossary is plain, printable text")
        slug = slugify(name)
        if not slug:
            fail(line, f"term '{name}' has no letters or digits to make an anchor from", "spell the term with letters")
        if slug in slugs:
            fail(line, f"term '{name}' would have the same anchor '#{slug}' as '{slugs[slug][0]}' (line {slugs[slug][1]})", "rename one of the terms")
        slugs[slug] = (name, line)
        names[name.casefold()] = (name, line)
        for alias, a_line in aliases:
            if alias.casefold() in names:
                other, other_line = names[alias.casefold()]
                fail(a_line, f"alias '{alias}' of '{name}' is already used by '{other}' (line {other_line})", "give each spelling to one term only")
            names[alias.casefold()] = (name, a_line)
        terms.append(Term(name, slug, definition, tuple(a for a, _ in aliases), line, introduced, introduced_line))
    return terms


_GLOSSARY_CACHE: dict[tuple[str, int, int], list[Term]] = {}


def load_glossary(path: Path) -> list[Term]:
    path = Path(path)
    shown = shown_path(path)
    try:
        stat = path.stat()
    except OSError:
        raise LessonError(f"{shown}:1", "the glossary file is missing", "create it, or point the extension's `glossary` option at it") from None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _GLOSSARY_CACHE:
        _GLOSSARY_CACHE[key] = parse_glossary(decode(read_source(path, shown), shown).replace("\r\n", "\n"), shown)
    return _GLOSSARY_CACHE[key]


# ---------------------------------------------------------------- reading time

WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
INLINE_MATH_RE = re.compile(MATH_INLINE_RE)  # what the page renders as a formula
LINK_TARGET_RE = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
TAG_RE = re.compile(r"</?[A-Za-z][^>]*>")
COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
TAB_RE = re.compile(r"\s*===[!+]?\s+[\"']")  # a content tab's label line (pymdownx.tabbed)


@dataclass(frozen=True)
class ReadingTime:
    words: int
    figures: int
    formulas: int

    @property
    def minutes(self) -> int:
        seconds = self.words * 60 / WORDS_PER_MINUTE + self.figures * SECONDS_PER_FIGURE + self.formulas * SECONDS_PER_FORMULA
        return max(1, math.ceil(seconds / 60))


def tabs_read(lines: list[str]):
    """Yield (line, read) for each line: `read` is False inside the second and later tabs of a set
    of content tabs (`=== "Numbers"` after `=== "Story"`). A reader opens one view of a section,
    the first one shown, so only it counts towards the reading time; its label is not read."""
    sets: list[list] = []  # open tab sets, outermost first: [indent of their ===, in a later tab]
    for line in lines:
        if line.strip():
            indent = len(line) - len(line.lstrip())
            tab = TAB_RE.match(line)
            while sets and indent <= sets[-1][0] and not (tab and indent == sets[-1][0]):
                sets.pop()  # text at or left of a set's === ends it
            if tab:
                if sets and sets[-1][0] == indent:
                    sets[-1][1] = True
                else:
                    sets.append([indent, False])
                yield line, False
                continue
        yield line, not any(later for _indent, later in sets)


def reading_time(text: str) -> ReadingTime:
    """Count what a reader reads: prose and code words (a `{{ }}` reference counts as one word, an
    inline formula as one, link targets and HTML tags as none), course figures, display formulas,
    in the first tab of each set of content tabs only (tabs_read)."""
    words = figures = formulas = 0
    math_end = None  # inside a display formula: the text that closes it
    lines = COMMENT_RE.sub(" ", text).split("\n")
    read = [r for _line, r in tabs_read(lines)]
    for i, line, role, fence in walk_lines(lines):
        if not read[i]:
            continue
        directive = fence is not None and (fence["lang"] or "") in SPECS
        if role == "open":
            figures += directive and fence["lang"] != "guess"  # a guess's choices are read with its question
        elif role == "body":
            words += 0 if directive else len(WORD_RE.findall(line))
        elif role == "close":
            pass
        elif math_end is not None:
            if math_end in line:
                math_end = None
        elif line.strip() in ("$$", r"\[") or line.strip().startswith("$$"):
            formulas += 1
            if line.strip() == "$$" or not line.strip()[2:].rstrip().endswith("$$"):
                math_end = "$$" if line.strip().startswith("$$") else r"\]"
        else:
            line = refs.REF_RE.sub(" ref ", line)
            line = INLINE_MATH_RE.sub(" math ", line)
            line = LINK_TARGET_RE.sub("] ", line)
            line = TAG_RE.sub(" ", line)
            line = re.sub(r"https?://\S+", " url ", line)
            words += len(WORD_RE.findall(line))
    return ReadingTime(words, figures, formulas)


def page_value(ref: refs.Ref, reading: ReadingTime) -> str:
    # parse_ref has already refused any field outside refs.PAGE_FIELDS
    return str({"minutes": reading.minutes, "words": reading.words}[ref.name])


def substitute_page_refs(lines: list[str], shown: str, first_line: int, reading: ReadingTime) -> list[str]:
    """Replace `{{ page.* }}` references in prose (not in fences or code spans); others stay."""
    out = []
    for n, line, role, _fence in walk_lines(lines):
        if role != "prose":
            out.append(line)
            continue
        visible = refs.strip_code_spans(line)
        pieces, pos = [], 0
        for rm in refs.REF_RE.finditer(visible):
            ref = refs.parse_ref(rm["body"], f"{shown}:{first_line + n}")
            if ref.target != "page":
                continue
            pieces.append(line[pos:rm.start()])
            pieces.append(page_value(ref, reading))
            pos = rm.end()
        out.append("".join(pieces) + line[pos:] if pieces else line)
    return out


# ---------------------------------------------------------------- Markdown hooks


class LessonPreprocessor(Preprocessor):
    """Front matter check, `{{ page.* }}`, and noting whether this is the glossary page."""

    def __init__(self, md, ext: "LessonExtension"):
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines).replace("\r\n", "\n")
        found = find_source(text, self.ext.content_dir)
        shown, first = (shown_path(found[0]), found[1]) if found else ("the page", 1)
        try:  # a LessonError must leave as a CourseBuildError, or MkDocs prints a traceback
            if found:  # MkDocs has taken the front matter off the page; check it in the file
                check_front_matter(read_text(found[0]) or "", shown)
            body, removed = split_front_matter(text, shown)
            self.ext.glossary()  # a broken glossary fails every page, not only pages that use a term
            self.ext.is_glossary_page = any(l.strip() == GLOSSARY_MARKER for l in body.split("\n"))
            reading = reading_time(body)
            self.ext.reading = reading
            return substitute_page_refs(body.split("\n"), shown, first + removed, reading)
        except LessonError as exc:
            reraise(exc)


class GlossaryListProcessor(BlockProcessor):
    """`[[glossary]]` -> one `h2` (with the term's anchor) and one paragraph per term."""

    def __init__(self, parser, ext: "LessonExtension"):
        super().__init__(parser)
        self.ext = ext

    def test(self, parent, block) -> bool:
        return block.strip() == GLOSSARY_MARKER

    def run(self, parent, blocks) -> None:
        blocks.pop(0)
        box = etree.SubElement(parent, "div", {"class": "course-glossary"})
        for term in sorted(self.ext.glossary(), key=lambda t: (t.name.casefold(), t.name)):
            h = etree.SubElement(box, "h2", {"id": term.slug})
            h.text = AtomicString(term.name[:1].upper() + term.name[1:])
            p = etree.SubElement(box, "p")
            p.text = AtomicString(term.definition)  # its aliases only find the term in prose


def term_pattern(terms: list[Term]):
    """(one regex for every spelling of every term, {spelling casefolded: term}): whole words,
    any case, any whitespace between words, the longest spelling first ("attention head" before
    "attention"). The pop-ups and the term-order check (reading_path) find terms with it."""
    lookup, spellings = {}, []
    for term in terms:
        for spelling in (term.name, *term.aliases):
            lookup[" ".join(spelling.split()).casefold()] = term
            spellings.append(spelling)
    spellings.sort(key=len, reverse=True)
    alternation = "|".join(r"\s+".join(map(re.escape, s.split())) for s in spellings)
    return re.compile(rf"(?<![\w\-])(?:{alternation})(?![\w\-])", re.IGNORECASE), lookup


class TermTreeprocessor(Treeprocessor):
    """Link the first appearance of each term in each `h2` section to its definition."""

    def __init__(self, md, ext: "LessonExtension"):
        super().__init__(md)
        self.ext = ext

    def run(self, root) -> None:
        if self.ext.is_glossary_page:
            return
        terms = self.ext.glossary()
        if not terms:
            return
        self.pattern, self.lookup = term_pattern(terms)
        self.seen: set[str] = set()
        self._walk(root)

    # -- walking

    def _skip(self, el) -> bool:
        if not isinstance(el.tag, str) or el.tag.lower() in SKIP_TAGS:
            return True
        classes = (el.get("class") or "").split()
        return any(c in SKIP_CLASSES or c.startswith(SKIP_CLASS_PREFIX) for c in classes)

    def _walk(self, el) -> None:
        if el.tag == "h2":
            self.seen = set()
        if self._skip(el):
            return
        if el.text and not isinstance(el.text, AtomicString):
            made, el.text = self._split(el.text)
            for k, node in enumerate(made):
                el.insert(k, node)
        for child in list(el):
            if child.tag == "h2":  # a section starts at its heading, before the heading's tail
                self.seen = set()
            if not self._skip(child):
                self._walk(child)
            if child.tail and not isinstance(child.tail, AtomicString):
                made, child.tail = self._split(child.tail)
                at = list(el).index(child) + 1
                for k, node in enumerate(made):
                    el.insert(at + k, node)

    def _split(self, text: str):
        """Mark the unseen terms in `text`; return (new elements, text before the first one).
        Each new element's tail holds the text up to the next one."""
        made, head, pos = [], None, 0
        for m in self.pattern.finditer(text):
            term = self.lookup.get(" ".join(m.group(0).split()).casefold())
            if term is None or term.slug in self.seen:
                continue
            self.seen.add(term.slug)
            link = etree.Element("a", {"class": "course-term", "href": f"{self.ext.glossary_page}#{term.slug}"})
            abbr = etree.SubElement(link, "abbr", {"title": term.definition})
            abbr.text = AtomicString(m.group(0))
            if made:
                made[-1].tail = text[pos:m.start()]
            else:
                head = text[:m.start()]
            made.append(link)
            pos = m.end()
        if not made:
            return [], text
        made[-1].tail = text[pos:]
        return made, head


class LessonExtension(Extension):
    def __init__(self, **kwargs):
        self.config = {
            "glossary": [str(DEFAULT_CONTENT_DIR / "glossary.yml"), "path of the glossary YAML file"],
            "glossary_page": ["glossary.md", "link target of the glossary page, relative to the pages"],
            "content_dir": [str(DEFAULT_CONTENT_DIR), "folder of the lesson pages (to name files in errors)"],
        }
        super().__init__(**kwargs)
        self.is_glossary_page = False
        self.reading = ReadingTime(0, 0, 0)

    @property
    def content_dir(self) -> Path:
        return Path(self.getConfig("content_dir"))

    @property
    def glossary_page(self) -> str:
        return self.getConfig("glossary_page")

    def glossary(self) -> list[Term]:
        return load_glossary(Path(self.getConfig("glossary")))

    def extendMarkdown(self, md) -> None:
        md.registerExtension(self)
        # Before everything else, so `{{ page.* }}` is gone before any other `{{ }}` handling and
        # the word count sees the page as written.
        md.preprocessors.register(LessonPreprocessor(md, self), "course_lesson", 120)
        md.parser.blockprocessors.register(GlossaryListProcessor(md.parser, self), "course_glossary", 95)
        # After inline patterns (20) have made code spans and links; before MkDocs rewrites
        # `glossary.md#...` into the page's relative URL (priority 0).
        md.treeprocessors.register(TermTreeprocessor(md, self), "course_terms", 7)

    def reset(self) -> None:
        self.is_glossary_page = False
        self.reading = ReadingTime(0, 0, 0)


def makeExtension(**kwargs) -> LessonExtension:
    return LessonExtension(**kwargs)
