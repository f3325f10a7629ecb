"""The docs' generated parts: docs/reference.md, whole (every figure kind with its options, their
types, defaults and examples; every prose reference with its arguments named; every error an author
can meet), and docs/architecture.md's module table (from generator.STAGES and each module's
docstring). `python -m generator reference` writes them; `--check` (and tests/test_reference.py)
fails while they are stale.

The options come from the one parser's SPECS and lessons/option_docs.py, the references from the
render registry's REFS and ARGS and the reference dispatchers' field lists, and the errors from
the code itself: every call that raises a lesson mistake, and every `… Fix: …` message, read with
ast, so the list follows the code. Reads the modules' source for their docstrings and messages,
so nothing under generator/model/ (torch) is imported here.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from .. import STAGES, render
from ..lessons import option_docs
from ..lessons.directives import SPECS
from ..render import model_refs, ref_binding, training_figure
from ..store.files import REPAIR_FIX

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent
COMMAND = "python -m generator reference"
REFERENCE = "docs/reference.md"  # generated whole
ARCHITECTURE = "docs/architecture.md"  # holds the generated module table between its markers
FIX = f"run `{COMMAND}` (or `make reference`) and commit docs/"

# Where an author's mistakes are found, in the order a build meets them; each folder's messages
# make one section of the reference's list of errors.
ERROR_SOURCES = (
    ("lessons", "In a lesson's text and a figure's options (found before any trace is read)"),
    ("markdown", "While a page is built"),
    ("render", "Against the traces: tokens, heads, references"),
    ("store", "Trace files"),
    ("model", "When `make traces` runs"),
    ("site", "`mkdocs.yml`, the site and the commands"),
)
# name -> (index of the problem argument, the fix when the call gives none)
RAISERS = {"fail": (1, None), "_fail": (1, None), "LessonError": (1, None), "ref_fail": (1, None),
           "DamagedFile": (1, REPAIR_FIX)}
SKIP_FILES = {"reference.py"}  # this module's own message is about the docs, not a lesson


def marker(name: str, end: bool = False) -> str:
    return f"<!-- {'/' if end else ''}generated:{name} -->"


def summary(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split())
    m = re.match(r"(.+?)[.:;](\s|$)", text)  # up to the first full stop, colon or semicolon
    return m.group(1) if m else text


def stage_files(modules: tuple[str, ...]) -> list[Path]:
    out = []
    for m in modules:
        p = PACKAGE / m.replace(".", "/")
        if p.is_dir():
            out += sorted(q for q in p.glob("*.py") if q.name != "__init__.py")  # the stage's row says what the package is
        else:
            out.append(PACKAGE / f"{m}.py")
    return out


def module_table() -> str:
    rows = ["| stage | what it does | modules | imports torch? |", "|---|---|---|---|"]
    for s in STAGES:
        mods = "<br>".join(f"`{p.relative_to(REPO).as_posix()}`: {md_cell(summary(p))}" for p in stage_files(s.modules))
        rows.append(f"| {s.name} | {md_cell(s.does)} | {mods} | {s.torch} |")
    return "\n".join(rows)


def md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def signature(target: str, name: str, names: tuple[str, ...], fewest: int) -> str:
    """`{{ id.weight(from, to) }}`, optional arguments in brackets."""
    if not names:
        return f"`{{{{ {target}.{name} }}}}`"
    args = ", ".join(n if i < fewest else f"[{n}]" for i, n in enumerate(names))
    return f"`{{{{ {target}.{name}({args}) }}}}`"


def kind_refs(kind: str) -> list[str]:
    module = render.KINDS[kind]
    return [signature("id", name, module.ARGS.get(name, ()), fewest) for name, (fewest, _) in module.REFS.items()]


def kind_section(kind: str) -> list[str]:
    allowed, required = SPECS[kind]
    out = [f"### `{kind}`", "", option_docs.KINDS[kind][0].upper() + option_docs.KINDS[kind][1:] + ".", ""]
    out += ["| option | takes | without it | example |", "|---|---|---|---|"]
    for name in sorted(required) + sorted(allowed - required):
        o = option_docs.option(kind, name)
        default = "**required**" if name in required else md_cell(o.default)
        out.append(f"| `{name}` | {md_cell(o.takes)} | {default} | `{o.example}` |")
    refs = kind_refs(kind)
    out += ["", "References (`id` is the figure's id): " + (" ".join(refs) if refs else "none.")]
    said = described(kind) if refs else ""  # the training figure's block is the log's, below
    if said:
        out += ["", "What they write, by example: " + said]
    return out + [""]


def described(kind: str) -> str:
    """The kind's block of the render stage's list of references (its docstring, which a test holds
    to every reference), as one paragraph: examples, and what they write in brackets."""
    doc = render.__doc__ or ""
    block: list[str] = []
    for line in doc.splitlines():
        if block and (not line.startswith("    ") or re.match(r"    \S", line)):
            break  # the next kind's block, or the end of the list
        if block or re.match(rf"    {re.escape(kind)}\s", line):
            block.append(line[4 + len(kind):] if not block else line)
    text = " ".join(" ".join(block).split())
    text = re.sub(r" ?\((?:render\.[\w.]+|generator/[^)]*)\)", "", text)  # where the code keeps it: not for authors
    return re.sub(r"\{\{ [^}]* \}\}", lambda m: f"`{m.group(0)}`", text)


def authors_reference() -> str:
    out = ["# Reference for authors", "",
           f"Generated from the code by `make reference` ({COMMAND}); a test fails while it is stale,",
           "so do not edit it by hand. The guide is [authoring.md](authoring.md).", "",
           "A figure is a fenced block whose info string names its kind and whose body is YAML, one",
           "`option: value` per line. Tokens are named by their text (`her`, `·her` for the one with a",
           "leading space) or by their position (`#6`, where `#0` is `<|endoftext|>`). Layers and heads",
           "count from 1. In a reference, `[x]` is an optional argument.", "",
           "## Figure kinds", ""]
    out += [f"- [`{k}`](#{k}): {option_docs.KINDS[k]}" for k in SPECS] + [""]
    for kind in SPECS:
        out += kind_section(kind)
    out += ["## References that name no figure", ""]
    out.append("- a model's shape: " + " ".join(f"`{{{{ model.<name>.{f} }}}}`" for f in model_refs.FIELDS))
    out.append("- the tiny model's training log: " + " ".join(f"`{{{{ model.tiny.training.{f} }}}}`" for f in training_figure.FIELDS))
    out.append("- the training log, with arguments: " + " ".join(
        f"`{{{{ model.tiny.training.{f}({', '.join(names)}) }}}}`" for f, names in training_figure.ARG_FIELDS.items()))
    out.append("- the page: `{{ page.minutes }}` `{{ page.words }}`")
    out += ["", "What they write, by example: " + described("models"), "", described("training")]
    out += ["", "## What a number in prose points at", "",
            "Hovered or focused, a number outlines where it came from and sets the figure's pickers to",
            "match; a click, Enter or Space scrolls the figure into view; a screen reader hears \"from",
            "figure 3, layer 2, head 1: …\" after it; printed, it is plain text.", ""]
    out += binding_list()
    out += ["", "## Every error an author can meet", "",
            "Each is one line, `file:line: problem. Fix: remedy`, and nothing is written. `…` stands for",
            "what the message fills in (a token, a number, an option). Collected from the code.", ""]
    out += error_list()
    return "\n".join(out) + "\n"


def binding_list() -> list[str]:
    """The bullets of ref_binding's docstring: what each reference kind is bound to."""
    doc = ref_binding.__doc__ or ""
    return [line.rstrip() for line in doc[doc.index("\n* ") + 1:].strip().split("\n")]


def _text(node: ast.AST) -> str | None:
    """A string literal, an f-string (what it fills in as …) or a + of them; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _text(node.left), _text(node.right)
        return None if a is None or b is None else a + b
    return None


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def messages(path: Path) -> list[tuple[str, str]]:
    """(problem, fix) of every author error the module raises: the lesson-error calls, and the
    one-string messages that hold ". Fix: "."""
    out: list[tuple[str, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring: it may show the form of a message, and is none
        if isinstance(node, ast.Call) and _callee(node) in RAISERS:
            i, default_fix = RAISERS[_callee(node)]
            problem = _text(node.args[i]) if len(node.args) > i else None
            fix = _text(node.args[i + 1]) if len(node.args) > i + 1 else default_fix
            if problem is not None and fix is not None:
                out.append(("reference {{ … }}: " + problem if _callee(node) == "ref_fail" else problem, fix))
                return
        text = _text(node) if isinstance(node, (ast.JoinedStr, ast.Constant, ast.BinOp)) else None
        if text is not None:  # a whole message: its parts are not messages of their own
            if ". Fix: " in text:
                problem, fix = text.split(". Fix: ", 1)
                out.append((re.sub(r"^(error: )?…+(:(\d+|…+))?: ", "", problem), fix))  # the file and line are each message's own
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return [(p, f) for p, f in out if re.search(r"[a-z]{3}", p) and re.search(r"[a-z]{3}", f)]


def _clean(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text).strip().rstrip(".")


def error_list() -> list[str]:
    out = []
    for folder, title in ERROR_SOURCES:
        base = PACKAGE / folder
        files = sorted(base.glob("*.py")) if base.is_dir() else []
        seen: dict[tuple[str, str], None] = {}
        for p in files:
            if p.name in SKIP_FILES:
                continue
            for problem, fix in messages(p):
                seen.setdefault((_clean(problem), _clean(fix)), None)
        if seen:
            out += [f"### {title}", ""]
            out += [f"- {problem}{'' if problem.endswith('?') else '.'} Fix: {fix}" for problem, fix in sorted(seen)]
            out.append("")
    return out[:-1] if out and out[-1] == "" else out


def generated() -> dict[str, dict[str, str] | str]:
    """Each generated file: its whole text, or its marked sections' bodies."""
    return {REFERENCE: authors_reference(), ARCHITECTURE: {"modules": module_table()}}


def replaced(text: str, fresh: dict[str, str], name: str = ARCHITECTURE) -> str:
    for section, body in fresh.items():
        start, end = marker(section), marker(section, end=True)
        if text.count(start) != 1 or text.count(end) != 1:
            raise ValueError(f"{name}: needs one `{start}` and one `{end}` line")
        a, b = text.index(start) + len(start), text.index(end)
        text = text[:a] + "\n" + body + "\n" + text[b:]
    return text


def fresh_text(name: str, root: Path, fresh: dict) -> tuple[str, str]:
    """(what the file holds, what it should hold); fresh: generated()."""
    path = root / name
    want = fresh[name]
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if isinstance(want, str):
        return old, want
    return old, replaced(old, want, name)


def stale(root: Path = REPO) -> list[str]:
    """The generated docs that do not match the code."""
    out, fresh = [], generated()  # made once: each file's text reads the whole code
    for name in fresh:
        old, new = fresh_text(name, root, fresh)
        if old != new:
            out.append(name)
    return out


def main(check: bool = False, root: Path = REPO) -> int:
    try:
        fresh = generated()
        pairs = {name: fresh_text(name, root, fresh) for name in fresh}
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    changed = [name for name, (old, new) in pairs.items() if old != new]
    if check:
        if changed:
            print(f"error: {', '.join(changed)}: stale. Fix: {FIX}", file=sys.stderr)
            return 1
        return 0
    for name in changed:
        path = root / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(pairs[name][1], encoding="utf-8")
        tmp.replace(path)  # atomic: a reader never sees half a reference
        print(f"{name}: written", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("reference", help="write docs/reference.md and docs/architecture.md's module table from the code")
    p.add_argument("--check", action="store_true", help="only check that they are up to date (exit 1 if not)")
    p.set_defaults(func=lambda args: main(check=args.check))
