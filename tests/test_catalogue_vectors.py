"""The bad-input catalogue for chapters 1 and 2's figures, end to end as in the other test_catalogue_*.py files: a
small project that builds cleanly with --strict gets one mistake in content/words.md (or one
damaged traces/tiny/vectors.json); the real `python -m generator site` stops with its one exact
line, no Python frames, and nothing written."""

from __future__ import annotations

import json

import pytest

from vector_fixtures import synthetic_vectors, write_vectors
from catalogue import Case, apply, assert_no_traceback, base_project, build, error_lines, project_from, snapshot

pytestmark = pytest.mark.slow


FILE = "content/words.md"
GOOD = """\
---
description: Tokens and vectors, for the catalogue.
---

# Words

```tokens
sentences: ["Lily wanted to play with her", "Mommy said the sandcastle was beautiful."]
id: tk
```

GPT-2 reads {{ tk.count(gpt2) }} tokens, the tiny model {{ tk.count(tiny) }}: {{ tk.split(gpt2, Lily) }}.

```merges
word: " playing"
id: mg
```

After {{ mg.steps }} merges the word is {{ mg.result }}.

```embedding
model: tiny
sentence: "Lily wanted to play with her"
id: emb
```

The first number of ·her is {{ emb.value(her, 1) }}.

```neighbours
model: tiny
words: [her, Lily]
pairs: [[her, she]]
id: nb
```

Their cosine is {{ nb.cosine(her, she) }}.
"""


def bad(old: str, new: str) -> str:
    assert GOOD.count(old) == 1, old
    return GOOD.replace(old, new)


def case(id: str, lesson: str | None, expected: str, at: str | None = None, **kw) -> Case:
    c = Case(id, None, expected, at=at, file=FILE, **kw)
    c.files = {**(c.files or {}), **({FILE: lesson} if lesson is not None else {})}
    return c


def vectors_text(**changes) -> str:
    doc = synthetic_vectors()
    doc.update(changes)
    return json.dumps(doc)


BEN = "Ben wanted to play with her"


def vectors_swapped(what: str) -> str:
    """Two sentences (or the words her and she) whose entries name each other: the figure asked
    for one would show the other's vectors."""
    doc = synthetic_vectors(sentences=("Lily wanted to play with her", BEN))
    if what == "sentences":
        a, b = doc["sentences"][:2]
        a["text"], b["text"] = b["text"], a["text"]
    elif what == "words":
        a, b = doc["words"][:2]
        a["word"], b["word"] = b["word"], a["word"]
    else:  # the first sentence listed a second time, with other numbers
        doc["sentences"].append({**doc["sentences"][1], "text": doc["sentences"][0]["text"], "tokens": doc["sentences"][0]["tokens"]})
    return json.dumps(doc)


VECTORS = "traces/tiny/vectors.json"
CASES = [
    case("tokens-unknown-model", bad('id: tk\n', 'models: [tiny, gpt3]\nid: tk\n'),
         "tokens: unknown model 'gpt3'. Fix: use one of: gpt2, tiny, tiny-rope", at="```tokens", option="models"),
    case("tokens-sentence-twice", bad('"Mommy said the sandcastle was beautiful."', '"Lily wanted to play with her"'),
         "tokens: a sentence is listed twice. Fix: list each sentence once", at="```tokens", option="sentences"),
    case("merges-two-words", bad('word: " playing"', 'word: "to play"'),
         "merges: 'word' 'to play' is not one word. Fix: write one word of at most 40 characters, with its leading space if it has one: `word: \" playing\"`", at="```merges", option="word"),
    case("merges-cut-before-bpe", bad('word: " playing"', 'word: "play!"'),
         "merges: the tokenizer cuts 'play!' into 2 pieces before BPE: 'play', '!'. Fix: give one word, with its leading space if it has one: `word: \" playing\"`", at="```merges"),
    case("embedding-gpt2", bad("model: tiny\nsentence", "model: gpt2\nsentence"),
         "embedding: only the tiny model's vectors are frozen in this course, not gpt2's (its weights are not here). Fix: write `model: tiny`", at="```embedding"),
    case("ref-unknown-tokenizer", bad("{{ tk.count(gpt2) }}", "{{ tk.count(gpt3) }}"),
         "reference {{ tk.count(gpt3) }}: the figure shows no model 'gpt3' (its models: tiny, gpt2). Fix: use one of: tiny, gpt2", at="tk.count(gpt3)"),
    case("ref-word-not-in-sentence", bad("{{ tk.split(gpt2, Lily) }}", "{{ tk.split(gpt2, Ben) }}"),
         "reference {{ tk.split(gpt2, Ben) }}: no word 'Ben' in 'Lily wanted to play with her' (its words: Lily, wanted, to, play, with, her). Fix: name a whole word of the sentence", at="tk.split(gpt2, Ben)"),
    case("ref-merge-step-out-of-range", bad("{{ mg.steps }}", "{{ mg.pair(8) }}"),
         "reference {{ mg.pair(8) }}: step '8' is not a number from 1 to 7. Fix: write a whole number from 1 to 7", at="mg.pair(8)"),
    case("ref-dimension-from-zero", bad("{{ emb.value(her, 1) }}", "{{ emb.value(her, 0) }}"),
         "reference {{ emb.value(her, 0) }}: dimension '0' is not a number from 1 to 4. Fix: count dimensions from 1", at="emb.value(her, 0)"),
    case("ref-word-not-in-figure", bad("{{ nb.cosine(her, she) }}", "{{ nb.cosine(her, ball) }}"),
         "reference {{ nb.cosine(her, ball) }}: the figure has no word 'ball' (its words: her, Lily, she). Fix: name one of the figure's words, or add it to the figure", at="nb.cosine(her, ball)"),
    case("vectors-lack-a-word", bad("words: [her, Lily]", "words: [her, Lily, dog]").replace("Their cosine is {{ nb.cosine(her, she) }}.", ""),
         "traces/tiny/vectors.json lacks the word 'dog'; the page shows a pending box. Run `make traces` (the tiny model runs here in seconds).", at="```neighbours", command="strict"),
    case("vectors-truncated", None, "is not valid JSON, perhaps cut short (Unterminated string starting at: line 1 column 2 (char 1)). Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: '{"form'}),
    case("vectors-other-revision", None,
         "was written from model revision retrained-01, but the traces are from synthetic-00. Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: vectors_text(revision="retrained-0123")}),
    case("vectors-short-row", None,
         "layerNorm.weight is not a list of 4 finite numbers within ±1e9. Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: vectors_text(layerNorm={"layer": 0, "weight": [1, 2], "bias": [0, 0, 0, 0], "eps": 1e-5})}),
    case("vectors-sentences-swapped", None,
         f"sentences[0] holds tokens other than those of {BEN!r}. Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: vectors_swapped("sentences")}),
    case("vectors-words-swapped", None,
         "words[0] holds the vector of token 318, not of 'she' (token 355). Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: vectors_swapped("words")}),
    case("vectors-sentence-twice", None,
         "sentences[2] lists 'Lily wanted to play with her' a second time. Fix: run `make traces`: it rewrites vectors.json from the tiny model",
         files={VECTORS: vectors_swapped("twice")}),
]
for c in CASES:
    if c.id.startswith("vectors-") and c.id != "vectors-lack-a-word":
        c.file = VECTORS  # the line names the file, not a lesson line


@pytest.fixture(scope="module")
def good_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalogue12-good")
    base_project(root)
    (root / FILE).write_text(GOOD, encoding="utf-8")
    write_vectors(root / "traces")
    rc, log = build(root, "--strict")
    assert rc == 0, log
    return root


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_a_chapter12_mistake_stops_the_build_with_one_exact_line_and_writes_nothing(c, good_project, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    apply(c, root)
    before = snapshot(root)
    rc, log = build(root, *(["--strict"] if c.command == "strict" else []))
    assert rc != 0, f"the build passed:\n{log}"
    expected = c.line()
    assert expected in error_lines(log), f"expected the line\n  {expected}\nin the build log:\n{log}"
    assert_no_traceback(log)
    assert snapshot(root) == before, "the failed build changed site/, traces/ or content/assets/generated/"
