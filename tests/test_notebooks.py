"""Every chapter's Python notebook (generator/notebooks/, written by generator/site/notebook_files.py), run as a learner runs it: from a
copy of the offline zip's contents, with nbclient and ipykernel, reading only the files beside it.

One real site build of the course (committed traces, a copy of content/) for the whole module."""

from __future__ import annotations

import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from course_builds import REPO, run
from generator.lessons import pages
from generator.site import downloads, notebook_files as notebooks
from generator.notebooks.cells import TODO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.slow

# The chapters with figures, each of which gets a notebook (the pages' own list, not typed here).
CHAPTERS = sorted(p.stem for p in (REPO / "content").glob("*.md") if pages.parse_file(p))
# What a notebook's code may import: numpy and the standard library's file and byte readers.
ALLOWED_IMPORTS = {"base64", "json", "struct", "pathlib", "numpy"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notebook-course")
    shutil.copytree(REPO / "content", root / "content", ignore=shutil.ignore_patterns("generated"))
    shutil.copytree(REPO / "traces", root / "traces")
    yml = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    yml = re.sub(r"(?m)^(\s*custom_dir:\s*)overrides\s*$", lambda m: f"{m.group(1)}{REPO / 'overrides'}", yml)
    (root / "mkdocs.yml").write_text(yml, encoding="utf-8")
    s = run([sys.executable, "-m", "generator", "site", "-f", "mkdocs.yml", "-d", str(root / "build" / "site")], cwd=root, timeout=900)
    assert s.returncode == 0, s.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def unzipped(built, tmp_path_factory) -> Path:
    """The offline zip's notebooks folder, unpacked somewhere else (nothing of the build beside it)."""
    out = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(built / "build" / "downloads" / downloads.ZIP_NAME) as zf:
        zf.extractall(out)
    return out / downloads.ZIP_ROOT / notebooks.NOTEBOOKS_DIR


# The kernel's network is off: Python runs this at its start (sitecustomize, found first on the
# kernel's PYTHONPATH), so a connection, a datagram or a name lookup for anything but the loopback
# address, which the kernel's own ZMQ channels use, raises with BLOCKED in its message.
BLOCKED = "network is off in the course's notebook tests"
STARTUP_MODULE = "sitecustomize"  # the module Python's site imports at start, if it finds one
OFFLINE_SITECUSTOMIZE = f'''
import ipaddress
import socket

_BLOCKED = {BLOCKED!r}


def _loopback(host):
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return str(host).lower() in ("localhost", "localhost.localdomain")


def _check(address):
    if isinstance(address, tuple) and address and not _loopback(address[0]):
        raise ConnectionRefusedError(f"{{_BLOCKED}}: {{address[0]}}:{{address[1]}}")


class _Socket(socket.socket):
    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _check(address)
        return super().connect(address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _check(address)
        return super().connect_ex(address)

    def sendto(self, data, *args):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _check(args[-1])
        return super().sendto(data, *args)


_getaddrinfo = socket.getaddrinfo


def _lookup(host, *args, **kwargs):
    if host is not None and not _loopback(host.decode() if isinstance(host, bytes) else host):
        raise socket.gaierror(f"{{_BLOCKED}}: no name lookup for {{host}}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket = _Socket
socket.getaddrinfo = _lookup
'''


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory) -> dict[str, str]:
    """The kernel's environment: this process's, with the blocker first on PYTHONPATH."""
    folder = tmp_path_factory.mktemp("offline-kernel")
    (folder / f"{STARTUP_MODULE}.py").write_text(OFFLINE_SITECUSTOMIZE, encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])])
    return env


def execute(nb, folder: Path, env: dict[str, str]):
    nbclient.NotebookClient(nb, timeout=300, startup_timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute(env=env)  # the kernel's start is a bound, not a wait: under load it took over nbclient's default 60 s
    return nb


def printed(nb) -> list[str]:
    """Every line a notebook printed. A cell's stdout is joined first: the kernel may send one
    print() as two stream messages (seen under load: a line cut after its colon)."""
    return [line for c in nb.cells if c.cell_type == "code"
            for line in "".join(o["text"] for o in c.outputs if o.get("name") == "stdout").splitlines()]


def answers(nb) -> dict[str, str]:
    """Each exercise's answer, from the notebook's last (collapsed) cell."""
    if not exercises(nb):
        return {}
    last = nb.cells[-1]
    assert "answers" in last.metadata.get("tags", []), "the last cell is not the answers cell"
    assert last.metadata["jupyter"]["source_hidden"] is True and last.metadata["collapsed"] is True
    parts = re.split(r"(?m)^# --- (\S+)\n", last.source)[1:]
    return {name: code.strip() for name, code in zip(parts[::2], parts[1::2])}


def exercises(nb) -> list:
    return [c for c in nb.cells if c.get("metadata", {}).get("course", {}).get("exercise")]


def filled(nb, wrong: dict[str, str] | None = None):
    """The notebook with every exercise cell holding its answer (or the planted wrong one)."""
    sol = answers(nb)
    for c in exercises(nb):
        name = c.metadata["course"]["exercise"]
        c.source = (wrong or {}).get(name) or sol[name]
    return nb


def test_every_chapter_has_a_notebook_with_its_data_in_the_zip_and_a_bundle(built):
    assert CHAPTERS, "no chapter with figures"
    site = built / "build" / "site"
    with zipfile.ZipFile(built / "build" / "downloads" / downloads.ZIP_NAME) as zf:
        names = set(zf.namelist())
        for stem in CHAPTERS:
            nb_name = f"{downloads.ZIP_ROOT}/{notebooks.NOTEBOOKS_DIR}/{stem}.ipynb"
            assert nb_name in names
            nb = nbformat.reads(zf.read(nb_name).decode("utf-8"), as_version=4)
            for path in re.findall(r"load_json\(['\"]([^'\"]+)['\"]\)", "\n".join(c.source for c in nb.cells)):
                assert f"{downloads.ZIP_ROOT}/{notebooks.NOTEBOOKS_DIR}/data/{path}" in names, (stem, path)
            page = zf.read(f"{downloads.ZIP_ROOT}/{stem}.html").decode("utf-8")
            assert f'href="./{notebooks.NOTEBOOKS_DIR}/{stem}.ipynb"' in page, f"{stem}.html in the zip does not link to its notebook"
            assert notebooks.BUNDLE_SUFFIX not in page
        assert not any(n.endswith(notebooks.BUNDLE_SUFFIX) for n in names)
    for stem in CHAPTERS:
        bundle = site / downloads.DOWNLOADS_DIR / f"{stem}{notebooks.BUNDLE_SUFFIX}"
        with zipfile.ZipFile(bundle) as zf:
            assert f"{stem}/{stem}.ipynb" in zf.namelist()
        hosted = (site / f"{stem}.html").read_text(encoding="utf-8")
        link = f'href="./{downloads.DOWNLOADS_DIR}/{stem}{notebooks.BUNDLE_SUFFIX}"'
        assert link in hosted, f"{stem}.html does not link to its notebook"
        assert hosted.index(link) < hosted.index("course-fig"), "the notebook link is not at the chapter's head"
        onefile = (site / downloads.DOWNLOADS_DIR / f"{stem}.html").read_text(encoding="utf-8")
        assert f'href="{stem}{notebooks.BUNDLE_SUFFIX}"' in onefile, f"the one-file {stem}.html does not link to its notebook"


def test_notebooks_store_no_outputs_and_read_only_numpy_and_their_own_files(built):
    for p in sorted((built / "build" / "site" / notebooks.NOTEBOOKS_DIR).glob("*.ipynb")):
        nb = nbformat.reads(p.read_text(encoding="utf-8"), as_version=4)
        nbformat.validate(nb)
        assert [c.id for c in nb.cells] == [f"cell-{n:02d}" for n in range(len(nb.cells))]
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        for c in nb.cells:
            if c.cell_type == "code":
                assert c.outputs == [] and c.execution_count is None, p.name
        imported = set(re.findall(r"(?m)^\s*(?:import|from)\s+(\w+)", code)) | {
            m.strip() for line in re.findall(r"(?m)^\s*import\s+(.+)$", code) for m in re.sub(r"\bas \w+", "", line).split(",")}
        assert imported <= ALLOWED_IMPORTS, (p.name, imported - ALLOWED_IMPORTS)
        assert not re.search(r"https?://|\.\./|open\(\s*['\"]/", code), p.name


@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_notebook_runs_and_every_check_passes(unzipped, offline_env, stem):
    path = unzipped / f"{stem}.ipynb"
    shipped = execute(nbformat.read(path, as_version=4), unzipped, offline_env)  # as the learner gets it
    names = [c.metadata["course"]["exercise"] for c in exercises(shipped)]
    out = printed(shipped)
    for name in names:
        assert f"{name}: right" in "\n".join(out), f"{stem}: the answer to {name} does not pass its check"
    done = execute(filled(nbformat.read(path, as_version=4)), unzipped, offline_env)
    right = [line for line in printed(done) if ": right (within" in line]
    checks = len(re.findall(r"(?m)^check\(", "\n".join(c.source for c in done.cells if c.cell_type == "code")))
    assert len(right) == checks, f"{stem}: {checks} checks, {len(right)} passed: {printed(done)}"
    assert not [line for line in printed(done) if "not done yet" in line]
    warned = [o["text"] for c in done.cells if c.cell_type == "code" for o in c.outputs if o.get("name") == "stderr"]
    assert not warned, f"{stem}: a right answer printed warnings: {warned}"
    if stem == "gpt2" and not (REPO / "traces" / "gpt2").is_dir():  # one short notebook that says what it lacks
        source = "\n".join(c.source for c in shipped.cells)
        assert "built without the weights of GPT-2 small" in source and "traces pending" not in source
        assert "- one head, step by step" in source and "- head-type scores" in source


def test_a_wrong_answer_fails_its_check_with_a_clear_message(unzipped, offline_env):
    nb = nbformat.read(unzipped / "attention.ipynb", as_version=4)
    planted = "scaled = np.where(below, scores / head_dim, -np.inf)  # forgot the square root\ncheck(scaled, 'scaled')"
    with pytest.raises(nbclient.exceptions.CellExecutionError) as err:
        execute(filled(nb, wrong={"scaled": planted}), unzipped, offline_env)
    assert err.value.ename == "AssertionError"
    assert re.match(r"scaled: wrong at \(\d+, \d+\): yours is -?[\d.e-]+, the trace's is -?[\d.e-]+ \(off by", err.value.evalue), err.value.evalue
    ran = [c for c in nb.cells if c.cell_type == "code" and c.get("outputs")]
    assert ran[-1].metadata.get("course", {}).get("exercise") == "scaled"  # it stopped at that cell
    assert TODO.startswith("None")  # what an exercise cell starts with: "not done yet", not an error


# A plausible mistake for each of the causal chapter's exercises: the wrong head, zeros for the
# average, the wrong sentence's output, the stream without the final layer norm.
CAUSAL_MISTAKES = {  # each section's own names (generator/notebooks/names.py): ab_, dla_, pt_, lens_
    "averaged": "out = logits(ab_ids, removed=(1, 2))\naveraged = out[ab_pos, ab_a_id] - out[ab_pos, ab_b_id]\ncheck(averaged, 'averaged')",
    "share": "share_of_head = share(clean_run['outs'][1, 3, dla_pos] @ P['transformer.h.1.attn.c_proj.weight'][96:128])\ncheck(share_of_head, 'share')",
    "patched": "out = run(ids_into, {(1, 2): run(ids_into)['outs'][1, 2]})['logits']\npatched_gap = out[pt_pos, pt_a_id] - out[pt_pos, pt_b_id]\ncheck(patched_gap, 'patched')",
    "lens": "lens = softmax_rows(run(lens_token_ids)['stages'][:, lens_pos] @ W_U.T).max(-1)\ncheck(lens, 'lens')",
}


@pytest.mark.parametrize("name", sorted(CAUSAL_MISTAKES))
def test_a_wrong_causal_answer_fails_its_check(unzipped, offline_env, name):
    nb = nbformat.read(unzipped / "causal.ipynb", as_version=4)
    with pytest.raises(nbclient.exceptions.CellExecutionError) as err:
        execute(filled(nb, wrong={name: CAUSAL_MISTAKES[name]}), unzipped, offline_env)
    assert err.value.ename == "AssertionError"
    assert err.value.evalue.startswith(f"{name}: wrong"), err.value.evalue


def test_the_causal_notebook_redoes_each_causal_test_and_not_the_walk(built):
    """Chapter 5's notebook has a section per causal figure kind (mean-ablation within the ablation
    one) and none of chapter 3's walk through one head, whose notebook keeps it."""
    nb_dir = built / "build" / "site" / notebooks.NOTEBOOKS_DIR
    causal = nbformat.reads((nb_dir / "causal.ipynb").read_text(encoding="utf-8"), as_version=4)
    text = "\n".join(c.source for c in causal.cells)
    for heading in ("## The tiny model in numpy", "## Removing a head", "### With its average output instead",
                    "## Direct logit attribution", "## Activation patching", "## The logit lens"):
        assert text.count(heading + "\n") == 1, heading
    assert text.count("def run(") == 1  # the model is written out once
    walk = walk_steps("tiny")
    assert not [c for c in causal.cells if c.metadata.get("course", {}).get("step") in walk]
    chapter3 = nbformat.reads((nb_dir / "attention.ipynb").read_text(encoding="utf-8"), as_version=4)
    assert walk <= {c.metadata.get("course", {}).get("step") for c in chapter3.cells}


@pytest.mark.parametrize("attempt", [
    'socket.create_connection(("93.184.216.34", 80), timeout=5)',
    'socket.getaddrinfo("example.com", 80)',
    'socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))',
])
def test_the_notebooks_kernel_has_no_network(unzipped, offline_env, attempt):
    """A planted cell that reaches out fails with the blocker's message, in the kernel that runs
    every notebook here; the loopback address still works (the kernel's own channels use it)."""
    nb = nbformat.read(unzipped / "tokens.ipynb", as_version=4)
    loopback = nbformat.v4.new_code_cell(
        "import socket\nserver = socket.socket()\nserver.bind(('127.0.0.1', 0))\nserver.listen()\n"
        "socket.create_connection(server.getsockname(), timeout=5).close()\nprint('loopback works')")
    nb.cells = [nb.cells[0], loopback, nbformat.v4.new_code_cell(f"import socket\n{attempt}")]
    with pytest.raises(nbclient.exceptions.CellExecutionError) as err:
        execute(nb, unzipped, offline_env)
    assert BLOCKED in err.value.evalue, (err.value.ename, err.value.evalue)
    assert "loopback works" in printed(nb)


def test_the_ablation_notebook_reproduces_the_pages_number(unzipped, built, offline_env):
    nb = execute(nbformat.read(unzipped / "causal.ipynb", as_version=4), unzipped, offline_env)
    line = next(line for line in printed(nb) if line.startswith("the page's number, from the trace:"))
    number = line.rsplit(" ", 1)[1]
    page = (built / "build" / "site" / "causal.html").read_text(encoding="utf-8").replace("\u2212", "-")
    assert number in page, f"the causal page does not show {number}"
    assert "removed: right" in "\n".join(printed(nb))


def test_notebooks_are_byte_identical_across_builds(built, tmp_path):
    again = tmp_path / "again"
    notebooks.write_notebooks(built / "content", built / "traces", again)
    site = built / "build" / "site"
    first = {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.glob(f"{notebooks.NOTEBOOKS_DIR}/**/*")) if p.is_file()}
    first |= {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.glob(f"{downloads.DOWNLOADS_DIR}/*{notebooks.BUNDLE_SUFFIX}"))}
    second = {p.relative_to(again).as_posix(): p.read_bytes() for p in sorted(again.rglob("*")) if p.is_file()}
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_bench_prints_every_notebooks_size(built):
    from generator.bench.notebook_sizes import notebook_sizes

    lines = notebook_sizes(built / "content", built / "traces")
    for stem in CHAPTERS:
        assert any(re.match(rf"notebook {stem}\.ipynb: [\d.]+ kB, reads \d+ files \([\d.]+ MB\); its download [\d.]+ MB$", line) for line in lines), lines
    assert re.match(r"notebooks/ in the offline zip: [\d.]+ MB, [\d.]+ MB compressed$", lines[-1])


def code_blocks(html_text: str) -> list[str]:
    import html

    return [html.unescape(re.sub(r"<[^>]+>", "", m)).strip("\n") for m in re.findall(r"<pre>(.*?)</pre>", html_text, re.S)]


def code_tabs(md_text: str) -> list[list[str]]:
    """The lines of every `=== "Code"` tab of a lesson (up to the next line indented no deeper)."""
    lines, tabs = md_text.split("\n"), []
    for n, line in enumerate(lines):
        m = re.match(r'^(\s*)=== "Code"\s*$', line)
        if not m:
            continue
        body = []
        for rest in lines[n + 1:]:
            if rest.strip() and len(rest) - len(rest.lstrip()) <= len(m.group(1)):
                break
            body.append(rest)
        tabs.append(body)
    return tabs


def walk_steps(model: str) -> set[str]:
    """The steps of the one-head walk that a chapter's notebook holds once its traces exist."""
    from generator.notebooks import cells as notebook_cells

    return {c.step for c in notebook_cells.attention("x.json", model, "x", 0, 0, 0, "x").cells if c.step}


def test_every_code_tab_has_a_python_view_that_is_a_cell_of_its_notebook(built):
    from generator.notebooks.cells import step

    site = built / "build" / "site"
    views = pending = 0
    for stem in CHAPTERS:
        md = (built / "content" / f"{stem}.md").read_text(encoding="utf-8")
        tabs = code_tabs(md)
        marks = [re.findall(r"(?m)^\s*\[\[python:([^\]]*)\]\]\s*$", "\n".join(tab)) for tab in tabs]
        assert all(len(m) == 1 for m in marks), f"{stem}: a Code tab without one Python view ({[len(m) for m in marks]})"
        page = (site / f"{stem}.html").read_text(encoding="utf-8")
        nb = nbformat.reads((site / notebooks.NOTEBOOKS_DIR / f"{stem}.ipynb").read_text(encoding="utf-8"), as_version=4)
        cells = {c.metadata["course"]["step"]: c.source for c in nb.cells if "step" in c.metadata.get("course", {})}
        blocks = code_blocks(page)
        shown = 0
        for (names,) in marks:
            names = names.split()
            code = "\n\n".join(step(n) for n in names)
            if all(n in cells for n in names):
                assert all(cells[n] == step(n) for n in names)
                assert code in blocks, f"{stem}: the Python view of {names} is not the notebook's cells"
                shown += 1
            else:  # the chapter's traces are missing: so is that part of its notebook, and of the page
                source = "\n".join(c.source for c in nb.cells)
                assert "traces pending" in source or "built without the weights" in source, f"{stem}: {names} are not in its notebook"
                assert set(names) <= walk_steps("gpt2"), f"{stem}: {names} are not steps the traced notebook would hold"
                assert not any(step(n) in b for n in names for b in blocks), f"{stem}: the page shows {names}, which its notebook lacks"
                pending += 1
        views += shown
        assert page.count('href="#course-notebook"') == shown and 'id="course-notebook"' in page
    assert views >= 15 - pending and views >= 12, (views, pending)
    if not (REPO / "traces" / "gpt2").is_dir():
        assert pending == len(code_tabs((REPO / "content" / "gpt2.md").read_text(encoding="utf-8")))


def test_a_python_view_under_a_needs_traces_mark_is_left_out_while_its_traces_are_pending(site_builder):
    """A GPT-2 figure with no trace: the view and its link give way to the note, as the JavaScript
    lines do; a mistake after the view still names its own line."""
    from catalogue import GPT2_FIG

    tab = (
        '=== "Code"\n\n    === "JavaScript"\n\n        The head is layer {{ g.layer }}.\n        {: .needs-traces }\n\n'
        '    === "Python"\n\n        In the notebook, layer {{ g.layer }}:\n        {: .needs-traces }\n\n'
        '        [[python: head scores]]\n        {: .needs-traces }\n'
    )
    from conftest import synthetic_trace

    elsewhere = [synthetic_trace("A sentence GPT-2 has read", model="gpt2")]  # GPT-2 in this copy, not this sentence
    built = site_builder({"ch.md": f"# Chapter\n\n{GPT2_FIG}\n{tab}"}, traces=elsewhere, strict=False)
    assert built.returncode == 0, built.log[-2000:]
    page = (built.site / "ch.html").read_text(encoding="utf-8")
    from generator.markdown.python_view import LINK_LINE
    from generator.notebooks.cells import step

    assert ">Python</label>" in page and page.count("course-traces-note") == 2  # one in each tab
    assert not [b for b in code_blocks(page) if "q @ k.T" in b or step("head") in b]
    assert "#course-notebook" not in page and LINK_LINE.split("[")[0].strip() not in page
    text = f"# Chapter\n\n{GPT2_FIG}\n{tab}\nA typo: {{{{ g.nonsense }}}}\n"
    line = text.split("\n").index("A typo: {{ g.nonsense }}") + 1
    broken = site_builder({"ch.md": text}, traces=elsewhere, strict=False)
    assert broken.returncode != 0 and f"ch.md:{line}:" in broken.log, broken.log[-2000:]


def test_an_unknown_python_step_is_one_line_naming_the_file_and_line():
    from generator.lessons.errors import LessonError
    from generator.markdown.python_view import expand

    lines = ["=== \"Code\"", "", "    [[python: grid]]", "    [[python: nonsense]]"]
    with pytest.raises(LessonError) as err:
        expand(lines, "content/x.md", 10)
    assert str(err.value).startswith("content/x.md:13: [[python: …]]: no notebook step 'nonsense'") and "\n" not in str(err.value)
    out = expand(lines[:3], "content/x.md", 10)
    assert out[2] == "    ```python" and all(line.startswith("    ") or not line for line in out[2:])


def test_a_gpt2_figure_with_traces_gets_its_walk_not_a_pending_note(tmp_path):
    from conftest import synthetic_trace, write_traces

    text = "The animal was tired"
    write_traces(tmp_path / "traces", [synthetic_trace(text, model="gpt2")])
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "ch.md").write_text(
        f'# GPT-2\n\n```attention\nmodel: gpt2\nsentence: "{text}"\npick: {{rule: max-weight, from: tired, to: animal}}\n```\n', encoding="utf-8")
    (nb,) = notebooks.write_notebooks(tmp_path / "content", tmp_path / "traces", tmp_path / "site")
    assert "traces pending" not in nb.text and "One head, step by step" in nb.text
    assert [f for f in nb.files if f.startswith("gpt2/")] and all((tmp_path / "site" / "notebooks" / "data" / f).is_file() for f in nb.files)
