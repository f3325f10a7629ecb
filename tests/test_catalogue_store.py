"""The catalogue's damaged stores and training logs, and what the review found wrong, end to end through `python -m generator site` (tests/catalogue.py)."""

from __future__ import annotations

import json
import os
import re

import pytest

from pathlib import Path
from catalogue import BEN, GOOD, assert_no_traceback, build, error_lines, good_project, project_from, snapshot

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------- a damaged store or training log

ESCAPE = f"catalogue-escape-{os.getpid()}"


def _trace_path(root: Path, text: str) -> Path:
    from generator.store import TraceStore

    return TraceStore(root / "traces").lookup("tiny", text)


def _edit_json(path: Path, edit) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _scale_weights(factor: float):
    """Layer 3, head 3's weights times `factor` (plain rows, or an encoded array's scale)."""
    def edit(doc):
        w = doc["layers"][2]["heads"][2]["weights"]
        if isinstance(w, dict):
            w["scale"] = w["scale"] * factor
        else:
            doc["layers"][2]["heads"][2]["weights"] = [[None if x is None else x * factor for x in row] for row in w]
    return edit


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _store_line(root: Path, load) -> str:
    """The store's own one line for what it finds damaged (the message is the store's; the
    catalogue checks that the site build shows it, alone, and writes nothing)."""
    from generator.store import DamagedFile

    cwd = os.getcwd()
    os.chdir(root)
    try:
        load()
    except DamagedFile as exc:
        return str(exc)
    finally:
        os.chdir(cwd)
    raise AssertionError("the store took the damaged file")


def _load_lily():
    from generator.store import TraceStore

    TraceStore("traces").load("tiny", LILY_TEXT)


LILY_TEXT = "Lily wanted to play with her"
BOARD = "\n```scoreboard\nmodel: tiny\nid: board\n```\n"


def key_escapes(root: Path) -> tuple[str, str]:
    _edit_json(_trace_path(root, LILY_TEXT), lambda d: d.__setitem__("key", "../" * 8 + "tmp/" + ESCAPE))
    return _store_line(root, _load_lily), "which is not its file name"


def index_points_elsewhere(root: Path) -> tuple[str, str]:
    ben = _trace_path(root, BEN).name
    _edit_json(root / "traces" / "tiny" / "index.json",
               lambda d: [e.__setitem__("file", ben) for e in d["traces"] if e["text"] == LILY_TEXT])
    return _store_line(root, _load_lily), "index.json: lists "


def index_lists_a_sentence_twice(root: Path) -> tuple[str, str]:
    """Two entries for Lily (the second pointing at Ben's file): which one a figure got would
    depend on their order."""
    ben = _trace_path(root, BEN).name
    _edit_json(root / "traces" / "tiny" / "index.json",
               lambda d: d["traces"].append({"text": LILY_TEXT, "file": ben, "nTokens": 7}))
    return _store_line(root, _load_lily), "index.json: entries "


def listed_trace_gone(root: Path) -> tuple[str, str]:
    """A trace file the index lists, deleted: the index is named, not the lesson's reference."""
    _trace_path(root, LILY_TEXT).unlink()
    return _store_line(root, _load_lily), "index.json: lists "


def truncated_trace(root: Path) -> tuple[str, str]:
    _truncate(_trace_path(root, LILY_TEXT))
    return _store_line(root, _load_lily), "is not valid JSON"


def truncated_index(root: Path) -> tuple[str, str]:
    _truncate(root / "traces" / "tiny" / "index.json")
    return _store_line(root, _load_lily), "index.json: is not valid JSON"


def truncated_heads(root: Path) -> tuple[str, str]:
    from generator import heads

    (root / "content" / "lesson.md").write_text(GOOD + BOARD, encoding="utf-8")
    (root / "traces" / "tiny" / "heads.json").write_text('{"formatVersion": 1, "model": "tiny", "revision": "x", "exampl', encoding="utf-8")
    return _store_line(root, lambda: heads.example_requests("traces", "tiny")), "heads.json: is not valid JSON"


def _heads_json(root: Path, edit) -> Path:
    """A heads.json that the store takes (the model's shape and revision, every kind defined, scored
    on and exemplified by the Lily trace), then `edit`ed; the lesson gets a scoreboard."""
    from generator import heads
    from generator.registry import DEFINITIONS, KINDS
    from generator.store import TraceStore

    meta = TraceStore(root / "traces").model_meta("tiny")
    L, H, key = meta["nLayer"], meta["nHead"], _trace_path(root, LILY_TEXT).stem
    doc = {"formatVersion": heads.FORMAT_VERSION, "model": "tiny", "revision": meta["revision"], "standIn": False,
           "nLayer": L, "nHead": H, "scoringSet": heads.SCORING_SET_VERSION, "kinds": list(KINDS), "definitions": dict(DEFINITIONS),
           "scores": {k: [[0.5] * H for _ in range(L)] for k in KINDS}, "chance": {k: 0.1 for k in KINDS},
           "examples": {k: {"model": "tiny", "text": LILY_TEXT, "ids": None, "key": key} for k in KINDS},
           "scoredOn": {k: {"traces": [key], "queries": 4} for k in KINDS}}
    (root / "content" / "lesson.md").write_text(GOOD + BOARD, encoding="utf-8")
    path = root / "traces" / "tiny" / "heads.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        heads.example_requests("traces", "tiny")  # as written, the store takes it
    finally:
        os.chdir(cwd)
    _edit_json(path, edit)
    return path


def heads_damaged(edit, says: str):
    """heads.json with `edit`: passed `check` and crashed the notebooks' step with a KeyError (or
    blamed a lesson line) before; now one line naming traces/tiny/heads.json."""
    def damage(root: Path) -> tuple[str, str]:
        from generator import heads

        _heads_json(root, edit)
        line = _store_line(root, lambda: heads.example_requests("traces", "tiny"))
        assert line.startswith("traces/tiny/heads.json: ") and says in line, line
        return line, "traces/tiny/heads.json: "
    return damage


def _one_layer_short(doc) -> None:
    doc["nLayer"] -= 1
    for kind in doc["scores"]:
        doc["scores"][kind] = doc["scores"][kind][:-1]


def trace_damaged(edit, says: str):
    """The Lily trace with `edit`: an internal error at a lesson line, or silently accepted, before."""
    def damage(root: Path) -> tuple[str, str]:
        path = _trace_path(root, LILY_TEXT)
        _edit_json(path, edit)
        line = _store_line(root, _load_lily)
        assert line.startswith(f"traces/tiny/{path.name}: ") and says in line, line
        return line, f"traces/tiny/{path.name}: "
    return damage


def weight_of(factor: float):
    def damage(root: Path) -> tuple[str, str]:
        _edit_json(_trace_path(root, LILY_TEXT), _scale_weights(factor))
        return _store_line(root, _load_lily), "layer 2 head 2 "  # a weight outside [0, 1] (or, encoded, its scale)
    return damage


def guess_of(prob: float):
    """The first guess after ·her with probability `prob`: a page would print "·toys 2.50"."""
    def damage(root: Path) -> tuple[str, str]:
        _edit_json(_trace_path(root, LILY_TEXT), lambda d: d["predictions"][-1][0].__setitem__("prob", prob))
        return _store_line(root, _load_lily), "prediction row "
    return damage


def training_log_not_json(root: Path) -> tuple[str, str]:
    (root / "no-training-log.json").write_text('{"steps": [{"step": 1, "loss": 2.5}', encoding="utf-8")
    return ("no-training-log.json: is not valid JSON, perhaps cut short (Expecting ',' delimiter at line 1, column 36). "
            "Fix: restore the file from git, or run `make tiny-model` to write it again"), "no-training-log.json"


def training_log_not_an_object(root: Path) -> tuple[str, str]:
    (root / "no-training-log.json").write_text("[1, 2]", encoding="utf-8")
    return ("no-training-log.json: is not a training log (a JSON object), but a JSON list. "
            "Fix: restore the file from git, or run `make tiny-model` to write it again"), "no-training-log.json"


def training_log_dedup_not_a_number(root: Path) -> tuple[str, str]:
    """A held-out figure written by `make evaluate-tiny` (tests/test_held_out_dedup.py has the rest)."""
    (root / "no-training-log.json").write_text('{"steps": [], "heldOutDedup": {"bitsPerChar": "1.00"}}', encoding="utf-8")
    return ("no-training-log.json: 'heldOutDedup.bitsPerChar' is \"1.00\", not a positive number. "
            "Fix: restore the file from git, or run `make evaluate-tiny` to measure it again"), "no-training-log.json"


STORE_CASES = {
    "trace-key-escapes-the-store": key_escapes,
    "index-points-at-another-sentence": index_points_elsewhere,
    "index-lists-a-sentence-twice": index_lists_a_sentence_twice,
    "truncated-trace": truncated_trace,
    "listed-trace-gone": listed_trace_gone,
    "truncated-index": truncated_index,
    "truncated-heads-json": truncated_heads,
    "weight-of-5": weight_of(5.0),
    "weight-of-minus-4": weight_of(-4.0),
    "guess-probability-over-1": guess_of(2.5),
    "guess-probability-below-0": guess_of(-0.7),
    "heads-without-a-definition": heads_damaged(lambda d: d["definitions"].pop("previous-token"), "has no definition of previous-token"),
    "heads-without-scored-on": heads_damaged(lambda d: d.pop("scoredOn"), "has no scoredOn"),
    "heads-definitions-not-an-object": heads_damaged(lambda d: d.__setitem__("definitions", 5), "has no definitions"),
    "heads-one-layer-short": heads_damaged(_one_layer_short, "layers ×"),
    "heads-example-of-another-trace": heads_damaged(lambda d: d["examples"]["sink"].__setitem__("text", BEN), "the sink example names the trace"),
    "heads-example-ids-an-object": heads_damaged(lambda d: d["examples"]["sink"].__setitem__("ids", {}), "the sink example is not"),
    "token-without-spoken": trace_damaged(lambda d: d["tokens"][3].pop("spoken"), "token 3 is not"),
    "token-id-negative": trace_damaged(lambda d: d["tokens"][3].__setitem__("id", -7), "token 3 is not"),
    "token-id-past-the-vocabulary": trace_damaged(lambda d: d["tokens"][3].__setitem__("id", 10**30), "token 3 is not"),
    "guess-without-display": trace_damaged(lambda d: d["predictions"][0][0].pop("display"), "prediction row 0 is not"),
    "guess-display-a-list": trace_damaged(lambda d: d["predictions"][0][0].__setitem__("display", [1]), "prediction row 0 is not"),
    "training-log-not-json": training_log_not_json,
    "training-log-not-an-object": training_log_not_an_object,
    "training-log-dedup-not-a-number": training_log_dedup_not_a_number,
}


@pytest.mark.parametrize("damage", list(STORE_CASES.values()), ids=list(STORE_CASES))
def test_a_damaged_store_or_training_log_stops_the_build_with_one_line_naming_the_file(damage, good_project, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    expected, names = damage(root)
    assert names in expected, expected
    assert "\n" not in expected and ". Fix: " in expected
    before = snapshot(root)
    rc, log = build(root)
    assert rc != 0, f"the build passed:\n{log}"
    assert expected in error_lines(log), f"expected the line\n  {expected}\nin the build log:\n{log}"
    assert_no_traceback(log)
    assert snapshot(root) == before, "the failed build changed site/, traces/ or content/assets/generated/"
    for escaped in (Path("/tmp") / f"{ESCAPE}.json", Path("/tmp") / f"{ESCAPE}.js"):
        assert not escaped.exists(), f"the build wrote {escaped}, outside the project"


ACCEPTED = GOOD + """
```softmax
scores: [2, 1, 0]
labels: [2, 1, 0]
id: numbered
```

Label one: {{ numbered.weight(1) }}; position one: {{ numbered.weight(#1) }}.

```softmax
scores: [800, 1000, 0]
id: big
```

Total: {{ big.total }}; e to the 1000: {{ big.exp(2) }}; e to the 800: {{ big.exp(a) }}.

```stepper
tokens: [she, ran, she]
query: [[0, 1e3], [0, 1], [1.0e3, 0]]
key: [[1, 0], [0, 1], [1, 1]]
value: [[1, 0], [0, 1], [0.5, 0.5]]
id: rep
```

Focus output: {{ rep.out(1) }}.
"""


def test_what_the_review_found_wrong_renders_as_documented(good_project, tmp_path):
    """Outputs that were once silently wrong, now right: a softmax label is looked up as a label
    (`labels: [2, 1, 0]`: weight(1) is the score labelled 1, #1 the first); e^x and the total past
    a float's range are written in scientific notation, not inf or a traceback; `1e3`/`1.0e3` in a
    stepper are numbers; a stepper without `focus` follows its last token, not the first match."""
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    (root / "content" / "lesson.md").write_text(ACCEPTED, encoding="utf-8")
    rc, log = build(root, "--strict")
    assert rc == 0, log
    assert_no_traceback(log)
    page = re.sub(r"<[^>]+>", "", (root / "site" / "lesson.html").read_text(encoding="utf-8"))
    assert "Label one: 0.245; position one: 0.665." in page
    assert "Total: 1.97e+434; e to the 1000: 1.97e+434; e to the 800: 2.73e+347." in page
    assert "Focus output: 0.75." in page  # the last ·she (query [1000, 0]) mixes Lily's and she's values
