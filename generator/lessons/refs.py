"""Prose references (`{{ lily.weight(her, Lily) }}`) and the marks that tie every directive and
reference to its file and line, so rendering errors can name them."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from dataclasses import dataclass


from .directives import SPECS, load_body
from .errors import LessonError
from .errors import fail as _fail
from .source import walk_lines

SOURCE_MARK = "# @source "  # injected into fence bodies by the Markdown preprocessor
CODE_REF_PREFIX = "__course_ref_"  # stands in for a reference inside code until it is filled in
# `{{ page.minutes }}` (reading time) and `{{ page.words }}`: filled in from the page's own words.
PAGE_FIELDS = ("minutes", "words")


def split_source_mark(body: str, fallback: str) -> tuple[str, str]:
    """Strip the `# @source path:line` line the preprocessor injects; return (body, where)."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip().startswith(SOURCE_MARK):
            where = line.strip()[len(SOURCE_MARK):].strip()
            return "\n".join(lines[:i] + lines[i + 1:]), where
    return body, fallback



# {{ lily.weight(her, Lily) }}  {{ lily.layer }}  {{ model.tiny.nLayer }}  {{ model.tiny-rope.nLayer }} (a
# model's name may hold a hyphen, so the path may too)
REF_RE = re.compile(r"\{\{(?P<body>.*?)\}\}")
LINE_MARK_RE = re.compile(r"\s@(?P<line>\d+)\s*$")
REF_BODY_RE = re.compile(r"^(?P<target>[a-z][a-z0-9_-]*)\.(?P<path>[A-Za-z][A-Za-z0-9_.-]*)(?:\((?P<args>[^()]*)\))?$")


@dataclass(frozen=True)
class Ref:
    target: str  # a figure id, or "model"
    name: str  # e.g. "weight", or "tiny.nLayer" for model refs
    args: tuple[str, ...]
    where: str
    raw: str


def parse_ref(body: str, where: str) -> Ref:
    """Parse the inside of `{{ ... }}` (a trailing ` @line` mark, if injected, sets the line)."""
    m = LINE_MARK_RE.search(body)
    if m:
        path = where.rsplit(":", 1)[0]
        where = f"{path}:{m['line']}"
        body = body[: m.start()]
    raw = " ".join(body.split())  # a reference split over lines is shown, and read, on one line
    if len(raw) > 120:
        raw = raw[:117] + "…"
    mb = REF_BODY_RE.match(raw)
    if not mb:
        _fail(where, f"reference {{{{ {raw} }}}} cannot be read", "write `{{ figure-id.weight(her, Lily) }}` or `{{ model.tiny.nLayer }}`; "
              "braces meant as code stay as written in a code span or a fenced code block (not an indented one)")
    args = tuple(a.strip() for a in mb["args"].split(",")) if mb["args"] is not None and mb["args"].strip() else ()
    if any(not a for a in args):
        _fail(where, f"reference {{{{ {raw} }}}} has an empty argument", "separate arguments with single commas")
    if mb["target"] == "page" and (mb["path"] not in PAGE_FIELDS or args):
        _fail(where, f"unknown page reference {{{{ {raw} }}}}", f"use one of: {', '.join('{{ page.' + f + ' }}' for f in PAGE_FIELDS)}")
    return Ref(mb["target"], mb["path"], args, where, raw)


def iter_refs(text: str, shown: str):
    """Every `{{ }}` reference of a page, in prose and in code, with its line number (the
    bodies of course directives hold YAML, not references)."""
    check_braces(text, shown)
    code_refs: list = []
    for _i, line, role, _fence in walk_lines(annotate_source(text.split("\n"), shown, 1, code_refs)):
        if role == "prose":
            for rm in REF_RE.finditer(strip_code_spans(line)):
                yield parse_ref(rm["body"], shown)
    for _placeholder, ref in code_refs:
        yield ref


CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")
# where a filled-in number would become part of an address: a Markdown link or image target, a
# link definition, an HTML href/src
URL_RE = re.compile(r"\]\((?P<a>[^)]*)\)|^\s{0,3}\[[^\]]+\]:\s*(?P<b>\S.*)$|\b(?:href|src)\s*=\s*[\"']?(?P<c>[^\"'>\s]*)")


def check_braces(text: str, shown: str) -> None:
    """Refuse, at its line, a `{{` left open in prose (the page would show the braces) and a
    reference inside a link or image address (the number would become a path)."""
    for i, line, role, _fence in walk_lines(text.split("\n")):
        if role != "prose":
            continue
        prose = strip_code_spans(line)
        if "{{" in REF_RE.sub("", prose):
            _fail(f"{shown}:{i + 1}", "a `{{` is never closed on its line", "close the reference with `}}` on the same line, or write the braces in a code span")
        for m in URL_RE.finditer(prose):
            if "{{" in (m["a"] or m["b"] or m["c"] or ""):
                _fail(f"{shown}:{i + 1}", "a reference inside a link or image address", "put the reference in the link's text, not in its address")


def strip_code_spans(line: str) -> str:
    return CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)


def page_targets(lines: list[str]) -> set[str]:
    """What a reference inside code may name: the ids of the page's figures, `model` and `page`."""
    ids, body, fence = {"model", "page"}, [], None
    for _i, line, role, match in walk_lines(lines):
        if role == "open":
            fence, body = match, []
        elif role == "body":
            body.append(line)
        elif role == "close" and (fence["lang"] or "") in SPECS:
            try:  # the one hardened body reader: no alias bomb expands here either
                data = load_body(textwrap.dedent("\n".join(body)), "", fence["lang"])
            except LessonError:
                continue  # the fence itself reports it
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                ids.add(data["id"])
    return ids


def annotate_source(lines: list[str], shown: str, first_line: int = 1, code_refs: list | None = None) -> list[str]:
    """Mark where each directive and reference comes from, so rendering errors name `path:line`.

    `lines` are a page's Markdown lines, `lines[0]` being line `first_line` of the file `shown`.
    Every course fence gets `# @source shown:line` as its first body line (at the fence's indent,
    so fences inside content tabs stay intact), and every `{{ ... }}` outside fences and code
    spans gets ` @line` before its `}}`. parse_directive/split_source_mark and parse_ref read both.

    References inside code (fenced code blocks and code spans) are references too when they name
    a figure of the page (or `model.`/`page.`), so that Code views can say
    `trace.layers[{{ lily.layer0 }}]` and run as written; other braces in code stay as written.
    Each is parsed here,
    replaced by a placeholder identifier that survives syntax highlighting, and appended to
    `code_refs` as (placeholder, Ref); the Markdown extension fills them in after rendering.
    """
    out: list[str] = []
    targets = page_targets(lines) if code_refs is not None else set()

    def code_placeholders(text: str, lineno: int) -> str:
        if code_refs is None:
            return text

        def swap(m: re.Match) -> str:
            mb = REF_BODY_RE.match(m["body"].strip())
            if not mb or mb["target"] not in targets:
                return m.group(0)  # other braces in code (a template, a dict) stay as written
            ref = parse_ref(m["body"], f"{shown}:{lineno}")
            placeholder = f"{CODE_REF_PREFIX}{len(code_refs)}__"
            code_refs.append((placeholder, ref))
            return placeholder

        return REF_RE.sub(swap, text)

    for i, line, role, fence in walk_lines(lines):
        lineno = first_line + i
        directive = fence is not None and (fence["lang"] or "") in SPECS
        if role == "open":
            out.append(line)
            if directive:
                out.append(f"{fence['indent']}{SOURCE_MARK}{shown}:{lineno}")
            continue
        if role == "body" and not directive:
            line = code_placeholders(line, lineno)
        elif role == "prose":
            line = CODE_SPAN_RE.sub(lambda cm: code_placeholders(cm.group(0), lineno), line)
            ends = [rm.end() - 2 for rm in REF_RE.finditer(strip_code_spans(line)) if not LINE_MARK_RE.search(rm["body"])]
            for end in reversed(ends):
                line = f"{line[:end]} @{lineno}{line[end:]}"
        out.append(line)
    return out


# ---------------------------------------------------------------- names that look alike

# Letters of other scripts that are drawn like Latin ones (a few of Unicode's confusables.txt).
_CONFUSABLE = str.maketrans("аеорсухіјѕԁһԛԝАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "aeopcyxijsdhqwABEKMHOPCTXIJSaBeikvoptuxABEZHIKMNOPTYX")


def _skeleton(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lstrip(" ·"))
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Cf", "Zs") or c == " ")
    return text.translate(_CONFUSABLE).casefold()


def _code_point(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, 'UNNAMED')}"


def lookalike_note(asked: str, candidates: list[tuple[str, str]]) -> str:
    """For a name that matched nothing: when it looks like one of `candidates` ((label, text)
    pairs, e.g. ("#6", "·her")) but differs in its code points (a Cyrillic е for a Latin e, a
    zero-width space), '; ' and the characters that differ; otherwise ''."""
    key = _skeleton(asked)
    for label, text in candidates:
        if text == asked or _skeleton(text) != key:
            continue
        a, b = asked.lstrip(" ·"), text.lstrip(" ·")
        if len(a) == len(b):
            diffs = [f"{_code_point(x)} where {label} has {_code_point(y)}" for x, y in zip(a, b) if x != y]
        else:
            extra_a = [c for c in a if c not in b]
            extra_b = [c for c in b if c not in a]
            diffs = [f"{_code_point(c)}, which {label} does not hold" for c in extra_a]
            diffs += [f"no {_code_point(c)}, which {label} holds" for c in extra_b]
        if diffs:
            return f"; {asked!r} only looks like {label} {text!r}: it has {', '.join(diffs[:3])}"
    return ""
