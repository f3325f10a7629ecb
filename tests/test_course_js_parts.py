"""course.js as parts (generator/assets/js/, joined by generator/render/script.py into one
closure): every part listed once in ORDER and every listed part there, none over 400 lines, no
helper declared twice in the joined script (found by name), and the joined script parses."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter

import pytest

from generator.render import script

MAX_PART_LINES = 400
# A declaration at the closure's top level (two spaces in): `function name(` or `var name =`.
TOP_LEVEL = re.compile(r"^  (?:function\s+([A-Za-z_$][\w$]*)\s*\(|(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=)", re.M)
# The names the two closures once gave the same helpers.
OLD_COPIES = ("escapeForPlotly", "dataOf", "canPlot", "__course12")


def declared_twice(source: str) -> list[str]:
    counts = Counter(a or b for a, b in TOP_LEVEL.findall(source))
    return sorted(n for n, k in counts.items() if k > 1)


def test_every_part_is_listed_once_and_exists():
    names = script.part_names()
    assert names[0] == "header.js" and names[-1] == "init.js"
    assert sorted(names) == sorted(p.name for p in script.PARTS_DIR.glob("*.js"))


def test_an_unlisted_or_missing_part_is_refused(tmp_path, monkeypatch):
    parts = tmp_path / "js"
    shutil.copytree(script.PARTS_DIR, parts)
    monkeypatch.setattr(script, "PARTS_DIR", parts)
    monkeypatch.setattr(script, "ORDER_FILE", parts / "ORDER")
    (parts / "stray.js").write_text("  function stray() {}\n")
    with pytest.raises(script.ScriptError, match="not listed: stray.js"):
        script.part_names()
    (parts / "stray.js").unlink()
    (parts / "tabs.js").unlink()
    with pytest.raises(script.ScriptError, match="listed but missing: tabs.js"):
        script.part_names()


def test_no_part_is_over_400_lines():
    long = {n: len(t.splitlines()) for n, t in script.parts() if len(t.splitlines()) > MAX_PART_LINES}
    assert not long, f"split these parts: {long}"


def test_no_helper_is_declared_twice():
    js = script.course_js()
    assert declared_twice(js) == []
    assert not [n for n in OLD_COPIES if n in js], "a second copy of a helper is back"
    assert js.count("(function () {\n  'use strict';") == 1, "one closure"


def test_the_duplicate_finder_finds_a_planted_copy():
    js = script.course_js() + "  function plotEsc(s) { return s; }\n"
    assert declared_twice(js) == ["plotEsc"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_joined_script_parses(tmp_path):
    path = tmp_path / "course.js"
    path.write_text(script.course_js(), encoding="utf-8")
    out = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
