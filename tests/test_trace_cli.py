"""`python -m generator traces`: requests in, traces out, one-line errors, exit statuses."""

from __future__ import annotations

import io
import types

import pytest

pytest.importorskip("torch")

from generator.model import load as models, trace_run  # noqa: E402
from generator import heads  # noqa: E402
from generator.cli import main  # noqa: E402
from generator.store import TraceRequest, TraceStore  # noqa: E402
from trace_helpers import random_tiny  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    return random_tiny(seed=4)


def loader_for(tiny):
    def load(name, gpt2_path=None, stand_in=False):
        if name == "tiny":
            return tiny
        raise models.ModelUnavailable("gpt2: openai-community/gpt2@607a30d not in the HF cache and the hub is unreachable")

    return load


def items(*pairs):
    return [trace_run.Item(TraceRequest(m, s), f"content/lesson.md:{n}") for n, (m, s) in enumerate(pairs, 1)]


def run(store, its, tiny, **kw):
    out, err = io.StringIO(), io.StringIO()
    kw.setdefault("scoring", "small")  # the causal files' volume (the robust test) is not what these tests are about
    code = trace_run.run_traces(kw.pop("models", ["tiny", "gpt2"]), store, its, loader=loader_for(tiny),
                                progress=False, out=out, err=err, **kw)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def no_scoring_set(monkeypatch):
    # The scoring set is heads' business (tests/test_heads.py); here only the lessons' requests count.
    fake = types.SimpleNamespace(scoring_requests=lambda name, meta, **size: [], write_scores=lambda store, model: None,
                                 scoring_size=lambda name: {})
    monkeypatch.setattr(trace_run, "heads", fake)


def test_traces_tiny_and_reports_missing_gpt2(tmp_path, tiny):
    store = TraceStore(tmp_path)
    its = items(("tiny", "Lily wanted to play"), ("tiny", "Ben wanted to play"), ("gpt2", "Lily wanted to play"))
    code, out, err = run(store, its, tiny)
    assert code == 0
    assert [e["text"] for e in store.entries("tiny")] == ["Ben wanted to play", "Lily wanted to play"]
    assert "tiny@test-random: 2 traced, 0 kept (traced already)" in out
    assert "gpt2: openai-community/gpt2@607a30d not in the HF cache" in err
    assert "missing (model unavailable here):" in err and "gpt2: 1 of 1 traces missing" in err

    code, out, _ = run(store, its, tiny, models=["tiny"])
    assert code == 0 and "0 traced, 2 kept (traced already)" in out
    before = store.lookup("tiny", "Ben wanted to play").stat().st_mtime_ns
    code, out, _ = run(store, its, tiny, models=["tiny"], force=True)
    assert code == 0 and "2 traced, 0 kept (traced already)" in out
    assert store.lookup("tiny", "Ben wanted to play").stat().st_mtime_ns >= before


def test_only_unavailable_model_with_missing_traces_exits_3(tmp_path, tiny):
    code, _, err = run(TraceStore(tmp_path), items(("gpt2", "x")), tiny, models=["gpt2"])
    assert code == 3 and "1 of 1 traces missing" in err


def test_unknown_model_names_file_and_line(tmp_path, tiny):
    its = items(("tiny", "ok"), ("gpt3", "Lily"))
    code, _, err = run(TraceStore(tmp_path), its, tiny)
    assert code == 2
    assert err.strip() == "content/lesson.md:2: unknown model 'gpt3' (known: tiny, gpt2, tiny-rope)"
    assert not (tmp_path / "tiny").exists()  # nothing traced before the content is fixed


def test_too_long_sentence_names_file_and_line(tmp_path, tiny):
    long = "Lily wanted to play " * 200
    code, _, err = run(TraceStore(tmp_path), items(("tiny", "fine"), ("tiny", long)), tiny, models=["tiny"])
    assert code == 2
    line = next(l for l in err.splitlines() if "context" in l)
    assert line.startswith("error: content/lesson.md:2: tiny:") and "tiny's context of 256 tokens" in line
    assert line.endswith(". Fix: shorten the sentence to at most 256 tokens")
    assert not TraceStore(tmp_path).has("tiny", "fine"), "a lesson mistake stops the run before anything is written"


def test_heads_hooks_are_called(tmp_path, tiny, monkeypatch):
    calls = []
    fake = types.SimpleNamespace(
        scoring_requests=lambda name, meta, **size: calls.append(("req", meta["model"])) or [TraceRequest(meta["model"], "score me", (1, 2, 3))],
        write_scores=lambda store, model: calls.append(("write", model, store.has(model, "score me", (1, 2, 3)))),
        scoring_size=lambda name: {},
    )
    monkeypatch.setattr(trace_run, "heads", fake)
    code, _, _ = run(TraceStore(tmp_path), items(("tiny", "a b")), tiny, models=["tiny"])
    assert code == 0 and calls == [("req", "tiny"), ("write", "tiny", True)]


def test_cli_unknown_model_and_stand_in_guard(tmp_path, capsys):
    assert main(["traces", "--models", "nope", "--sentence", "x", "--traces-dir", str(tmp_path)]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err
    assert main(["traces", "--stand-in", "--traces-dir", str(trace_run.COMMITTED_TRACES), "--sentence", "x"]) == 2
    assert "never go into" in capsys.readouterr().err


def test_small_scoring_set_stays_out_of_the_committed_traces(tmp_path, capsys):
    """`--scoring-set small` (the test suite's GPT-2-shaped runs) measures heads on 3 of the 12
    scoring texts: refused for traces/ before anything is loaded; elsewhere the run asks for those 3."""
    assert main(["traces", "--scoring-set", "small", "--models", "tiny", "--traces-dir", str(trace_run.COMMITTED_TRACES),
                 "--sentence", "x"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "never go into" in err and "Fix:" in err, err
    small = heads.scoring_requests("tiny", None, **heads.scoring_size("small"))
    full = heads.scoring_requests("tiny", None, **heads.scoring_size("full"))
    assert full == heads.scoring_requests("tiny", None) and len(full) == 12
    assert [r.ids for r in small if r.ids] == [r.ids for r in full if r.ids][:2]
    assert [r.text for r in small if not r.ids] == [r.text for r in full if not r.ids][:1]


def test_lesson_mistake_is_one_line(monkeypatch, tmp_path):
    def collect(content_dir):
        raise trace_run.LessonError("content/a.md:7", "unknown model 'gpt3'", "use tiny or gpt2")

    monkeypatch.setattr(trace_run, "pages", types.SimpleNamespace(collect=collect))
    err = io.StringIO()
    assert trace_run.collect_items(tmp_path, [], ["tiny"], err=err) is None
    assert err.getvalue() == "error: content/a.md:7: unknown model 'gpt3'. Fix: use tiny or gpt2\n"
    assert main(["traces", "--content", str(tmp_path), "--traces-dir", str(tmp_path / "t")]) == 2


def test_unused_traces_are_kept_unless_pruning_is_asked(tmp_path, tiny):
    store = TraceStore(tmp_path)
    both = items(("tiny", "Lily wanted to play"), ("tiny", "Ben wanted to play"))
    code, out, _ = run(store, both, tiny, models=["tiny"])
    assert code == 0 and "traced 'Ben wanted to play' (content/lesson.md:2)" in out
    ben = store.lookup("tiny", "Ben wanted to play")
    one = items(("tiny", "Lily wanted to play"))
    code, out, _ = run(store, one, tiny, models=["tiny"])
    assert code == 0 and "1 traces no lesson or scoring text uses are kept; `make traces PRUNE=1` removes them" in out
    assert ben.is_file() and store.has("tiny", "Ben wanted to play")
    code, out, _ = run(store, one, tiny, models=["tiny"], prune=True)
    assert code == 0 and "0 traced, 1 kept (traced already), 1 pruned" in out
    assert "  pruned 'Ben wanted to play'" in out and "pruned 'Lily" not in out
    assert not ben.exists() and not store.has("tiny", "Ben wanted to play") and store.has("tiny", "Lily wanted to play")


def test_a_damaged_trace_is_retraced_and_a_damaged_index_rebuilt(tmp_path, tiny):
    store = TraceStore(tmp_path)
    its = items(("tiny", "Lily wanted to play"), ("tiny", "Ben wanted to play"))
    assert run(store, its, tiny, models=["tiny"])[0] == 0
    lily = store.lookup("tiny", "Lily wanted to play")
    good = lily.read_bytes()
    lily.write_bytes(good[: len(good) // 2])  # cut short, as a killed copy would leave it
    code, out, err = run(store, its, tiny, models=["tiny"])
    assert code == 0 and f"{lily}: damaged; retracing 'Lily wanted to play'" in err and "1 traced, 1 kept (traced already)" in out
    assert lily.read_bytes() == good
    index = store.index_path("tiny")
    index.write_text('{"schemaVersion": 2, "model": "tiny", "tra', encoding="utf-8")
    code, out, err = run(TraceStore(tmp_path), its, tiny, models=["tiny"])
    assert code == 0 and f"{index}: is not valid JSON" in err and "rebuilt it from the 2 trace files that check out" in err
    assert "0 traced, 2 kept (traced already)" in out


def test_missing_content_folder_is_an_error(tmp_path, capsys):
    assert main(["traces", "--content", str(tmp_path / "contnet"), "--traces-dir", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'contnet'}: no such folder of lessons. Fix: ") and err.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_a_gpt2_folder_the_author_pointed_at_that_cannot_load_fails_the_run(tmp_path, tiny, monkeypatch):
    """Without a GPT-2 checkpoint here, gpt2 missing is normal (exit 0 once tiny traced); with
    --gpt2-path or COURSE_GPT2_PATH naming one that cannot be loaded, the run fails."""
    monkeypatch.delenv(models.GPT2_PATH_ENV, raising=False)
    its = items(("tiny", "Lily wanted to play"), ("gpt2", "Lily wanted to play"))
    assert run(TraceStore(tmp_path / "a"), its, tiny)[0] == 0
    code, _, err = run(TraceStore(tmp_path / "b"), its, tiny, gpt2_path=str(tmp_path / "not-a-model"))
    assert code == 3 and "gpt2: 1 of 1 traces missing" in err
    monkeypatch.setenv(models.GPT2_PATH_ENV, str(tmp_path / "not-a-model"))
    assert run(TraceStore(tmp_path / "c"), its, tiny)[0] == 3


@pytest.mark.parametrize("sentence, says", [
    ("Lily <|endoftext|> her", "--sentence: traces: the sentence holds <|endoftext|>, which the models read as their control token"),
    ("   ", "--sentence: traces: the sentence is empty"),
])
def test_a_sentence_from_the_command_line_is_checked_as_a_lessons_is(tmp_path, sentence, says):
    (tmp_path / "content").mkdir()
    err = io.StringIO()
    assert trace_run.collect_items(tmp_path / "content", [sentence], ["tiny"], err=err) is None
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + says), lines
