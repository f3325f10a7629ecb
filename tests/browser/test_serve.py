"""`make serve` (python -m generator serve). Without a browser: the Tracer behind it (which sentences
it traces, the model loaded once, what it says when it cannot trace), the store stamp that stops a
second rebuild, and that the server starts without importing torch. In Chromium, on a throwaway
copy of the course: a saved new sentence becomes a real heatmap without any other command, and a
trace another process writes into traces/ shows without touching the lesson. How fast is
`make bench`'s business (generator/bench/preview.py), not this file's."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from generator.bench.preview import copy_course, figure_shows, serving, write_lesson
from generator.site import serve, serve_changes
from generator.store import TraceStore

REPO = Path(__file__).resolve().parents[2]

NEW = "The little fox found a shiny key under the old bridge"
OTHER = "Ben put the yellow cup on the kitchen table"


@pytest.fixture
def course(tmp_path):
    root = copy_course(tmp_path / "course")
    for s in (NEW, OTHER):  # the test means something only while these are untraced
        assert not TraceStore(root / "traces").has("tiny", s)
    return root


@pytest.mark.browser
@pytest.mark.slow
def test_a_saved_new_sentence_becomes_a_real_heatmap(course, open_served):
    lesson = course / "content" / "new-lesson.md"
    write_lesson(lesson, "Lily wanted to play with her")  # traced: the page starts with a real figure
    with serving(course) as server:
        w = open_served(server)()
        page = w.goto(f"{server.url}/new-lesson.html")
        page.wait_for_function(figure_shows("her"))
        write_lesson(lesson, NEW)  # the author saves; nothing else is run
        page.wait_for_function(figure_shows("bridge"), timeout=120000)
        log = server.log()
        assert TraceStore(course / "traces").has("tiny", NEW)
        assert f"traced {NEW!r} (content/new-lesson.md:3)" in log
        # the heatmap is the new trace's: its x axis is the sentence's tokens
        ticks = page.evaluate("[...document.querySelectorAll('#fig-1 .course-axis-keys text')].map(t => t.textContent)")
        assert any("bridge" in t for t in ticks) and not any("Lily" in t for t in ticks)
        # GPT-2 cannot be loaded here: said once, without a traceback, and its figures stay pending
        assert log.count("its figures stay pending boxes") <= 1 and "Traceback" not in log
        # the page's download link names downloads/, which only `make site` makes: a note says where,
        # and the link is no download in the preview (Chromium cancels a download's 404 silently)
        href = page.get_attribute("a[href*='downloads/']", "href")
        assert page.locator("a[download][href*='downloads/']").count() == 0
        got = w.context.request.get(f"{server.url}/{href.lstrip('./')}")
        assert got.status == 404 and "make site" in got.text() and "build/site/downloads/" in got.text()
        assert w.errors == []


@pytest.mark.browser
@pytest.mark.slow
def test_a_save_of_a_new_sentence_reloads_the_page_once(course, open_served, tmp_path, monkeypatch):
    """Saved while the model is still loading (torch's import held back until the save's build
    has started), a new sentence needs a trace: the page reloads once, with its figure, not once
    for a page of "tracing…" and again when the trace lands."""
    from test_serve_tracing import sitecustomize_gating_torch

    gate = tmp_path / "gate"
    monkeypatch.setenv("PYTHONPATH", str(sitecustomize_gating_torch(tmp_path / "site-hook", gate)))
    lesson = course / "content" / "new-lesson.md"
    write_lesson(lesson, "Lily wanted to play with her")  # traced: the page starts with a real figure
    with serving(course) as server:
        page = open_served(server)().goto(f"{server.url}/new-lesson.html")
        page.wait_for_function(figure_shows("her"))
        page.wait_for_load_state("load")  # the figure may be painted before the page's own load event
        loads = []
        page.on("load", lambda _page: loads.append(page.url))
        start = len(server.log())
        write_lesson(lesson, NEW)
        end = time.monotonic() + 60
        while "Detected file changes" not in server.log()[start:]:
            assert time.monotonic() < end, "the save made no build"
            time.sleep(0.1)
        gate.touch()  # the model loads now, while the save's build runs
        page.wait_for_function(figure_shows("bridge"), timeout=120000)
        page.wait_for_load_state("load")
        log = server.log()[start:]
    assert len(loads) == 1, (loads, log)
    assert log.count("Reloading browsers") == 1 and f"traced {NEW!r}" in log, log


@pytest.mark.browser
@pytest.mark.slow
def test_a_trace_written_by_another_process_shows_without_touching_the_lesson(course, open_served):
    lesson = course / "content" / "other.md"
    write_lesson(lesson, OTHER)
    with serving(course, ("--no-trace",)) as server:
        w = open_served(server)()
        page = w.goto(f"{server.url}/other.html", wait_painted=False)
        assert page.locator("#fig-1[data-pending]").count() == 1
        done = subprocess.run(
            [sys.executable, "-m", "generator", "traces", "--models", "tiny", "--content", str(course / "content"),
             "--traces-dir", str(course / "traces"), "--sentence", OTHER],
            capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        page.wait_for_function(figure_shows("table"), timeout=120000)
        assert "torch" not in server.log()  # --no-trace: the server itself never traced


# ---------------------------------------------------------------- without a browser

LESSON = '''# L

```attention
model: tiny
sentence: "{a}"
layer: 1
head: 1
```

```compare
model: gpt2
sentences: ["{b}", "{a}"]
layer: 1
head: 1
```
'''


def lesson(tmp_path: Path, a: str = "Lily wanted to play", b: str = "The cat sat") -> Path:
    content = tmp_path / "content"
    content.mkdir(exist_ok=True)
    (content / "l.md").write_text(LESSON.format(a=a, b=b), encoding="utf-8")
    return content


def wait_for_a_build(builds: list, timeout: float = 10) -> None:
    """The tracer asks for a build from its own thread, after the job's `done` is set."""
    deadline = time.monotonic() + timeout
    while not builds and time.monotonic() < deadline:
        time.sleep(0.01)


class Said(list):
    def __call__(self, line: str) -> None:
        self.append(line)


def test_the_serving_process_does_not_import_torch():
    code = ("import sys; from generator import cli; from generator.site import serve; from generator.site.serve import Tracer, cannot_load; "
            "cannot_load('tiny'); print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_missing_lists_each_untraced_sentence_once_and_gpt2_is_said_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-cache"))
    monkeypatch.delenv("COURSE_GPT2_PATH", raising=False)
    said = Said()
    tracer = serve.Tracer(tmp_path / "traces", lesson(tmp_path), say=said)
    try:
        first = tracer.missing()
        assert [(r.model, r.text, src) for r, src in first.items()] == [("tiny", "Lily wanted to play", "content/l.md:3")]
        assert tracer.missing() == {}  # queued: not handed out twice
        assert tracer.busy_models() == {"tiny"}
        assert len([s for s in said if s.startswith("gpt2: ")]) == 1 and "pending boxes" in said[0]
        assert tracer.unavailable.keys() == {"gpt2"}
    finally:
        tracer.close()


def test_without_the_models_extra_it_says_once_how_to_turn_tracing_on(tmp_path, monkeypatch):
    # as without the models extra: importing transformers raises ImportError
    monkeypatch.setitem(sys.modules, "transformers", None)
    said = Said()
    tracer = serve.Tracer(tmp_path / "traces", lesson(tmp_path), models=("tiny",), say=said)
    try:
        for _ in range(2):
            job = tracer.submit(tracer.missing())
            assert job.done.wait(30)
        hints = [s for s in said if "tracing on save is off" in s]
        assert len(hints) == 1 and "pip install -e '.[models]'" in hints[0] and "make traces" in hints[0]
        assert tracer.missing() == {}  # nothing is queued for a model that cannot load
        assert not (tmp_path / "traces" / "tiny").exists()
    finally:
        tracer.close()


def test_the_tracer_keeps_the_model_loaded_and_writes_the_trace(tmp_path):
    pytest.importorskip("torch")
    from trace_helpers import random_tiny

    tiny = random_tiny(seed=4)
    loads = []

    def loader(name):
        loads.append(name)
        return tiny

    said = Said()
    traces = tmp_path / "traces"
    content = lesson(tmp_path)
    tracer = serve.Tracer(traces, content, models=("tiny",), loader=loader, say=said)
    builds = []
    tracer.rebuild = lambda: builds.append("build")  # a written trace is the traces/ watch's business
    try:
        stamp = serve.store_stamp(traces)
        job = tracer.submit(tracer.missing())
        assert job.done.wait(120) and [r.text for r, _ in job.timings] == ["Lily wanted to play"]
        assert TraceStore(traces).has("tiny", "Lily wanted to play")
        assert serve.store_stamp(traces) != stamp  # the traces/ watch sees the new index
        assert tracer.warm(job.requests)
        lesson(tmp_path, a="Ben wanted to play")  # the author saves another sentence
        job = tracer.submit(tracer.missing())
        assert job.done.wait(120) and [r.text for r, _ in job.timings] == ["Ben wanted to play"]
        assert loads == ["tiny"]  # loaded once, kept between saves
        assert any("traced 'Ben wanted to play' (content/l.md:3)" in s for s in said)
        assert tracer.missing() == {}
        assert builds == []
    finally:
        tracer.close()


def test_an_untraceable_sentence_is_said_once_with_its_line(tmp_path):
    pytest.importorskip("torch")
    from trace_helpers import random_tiny

    tiny = random_tiny(seed=4)
    said = Said()
    content = lesson(tmp_path, a=" ".join(["play"] * 400))  # longer than the model's context
    tracer = serve.Tracer(tmp_path / "traces", content, models=("tiny",), loader=lambda name: tiny, say=said)
    builds = []
    tracer.rebuild = lambda: builds.append("build")
    try:
        job = tracer.submit(tracer.missing())
        assert job.done.wait(120) and job.timings == []
        assert [s for s in said if s.startswith("content/l.md:3: ")] and "shorten the sentence" in said[-1]
        assert tracer.missing() == {}  # refused: not retried on every rebuild
        # no trace is written, so the traces/ watch sees nothing: the tracer asks for the build that
        # turns the page's "tracing…" into the error, once
        wait_for_a_build(builds)
        assert builds == ["build"] and not tracer.tracing_now()
    finally:
        tracer.close()


def test_a_tracer_that_fails_says_one_line_lives_on_and_asks_for_a_build(tmp_path):
    """A bug in tracing (here the loader) must not kill the preview: one line, no traceback, and
    a build, so the page that said "tracing…" shows the sentence as untraced."""
    pytest.importorskip("torch")  # the tracer imports torch before it calls the loader
    said = Said()

    def loader(name):
        raise RuntimeError("the loader broke\nsecond line")

    tracer = serve.Tracer(tmp_path / "traces", lesson(tmp_path), models=("tiny",), loader=loader, say=said)
    builds = []
    tracer.rebuild = lambda: builds.append("build")
    try:
        job = tracer.submit(tracer.missing())
        assert job.done.wait(60)
        wait_for_a_build(builds)
        assert said == ["tracing on save failed: RuntimeError: the loader broke"]
        assert builds == ["build"] and not tracer.tracing_now()
        # not retried by that build, nor by every one after: it is shown as untraced
        assert tracer.missing() == {} and tracer.take().refused == {("tiny", "Lily wanted to play")}
        assert tracer._thread.is_alive()  # the next save is traced by the same thread
    finally:
        tracer.close()


def test_a_file_changed_during_the_first_build_is_found_when_the_watches_start(tmp_path):
    """MkDocs starts watching after the first build: what changed while it ran (a saved lesson, a
    trace the tracer wrote) is looked for once, by modification time, through the same `ignore`
    as the watches' events; the generated assets are not walked."""
    import os

    content, traces = tmp_path / "content", tmp_path / "traces"
    generated = content / "assets" / "generated"
    for folder in (generated, content / "part", traces / "tiny"):
        folder.mkdir(parents=True)
    files = {name: tmp_path / name for name in ("content/old.md", "content/part/new.md", "content/assets/generated/x.js",
                                                "traces/tiny/index.json", "traces/tiny/abc.json", "mkdocs.yml")}
    for f in files.values():
        f.write_text("x")
    (content / "loop.md").symlink_to(content / "loop.md")  # a link in a loop cannot be stat'd
    (content / "gone.md").symlink_to(tmp_path / "nowhere")
    os.utime(files["content/old.md"], (1_000, 1_000))
    os.utime(files["mkdocs.yml"], (1_000, 1_000))
    since = files["content/old.md"].stat().st_mtime + 1
    asked = []

    def ignore(path: str) -> bool:
        asked.append(Path(path).relative_to(tmp_path).as_posix())
        return Path(path).name == "abc.json"  # as serve's: a trace file alone is not a change

    found = serve_changes.changed_since([content, traces, files["mkdocs.yml"], tmp_path / "gone"], since, ignore, generated)
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == ["content/part/new.md", "traces/tiny/index.json"]
    assert "content/assets/generated/x.js" not in asked and "content/old.md" not in asked
    assert serve_changes.changed_since([files["mkdocs.yml"]], since, ignore, generated) == []


def test_store_stamp_sees_index_and_heads_only(tmp_path):
    (tmp_path / "tiny").mkdir()
    empty = serve.store_stamp(tmp_path)
    (tmp_path / "tiny" / "abc.json").write_text("{}")
    assert serve.store_stamp(tmp_path) == empty  # a trace file alone is not visible yet
    (tmp_path / "tiny" / "index.json").write_text("{}")
    assert serve.store_stamp(tmp_path) != empty


def test_rebuilds_are_dirty_only_for_lesson_edits_and_this_processs_traces(tmp_path):
    from generator.store import TraceRequest

    content = lesson(tmp_path)
    (content / "other.md").write_text("# Other\n\nNo figures.\n", encoding="utf-8")
    traces, site = tmp_path / "traces", tmp_path / "site"
    (traces / "tiny").mkdir(parents=True)
    site.mkdir()
    for page in ("l.html", "other.html"):
        (site / page).write_text("built")
    r = serve_changes.Rebuilds(content.resolve(), traces.resolve(), site)
    assert not r.dirty([], None)  # the first build is full
    r.stamp = serve.store_stamp(traces)
    r.note(str(content / "other.md"))
    assert r.dirty([], None)  # a lesson edit
    r.note(str(content / "glossary.yml"))
    assert not r.dirty([], None)  # the glossary: every page
    (traces / "tiny" / "index.json").write_text("{}")
    r.note(str(traces / "tiny" / "index.json"))
    assert not r.dirty([], None)  # another process's trace: every page
    own = serve.store_stamp(traces)
    r.note(str(traces / "tiny" / "index.json"))
    assert r.dirty([TraceRequest("tiny", "Lily wanted to play")], own)  # this process's own trace
    # the page using the new trace has its HTML dated 1970, so the dirty build rebuilds it, and a
    # failed build still serves it; the other page is left as it was
    assert (site / "l.html").read_text() == "built" and (site / "l.html").stat().st_mtime_ns == 0
    assert (site / "other.html").read_text() == "built" and (site / "other.html").stat().st_mtime_ns > 0


def test_a_build_never_sees_a_trace_in_the_store_that_its_list_of_new_traces_lacks(tmp_path, monkeypatch):
    """The tracer writes a trace, then lists it in `written`; a build that took the list between the
    two, and the store's stamp after, had the trace in its stamp (so the traces/ watch ignored it)
    but not in its list, and the next build, of another edit, marked its pages. Tracer.take waits
    for a write to be listed, and gives the sentences being traced at the same moment."""
    import threading

    pytest.importorskip("torch")
    from trace_helpers import random_tiny

    tiny = random_tiny(seed=4)
    traces = tmp_path / "traces"
    visible, real_write = threading.Event(), TraceStore.write

    def slow_write(store, doc):  # as a busy disk's directory fsync: visible, not yet returned
        path = real_write(store, doc)
        visible.set()
        time.sleep(0.5)
        return path

    monkeypatch.setattr(TraceStore, "write", slow_write)
    class SlowSay(Said):  # the tracer's thread lingers after the write, before the job ends
        def __call__(self, line: str) -> None:
            super().__call__(line)
            time.sleep(0.5)

    tracer = serve.Tracer(traces, lesson(tmp_path), models=("tiny",), loader=lambda name: tiny, say=SlowSay())
    try:
        before = serve.store_stamp(traces)
        job = tracer.submit(tracer.missing())
        early = tracer.take()  # before the write: being traced, and nothing new in the store
        assert ("tiny", "Lily wanted to play") in early.tracing and early.written == [] and early.stamp == before
        assert visible.wait(120)  # the index lists the trace; the tracer has not listed it yet
        taken = tracer.take()
        assert taken.stamp != before, "the store's stamp is read after the write"
        assert [r.text for r in taken.written] == ["Lily wanted to play"] and taken.own_stamp == taken.stamp
        # the build that takes the trace draws its figure: drawn as "tracing…", it would stay so, with
        # no rebuild to come; and a build that reads the store before the write must draw "tracing…"
        assert ("tiny", "Lily wanted to play") not in taken.tracing
        assert job.done.wait(120)
        done = tracer.take()
        assert (done.written, done.own_stamp, done.stamp, done.tracing) == ([], taken.own_stamp, taken.stamp, frozenset())
        assert done.traced_models == {"tiny"} and done.refused == frozenset()
    finally:
        tracer.close()


@pytest.mark.parametrize("port", ["abc", "99999", "0", "-1", "80x"])
def test_a_bad_port_is_one_usage_line_for_serve_and_ignored_by_other_commands(monkeypatch, capsys, port):
    from generator import cli

    monkeypatch.setenv("PORT", port)
    assert cli.main(["reference", "--check"]) == 0  # PORT is only serve's business
    with pytest.raises(SystemExit) as exit_:
        cli.main(["serve"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert f"{port!r} is not a port number (1-65535)" in err[-1] and "Traceback" not in "\n".join(err)


@pytest.mark.slow
def test_a_broken_mkdocs_yml_while_serving_is_one_line_and_the_server_lives_on(tmp_path):
    """A YAML syntax error and a setting of the wrong type, saved while serving: each is one line
    naming mkdocs.yml, with no traceback; the last good pages are still served; mending the file
    rebuilds."""
    root = copy_course(tmp_path / "course")
    config = root / "mkdocs.yml"
    good = config.read_text(encoding="utf-8")
    with serving(root, ("--no-trace",)) as server:
        yaml_at = good.count("\n") + 2  # the line of `extra: [never closed`, after the blank one
        for broken, said in ((good + "\nextra: [never closed\n", f"mkdocs.yml:{yaml_at}: malformed YAML at column 8: this [ is never closed"),
                             (good + "\nuse_directory_urls: maybe\n", f"mkdocs.yml:{yaml_at}: use_directory_urls: Expected type")):
            mark = len(server.log())
            config.write_text(broken, encoding="utf-8")
            log = server.wait_for_log(said, mark)
            line = next(x for x in log.splitlines() if said in x)
            assert "Fix: " in line, line
            assert "Traceback" not in log and "An error happened during the rebuild" not in log, log
            with urllib.request.urlopen(server.url + "/attention.html", timeout=30) as r:
                assert r.status == 200 and b"course-fig" in r.read()
        mark = len(server.log())
        config.write_text(good, encoding="utf-8")
        log = server.wait_for_log("Reloading browsers", mark)
        assert "ERROR" not in log, log
