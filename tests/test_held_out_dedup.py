"""Held-out quality without near-copies of training stories: the 8-word
de-duplication of generator/model/training.py, `python -m generator evaluate-tiny` (which writes
`heldOutDedup` and `validationSample` into training_log.json, the same bytes as a retrain), the
checks made when the log is read, and the `{{ model.tiny.training.* }}` references that quote them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import training_log_doc
from generator import render
from generator.model import tiny_measures, training
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.markdown import course
from generator.markdown.build_errors import CourseBuildError
from generator.render.context import Ctx
from generator.render.ref_common import PENDING_REF

REPO = Path(__file__).resolve().parents[1]
WHERE = "content/page.md:20"
TRAIN = "Once upon a time, the quick brown fox jumped over the lazy dog near a big red barn."


# ---------------------------------------------------------------- the de-duplication


def test_words_are_lowercased_and_cut_at_every_character_that_is_not_a_letter_or_digit():
    assert tiny_measures.words("Lily's RED ball—said Ben_2 (x3).") == ["lily", "s", "red", "ball", "said", "ben", "2", "x3"]
    assert tiny_measures.ngram_hashes("one two three", 8) == set()  # fewer words than the rule: no runs
    a, b = tiny_measures.ngram_hashes("A b c d e f g h i"), tiny_measures.ngram_hashes("a, B. c d e f g h I!")
    assert a == b and len(a) == 2  # two runs of 8 in 9 words, the same whatever the case and punctuation


def test_a_held_out_story_sharing_8_words_in_a_row_is_dropped_one_sharing_only_7_is_kept():
    eight = "Ben said: quick brown fox jumped over the lazy dog, and went home."  # 8 shared, cut differently
    seven = "Ben saw the quick brown fox jumped over the cat and went home."  # "the quick ... over the": 7
    scattered = "The lazy dog and the quick brown fox jumped near a big blue barn."  # many shared words, no 8 in a row
    short = "The quick brown fox."
    held = [eight, seven, scattered, short]
    # what the made-up stories share, so that the test means what it says
    assert tiny_measures.ngram_hashes(seven, 7) & tiny_measures.ngram_hashes(TRAIN, 7)
    assert not tiny_measures.ngram_hashes(seven, 8) & tiny_measures.ngram_hashes(TRAIN, 8)
    assert len(tiny_measures.ngram_hashes(eight, 8) & tiny_measures.ngram_hashes(TRAIN, 8)) == 1
    assert tiny_measures.dedup_held_out([TRAIN], held) == [seven, scattered, short]
    assert tiny_measures.dedup_held_out([TRAIN], held, n=7) == [scattered, short]  # the rule's length is n
    assert tiny_measures.dedup_held_out(["Nothing alike here at all, not one bit of it."], held) == held
    assert tiny_measures.dedup_held_out([TRAIN, eight], [seven]) == [seven]  # any training story counts


# ---------------------------------------------------------------- the measurement and evaluate-tiny


def corpus_stories() -> list[str]:
    """60 made-up stories of 16 random words from a small vocabulary; every third one repeats 9
    words of the one before it (a near-copy, which the split may put on either side)."""
    import random

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)] + ["Lily", "Ben", "ball", "park", "happy", "sad"]
    stories = []
    for i in range(60):
        w = [rng.choice(vocab) for _ in range(16)]
        if i % 3 == 2:
            w[3:12] = stories[-1].rstrip(".").split()[2:11]
        stories.append(" ".join(w) + ".")
    return stories


def tiny_config() -> training.TrainConfig:
    return training.TrainConfig(vocab_size=4096, n_layer=1, n_head=2, n_embd=16, n_positions=128, val_fraction=0.5,
                                batch_tokens=256, eval_batches=3, steps=3, warmup=1, eval_every=1, scores_every=3,
                                window_schedule=((0, 32),), threads=1)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 3-step training run of a 1 × 2 × 16 model on two made-up story files, as `make tiny-model`
    runs it: the files, the output folder and the log it wrote."""
    pytest.importorskip("torch")
    root = tmp_path_factory.mktemp("tiny-run")
    stories = corpus_stories()
    files = [root / "a.txt", root / "b.txt"]
    for f, part in zip(files, (stories[:24], stories[24:])):
        f.write_text(f"\n{training.EOT}\n".join(part) + "\n", encoding="utf-8")
    read, source = training.read_corpora(files)
    assert read == stories
    out = root / "model"
    doc = training.train(tiny_config(), read, out, source, run_dir=None, say=lambda *a: None)
    return files, out, doc


def test_the_dedup_figure_is_bits_per_character_over_the_kept_stories_alone(tiny_run):
    from tokenizers import Tokenizer
    from transformers import GPT2LMHeadModel

    files, out, doc = tiny_run
    cfg = tiny_config()
    train, held = training.split_stories(training.read_corpora(files)[0], cfg)
    kept = tiny_measures.dedup_held_out(train, held)
    assert 0 < len(kept) < len(held), "the made-up corpus should put some near-copies among the held-out stories"
    model = GPT2LMHeadModel.from_pretrained(str(out), attn_implementation="sdpa")
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    want = tiny_measures.bits_per_character(model, tok, kept, cfg.n_positions)
    assert doc["heldOutDedup"] == want | {"heldOutStories": len(held), "ngram": 8, "rule": tiny_measures.DEDUP_RULE.format(n=8)}
    assert doc["heldOutDedup"]["bitsPerChar"] != doc["heldOut"]["bitsPerChar"]  # other stories, another figure
    assert doc["validationSample"] == {"batches": 3, "windows": 3 * (256 // 128), "windowTokens": 128, "tokens": 3 * 256}
    keys = list(doc)
    assert keys[keys.index("heldOut") + 1: keys.index("heldOut") + 3] == ["heldOutDedup", "validationSample"]


def test_evaluate_tiny_writes_what_a_retrain_writes_and_the_same_bytes_every_time(tiny_run, tmp_path):
    from generator import cli

    files, out, doc = tiny_run
    trained = (out / "training_log.json").read_bytes()
    assert trained == training.log_text(doc).encode()
    # a log from before the de-duplication: evaluate-tiny adds the two sections back, in their place
    older = {k: v for k, v in doc.items() if k not in ("heldOutDedup", "validationSample")}
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    for f in out.iterdir():
        (model_dir / f.name).write_bytes(f.read_bytes())
    (model_dir / "training_log.json").write_text(training.log_text(older), encoding="utf-8")
    args = ["evaluate-tiny", "--model-dir", str(model_dir)] + [a for f in files for a in ("--corpus", str(f))]
    assert cli.main(args) == 0
    assert (model_dir / "training_log.json").read_bytes() == trained
    assert cli.main(args) == 0
    assert (model_dir / "training_log.json").read_bytes() == trained
    # other story files than the log's: no figure from another split
    other = tmp_path / "other.txt"
    other.write_text(files[0].read_text(encoding="utf-8").replace("w1 ", "w2 "), encoding="utf-8")
    assert cli.main(["evaluate-tiny", "--model-dir", str(model_dir), "--corpus", str(other), "--corpus", str(files[1])]) == 1
    assert (model_dir / "training_log.json").read_bytes() == trained


# ---------------------------------------------------------------- checked when the log is read


def good_log() -> dict:
    return training_log_doc() | {
        "heldOut": {"bitsPerChar": 0.7899, "natsPerToken": 2.168, "stories": 851, "chars": 631382, "tokens": 159464},
        "heldOutDedup": {"bitsPerChar": 1.0022, "natsPerToken": 2.771, "stories": 1068, "chars": 40060, "tokens": 10043,
                         "heldOutStories": 1851, "ngram": 8, "rule": "no 8 words in a row"},
        "validationSample": {"batches": 8, "windows": 128, "windowTokens": 256, "tokens": 32768},
    }


def damaged(section: str, key: str, value) -> dict:
    log = good_log()
    if key is None:
        log[section] = value
    elif value is KeyError:
        del log[section][key]
    else:
        log[section][key] = value
    return log


EVALUATE = "restore the file from git, or run `make evaluate-tiny` to measure it again"
RETRAIN = "restore the file from git, or run `make tiny-model` to write it again"
DAMAGES = {
    "dedup-bits-a-string": (damaged("heldOutDedup", "bitsPerChar", "1.00"), "'heldOutDedup.bitsPerChar' is \"1.00\", not a positive number", EVALUATE),
    "dedup-bits-nan": (damaged("heldOutDedup", "bitsPerChar", float("nan")), "'heldOutDedup.bitsPerChar' is NaN, not a positive number", EVALUATE),
    "dedup-nats-negative": (damaged("heldOutDedup", "natsPerToken", -2.7), "'heldOutDedup.natsPerToken' is -2.7, not a positive number", EVALUATE),
    "dedup-stories-a-fraction": (damaged("heldOutDedup", "stories", 68.5), "'heldOutDedup.stories' is 68.5, not a whole number from 1", EVALUATE),
    "dedup-stories-true": (damaged("heldOutDedup", "stories", True), "'heldOutDedup.stories' is true, not a whole number from 1", EVALUATE),
    "dedup-ngram-missing": (damaged("heldOutDedup", "ngram", KeyError), "'heldOutDedup' has no 'ngram'", EVALUATE),
    "dedup-more-than-held-out": (damaged("heldOutDedup", "stories", 2000), "'heldOutDedup.stories' (2000) is more than the 1851 held-out stories it was drawn from", EVALUATE),
    "dedup-a-list": (damaged("heldOutDedup", None, [1.0]), "'heldOutDedup' is a JSON list, not an object of numbers", EVALUATE),
    "sample-tokens-off": (damaged("validationSample", "tokens", 32000), "'validationSample.tokens' (32000) is not windows × windowTokens (128 × 256)", EVALUATE),
    "sample-windows-zero": (damaged("validationSample", "windows", 0), "'validationSample.windows' is 0, not a whole number from 1", EVALUATE),
    "held-out-bits-a-string": (damaged("heldOut", "bitsPerChar", "x"), "'heldOut.bitsPerChar' is \"x\", not a positive number", RETRAIN),
}


@pytest.mark.parametrize("case", list(DAMAGES), ids=list(DAMAGES))
def test_a_damaged_held_out_figure_is_one_line_naming_the_file_and_the_field(case, tmp_path):
    log, problem, fix = DAMAGES[case]
    path = tmp_path / "training_log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(CourseBuildError) as caught:
        course.read_training_log(path)
    line = str(caught.value)
    assert line == f"{caught.value.where}: {problem}. Fix: {fix}" and caught.value.where.endswith("training_log.json")
    assert "\n" not in line


def test_good_logs_pass_the_checks(tmp_path):
    path = tmp_path / "training_log.json"
    for log in (good_log(), training_log_doc()):  # the second lacks the new sections, as older logs do
        path.write_text(json.dumps(log), encoding="utf-8")
        assert course.read_training_log(path) == log
    committed = course.read_training_log(REPO / "generator" / "tiny_model" / "training_log.json")
    assert committed["heldOutDedup"]["stories"] < committed["heldOut"]["stories"]


# ---------------------------------------------------------------- the references


def ref(text: str, ctx: Ctx) -> str:
    return render.render_ref(refs.parse_ref(text, WHERE), ctx)


NEW_FIELDS = ("bitsPerCharDedup", "natsPerTokenDedup", "dedupStories", "dedupNgram", "validationWindows", "validationTokens")


def test_the_new_references_give_the_logged_numbers():
    ctx = Ctx(store=None, page="content/page.md", training_log=good_log())
    got = {name: ref(f"model.tiny.training.{name}", ctx) for name in NEW_FIELDS}
    assert got == {"bitsPerCharDedup": "1.00", "natsPerTokenDedup": "2.77", "dedupStories": "1,068", "dedupNgram": "8",
                   "validationWindows": "128", "validationTokens": "32,768"}
    assert ref("model.tiny.training.bitsPerChar", ctx) == "0.79"  # over all held-out stories, as before


def test_the_new_references_are_pending_without_a_log_and_fail_on_an_older_log():
    missing = Ctx(store=None, page="content/page.md", training_log=None)
    for name in NEW_FIELDS:
        assert ref(f"model.tiny.training.{name}", missing) == PENDING_REF
    with pytest.raises(LessonError, match="unknown training field 'bitsPerCharDedups'"):
        ref("model.tiny.training.bitsPerCharDedups", missing)
    older = Ctx(store=None, page="content/page.md", training_log=training_log_doc())
    with pytest.raises(LessonError, match="the training log has no field 'dedupStories'"):
        ref("model.tiny.training.dedupStories", older)


def test_the_training_page_gives_both_figures_from_the_committed_log(tmp_path):
    """content/training.md built with the committed log: both bits-per-character figures, how many
    stories each was measured on, and what the chart's validation points were measured on."""
    log = json.loads((REPO / "generator" / "tiny_model" / "training_log.json").read_text(encoding="utf-8"))
    proc = subprocess.run([sys.executable, "-m", "generator", "site", "--no-downloads", "-d", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (tmp_path / "site" / "training.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)).split())
    held, dedup, sample = log["heldOut"], log["heldOutDedup"], log["validationSample"]
    assert f"every one of the {held['stories']:,} held-back stories" in text
    assert f"it needs {held['bitsPerChar']:.2f} bits per character" in text
    assert f"only the {dedup['stories']:,} held-back stories that share no {dedup['ngram']} words in a row" in text
    assert f"{dedup['bitsPerChar']:.2f} bits per character" in text
    assert f"the same {sample['windows']:,} full-length windows" in text and f"({sample['tokens']:,} tokens)" in text


def test_the_log_is_read_once_until_it_changes(tmp_path, monkeypatch):
    """Every page's state asks for the log: one read per process while the file stays the same;
    an edit (even one of the same size) or a damage is seen on the next read."""
    from generator.render import training_figure

    path = tmp_path / "training_log.json"
    log = good_log()
    path.write_text(json.dumps(log), encoding="utf-8")
    reads = []
    real = training_figure.parse_log_file
    monkeypatch.setattr(training_figure, "parse_log_file", lambda p: reads.append(p) or real(p))
    assert course.read_training_log(path) == log and course.read_training_log(path) == log and len(reads) == 1
    edited = json.dumps(log).replace('"stories": ', '"stories":', 1)
    path.write_text(edited + " ", encoding="utf-8")  # the same size, a new mtime
    os.utime(path, ns=(1, 1))
    assert course.read_training_log(path) == log and len(reads) == 2
    path.write_text(json.dumps(log)[:30], encoding="utf-8")
    with pytest.raises(CourseBuildError, match="not valid JSON"):
        course.read_training_log(path)
