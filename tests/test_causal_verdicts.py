"""Issue 47: a verdict about a head is printed only where the data backs it under two ways of
removing the head and across the length sweep, and is never typed by hand. Claims are planted
here, in a page's lines and in a circuits.json `robust` block, and the build's one-line error is
what comes back."""

from __future__ import annotations

import numpy as np
import pytest
from causal_helpers import fake_robust

from generator.lessons.claims import check_hand_verdicts
from generator.lessons.errors import LessonError
from generator.lessons.refs import parse_ref
from generator.render import circuit_robust


@pytest.mark.parametrize("lines, line", [
    (["# Title", "", "Without L3H3 the model needs a long time."], 3),
    (["Some text.", "Layer 2, head 3 carries most of", "the preference."], 2),
    (["```ablation", "caption: L2H3", "```", "", "So layer 2,", "head 3 is not needed here."], 6),
])
def test_a_typed_verdict_about_a_head_stops_the_build_at_its_line(lines, line):
    with pytest.raises(LessonError) as e:
        check_hand_verdicts(lines, "content/x.md")
    assert e.value.where == f"content/x.md:{line}" and "typed by hand" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("lines", [
    ["Without L1H4 the model {{ circ.needs(L1H4) }} to copy."],  # the word is the data's
    ["```circuit", "caption: the model needs L1H4", "```"],  # a figure's options are not prose
    ["The model needs its previous-token heads.", "L1H4 is one."],  # no head in the verdict's sentence
    ["Removing `L3H3` needs zeros."],  # code is not a claim
])
def test_verdicts_from_references_and_sentences_without_a_head_pass(lines):
    check_hand_verdicts(lines, "content/x.md")


def _doc(rise):
    return {"robust": {**fake_robust(2, 2, rise), "lengths": [
        {k: (np.asarray(v) if k != "length" else v) for k, v in e.items()} for e in fake_robust(2, 2, rise)["lengths"]]}}


def _ref(body: str, doc) -> str:
    return circuit_robust.ref(parse_ref(body, "content/x.md:7"), doc, 2, 2, "induction")


# head 0: every method agrees it is needed; head 1: only zeros say so; head 2: needed at length 10 only
RISE = {**{(m, 0): 3.0 for m in ("zero", "mean", "indist", "resample")}, ("zero", 1): 3.0}


def test_a_verdict_that_two_methods_share_at_every_length_is_printed():
    doc = _doc(RISE)
    assert _ref("circ.needs(L1H1)", doc) == "needs"
    assert _ref("circ.needs(L2H2)", doc) == "does not need"
    assert _ref("circ.rise(L1H1, resample)", doc) == "3.00 (2.90 to 3.10)"
    assert _ref("circ.rtop(1, zero, 5)", doc).startswith("L1H1 3.00")


def test_a_negative_rise_or_bound_is_written_with_a_true_minus():
    doc = _doc({**RISE, ("resample", 3): 0.01})  # head 3's interval reaches below zero: 0.01 (-0.09 to 0.11)
    assert _ref("circ.rise(L2H2, resample)", doc) == "0.01 (\u22120.09 to 0.11)"


def test_a_verdict_that_rests_on_one_method_asks_for_a_scoped_wording():
    doc = _doc(RISE)
    with pytest.raises(LessonError) as e:
        _ref("circ.needs(L1H2)", doc)
    assert e.value.where == "content/x.md:7" and "zero needs" in str(e.value) and "resample does not need" in str(e.value)
    assert "scope the claim" in e.value.fix
    assert _ref("circ.needs(L1H2, zero, 10)", doc) == "needs"  # scoped: the method and length named
    assert _ref("circ.needs(L1H2, resample)", doc) == "does not need"


def test_a_verdict_that_changes_with_the_length_asks_for_a_scoped_wording():
    doc = _doc(RISE)
    for m in range(4):
        doc["robust"]["lengths"][1]["rise"][m, 2] = [3.0, 2.9, 3.1]
    with pytest.raises(LessonError, match="length 5: zero does not need"):
        _ref("circ.needs(L2H1)", doc)


def test_an_interval_across_the_threshold_gives_no_verdict():
    doc = _doc({("zero", 3): circuit_robust.NEEDS_RISE})
    with pytest.raises(LessonError, match="an interval across"):
        _ref("circ.needs(L2H2, zero)", doc)


ABLATION_PAGE = '''# Verdicts

```ablation
model: tiny
sentence: "Lily wanted to play with"
targets: [her, his]
id: ab
```

Removed with zeros, layer 1, head 4 {{ ab.verdict(L1H4%s) }} the preference for ·her.
'''


def _build(tmp_path, text):
    import shutil

    from conftest import REPO, run_build, write_project

    write_project(tmp_path, {"verdicts.md": text})
    shutil.rmtree(tmp_path / "traces")
    shutil.copytree(REPO / "traces", tmp_path / "traces")
    return run_build(tmp_path)


def test_an_ablation_verdict_that_zero_and_mean_disagree_on_must_be_scoped(tmp_path):
    """After "Lily wanted to play with", removing L1H4 'carries a small part of' the preference
    with zeros and 'works against' it with the mean: unscoped, the build stops at the line."""
    built = _build(tmp_path / "a", ABLATION_PAGE % "")
    assert not built.ok
    line = [ln for ln in built.log.splitlines() if "not the same under every way of removing it" in ln]
    assert line and "content/verdicts.md:10:" in line[0] and "with zero: 'carries a small part of'" in line[0]
    assert "Traceback" not in built.log
    scoped = _build(tmp_path / "b", ABLATION_PAGE % ", zero")
    assert scoped.ok, scoped.log
    assert "layer 1, head 4 carries a small part of the preference" in scoped.html("verdicts.md")
