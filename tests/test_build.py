"""Real builds of a throwaway content folder, `mkdocs build --strict` and `python -m generator site`,
against synthetic traces. Each build is a subprocess of a couple of seconds. Every Zensical build,
this folder's and the real course's, is in tests/browser/test_site_build.py."""

from __future__ import annotations

import gzip
import os
import json
import html
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO, Built, LILY, lily_trace, run_build, synthetic_trace, training_log_doc, unbound, write_project, write_traces

LESSON = textwrap.dedent('''\
    ---
    description: A test lesson.
    ---

    # Attention

    Intro: ·her gives Lily {{ lily.weight(her, Lily) }} in layer {{ lily.layer }}, head {{ lily.head }}.

    === "Story"

        ```attention
        model: tiny
        sentence: "Lily wanted to play with her"
        pick: {rule: max-weight, from: her, to: Lily}
        id: lily
        ```

        Its top three: {{ lily.top(her, 3) }}. The model has {{ model.tiny.nHeads }} heads.

    === "Code"

        Layer index {{ lily.layer0 }} in the console; `trace.layers[{{ lily.layer0 }}]` runs as written.

        ```js
        trace.layers[{{ lily.layer0 }}].heads[{{ lily.head0 }}].weights;  // "{{ lily.sentence }}"
        ```

    ```compare
    model: tiny
    sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]
    layer: 3
    head: 3
    id: pair
    ```

    ```stepper
    tokens: [Lily, ran, she]
    query: [[0, 1], [1, 0], [2, 0]]
    key: [[2, 0], [0, 1], [1, 1]]
    value: [[1, 0], [0, 1], [0.5, 0.5]]
    id: toy
    ```

    Scores {{ toy.score(she, Lily) }}, {{ toy.score(she, ran) }}, {{ toy.score(she, she) }}; Lily's share {{ toy.weight(she, Lily) }}.

    ```softmax
    scores: [1, 0, 0]
    id: sm
    ```

    ```training
    model: tiny
    ```

    ```predictions
    model: tiny
    sentences: ["Lily wanted to play with her"]
    ```

    The tiny model reached {{ model.tiny.training.bitsPerChar }} bits per character.

    Scaled: $\\frac{q \\cdot k}{\\sqrt{d}}$, and

    $$
    \\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}
    $$
''')

DEEP = textwrap.dedent('''\
    # Deeper

    ```attention
    model: tiny
    sentence: "Lily wanted to play with her"
    layer: 1
    head: 2
    ```
''')


def traces(weight: float = 0.66):
    ben = synthetic_trace("Ben wanted to play with her", plant={(2, 2, 5): {0: 0.5, 5: 0.5}})
    return [lily_trace(weight), ben]


def figure_count(html: str) -> int:
    return len(re.findall(r'<figure class="course-fig[^"]*" id="fig-\d+"', html))


def no_cdn(site: Path) -> list[str]:
    """Every script/link/stylesheet/font URL that leaves the site."""
    bad = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r'<(script|link|img|iframe|source)\b[^>]*\b(src|href)="([^"]+)"', text):
            if re.match(r"(https?:)?//", m.group(3)):
                bad.append(f"{page.name}: <{m.group(1)} {m.group(2)}={m.group(3)}>")
        if "fonts.googleapis" in text or "fonts.gstatic" in text or "unpkg.com" in text or "cdn.jsdelivr" in text:
            bad.append(f"{page.name}: mentions a font/CDN host")
    for css in site.rglob("*.css"):
        for m in re.finditer(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", css.read_text(encoding="utf-8", errors="replace")):
            bad.append(f"{css.name}: url({m.group(1)})")
    return bad


def test_full_build_renders_figures_refs_and_math(tmp_path):
    write_project(tmp_path, {"lesson.md": LESSON, "sub/deep.md": DEEP}, traces(), training_log_doc())
    built = run_build(tmp_path, strict=True)
    assert built.ok, built.log
    page = unbound(built.html("lesson.md"))
    assert figure_count(page) == 6
    assert [int(n) for n in re.findall(r'id="fig-(\d+)"', page)] == [1, 2, 3, 4, 5, 6]
    for kind in ("attention", "compare", "stepper", "softmax", "training", "predictions"):
        assert f'data-kind="{kind}"' in page
    assert "Intro: ·her gives Lily 0.66 in layer 3, head 3." in unbound(page)
    assert "The model has 16 heads." in page and "Layer index 2 in the console; <code>trace.layers[2]</code> runs as written." in page
    # references inside fenced code are filled in as plain text, through the syntax highlighting
    code = html.unescape(re.sub(r"<[^>]+>", "", page[page.index('<code>trace.layers[2]</code> runs as written'):]))
    assert 'trace.layers[2].heads[2].weights;  // "Lily wanted to play with her"' in code
    assert "Scores 4, 0, 2; Lily’s share 0.77." in page or "Scores 4, 0, 2; Lily's share 0.77." in page
    assert "reached 1.23 bits per character" in page
    assert re.sub(r"<figure.*?</figure>", "", page, flags=re.S).count("<math") == 2  # the lesson's two formulas (the stepper writes e^score in MathML too)
    prose = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "@source" not in page and "{{" not in prose and "}}" not in prose and "__course_ref_" not in page
    # no directive fell through to a code block (the one js block is the lesson's own code)
    assert page.count("<pre") == 1 and not re.search(r"<pre(?:(?!</pre>).)*(model|sentence|tokens)</span><span[^>]*>:", page, re.S)
    # assets next to the pages, linked relatively (file:// works)
    gen = built.site / "assets" / "generated"
    for name in ("plotly-cartesian.min.js", "colorscale.js"):
        assert (gen / name).is_file()
    key = lily_trace()["meta"] and re.search(r'data-trace-key="([0-9a-f]+)"', page).group(1)
    folder = gen / "traces" / "tiny" / key
    assert (gen / "traces" / "tiny" / f"{key}.json").is_file() and not (gen / "traces" / "tiny" / f"{key}.js").exists()
    # one part a head and weights.js (render/assets.py, head_parts), encoded: the trace file's arrays and the head's page weights
    assert sorted(p.name for p in folder.iterdir()) == sorted(["weights.js"] + [f"{l}-{h}.js" for l in range(4) for h in range(4)])
    part = (folder / "2-2.js").read_text()
    assert part.startswith("window.courseTraceParts = window.courseTraceParts || {};") and '"int16"' in part
    assert f'courseTraceParts["{key}/2-2"]' in part and '"layer":2,"head":2' in part
    assert '"scaledMaskedFactor"' in part and '"weights"' in part and '"scaledMasked"' not in part and '"tokens"' not in part
    weights = (folder / "weights.js").read_text()
    assert f'courseTraceParts["{key}/weights"]' in weights and '"q"' not in weights and '"int16"' in weights
    assert f'data-parts="assets/generated/traces/tiny/{key}"' in page
    assert f'data-parts="../assets/generated/traces/tiny/{key}"' in built.html("sub/deep.md")
    assert 'src="assets/generated/plotly-cartesian.min.js"' in page and "plotly.min.js" not in page and 'src="assets/generated/colorscale.js"' in page
    assert no_cdn(built.site) == []
    # the number in the prose comes from the trace: change the trace, rebuild, the prose follows
    shutil.rmtree(tmp_path / "traces")
    write_traces(tmp_path / "traces", traces(0.55))
    rebuilt = run_build(tmp_path, strict=True)
    assert rebuilt.ok, rebuilt.log
    page2 = rebuilt.html("lesson.md")
    assert "Intro: ·her gives Lily 0.55 in layer 3, head 3." in unbound(page2) and "0.66" not in re.sub(r"<script.*?</script>", "", page2, flags=re.S)
    report_weights(rebuilt.site / "lesson.html", gen / "plotly-cartesian.min.js")


def report_weights(page: Path, plotly: Path) -> None:
    raw, js = page.read_bytes(), plotly.read_bytes()
    print(f"\npage {page.name}: {len(raw)} B raw, {len(gzip.compress(raw, 9))} B gzipped; "
          f"plotly-cartesian.min.js: {len(js)} B raw, {len(gzip.compress(js, 9))} B gzipped")


def test_missing_trace_warns_shows_pending_and_fails_strict(tmp_path):
    # (text between: a passage right beside the pending box goes with it, test_gpt2_chapter.py)
    page = "# Pending\n\nWeight {{ lily.weight(her, Lily) }}.\n{: .needs-traces }\n\nBetween.\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\nlayer: 3\nhead: 3\nid: lily\n```\n"
    # a tiny trace of another sentence: the copy has the tiny model, this sentence is not traced
    # yet (a copy with no tiny trace at all gets one notice instead: test_gpt2_chapter.py)
    write_project(tmp_path, {"p.md": page}, traces=[synthetic_trace("Ben went home")])
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    warnings = [l for l in built.log.splitlines() if "WARNING" in l and "no trace of" in l]
    assert len(warnings) == 1, built.log
    assert "content/p.md:8: no trace of 'Lily wanted to play with her' for model tiny" in warnings[0]
    assert "make traces" in warnings[0]
    html = built.html("p.md")
    assert 'class="course-fig course-pending"' in html and "Not traced in this copy of the course." in html
    # the marked paragraph is replaced, whole, by a note for readers (markdown/needs_traces.py)
    assert 'class="course-traces-note"' in html and "tiny model, which this copy of the course was built without." in html
    assert "Weight" not in html[html.index("<article"):] and "course-pending-ref" not in html
    strict = run_build(tmp_path, strict=True, assets=False)
    assert not strict.ok and "no trace of 'Lily wanted to play with her'" in strict.log


def test_bad_block_fails_mkdocs_build_with_its_line(tmp_path):
    page = "# Bad\n\nSome text.\n\n```attention\nmodel: bert\nsentence: \"a b\"\nlayer: 1\nhead: 1\n```\n"
    write_project(tmp_path, {"bad.md": page})
    built = run_build(tmp_path, strict=False)
    assert not built.ok
    assert "content/bad.md:6: attention: unknown model 'bert'. Fix: use one of: gpt2, tiny, tiny-rope" in built.log  # its `model:` line
    assert "Traceback" not in built.log
    assert not (built.site / "bad.html").exists()


def test_stand_in_trace_fails_the_build_unless_allowed(tmp_path):
    page = "# S\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\nlayer: 1\nhead: 1\n```\n"
    write_project(tmp_path, {"s.md": page}, [lily_trace(stand_in=True)])
    built = run_build(tmp_path, strict=True)
    assert not built.ok and "content/s.md:3: attention: the trace of 'Lily wanted to play with her' for model tiny comes from the random-init stand-in" in built.log
    allowed = run_build(tmp_path, strict=True, env={"COURSE_ALLOW_STANDIN": "1"}, assets=False)
    assert allowed.ok, allowed.log


MIXED = ("# Mixed\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\nlayer: 1\nhead: 1\n```\n\n"
         "```attention\nmodel: gpt2\nsentence: \"The cat sat\"\nlayer: 1\nhead: 1\n```\n\n"
         "```compare\nmodel: gpt2\nsentences: [\"The cat sat\", \"The dog sat\"]\nlayer: 1\nhead: 1\n```\n")


def generator_site(root: Path, *flags: str) -> Built:
    return run_build(root, cmd=[sys.executable, "-m", "generator", "site", "--no-downloads", "-d", str(root / "site"), *flags])


def test_pending_warnings_are_one_line_per_model(tmp_path):
    write_project(tmp_path, {"mixed.md": MIXED, "again.md": MIXED.replace("Lily wanted", "Ben wanted")})
    built = generator_site(tmp_path)
    assert built.ok, built.log
    lines = [l for l in built.log.splitlines() if "pending" in l and l.startswith("WARNING")]
    assert lines == [
        "WARNING -  tiny: 2 figures pending (2 sentences not traced) at content/again.md:3; content/mixed.md:3. "
        "Run `make traces` (the tiny model runs here in seconds).",
        "WARNING -  gpt2: 4 figures pending (2 sentences not traced) at content/again.md:10, 17; content/mixed.md:10, 17. "
        "It needs the model download: run `make traces` where the hub is reachable, or set COURSE_GPT2_PATH to a local copy.",
    ], built.log


def test_strict_tiny_fails_on_a_pending_tiny_figure_and_only_warns_about_gpt2(tmp_path):
    write_project(tmp_path, {"mixed.md": MIXED})
    tiny_pending = generator_site(tmp_path, "--strict=tiny")
    assert not tiny_pending.ok and "STRICT=tiny: figures of tiny are pending" in tiny_pending.log
    assert not (tmp_path / "site").exists()
    write_traces(tmp_path / "traces", [lily_trace()])
    gpt2_pending = generator_site(tmp_path, "--strict=tiny")
    assert gpt2_pending.ok, gpt2_pending.log
    assert "WARNING -  gpt2: 2 figures pending" in gpt2_pending.log and "tiny:" not in gpt2_pending.log
    everything = generator_site(tmp_path, "--strict")  # STRICT=1: nothing pending at all
    assert not everything.ok and "STRICT=1: figures of gpt2 are pending" in everything.log
    typo = generator_site(tmp_path, "--strict=tiyn")
    assert typo.returncode == 2 and "STRICT=tiyn: unknown model 'tiyn'" in typo.log and "Traceback" not in typo.log


def test_strict_tiny_still_fails_on_any_other_warning(tmp_path):
    write_project(tmp_path, {"p.md": "# P\n\n[a link to nowhere](missing.md)\n"})
    assert generator_site(tmp_path).ok
    built = generator_site(tmp_path, "--strict=tiny")
    assert not built.ok and "missing.md" in built.log


@pytest.mark.slow
def test_the_course_itself_builds_with_strict_tiny(tmp_path):
    """What CI checks of the real course: every tiny figure traced (the tiny model is committed);
    GPT-2's may be pending where its weights are not (make site STRICT=1 is the Pages workflow's)."""
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "generator", "site", "--strict=tiny", "--no-downloads", "-d", str(tmp_path / "site")],
                          cwd=repo, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pending = [l for l in proc.stderr.splitlines() if " pending (" in l]
    assert all(l.startswith("WARNING -  gpt2: ") for l in pending), pending
    assert "Material for MkDocs reaches end of life" not in proc.stdout + proc.stderr


SITE_SCRIPT = """
import os, sys
from generator.site import publish
rc = publish.build_site("mkdocs.yml", strict=True, with_downloads=False)
print("torch imported:", "torch" in sys.modules, "transformers imported:", "transformers" in sys.modules)
sys.exit(rc)
"""


def test_generator_site_is_atomic_and_never_imports_torch(tmp_path):
    write_project(tmp_path, {"lesson.md": LESSON}, traces(), training_log_doc())
    run = lambda: subprocess.run([sys.executable, "-c", SITE_SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    first = run()
    assert first.returncode == 0, first.stdout + first.stderr
    assert "torch imported: False transformers imported: False" in first.stdout
    site = tmp_path / "build" / "site"
    before = (site / "lesson.html").read_bytes()
    (site / "marker.txt").write_text("previous build")
    # a broken lesson: the build fails with the lesson's line and leaves the old site alone
    (tmp_path / "content" / "lesson.md").write_text(LESSON.replace("{{ lily.layer }}", "{{ lily.weight(her, cat) }}"))
    second = run()
    assert second.returncode == 1
    assert "content/lesson.md:7: reference {{ lily.weight(her, cat) }}: to: no token 'cat'" in second.stderr
    assert (site / "marker.txt").read_text() == "previous build" and (site / "lesson.html").read_bytes() == before
    assert not [p for p in site.parent.iterdir() if p.name.startswith(".site.")]  # no temporary folder left


def test_assets_step_rewrites_only_changed_files(tmp_path):
    from generator.site import publish

    write_project(tmp_path, {"lesson.md": LESSON}, traces())
    first = publish.write_assets(tmp_path / "content", tmp_path / "traces")
    names = {p.name for p in first}
    assert {"plotly-cartesian.min.js", "colorscale.js", "weights.js", "0-0.js", "3-3.js"} <= names
    assert publish.write_assets(tmp_path / "content", tmp_path / "traces") == []
    # an older build's one-file part (traces/<model>/<key>.js) and a stale head part are removed
    tdir = tmp_path / "content" / "assets" / "generated" / "traces" / "tiny"
    folder = sorted(d for d in tdir.iterdir() if d.is_dir())[0]
    (tdir / f"{folder.name}.js").write_text("old")
    (folder / "7-7.js").write_text("stale")
    assert publish.write_assets(tmp_path / "content", tmp_path / "traces") == []
    assert not (tdir / f"{folder.name}.js").exists() and not (folder / "7-7.js").exists()
    # a trace no lesson uses any more is removed from the generated folder
    (tmp_path / "content" / "lesson.md").write_text("# Empty\n")
    publish.write_assets(tmp_path / "content", tmp_path / "traces")
    assert not list((tmp_path / "content" / "assets" / "generated").rglob("traces/*/*"))


def test_mkdocs_yml_wires_every_directive_and_no_cdn():
    import yaml

    from generator.lessons import directives as D

    class Loose(yaml.SafeLoader):
        pass

    Loose.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    Loose.add_constructor("!ENV", lambda loader, node: None)  # site_url from COURSE_SITE_URL, unset here
    cfg = yaml.load((Path(__file__).resolve().parents[1] / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loose)
    exts = {next(iter(e)) if isinstance(e, dict) else e: (e[next(iter(e))] if isinstance(e, dict) else {}) for e in cfg["markdown_extensions"]}
    fences = exts["pymdownx.superfences"]["custom_fences"]
    assert sorted(f["name"] for f in fences) == sorted(D.DIRECTIVE_KINDS)
    assert {f["format"] for f in fences} == {"generator.markdown.course.fence_format"}
    assert {f["validator"] for f in fences} == {"generator.markdown.course.fence_validator"}
    assert "generator.markdown.course" in exts and exts["pymdownx.tabbed"]["alternate_style"] is True
    assert cfg["theme"]["font"] is False and cfg["use_directory_urls"] is False
    assert cfg["plugins"] == ["search", "offline"]
    scripts = cfg["extra"]["course_scripts"]  # written by overrides/main.html before Material's deferred bundle
    assert all(not re.match(r"(https?:)?//", u) for u in scripts + cfg["extra_css"] + cfg["extra"]["polyfills"])
    assert scripts == ["assets/generated/plotly-cartesian.min.js", "assets/generated/colorscale.js", "assets/generated/course.js"]
    assert not cfg.get("extra_javascript")  # Material would write these after its bundle


@pytest.mark.parametrize("url, ok", [
    ("https://example.org/course/", True), ("http://127.0.0.1:8000/", True), ("https://a-b.example.org", True), (None, True),
    ('https://example.org/"><script>alert(1)</script>', False), ("javascript:alert(1)", False), ("https://exa mple.org/", False),
    ("ftp://example.org/", False), ("https://example.org/?q=<b>", False), ("//example.org/", False),
])
def test_site_url_must_be_a_well_formed_http_url(url, ok):
    from generator.site import publish

    problem = publish.site_url_problem(url)
    assert (problem is None) == ok, problem
    if not ok:
        assert "\n" not in problem and "COURSE_SITE_URL" in problem and "Fix:" in problem


def test_a_bad_site_url_stops_the_build_before_anything_is_written(tmp_path, monkeypatch, capsys):
    from generator.site import publish

    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "index.md").write_text("# Home\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\ndocs_dir: content\nsite_dir: out\nsite_url: !ENV [COURSE_SITE_URL, null]\n")
    monkeypatch.setenv("COURSE_SITE_URL", 'https://example.org/"><script>window.__pwned=1</script>')
    monkeypatch.chdir(tmp_path)
    assert publish.build_site("mkdocs.yml", with_downloads=False) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len([e for e in err if e.startswith("error: ")]) == 1 and "not a well-formed http(s) URL" in err[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "mkdocs.yml"]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("site_dir, says", [
    (".", "is the folder of mkdocs.yml"), ("..", "holds the folder of mkdocs.yml"), ("content", "is the lessons' folder"),
    ("traces", "is the traces' folder"), ("content/built", "is inside the lessons' folder"),
    ("notes", "is not a site built before"), ("notes/todo.txt", "is a file, not a folder"),
])
def test_a_site_folder_that_would_remove_the_courses_own_files_is_refused(tmp_path, monkeypatch, capsys, site_dir, says):
    """A build replaces its site folder whole: `-d .` once deleted the repository. Refused with one
    line before anything is read or written; a folder built before, or a new one, is fine."""
    from generator.site import publish, zensical_build

    root = tmp_path / "course"
    (root / "content").mkdir(parents=True)
    write_project(root, {})
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("mine\n")
    before = _files(tmp_path)
    monkeypatch.chdir(root)
    assert publish.build_site("mkdocs.yml", site_dir=site_dir, with_downloads=False) == 2
    err = [e for e in capsys.readouterr().err.strip().splitlines() if e]
    assert len(err) == 1 and err[0].startswith("error: ") and says in err[0], err
    assert _files(tmp_path) == before
    if site_dir in (".", "content"):  # the Zensical build refuses the same folders
        assert zensical_build.build_zensical("mkdocs.yml", site_dir=site_dir) == 2
        assert says in capsys.readouterr().err and _files(tmp_path) == before


def test_a_killed_builds_folders_are_removed_by_the_next(tmp_path):
    from generator.site import site_folder

    final = tmp_path / "site"
    final.mkdir()  # the site a later build made (without it, the old one is put back: below)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    left = [tmp_path / f".site.{kind}-{dead}" for kind in ("building", "assets", "old")]
    for p in left:
        (p / "x").mkdir(parents=True)
    alive = tmp_path / f".site.building-{os.getppid()}"  # a live process's build stays
    alive.mkdir()
    other = tmp_path / ".other.building-1"
    other.mkdir()
    assert sorted(site_folder.remove_leftovers(final)) == sorted(left)
    assert alive.is_dir() and other.is_dir() and not any(p.exists() for p in left)

    # killed between its two renames: no site, the old one as .site.old-<pid>, which is put back
    final.rmdir()
    (left[2] / "x").mkdir(parents=True)
    left[0].mkdir()
    assert site_folder.remove_leftovers(final) == [left[0]]
    assert (final / "x").is_dir() and not left[2].exists()


def test_a_killed_build_left_a_zombie_or_whose_pid_was_taken_since_is_gone(tmp_path):
    """kill(pid, 0) alone took two dead builds for live ones: a zombie (killed with its parent,
    where nothing reaps orphans) and a pid that a later process has taken since. A live process
    that started before its folder was made is the build that made it."""
    from generator.site import site_folder

    folder = tmp_path / ".site.building-1"
    folder.mkdir()
    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        zombie.kill()
        deadline = time.monotonic() + 30
        while Path(f"/proc/{zombie.pid}/stat").read_text().split(") ")[1][0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(zombie.pid, 0)  # still answers: not reaped
        assert site_folder.build_is_gone(zombie.pid, folder)
    finally:
        zombie.wait()
    assert not site_folder.build_is_gone(os.getppid(), folder), "a process older than the folder may be its build"
    time.sleep(1.5)  # btime, which the start time is counted from, has whole seconds
    later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        Path(f"/proc/{later.pid}/stat").read_text()
        assert site_folder.build_is_gone(later.pid, folder), "a process started after the folder was touched is not its build"
    finally:
        later.kill()
        later.wait()


def test_a_build_that_fails_unforeseen_leaves_no_folder_behind(tmp_path, monkeypatch, capsys):
    """A failure no step foresaw (here a KeyError in the notebooks' step, as a damaged heads.json
    once gave) still removes the build's temporary folders (.site.building-<pid>, .site.assets-<pid>)
    and leaves no site: they were left behind before."""
    from generator.site import notebook_files as notebooks, publish

    write_project(tmp_path, {"index.md": "# Home\n\nA course.\n"})
    monkeypatch.chdir(tmp_path)

    def broken(*args, **kwargs):
        raise KeyError("previous-token")

    monkeypatch.setattr(notebooks, "write_notebooks", broken)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(KeyError):
        publish.build_site("mkdocs.yml", site_dir=str(tmp_path / "site"), with_downloads=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_config_without_the_course_extensions_is_named_first(tmp_path, monkeypatch, capsys):
    from generator.site import publish

    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "index.md").write_text("# Home\n\nIt has {{ page.minutes }} minutes.\n")
    repo_yml = (REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("custom_dir: overrides", f"custom_dir: {REPO / 'overrides'}")
    cases = {  # each extension left out with its options, or one figure's fence renamed
        "generator.markdown.course": re.sub(r"  - generator\.markdown\.course:\n(?:      .*\n)*", "", repo_yml, count=1),
        "`ablation`": repo_yml.replace("        - name: ablation\n", "        - name: not-a-kind\n", 1),
    }
    monkeypatch.chdir(tmp_path)
    for missing, text in cases.items():
        assert text != repo_yml, missing
        (tmp_path / "mkdocs.yml").write_text(text, encoding="utf-8")
        assert publish.build_site("mkdocs.yml", with_downloads=False) == 1
        err = [e for e in capsys.readouterr().err.splitlines() if e.startswith("error: ")]
        assert len(err) == 1 and re.match(r"error: mkdocs\.yml:\d+: ", err[0]) and missing in err[0], err  # with its line


def test_a_reference_in_alt_text_or_a_link_title_is_filled_in_as_plain_text(tmp_path):
    """An attribute holds text: the reference's markup there would end the attribute and break
    the tag, so alt text, a link's title and attributes set with attr_list get the number alone,
    escaped."""
    page = ("# A\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\nlayer: 1\nhead: 1\nid: a\n```\n\n"
            "![layer {{ a.layer }}, ·her to Lily {{ a.weight(her, Lily) }}](#x)\n\n[link](#x \"head {{ a.head }}\")\n\n"
            "### Sub {: #sub title=\"layer {{ a.layer }}\" }\n\nText.\n{: title=\"head {{ a.head }}\" }\n")
    write_project(tmp_path, {"a.md": page}, [lily_trace()])
    built = run_build(tmp_path)
    assert built.ok, built.log
    html = (built.site / "a.html").read_text(encoding="utf-8")
    img = re.search(r"<img [^>]*>", html)[0]
    assert re.fullmatch(r'<img alt="layer 1, ·her to Lily \d\.\d\d" src="#x" />', img), img
    assert '<a href="#x" title="head 1">link</a>' in html
    # attr_list's attributes too (they held the reference's markup, which ended the attribute)
    assert re.search(r'<h3 id="sub" title="layer 1">Sub', html) and '<p title="head 1">Text.</p>' in html, html[html.index("<h3"):][:400]
