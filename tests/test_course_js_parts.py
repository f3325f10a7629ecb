"""course.js as parts (generator/assets/js/, joined by generator/render/script.py): ORDER lists
every part once, no part is long, the parts share one closure and so one set of helpers (no
function name declared twice, nested ones included), and the joined script parses. No browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter

import pytest

from generator.render import play_model, script

MAX_LINES = 400

# A function declared by name: `function name(` (declarations and named function expressions), or
# a variable holding one: `var|let|const name = function`, `= (function`, `= (a, b) =>`, `= a =>`.
# The whole text is scanned, nested functions included: in one shared scope a second `show` or
# `go` is a trap (the outer one is silently shadowed, or, at top level, replaced).
DECLARED = re.compile(
    r"\bfunction\s+([A-Za-z_$][\w$]*)\s*\("
    r"|\b(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?"
    r"(?:function\b|\(\s*function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
)


def declared_names(text: str) -> Counter:
    return Counter(m.group(1) or m.group(2) for m in DECLARED.finditer(text))


def twice(text: str) -> dict[str, int]:
    return {name: n for name, n in declared_names(text).items() if n > 1}


def copy_parts(tmp_path, monkeypatch):
    """The parts and ORDER in a tmp folder, which script reads from now on."""
    folder = tmp_path / "js"
    shutil.copytree(script.PARTS_DIR, folder)
    monkeypatch.setattr(script, "PARTS_DIR", folder)
    monkeypatch.setattr(script, "ORDER_FILE", folder / "ORDER")
    return folder


def test_order_lists_every_part_once_and_every_part_exists():
    names = script.part_names()
    on_disk = sorted(p.name for p in script.PARTS_DIR.glob("*.js"))
    assert sorted(names) == on_disk and len(set(names)) == len(names)
    assert names[0] == "header.js" and names[-1] == "init.js", names


def test_an_unlisted_part_is_refused(tmp_path, monkeypatch):
    folder = copy_parts(tmp_path, monkeypatch)
    (folder / "stray.js").write_text("  function stray() {}\n", encoding="utf-8")
    with pytest.raises(script.ScriptError, match="not listed: stray.js"):
        script.course_js()


def test_a_missing_or_twice_listed_part_is_refused(tmp_path, monkeypatch):
    folder = copy_parts(tmp_path, monkeypatch)
    order = (folder / "ORDER").read_text(encoding="utf-8")
    (folder / "ORDER").write_text(order + "ghost.js\n", encoding="utf-8")
    with pytest.raises(script.ScriptError, match="listed but missing: ghost.js"):
        script.part_names()
    (folder / "ORDER").write_text(order + "core.js\n", encoding="utf-8")
    with pytest.raises(script.ScriptError, match="listed twice: core.js"):
        script.part_names()


def test_no_part_is_over_400_lines():
    long = {name: text.count("\n") for name, text in script.parts() if text.count("\n") > MAX_LINES}
    assert not long, f"parts over {MAX_LINES} lines (split them): {long}"


def test_parts_are_sections_of_the_one_closure():
    (first, header), *body = script.parts()
    assert header.lstrip().startswith("/*") and header.rstrip().endswith("*/"), f"{first} is the header comment only"
    for name, text in body:
        assert "'use strict'" not in text, f"{name}: the joiner's closure is already strict"
        assert not re.search(r"^\(function\b|^\}\)\(\);", text, re.M), f"{name} opens or closes a closure of its own"
    joined = script.course_js()
    assert joined.count(script.OPENING) == 1 and joined.endswith(script.CLOSING)


def test_no_helper_is_declared_twice():
    joined = script.course_js()
    names = declared_names(joined)
    assert {"fmt", "plotEsc", "ownData", "hasPlotly", "cssColour", "init", "initMap"} <= set(names), "the finder reads nothing"
    assert twice(joined) == {}, f"declared more than once in course.js's one scope: {twice(joined)}"
    # the second closure's copies are gone, and so is its flag
    for gone in ("escapeForPlotly", "dataOf", "canPlot", "PLOT =", "__course12"):
        assert gone not in joined, gone


def test_the_finder_finds_a_planted_duplicate():
    """Control: every form the finder reads, at any indentation, nested or not."""
    sample = """
  function show(i) { return i; }
  function initA(fig) {
    function show(k) { return k; }
    var go = function () {};
    var tick = (a, b) => a + b;
    const once = x => x;
  }
  var go = (function named(cs) { return cs; })(1);
  let tick = async function () {};
  var once = (1 + 2);
  var plain = fig.querySelector('x');
"""
    assert twice(sample) == {"show": 2, "go": 2, "tick": 2}
    assert declared_names(sample)["once"] == 1 and "plain" not in declared_names(sample)


def test_planted_duplicate_part_is_caught(tmp_path, monkeypatch):
    folder = copy_parts(tmp_path, monkeypatch)
    (folder / "extra.js").write_text("  var plotEsc = function (s) { return String(s); };\n", encoding="utf-8")
    order = (folder / "ORDER").read_text(encoding="utf-8")
    (folder / "ORDER").write_text(order.replace("init.js", "extra.js\ninit.js"), encoding="utf-8")
    assert twice(script.course_js()) == {"plotEsc": 2}


def test_the_joined_script_parses(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    out = tmp_path / "course.js"
    out.write_text(script.course_js(), encoding="utf-8")
    done = subprocess.run(["node", "--check", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# The names the two closures once gave the same helpers, and the second closure's flag.
OLD_COPIES = ("escapeForPlotly", "dataOf", "canPlot", "__course12")


def test_the_second_closures_copies_are_gone():
    js = script.course_js()
    assert not [n for n in OLD_COPIES if re.search(rf"\b{n}\b", js)], "a second copy of a helper is back"


def play_parts() -> list[tuple[str, str]]:
    return [(n, (play_model.PLAY_DIR / n).read_text(encoding="utf-8")) for n in play_model.PLAY_PARTS]


@pytest.mark.parametrize("named,joined", [(lambda: script.parts()[1:], script.course_js), (play_parts, play_model.play_js)],
                         ids=["course.js", "play.js"])
def test_the_joined_script_drops_comment_lines_and_nothing_else(named, joined):
    """course.js and play.js ship without their parts' whole-line // comments. That is safe only
    while no part has a template literal or a line ending in a backslash (a string over several
    lines), which this checks; every line of code is kept, in order."""
    for name, text in named():
        assert "`" not in re.sub(r"//.*", "", text), f"{name}: a template literal (the comment stripper would see inside it)"
        assert not re.search(r"\\\n", text), f"{name}: a line ends in a backslash"
    joined = joined()
    code = [line.lstrip(" \t") for _, text in named() for line in text.splitlines() if not re.match(r"^\s*//", line)]
    assert not re.search(r"^\s*//", joined, re.M)
    lines = joined.splitlines()
    at = 0
    for line in code:  # in order
        at = lines.index(line, at) + 1
