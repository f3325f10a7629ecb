"""`make serve` and tracing on save: a sentence being traced is "tracing…" in its figure and in
the references to it, never a "has no number" error; with tracing off (TRACE=0, or no models
extra) the server says so once, with how to turn it on, and never that a trace started; with it
on, torch and the tiny model load as the server starts. On small course copies (the repository's
mkdocs.yml, theme and committed traces)."""

from __future__ import annotations

import os
import time
import urllib.request
from pathlib import Path

import markdown
import pytest

from catalogue import served_course
from course_builds import REPO
from generator.bench.preview import serving
from generator.lessons.errors import LessonError
from generator.site import check, save_tracer
from generator.store import TraceStore

pytestmark = pytest.mark.slow

NEW = "The little fox found a shiny key under the old bridge"
LESSON = f"""# Fox

```attention
model: tiny
sentence: "{NEW}"
layer: 1
head: 1
id: fox
```

·key gives ·fox {{{{ fox.weight(key, fox) }}}} here.
"""


def project(root: Path, lesson: str = LESSON) -> Path:
    served_course(root, {"fox.md": lesson})
    assert not TraceStore(root / "traces").has("tiny", NEW)
    return root


def convert(root: Path, tracing: str = "", traced_on_save: str = "", untraceable: str = "") -> str:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        cfg = check.read_config("mkdocs.yml")
        configs = {k: dict(v) for k, v in cfg["mdx_configs"].items()}
        configs["generator.markdown.course"].update(assets_dir=str(root / "scratch"), tracing=tracing,
                                                    traced_on_save=traced_on_save, untraceable=untraceable)
        md = markdown.Markdown(extensions=cfg["markdown_extensions"], extension_configs=configs)
        return md.convert((root / "content" / "fox.md").read_text(encoding="utf-8"))
    finally:
        os.chdir(cwd)


def test_a_sentence_being_traced_is_tracing_not_an_error(tmp_path):
    root = project(tmp_path / "course")
    with pytest.raises(LessonError, match=r"fox\.md:11: reference \{\{ fox\.weight\(key, fox\) \}\} has no number in this build"):
        convert(root)  # not being traced: the author must mark the passage or trace it
    html = convert(root, tracing=f"tiny\t{NEW}")
    assert 'data-pending="true"' in html and html.count("tracing…") == 2  # the figure and the reference
    assert "Not traced in this copy" not in html
    with pytest.raises(LessonError, match="has no number"):  # another sentence being traced changes nothing
        convert(root, tracing="tiny\tanother sentence")


def test_a_sentence_saved_after_the_scan_for_new_ones_is_tracing_unless_refused(tmp_path):
    """A build reads the lessons after the tracer's scan: a sentence saved in between is not queued
    yet, and its save makes the next build, which queues it. While the tiny model is traced on
    save, such a sentence is "tracing…"; one the tracer refused, or of a model it does not trace,
    is the missing trace it is."""
    root = project(tmp_path / "course")
    html = convert(root, traced_on_save="tiny")
    assert 'data-pending="true"' in html and html.count("tracing…") == 2
    html = convert(root, traced_on_save="gpt2,tiny", untraceable="tiny\tanother sentence")
    assert html.count("tracing…") == 2
    for refused in ({"traced_on_save": "tiny", "untraceable": f"tiny\t{NEW}"}, {"traced_on_save": "gpt2"}):
        with pytest.raises(LessonError, match="has no number"):
            convert(root, **refused)


def test_the_models_extra_is_found_without_importing_torch():
    import subprocess
    import sys

    code = "import sys; from generator.site import save_tracer as s; print(s.models_extra_problem(), 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["None", "False"], out.stderr


def sitecustomize_without_models(folder: Path) -> Path:
    """A sitecustomize that makes torch and transformers unimportable, as without the models extra."""
    folder.mkdir(parents=True)
    (folder / ("sitecustomize" + ".py")).write_text(  # Python imports it at start (site)
        "import sys\n"
        "class _NoModels:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ModuleNotFoundError(f\"No module named '{name}'\")\n"
        "        return None\n"
        "sys.meta_path.insert(0, _NoModels())\n", encoding="utf-8")
    return folder


def wait_for(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(0.2)
    raise TimeoutError(what)


@pytest.mark.parametrize("how", ["TRACE=0", "no models extra"])
def test_with_tracing_off_it_says_so_once_and_never_that_a_trace_started(how, tmp_path, monkeypatch):
    root = project(tmp_path / "course", LESSON.replace("·key gives ·fox {{ fox.weight(key, fox) }} here.\n", ""))
    args: tuple[str, ...] = ()
    if how == "TRACE=0":
        args = ("--no-trace",)
    else:
        monkeypatch.setenv("PYTHONPATH", str(sitecustomize_without_models(tmp_path / "site-hook")))
    with serving(root, args) as server:
        (root / "content" / "fox.md").write_text(LESSON.replace("·key gives ·fox {{ fox.weight(key, fox) }} here.\n", "Saved again.\n"), encoding="utf-8")
        wait_for(lambda: server.log().count("Documentation built") >= 2 or server.log().count("Building documentation") >= 2, 90, "no rebuild")
        time.sleep(1)
        log = server.log()
    hint = save_tracer.TRACE_OFF_HINT if how == "TRACE=0" else "tracing on save is off: the models extra is not installed (No module named 'torch')"
    assert log.count(hint) == 1, log
    assert "Turn it on with `make serve`" in log.split(hint, 1)[1].split("\n")[0] + hint
    assert "in the background" not in log and "traced " not in log and "torch and transformers imported" not in log, log
    assert "Traceback" not in log
    assert not TraceStore(root / "traces").has("tiny", NEW)


def test_with_tracing_on_torch_loads_at_start_and_the_page_says_tracing_then_shows_the_figure(tmp_path):
    root = project(tmp_path / "course")
    with serving(root) as server:
        page = lambda: urllib.request.urlopen(f"{server.url}/fox.html", timeout=30).read().decode("utf-8")  # noqa: E731
        first = page()
        log = server.log()
        assert "has no number" not in log and "ERROR" not in log, log
        assert "tracing…" in first or 'data-pending="true"' not in first, "the figure is tracing, or traced already"
        wait_for(lambda: 'data-pending="true"' not in page(), 180, "the traced figure never came")
        wait_for(lambda: "torch and transformers imported" in server.log(), 60, "torch was not loaded")
        log = server.log()
    assert "has no number" not in log and "Traceback" not in log, log
    assert log.index("torch and transformers imported") < log.index(f"traced {NEW!r}"), "loaded before it was needed"
    assert TraceStore(root / "traces").has("tiny", NEW)


def test_make_serve_installs_the_models_extra_unless_trace_is_0():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    rule = next(line for line in makefile.splitlines() if line.startswith("serve: "))
    assert "$(SITE_STAMP)" in rule and "$(if $(filter 0,$(TRACE)),,$(MODELS_STAMP))" in rule
    recipe = makefile.split(rule, 1)[1].split("\n\n", 1)[0]
    assert "$(if $(filter 0,$(TRACE)),--no-trace)" in recipe


@pytest.mark.parametrize("dropped", [ConnectionResetError, BrokenPipeError, ConnectionAbortedError])
def test_a_dropped_connection_prints_no_traceback_and_a_real_error_still_does(tmp_path, capsys, dropped):
    """A browser that leaves a page mid-request (a reload, a closed tab) writes nothing into the
    author's terminal; any other error in a request is still printed."""
    from generator.site import serve

    server = serve.make_server(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path),
                               mount_path="/", ignore=lambda _p: False)
    try:
        try:
            raise dropped("the peer went away")
        except ConnectionError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real bug")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert "ValueError: a real bug" in capsys.readouterr().err
    finally:
        server.server_close()


def sitecustomize_gating_torch(folder: Path, gate: Path) -> Path:
    """A sitecustomize whose first `import torch` in the tracer's thread waits until the file `gate`
    exists: the server's model is still loading, for as long as the test wants, when the author
    saves. (The server's start looks for torch without importing it, in its main thread.)"""
    folder.mkdir(parents=True)
    (folder / ("sitecustomize" + ".py")).write_text(  # the wait is in the module's execution: a finder runs under the import lock
        "import importlib.util, os, sys, threading, time\n"
        "class _Gate:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name != 'torch' or threading.current_thread().name != 'course-tracer':\n"
        "            return None\n"
        "        sys.meta_path.remove(self)\n"
        "        spec = importlib.util.find_spec('torch')\n"
        "        run = spec.loader.exec_module\n"
        "        def exec_module(module):\n"
        f"            while not os.path.exists({str(gate)!r}):\n"
        "                time.sleep(0.05)\n"
        "            run(module)\n"
        "        spec.loader.exec_module = exec_module\n"
        "        return spec\n"
        "sys.meta_path.insert(0, _Gate())\n", encoding="utf-8")
    return folder


TRACED = "Lily wanted to play with her"
TWO_FIGURES = f"""# Fox

```attention
model: tiny
sentence: "{TRACED}"
layer: 1
head: 1
id: lily
```

·her gives Lily {{{{ lily.weight(her, Lily) }}}} here.

```attention
model: tiny
sentence: "@SENTENCE@"
layer: 1
head: 1
id: fox
```
"""


def test_a_save_while_the_model_loads_builds_once_and_says_its_mistake_once(tmp_path, monkeypatch):
    """A save made before the model has loaded (the server has just started) needs a trace: the
    build waits for it rather than build a page of "tracing…" and then, when the trace lands,
    build again and print the page's mistake a second time."""
    gate = tmp_path / "gate"
    monkeypatch.setenv("PYTHONPATH", str(sitecustomize_gating_torch(tmp_path / "site-hook", gate)))
    root = project(tmp_path / "course", TWO_FIGURES.replace("@SENTENCE@", TRACED))
    lesson = root / "content" / "fox.md"
    with serving(root) as server:
        wait_for(lambda: "Reloading browsers" in server.log() or "Documentation built" in server.log(), 120, "no first build")
        start = len(server.log())
        mistake = "lilly.weight(her, Lily)"  # a misspelled id
        # saved as editors that write a copy and rename it do: the copy, a dot file, makes no build and
        # the rename one (a write in place is two events, a truncation and the text, which a busy
        # machine can space out past serve's 0.1 s wait, and then the truncated page gets a build)
        tmp = lesson.with_name(f".{lesson.name}.tmp")
        tmp.write_text(TWO_FIGURES.replace("@SENTENCE@", NEW).replace("lily.weight(her, Lily)", mistake), encoding="utf-8")
        os.replace(tmp, lesson)
        wait_for(lambda: "Detected file changes" in server.log()[start:], 60, "the save made no build")
        assert not TraceStore(root / "traces").has("tiny", NEW)
        gate.touch()  # the model loads now, while the save's build runs
        wait_for(lambda: "Reloading browsers" in server.log()[start:].partition(f"traced {NEW!r}")[2], 180,
                 "the build with the new trace never ended")
        log = server.log()[start:]
    assert TraceStore(root / "traces").has("tiny", NEW)
    errors = [line for line in log.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "'lilly'" in errors[0], log
    assert log.count("Detected file changes") == 1 and log.count("Reloading browsers") == 1, log
    assert "Traceback" not in log


def test_a_build_no_save_asked_for_does_not_say_the_same_mistakes_again(tmp_path):
    """A trace written by another process (`make traces`) rebuilds the pages while a mistake
    stands: the box stays, and the terminal, which said the mistake at its save, does not say it
    again. A save says it again."""
    import subprocess
    import sys

    root = project(tmp_path / "course", TWO_FIGURES.replace("@SENTENCE@", NEW).replace("lily.weight(her, Lily)", "lilly.weight(her, Lily)"))
    with serving(root, ("--no-trace",)) as server:
        wait_for(lambda: "'lilly'" in server.log(), 120, "the mistake was never said")
        start = len(server.log())
        done = subprocess.run([sys.executable, "-m", "generator", "traces", "--models", "tiny", "--content", str(root / "content"),
                               "--traces-dir", str(root / "traces"), "--sentence", NEW], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        wait_for(lambda: "Reloading browsers" in server.log()[start:], 120, "the new trace made no build")
        assert "'lilly'" not in server.log()[start:], server.log()
        (root / "content" / "fox.md").write_text((root / "content" / "fox.md").read_text(encoding="utf-8") + "\nSaved again.\n", encoding="utf-8")
        wait_for(lambda: "'lilly'" in server.log()[start:], 120, "a save did not say the mistake again")


SPLIT_LESSON = f"""# Fox split

```score-split
model: tiny
sentence: "{NEW}"
layer: 1
head: 4
id: foxsplit
```
"""


def test_a_new_score_split_figure_gets_its_splits_from_the_tracer(tmp_path):
    """`make serve` writes what a saved page's new score-split figure draws (splits.json, as `make
    traces` does), after the sentence's trace: the figure says "tracing…" meanwhile, then draws."""
    from generator.site.save_tracer import Tracer
    from generator.store import splits_file

    root = project(tmp_path / "course", SPLIT_LESSON)
    before = splits_file.read(root / "traces", "tiny")
    assert before is None or before.sentence(NEW) is None
    tracer = Tracer(root / "traces", root / "content", models=("tiny",))
    try:
        splits = tracer.missing_splits()
        assert splits == {("tiny", NEW)} and ("tiny", NEW) in tracer.tracing_now()
        html = convert(root, tracing=f"tiny\t{NEW}")
        assert 'data-pending="true"' in html and "tracing…" in html
        job = tracer.submit(tracer.missing(), splits)
        assert job.done.wait(300), "the split was never written"
        after = splits_file.read(root / "traces", "tiny")
        assert after is not None and after.sentence(NEW) is not None
        assert tracer.missing_splits() == frozenset() and tracer.tracing_now() == frozenset()
        assert 'data-pending="true"' not in convert(root)
    finally:
        tracer.close()
    assert splits_file.FILE in save_tracer.WATCHED_STORE_FILES  # its write makes the page rebuild


def test_a_save_by_rename_counts_as_a_save_of_the_lesson_and_its_copy_as_nothing(tmp_path):
    """An editor that writes a copy (a dot file) and renames it over the lesson makes events on the
    copy, then a move: the move is a change of the lesson itself (so its timestamp is read and the
    next build may be the quick one), and the copy, which MkDocs never builds, is no change."""
    from watchdog.events import FileClosedEvent, FileCreatedEvent, FileModifiedEvent, FileMovedEvent

    from generator.site import serve_changes as changes

    docs = (tmp_path / "content").resolve()
    copy, lesson = docs / ".fox.md.tmp", docs / "fox.md"
    assert changes.event_path(FileMovedEvent(str(copy), str(lesson))) == str(lesson)
    for event in (FileCreatedEvent(str(copy)), FileModifiedEvent(str(copy)), FileClosedEvent(str(copy))):
        assert changes.left_out_of_site(docs, Path(changes.event_path(event)))
    assert changes.event_path(FileModifiedEvent(str(lesson))) == str(lesson)
    assert not changes.left_out_of_site(docs, lesson)
    assert changes.left_out_of_site(docs, docs / "notes" / ".fox.md.swp")
    assert not changes.left_out_of_site(docs, tmp_path / ".elsewhere" / "mkdocs.yml")  # outside the docs folder: watched as before
