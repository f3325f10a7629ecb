"""The README's generated sections: the module table (from generator.STAGES and each module's
docstring) and the authors' reference (every directive with its options, from the one parser's
SPECS; every prose reference with its arguments, from the render registry's REFS and the
reference dispatchers' field lists). `python -m generator reference` writes them between their
markers; `--check` (and tests/test_reference.py) fails while they are stale.

Reads the modules' source for their docstrings, so nothing under generator/model/ (torch) is
imported here.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from .. import STAGES, render
from ..lessons.directives import SPECS
from ..render import model_refs, ref_binding, training_figure

PACKAGE = Path(__file__).resolve().parents[1]
README = PACKAGE.parent / "README.md"
COMMAND = "python -m generator reference"
SECTIONS = ("modules", "reference")
FIX = f"run `{COMMAND}` (or `make reference`) and commit README.md"


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
        mods = "<br>".join(f"`{p.relative_to(PACKAGE.parent).as_posix()}`: {md_cell(summary(p))}" for p in stage_files(s.modules))
        rows.append(f"| {s.name} | {md_cell(s.does)} | {mods} | {s.torch} |")
    return "\n".join(rows)


def md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def signature(target: str, name: str, fewest: int, most: int) -> str:
    if most == 0:
        return f"`{{{{ {target}.{name} }}}}`"
    args = ", ".join(chr(ord("a") + i) if i < fewest else f"[{chr(ord('a') + i)}]" for i in range(most))
    return f"`{{{{ {target}.{name}({args}) }}}}`"


def authors_reference() -> str:
    out = ["Every directive (a fence whose info string names it; its body is YAML) with its options,",
           "required ones first, and the references its `id` answers in prose (`[x]`: optional argument).", ""]
    out += ["| directive | required options | other options | references (`id` = the figure's id) |", "|---|---|---|---|"]
    for kind in SPECS:
        allowed, required = SPECS[kind]
        refs = render.KINDS[kind].REFS
        shown = " ".join(signature("id", n, lo, hi) for n, (lo, hi) in refs.items()) or "none"
        out.append(f"| `{kind}` | {', '.join(f'`{o}`' for o in sorted(required)) or 'none'} | "
                   f"{', '.join(f'`{o}`' for o in sorted(allowed - required)) or 'none'} | {shown} |")
    out += ["", "References that name no figure:", ""]
    out.append("- a model's shape: " + " ".join(f"`{{{{ model.<name>.{f} }}}}`" for f in model_refs.FIELDS))
    out.append("- the tiny model's training log: " + " ".join(f"`{{{{ model.tiny.training.{f} }}}}`" for f in training_figure.FIELDS))
    out.append("- the training log, with arguments: " + " ".join(
        f"`{{{{ model.tiny.training.{f}({', '.join(names)}) }}}}`" for f, names in training_figure.ARG_FIELDS.items()))
    out.append("- the page: `{{ page.minutes }}` `{{ page.words }}`")
    out += ["", "What each reference returns is described in `generator/render/__init__.py`; a figure kind's",
            "module (the `KINDS` registry there) answers its own."]
    out += ["", "What a number in prose points at (`generator/render/ref_binding.py`): hovered or focused, it",
            "outlines where it came from and sets the figure's pickers to match; a click, Enter or Space",
            "scrolls the figure into view; a screen reader hears \"from figure 3, layer 2, head 1: …\"",
            "after it; printed, it is plain text.", ""]
    out += binding_list()
    return "\n".join(out)


def binding_list() -> list[str]:
    """The bullets of ref_binding's docstring: what each reference kind is bound to."""
    doc = ref_binding.__doc__ or ""
    return [line.rstrip() for line in doc[doc.index("\n* ") + 1:].strip().split("\n")]


def sections() -> dict[str, str]:
    return {"modules": module_table(), "reference": authors_reference()}


def replaced(text: str, fresh: dict[str, str]) -> str:
    for name, body in fresh.items():
        start, end = marker(name), marker(name, end=True)
        if text.count(start) != 1 or text.count(end) != 1:
            raise ValueError(f"README.md: needs one `{start}` and one `{end}` line")
        a, b = text.index(start) + len(start), text.index(end)
        text = text[:a] + "\n" + body + "\n" + text[b:]
    return text


def stale(readme: Path = README) -> list[str]:
    """The generated sections of README.md that do not match the code."""
    text = readme.read_text(encoding="utf-8")
    return [n for n, body in sections().items() if replaced(text, {n: body}) != text]


def main(check: bool = False, readme: Path = README) -> int:
    try:
        text = readme.read_text(encoding="utf-8")
        new = replaced(text, sections())
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if check:
        if new != text:
            print(f"error: {readme.name}: the generated sections {', '.join(stale(readme))} are stale. Fix: {FIX}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print(f"{readme.name}: generated sections written", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("reference", help="write README.md's module table and authors' reference from the code")
    p.add_argument("--check", action="store_true", help="only check that they are up to date (exit 1 if not)")
    p.set_defaults(func=lambda args: main(check=args.check))
