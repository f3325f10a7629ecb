"""The store answers only what was asked (issue 51, item 1): an index entry that points a sentence
at another sentence's trace file stops the build with one line naming traces/<model>/index.json,
whatever the store read before (an earlier figure on the page, an earlier page, an earlier build in
the same process, `make check`'s cache), for the tiny model and for a GPT-2-shaped store. Through
the real commands (`python -m generator site` and `check`) in a copy of a small project."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from catalogue import BEN, assert_no_traceback, base_project, build, error_lines, snapshot
from conftest import LILY, synthetic_trace, write_traces
from course_builds import run

pytestmark = pytest.mark.slow


def fig(model: str, sentence: str, id: str) -> str:
    return f'```attention\nmodel: {model}\nsentence: "{sentence}"\nlayer: 3\nhead: 3\nid: {id}\n```\n'


LILY_FIG, BEN_FIG = fig("tiny", LILY, "lily"), fig("tiny", BEN, "ben")
BEN_REF = "\nIn Ben's sentence ·her gives {{ ben.weight(her, Ben) }} to Ben.\n"

# (page name -> text), Lily's figure always read first
LAYOUTS = {
    "one-page": {"lesson.md": f"# Two\n\n{LILY_FIG}\n{BEN_FIG}"},
    "one-page-with-a-reference": {"lesson.md": f"# Two\n\n{LILY_FIG}\n{BEN_FIG}{BEN_REF}"},
    "two-pages": {"a.md": f"# Lily\n\n{LILY_FIG}", "b.md": f"# Ben\n\n{BEN_FIG}"},
    "two-pages-with-a-reference": {"a.md": f"# Lily\n\n{LILY_FIG}", "b.md": f"# Ben\n\n{BEN_FIG}{BEN_REF}"},
}


def project(root: Path, pages: dict[str, str]) -> None:
    base_project(root)  # Lily and Ben traced (tiny), the glossary, the course's mkdocs.yml
    (root / "content" / "lesson.md").unlink()
    for name, text in pages.items():
        (root / "content" / name).write_text(text, encoding="utf-8")


def files_of(root: Path, model: str) -> dict[str, str]:
    index = json.loads((root / "traces" / model / "index.json").read_text(encoding="utf-8"))
    return {e["text"]: e["file"] for e in index["traces"]}


def point(root: Path, model: str, moves: dict[str, str], keep_time: bool = False) -> None:
    """Rewrite the model's index so that sentence -> the file of another sentence (same size:
    every file name is 12 hex digits; with keep_time, the same modification time too)."""
    path = root / "traces" / model / "index.json"
    st = path.stat()
    index = json.loads(path.read_text(encoding="utf-8"))
    files = {e["text"]: e["file"] for e in index["traces"]}
    for e in index["traces"]:
        if e["text"] in moves:
            e["file"] = files[moves[e["text"]]]
    data = json.dumps(index, ensure_ascii=False, separators=(",", ":")) + "\n"
    path.write_text(data, encoding="utf-8")
    if keep_time:
        assert path.stat().st_size == st.st_size
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def the_line(log: str, model: str, text: str, file: str) -> str:
    """The one error line naming the index for `text`; it says how to repair the store."""
    head = f"traces/{model}/index.json: lists {file} for {text!r}"
    hits = [line for line in error_lines(log) if line.startswith(head)]
    assert len(hits) == 1, f"expected one line starting\n  {head}\nin the log:\n{log}"
    assert ". Fix: run `make traces`" in hits[0] and "rewrites the index" in hits[0], hits[0]
    assert_no_traceback(log)
    return hits[0]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_an_entry_pointing_at_another_sentences_trace_names_the_index(layout, tmp_path):
    """Was: with Lily's trace read first, Ben's figure showed Lily's numbers, exit 0 (or, with a
    reference, the lesson was blamed for a missing token 'Ben')."""
    project(tmp_path, LAYOUTS[layout])
    files = files_of(tmp_path, "tiny")
    point(tmp_path, "tiny", {BEN: LILY})
    before = snapshot(tmp_path)
    rc, log = build(tmp_path)
    assert rc == 1, log
    the_line(log, "tiny", BEN, files[LILY])
    assert snapshot(tmp_path) == before, "the failed build wrote something"


def test_two_entries_swapped_are_each_the_index_s_mistake(tmp_path):
    project(tmp_path, LAYOUTS["one-page"])
    files = files_of(tmp_path, "tiny")
    point(tmp_path, "tiny", {BEN: LILY, LILY: BEN})
    rc, log = build(tmp_path)
    assert rc == 1, log
    the_line(log, "tiny", LILY, files[BEN])  # the page stops at its first


def test_a_swap_after_a_build_in_the_same_process_is_seen(tmp_path):
    """The store the build keeps for its traces folder (make serve rebuilds in one process) has
    Lily's and Ben's traces in memory; the next build after the swap must not take them from there."""
    project(tmp_path, LAYOUTS["one-page-with-a-reference"])
    rc, log = build(tmp_path)
    assert rc == 0, log
    page = (tmp_path / "site" / "lesson.html").read_text(encoding="utf-8")
    assert "Ben" in page
    files = files_of(tmp_path, "tiny")
    point(tmp_path, "tiny", {BEN: LILY})
    rc, log = build(tmp_path)
    assert rc == 1, log
    the_line(log, "tiny", BEN, files[LILY])
    assert (tmp_path / "site" / "lesson.html").read_text(encoding="utf-8") == page, "the good site was replaced"


def test_make_check_s_cache_does_not_hide_a_swap_that_keeps_the_index_s_size_and_time(tmp_path):
    project(tmp_path, LAYOUTS["two-pages"])
    check = [sys.executable, "-m", "generator", "check"]
    first = run(check, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "build" / ".check-cache.json").is_file()
    files = files_of(tmp_path, "tiny")
    point(tmp_path, "tiny", {BEN: LILY}, keep_time=True)
    again = run(check, cwd=tmp_path)
    assert again.returncode == 1, again.stderr
    the_line(again.stderr, "tiny", BEN, files[LILY])
    site = run([sys.executable, "-m", "generator", "site", "-d", str(tmp_path / "site2")], cwd=tmp_path)
    assert site.returncode == 1, site.stderr
    the_line(site.stdout + site.stderr, "tiny", BEN, files[LILY])
    assert not (tmp_path / "site2").exists()


GPT2_A = "The animal was tired"
GPT2_B = "The street was wide"


def test_a_gpt2_store_is_held_to_the_same(tmp_path):
    pages = {"a.md": f"# One\n\n{fig('gpt2', GPT2_A, 'ga')}", "b.md": f"# Two\n\n{fig('gpt2', GPT2_B, 'gb')}"}
    project(tmp_path, pages)
    write_traces(tmp_path / "traces", [synthetic_trace(GPT2_A, model="gpt2"), synthetic_trace(GPT2_B, model="gpt2", seed=1)])
    rc, log = build(tmp_path)
    assert rc == 0, log
    files = files_of(tmp_path, "gpt2")
    point(tmp_path, "gpt2", {GPT2_B: GPT2_A})
    rc, log = build(tmp_path)
    assert rc == 1, log
    the_line(log, "gpt2", GPT2_B, files[GPT2_A])


def test_a_trace_of_another_revision_under_its_own_key_is_refused(tmp_path):
    """An index whose meta says one revision, listing a file written under another: the file is
    not the trace of that sentence at the index's revision."""
    project(tmp_path, LAYOUTS["one-page"])
    shutil.rmtree(tmp_path / "traces" / "tiny")
    write_traces(tmp_path / "traces", [synthetic_trace(BEN, revision="older-0002")])
    old = files_of(tmp_path, "tiny")[BEN]
    keep = (tmp_path / "traces" / "tiny" / old).read_bytes()
    write_traces(tmp_path / "traces", [synthetic_trace(LILY), synthetic_trace(BEN)])  # the index now lists synthetic-0001's
    (tmp_path / "traces" / "tiny" / old).write_bytes(keep)
    path = tmp_path / "traces" / "tiny" / "index.json"
    index = json.loads(path.read_text(encoding="utf-8"))
    for e in index["traces"]:
        if e["text"] == BEN:
            e["file"] = old
    path.write_text(json.dumps(index), encoding="utf-8")
    rc, log = build(tmp_path)
    assert rc == 1, log
    the_line(log, "tiny", BEN, old)


def test_a_notebook_that_names_a_trace_file_without_loading_it_is_held_to_the_same(tmp_path):
    """A `tokens` figure loads no trace, but its page's notebook names the sentence's trace file
    for its data cell: it named Lily's file for Ben's sentence, exit 0."""
    project(tmp_path, {"lesson.md": '# Tokens\n\n```tokens\nsentences: ["Ben wanted to play with her"]\nid: tk\n```\n'})
    files = files_of(tmp_path, "tiny")
    point(tmp_path, "tiny", {BEN: LILY})
    rc, log = build(tmp_path)
    assert rc == 1, log
    head = f"traces/tiny/index.json: lists {files[LILY]} for {BEN!r}"
    assert sum(head in line for line in error_lines(log)) == 1, log
    assert_no_traceback(log)
