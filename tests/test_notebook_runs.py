"""Every notebook runs, or the build says so (generator/notebooks/run.py, names.py): a lesson with
a figure of every kind that has a notebook section, on other sentences and tokens from one figure
to the next, gets a notebook whose "Run all" passes, as shipped and with every exercise answered;
no two sections bind one name to two values; and a part of a notebook that fails is one line at
its figure's line in `make check` and `make site`."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from conftest import write_project
from course_builds import REPO
from generator.notebooks import build, steps
from generator.notebooks.cells import TODO
from generator.notebooks.names import shared_names
from generator.notebooks.run import run_notebooks
from generator.site import notebook_files

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def notebooks_run(monkeypatch):
    """The builds here run their notebooks (tests/conftest.py turns that off for the others)."""
    monkeypatch.setenv("COURSE_RUN_NOTEBOOKS", "1")

# One figure of every kind that has a section, on committed traces. The tokens figure, the head
# walked step by step (its Code tab asks for the walk), the layer norm and each causal figure read
# other sentences or tokens than the figures before them: every name a section shares is a trap.
EVERY_KIND = """# Every figure kind

```tokens
sentences: ["Lily wanted to play with"]
id: split
```

```merges
model: tiny
word: " playing"
id: play
```

```embedding
model: tiny
sentence: "Lily wanted to play with her"
id: emb
```

```neighbours
model: tiny
words: [her, Lily, ball]
pairs: [[her, she], [her, ball]]
id: near
```

```map
model: tiny
mark: [her, she, Lily]
id: map
```

```layernorm
model: tiny
sentence: "Lily wanted to play with her"
token: Lily
id: ln
```

```attention
model: tiny
sentence: "Lily wanted to play with her"
pick: {rule: max-weight, from: her, to: Lily}
id: lily
```

[[python: grid]]

```stepper
tokens: [Lily, ran, she]
query: [[1, 0], [0, 1], [2, 0]]
key: [[2, 0], [0, 1], [1, 1]]
value: [[1, 0], [0, 1], [0.5, 0.5]]
focus: she
id: toy
```

```compare
model: tiny
sentences: ["The dog saw Lily and wanted to play with her", "Lily wanted to play with her"]
layer: 2
head: 3
token: her
id: withpair
```

```scoreboard
model: tiny
scores: [previous-token, duplicate-token, induction, sink]
id: board
```

```ablation
model: tiny
sentence: "Lily wanted to play with"
targets: [her, his]
id: ab
```

```attribution
model: tiny
sentence: "Ben wanted to play with"
targets: [her, his]
id: dla
```

```patching
model: tiny
sentences: ["Ben wanted to play with", "Lily wanted to play with"]
targets: [her, his]
id: patch
```

```lens
model: tiny
sentence: "Lily wanted to play with"
id: lens
```

```rope-distance
model: tiny-rope
sentence: "Tom had a red ball. Tom gave the red ball to Sam."
pick: {best: previous-token}
token: Sam
id: turn
```
"""
# Each section's heading, for every kind build.SECTIONS knows (a new kind must be added here).
HEADINGS = {
    "tokens": "## Tokens and their ids\n", "merges": "## Byte-pair encoding, merge by merge", "embedding": "## A token's vector",
    "neighbours": "## Cosine similarity", "map": "## The map", "layernorm": "## Layer norm", "attention": "## One head, step by step",
    "stepper": "## The made-up example, by hand",
    "pair": "## One head, two sentences", "scoreboard": "## Head-type scores from their definitions",
    "ablation": "### With its average output instead", "attribution": "## Direct logit attribution",
    "patching": "## Activation patching", "lens": "## The logit lens", "rope-distance": "## Position by rotation",
}


def answered(text: str) -> str:
    """The notebook with every exercise cell holding its answer, as a learner who did them all."""
    nb = json.loads(text)
    answers = "".join(nb["cells"][-1]["source"])
    parts = re.split(r"(?m)^# --- (\S+)\n", answers)[1:]
    sol = dict(zip(parts[::2], parts[1::2]))
    for c in nb["cells"]:
        name = c.get("metadata", {}).get("course", {}).get("exercise")
        if name:
            c["source"] = sol[name]
    return json.dumps(nb)


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    root = tmp_path_factory.mktemp("every-kind")
    (root / "content").mkdir()
    (root / "content" / "every.md").write_text(EVERY_KIND, encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(root)  # messages name the lesson as content/every.md, as in a build run from the project
    try:
        (nb,) = notebook_files.write_notebooks(root / "content", REPO / "traces", root / "site", bundles=False)
    finally:
        os.chdir(cwd)
    return root, nb


def test_a_lesson_with_every_figure_kind_gets_a_notebook_that_runs(every_kind):
    root, nb = every_kind
    assert set(HEADINGS) == set(build.SECTIONS)
    text = "\n".join("".join(c["source"]) for c in json.loads(nb.text)["cells"])
    for kind, heading in HEADINGS.items():
        assert heading in text, f"the lesson has no {kind} section: {heading!r}"
    assert "traces pending" not in text and "committed weights are not" not in text
    assert TODO in text  # the exercises are there, still to do
    folder = root / "site" / notebook_files.NOTEBOOKS_DIR
    shipped = run_notebooks([nb], folder, {nb.page: "content/every.md"}, cache=None)
    assert [str(f) for f in shipped] == []
    done = build.Notebook(nb.page, answered(nb.text), nb.files, nb.where, nb.answer_where)
    assert [str(f) for f in run_notebooks([done], folder, {nb.page: "content/every.md"}, cache=None)] == []


def test_a_failing_part_names_its_figure_and_a_passing_notebook_is_not_run_again(every_kind, tmp_path):
    root, nb = every_kind
    folder = root / "site" / notebook_files.NOTEBOOKS_DIR
    cache = tmp_path / "cache.json"
    line = EVERY_KIND.splitlines().index("```lens") + 1
    broken = build.Notebook(nb.page, nb.text.replace("lens_probs = decode(", "lens_probs = decoded("), nb.files, nb.where, nb.answer_where)
    (failure,) = run_notebooks([broken], folder, {nb.page: "content/every.md"}, cache=cache)
    assert str(failure).startswith(f"content/every.md:{line}: this figure's part of the lesson's notebook fails on Run all (cell ")
    assert "NameError: name 'decoded' is not defined" in str(failure) and " Fix: " in str(failure) and "\n" not in str(failure)
    assert json.loads(cache.read_text(encoding="utf-8")) == []
    # a wrong answer in the hidden cell names the exercise's figure
    wrong = build.Notebook(nb.page, nb.text.replace("token_ids = [vocab[", "token_ids = [1 + vocab["), nb.files, nb.where, nb.answer_where)
    (failure,) = run_notebooks([wrong], folder, {nb.page: "content/every.md"}, cache=cache)
    assert str(failure).startswith("content/every.md:3: ") and "the answer to exercise 'ids'" in str(failure), str(failure)
    assert run_notebooks([nb], folder, {nb.page: "content/every.md"}, cache=cache) == []
    assert len(json.loads(cache.read_text(encoding="utf-8"))) == 1
    (folder / "data" / nb.files[0]).rename(folder / "moved")  # a cached digest is of the data too: a changed file runs again
    try:
        with pytest.raises(OSError):
            run_notebooks([nb], folder, {nb.page: "content/every.md"}, cache=cache)
    finally:
        (folder / "moved").rename(folder / "data" / nb.files[0])


def test_sections_that_bind_one_name_to_two_values_are_found():
    tokens = ("tokens", ["trace = load_json('tiny/a.json')\nfor t in trace['tokens']:\n    print(t)"])
    attention = ("attention", ["trace = load_json('tiny/b.json')", "for t in trace['tokens']:\n    w = t"])
    assert shared_names([tokens, attention]) == ["`trace`: tokens and attention"]
    same = ("attention", ["trace = load_json('tiny/a.json')", "print([t for t in trace])"])
    assert shared_names([tokens, same]) == []  # one statement, one value; loop and comprehension names are their own
    loop = ("scoreboard", ["for trace in natural:\n    rows = 1"])
    assert shared_names([tokens, loop]) == ["`trace`: tokens and scoreboard"]


def broken_walk(root, monkeypatch) -> None:
    """A project with one attention figure (line 3) whose walk is shown, on the committed traces,
    and the walk's "values" step planted to fail (NameError: v_missing) until monkeypatch.undo()."""
    lesson = "# One head\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\n" \
             "pick: {rule: max-weight, from: her, to: Lily}\n```\n\n[[python: grid]]\n"
    write_project(root, {"head.md": lesson})
    shutil.rmtree(root / "traces")
    shutil.copytree(REPO / "traces", root / "traces")
    monkeypatch.setitem(steps.STEPS, "values", "print(arrays['weights'][i] @ v_missing)")


def test_make_check_reports_a_notebook_that_fails_at_its_figures_line(tmp_path, monkeypatch):
    """A step of the walk that fails (planted) is one line at the attention figure's line, exit 1;
    fixed, the page passes and the notebook is cached."""
    from test_check import run_check

    broken_walk(tmp_path, monkeypatch)
    rc, log = run_check(tmp_path)
    errors = [line for line in log.splitlines() if line.startswith("error: ")]
    assert rc == 1 and len(errors) == 1, log
    assert re.match(r"error: content/head\.md:3: this figure's part of the lesson's notebook fails on Run all "
                    r"\(cell \d+: NameError: name 'v_missing' is not defined\)\. Fix: ", errors[0]), errors[0]
    monkeypatch.undo()
    monkeypatch.setenv("COURSE_RUN_NOTEBOOKS", "1")
    rc, log = run_check(tmp_path)
    assert rc == 0, log
    assert len(json.loads((tmp_path / "build" / ".notebook-cache.json").read_text(encoding="utf-8"))) == 1


def test_make_site_fails_on_a_notebook_that_fails_and_says_where(tmp_path, monkeypatch):
    """`python -m generator site` runs every notebook it writes: a planted failure in the walk is
    one line at the figure's line, and nothing is built; fixed, the site is built and the
    notebook cached."""
    from catalogue import build as build_site

    broken_walk(tmp_path, monkeypatch)
    rc, log = build_site(tmp_path, "--no-downloads")
    assert rc == 1 and not (tmp_path / "site").exists(), log
    assert re.search(r"error: the notebooks failed \(content/head\.md:3: this figure's part of the lesson's notebook fails "
                     r"on Run all \(cell \d+: NameError: name 'v_missing' is not defined\)\. Fix: ", log), log
    monkeypatch.undo()
    monkeypatch.setenv("COURSE_RUN_NOTEBOOKS", "1")
    rc, log = build_site(tmp_path, "--no-downloads")
    assert rc == 0 and (tmp_path / "site" / "notebooks" / "head.ipynb").is_file(), log
    assert len(json.loads((tmp_path / "build" / ".notebook-cache.json").read_text(encoding="utf-8"))) == 1


def test_a_new_lessons_notebook_runs(tmp_path, monkeypatch):
    """`make lesson`'s template, as a new author starts from it, on the committed traces."""
    from generator.site import scaffold

    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "mine.md").write_text(scaffold.lesson_text("mine"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    (nb,) = notebook_files.write_notebooks(tmp_path / "content", REPO / "traces", tmp_path / "site", bundles=False)
    assert "One head, step by step" in nb.text
    folder = tmp_path / "site" / notebook_files.NOTEBOOKS_DIR
    assert [str(f) for f in run_notebooks([nb], folder, {nb.page: "content/mine.md"}, cache=None)] == []
