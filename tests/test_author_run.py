"""A scripted author run, on a throwaway copy of the whole course: a new
lesson with two new sentences, `make traces` (python -m generator traces), and the rebuilt site.
Adding a lesson must not change another chapter: heads.json and the head-types page stay byte
for byte what they were; the new figures render with numbers from their traces; and a typo in a
reference to a sentence not traced yet fails the build in one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.bench.preview import REPO, copy_course
from generator.store import TraceStore

pytestmark = pytest.mark.slow

FIRST = "The little fox found a shiny key under the old bridge"
SECOND = "Ben put the yellow cup on the kitchen table"
UNTRACED = "A small bird sang on the roof of the red barn"

LESSON = f'''# A new lesson

The fox's key: ·key gives ·fox {{{{ fox.weight(key, fox) }}}} in layer {{{{ fox.layer }}}}.

```attention
model: tiny
sentence: "{FIRST}"
pick: {{rule: max-weight, from: key, to: fox}}
id: fox
```

```compare
model: tiny
sentences: ["{FIRST}", "{SECOND}"]
layer: 1
head: 1
id: pair
```

In the second sentence ·cup looks at ·Ben with {{{{ pair.weight(cup, Ben, 2) }}}}.
'''


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_MKDOCS_2_WARNING="1")
    env.pop("COURSE_ALLOW_STANDIN", None)
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)


def site(root: Path, out: str, *flags: str) -> subprocess.CompletedProcess:
    return run(root, "site", "--no-downloads", "-d", str(root / out), *flags)


@pytest.fixture(scope="module")
def author(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("author") / "course")
    store = TraceStore(root / "traces")
    for s in (FIRST, SECOND, UNTRACED):
        assert not store.has("tiny", s), f"{s!r} is traced already: pick another sentence"
    heads_before = (root / "traces" / "tiny" / "heads.json").read_bytes()
    before = site(root, "site-before")
    assert before.returncode == 0, before.stderr[-3000:]
    (root / "content" / "new-lesson.md").write_text(LESSON, encoding="utf-8")
    traced = run(root, "traces", "--models", "tiny", "--content", str(root / "content"),
                 "--traces-dir", str(root / "traces"))
    after = site(root, "site-after", "--strict=tiny")
    return {"root": root, "heads_before": heads_before, "traced": traced, "after": after}


def test_make_traces_traces_the_two_new_sentences_and_names_them(author):
    traced = author["traced"]
    assert traced.returncode == 0, traced.stderr[-3000:]
    assert "tiny@" in traced.stdout and " 2 traced, " in traced.stdout
    for s in (FIRST, SECOND):
        assert f"traced {s!r} (content/new-lesson.md:" in traced.stdout
    store = TraceStore(author["root"] / "traces")
    assert store.has("tiny", FIRST) and store.has("tiny", SECOND)


def test_heads_json_and_the_head_types_page_are_unchanged(author):
    root = author["root"]
    assert (root / "traces" / "tiny" / "heads.json").read_bytes() == author["heads_before"]
    assert (root / "site-after" / "heads.html").read_bytes() == (root / "site-before" / "heads.html").read_bytes()


def test_the_new_figures_render_with_their_traces_numbers(author):
    after = author["after"]
    assert after.returncode == 0, after.stderr[-3000:]
    assert "tiny:" not in after.stderr  # STRICT=tiny passed: no tiny figure pending
    page = (author["root"] / "site-after" / "new-lesson.html").read_text(encoding="utf-8")
    assert 'data-pending' not in page and page.count('class="course-fig') == 2
    # the prose number is the trace's own weight of ·cup on ·Ben in layer 1, head 1
    trace = TraceStore(author["root"] / "traces").load("tiny", SECOND)
    tokens = [t["text"] for t in trace["tokens"]]
    q, k = tokens.index(" cup"), tokens.index("Ben")
    weight = trace["layers"][0]["heads"][0]["weights"][q][k]
    text = re.sub(r"<[^>]+>", "", page)
    assert f"·cup looks at ·Ben with {round(weight, 4):.2f}." in text


def test_a_typo_in_a_reference_to_an_untraced_sentence_fails_in_one_line(author):
    root = author["root"]
    lesson = root / "content" / "typo.md"
    lesson.write_text(
        "# Typo\n\n```attention\nmodel: tiny\nsentence: \"" + UNTRACED + "\"\nlayer: 1\nhead: 1\nid: bird\n```\n\n"
        "The bird: {{ bird.weight(sang, brid) }}.\n", encoding="utf-8")
    try:
        built = site(root, "site-typo")
    finally:
        lesson.unlink()
    assert built.returncode != 0
    errors = [line for line in built.stderr.splitlines() if line.startswith("error:") or "content/typo.md" in line]
    assert any("content/typo.md:11" in line and "brid" in line for line in errors), built.stderr[-2000:]
    assert "Traceback" not in built.stderr
    assert not (root / "site-typo").exists()
    assert not TraceStore(root / "traces").has("tiny", UNTRACED)  # it failed before any trace


def test_the_traced_sentences_are_listed_in_the_index_once(author):
    index = json.loads((author["root"] / "traces" / "tiny" / "index.json").read_text(encoding="utf-8"))
    texts = [e["text"] for e in index["traces"]]
    assert texts.count(FIRST) == 1 and texts.count(SECOND) == 1
