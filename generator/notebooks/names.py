"""The names a notebook's sections bind, and the ones two sections would share.

A learner runs the cells in order, goes back to an exercise, and the answers run last: a name that
a later section binds again (`trace` for another sentence, `i` for another token) would make an
earlier answer read the later section's value. So every name a section binds at the top level of
its cells belongs to that section alone, with two exceptions: the same statement in two sections
(`vectors = load_json("tiny/vectors.json")`, one value), and a name that every section binds only
as a `for` loop's variable (it is read inside its loop only). build.py checks every notebook it
writes with :func:`shared_names`."""

from __future__ import annotations

import ast

# What keeps the names it binds to itself (Python 3's comprehensions do).
OWN_SCOPE = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _bindings(source: str) -> dict[str, set[str]]:
    """name -> the statements (their text; "for" for a loop variable) that bind it at the top
    level of `source`, the bodies of its loops and conditions included (functions and
    comprehensions keep their names to themselves)."""
    out: dict[str, set[str]] = {}

    def targets(node) -> list[str]:
        if isinstance(node, OWN_SCOPE):
            return []
        if isinstance(node, ast.Name):
            return [node.id] if isinstance(node.ctx, ast.Store) else []
        return [name for child in ast.iter_child_nodes(node) for name in targets(child)]

    def visit(statements) -> None:
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.setdefault(node.name, set()).add(ast.unparse(node))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    out.setdefault((alias.asname or alias.name).split(".")[0], set()).add(ast.unparse(node))
            elif isinstance(node, ast.For):
                for name in targets(node.target):
                    out.setdefault(name, set()).add("for")
                visit(node.body + node.orelse)
            elif isinstance(node, (ast.While, ast.If, ast.With, ast.Try)):
                for name in targets(node.items[0]) if isinstance(node, ast.With) else []:
                    out.setdefault(name, set()).add(ast.unparse(node))
                visit([*getattr(node, "body", []), *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                       *[s for h in getattr(node, "handlers", []) for s in h.body]])
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for name in {n for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) for n in targets(t)}:
                    out.setdefault(name, set()).add(ast.unparse(node))
            else:  # an expression statement may still bind, with :=
                for name in targets(node):
                    out.setdefault(name, set()).add(ast.unparse(node))
    visit(ast.parse(source).body)
    return out


def section_bindings(code: list[str]) -> dict[str, set[str]]:
    """name -> the statements that bind it, over a section's code cells and its answers."""
    out: dict[str, set[str]] = {}
    for source in code:
        for name, statements in _bindings(source).items():
            out.setdefault(name, set()).update(statements)
    return out


def shared_names(sections: list[tuple[str, list[str]]]) -> list[str]:
    """For (a section's name, its code) in notebook order: one line for each name that two
    sections bind differently, "`trace`: tokens and attention". Empty when nothing collides."""
    seen: dict[str, tuple[str, set[str]]] = {}
    out = []
    for section, code in sections:
        for name, statements in section_bindings(code).items():
            if name not in seen:
                seen[name] = (section, statements)
                continue
            first, before = seen[name]
            if first != section and before != statements and not (before | statements) <= {"for"}:
                out.append(f"`{name}`: {first} and {section}")
    return out
