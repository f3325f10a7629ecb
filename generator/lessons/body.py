"""Reading a figure's body: the YAML of a fence, parsed safely, every problem one LessonError.

yaml.safe_load with no anchors or aliases, no key given twice, bounded nesting and size, and no
control characters in any text. Used by the directive parser (directives.py) and by the
references' own checks (refs.py).
"""

from __future__ import annotations

import reprlib
from typing import Any

import yaml

from .errors import fail as _fail
from .source import bad_char

MAX_BODY_CHARS = 20_000  # a figure's options; far more than any figure needs
MAX_DEPTH = 8  # nesting of lists and mappings in a body (a stepper needs 2)

SHOW = reprlib.Repr()
SHOW.maxlevel, SHOW.maxdict, SHOW.maxlist, SHOW.maxstring, SHOW.maxother = 2, 4, 4, 60, 60


def show(value: Any) -> str:
    """A parsed value as a message shows it: repr, bounded in length and depth (reprlib never
    builds the full repr of a large value)."""
    return SHOW.repr(value)


# ---------------------------------------------------------------- reading a body


class _Refused(Exception):
    def __init__(self, mark, problem: str, fix: str):
        self.line = mark.line + 1 if mark is not None else None
        self.problem, self.fix = problem, fix


class _BodyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses anchors and aliases (`&a`/`*a`: an alias bomb expands a few
    lines into gigabytes), nesting deeper than MAX_DEPTH, and a key given twice in one mapping
    (plain YAML keeps the last one silently)."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _Refused(event.start_mark, "uses a YAML anchor or alias (&name, *name)", "write each value out in full; a figure's options take no anchors or aliases")
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(event.start_mark, f"nests lists or mappings more than {MAX_DEPTH} levels deep", "write the options as `key: value` lines with plain lists")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node):
        # each top-level option's body line, so that a mistake in it can name its own line
        self.key_lines = {k.value: k.start_mark.line + 1 for k, _ in node.value
                          if isinstance(k, yaml.ScalarNode)} if isinstance(node, yaml.MappingNode) else {}
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        seen: dict[tuple[str, str], int] = {}
        for key_node, _value in node.value if isinstance(node, yaml.MappingNode) else ():
            if isinstance(key_node, yaml.ScalarNode):
                k = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if k in seen:
                    raise _Refused(None, f"gives the option {show(key_node.value)} twice (body lines {seen[k]} and {line})", "keep one of them")
                seen[k] = line
        return super().construct_mapping(node, deep=deep)


def body_where(where: str, body_line: int | None) -> tuple[str, str]:
    """The file's "path:line" of a body line, from the fence's "path:line" (the body starts on the
    line after the fence), and "" to add to the message; when `where` names no line (a
    reference's own check), the fence's place and " (body line N)"."""
    path, _, line = where.rpartition(":")
    if body_line is None:
        return where, ""
    if path and line.isdigit():
        return f"{path}:{int(line) + body_line}", ""
    return where, f" (body line {body_line})"


_QUOTE_FIX = "write `\\\\` for a backslash inside double quotes, or use single quotes"
_OLD_FIX = "write the options as `key: value` lines; quote sentences that contain ':' or '#'"


def yaml_mistake(exc: yaml.YAMLError, body: str) -> tuple[int | None, int | None, str, str]:
    """Where a YAML mistake really is (body line and column, from 1) and a fix that fits it.
    PyYAML names the place where it gave up, often lines later (a '{' never closed is noticed at
    the next option, an unclosed quote at the end of the block); its context mark names where the
    unclosed thing opened."""
    problem = getattr(exc, "problem", None) or "cannot be read"
    context = getattr(exc, "context", None) or ""
    mark, opened = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    lines = body.split("\n")

    def at(m) -> tuple[int | None, int | None]:
        return (m.line + 1, m.column + 1) if m is not None else (None, None)

    def text_of(m) -> str:
        return lines[m.line] if m is not None and m.line < len(lines) else ""

    if context.startswith("while parsing a flow") and opened is not None:
        bracket = "}" if "mapping" in context else "]"
        opener = "{" if bracket == "}" else "["
        if mark is not None and mark.line == opened.line and "<stream end>" not in problem:
            return (*at(mark), "a ',' is missing between two items",
                    f"separate the items of the `{opener} ... {bracket}` with commas")
        return (*at(opened), f"the '{opener}' is never closed",
                f"end the line with '{bracket}': `{text_of(opened).strip()}{bracket}`")
    if "quoted scalar" in context and opened is not None:
        quote = text_of(opened)[opened.column:opened.column + 1] or '"'
        if "end of stream" in problem or "document separator" in problem:
            return (*at(opened), f"the quote {quote} is never closed",
                    f"end the text with {quote} on the same line")
        return (*at(mark), problem, _QUOTE_FIX)
    if "'\\t'" in problem:
        return (*at(mark), "a tab in the indentation", "indent with spaces, not tabs")
    if problem == "mapping values are not allowed here" and mark is not None:
        before = text_of(mark)[:mark.column]
        if ":" in before:  # `caption: Note: this head ...`
            key = before.split(":", 1)[0].strip()
            return (*at(mark), "a ':' inside text that is not quoted",
                    f"put the text in double quotes: `{key}: \"{text_of(mark).split(':', 1)[1].strip()}\"`")
        return (*at(mark), "this line is indented, but the line above takes no nested options",
                "start each option at the same column as the others")
    if problem == "could not find expected ':'" and opened is not None:
        return (*at(opened), "a line with no `key: value`", "write `key: value`, with a space after the ':'")
    if context.startswith("while parsing a block") and problem.startswith("expected <block end>") and mark is not None:
        return (*at(mark), f"unexpected text {show(text_of(mark)[mark.column:].strip())}",
                "if a value is quoted, quote all of it; start each option at the same column as the others")
    return (*at(mark), problem, _OLD_FIX)


def check_strings(value: Any, where: str, kind: str, name: str) -> None:
    """No control character or lone surrogate in any text of the body (keys included)."""
    if isinstance(value, str):
        bad = bad_char(value)
        if bad:
            _fail(where, f"{kind}: '{name}' holds {bad[1]} at character {bad[0] + 1}", "remove it; a figure's text is plain, printable text")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_strings(k, where, kind, name)
            check_strings(v, where, kind, name)
    elif isinstance(value, (list, tuple)):
        for v in value:
            check_strings(v, where, kind, name)


def load_body(body: str, where: str, kind: str) -> Any:
    """The YAML of a fence body, parsed by _BodyLoader; every problem is a LessonError."""
    return load_body_lines(body, where, kind)[0]


def load_body_lines(body: str, where: str, kind: str) -> tuple[Any, dict[str, int]]:
    """load_body's value, and the body line (from 1) of each top-level option."""
    if len(body) > MAX_BODY_CHARS:
        _fail(where, f"{kind}: the block has {len(body):,} characters, more than the {MAX_BODY_CHARS:,} a figure may have", "shorten the block")
    bad = bad_char(body)
    if bad:
        line = body.count("\n", 0, bad[0]) + 1
        _fail(where, f"{kind}: body line {line} holds {bad[1]}", "remove it; a figure's text is plain, printable text")
    loader = _BodyLoader(body)
    try:
        data = loader.get_single_data()
        return data, getattr(loader, "key_lines", {})
    except _Refused as exc:
        at_line, at = body_where(where, exc.line)
        _fail(at_line, f"{kind}: the block {exc.problem}{at}", exc.fix)
    except yaml.YAMLError as exc:
        line, column, problem, fix = yaml_mistake(exc, body)
        at_line, at = body_where(where, line)
        if at and column:  # no file line to name: the body's line and column in the message
            at = f"{at[:-1]}, column {column})"
        elif column:
            at = f" at column {column}"
        _fail(at_line, f"{kind}: malformed YAML{at}: {problem}", fix)
    except (ValueError, TypeError, OverflowError) as exc:  # a tag's constructor (!!timestamp, !!binary ...) gave up
        _fail(where, f"{kind}: the block cannot be read as YAML ({type(exc).__name__}: {show(str(exc))})", "write the options as plain `key: value` lines, without `!!` tags")
    finally:
        loader.dispose()
