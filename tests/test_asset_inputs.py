"""Every file the asset step reads, damaged in a copy of the project, gives one line (the file,
what is wrong, a Fix:), no Python frames, exit 1, and leaves content/assets/generated/ as it was
(issue 51, item 2). Through the real `python -m generator assets`, and `python -m generator site`
for the case the review found (a truncated tokenizer.json was a NoTokenizer traceback) and a few
more. The real files in the repository are never touched: the copy's files are hard links, and a
damage always unlinks before it writes."""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import lily_trace, synthetic_trace, test_mkdocs_yml, write_traces
from course_builds import REPO, run, tree_digest

pytestmark = pytest.mark.slow

TINY = "generator/tiny_model"
TOKENIZER, WEIGHTS, CONFIG = f"{TINY}/tokenizer.json", f"{TINY}/model.safetensors", f"{TINY}/config.json"
VENDOR_JSON, BUNDLE = "generator/assets/vendor/VENDOR.json", "generator/assets/vendor/plotly-cartesian.min.js"
ORDER, CSS = "generator/assets/js/ORDER", "generator/assets/course.css"
PLAY_PART, TEMPLATE = "generator/assets/play/runner.js", "generator/render/templates/ablation.html"
LILY = "Lily wanted to play with her"
LESSON = f'# Lesson\n\n```attention\nmodel: tiny\nsentence: "{LILY}"\nlayer: 3\nhead: 3\nid: lily\n```\n'


def _ignore(folder, names):
    return [n for n in names if n == "__pycache__"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A project whose package is a copy of generator/ (hard links), with one lesson, Lily's and
    Ben's traces, and the assets written once."""
    root = tmp_path_factory.mktemp("assets-pristine")
    shutil.copytree(REPO / "generator", root / "generator", copy_function=os.link, ignore=_ignore)
    (root / "content").mkdir()
    (root / "content" / "index.md").write_text("# Home\n", encoding="utf-8")
    (root / "content" / "lesson.md").write_text(LESSON, encoding="utf-8")
    (root / "mkdocs.yml").write_text(test_mkdocs_yml(training_log="no-training-log.json"), encoding="utf-8")
    write_traces(root / "traces", [lily_trace(), synthetic_trace("Ben wanted to play with her")])
    done = assets(root)
    assert done.returncode == 0, done.stderr
    assert (root / "content" / "assets" / "generated" / "play-model.js").is_file()
    return root


def assets(root: Path):
    return run([sys.executable, "-m", "generator", "assets"], cwd=root, PYTHONPATH=str(root))


def copy_of(pristine: Path, root: Path) -> Path:
    shutil.copytree(pristine, root, copy_function=os.link, ignore=_ignore)
    return root


def _fresh(path: Path) -> None:
    """Unlink (the copy's file is a hard link to the repository's) or remove the folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def put(data: bytes):
    def damage(path: Path) -> None:
        old = path.read_bytes() if path.is_file() else b""
        _fresh(path)
        path.write_bytes(data if not callable(data) else data(old))
    return damage


def truncated(path: Path) -> None:
    put(lambda old: old[: len(old) // 2])(path)


empty = put(b"")
not_utf8 = put(b'{"a": "caf\xe9"}')


def missing(path: Path) -> None:
    _fresh(path)


def a_folder(path: Path) -> None:
    _fresh(path)
    path.mkdir()
    (path / "x").write_text("x", encoding="utf-8")


def json_edit(edit):
    def damage(path: Path) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        edit(doc)
        put(json.dumps(doc).encode("utf-8"))(path)
    return damage


def safetensors_edit(edit):
    """The committed weights, `edit`ed ({name: float32 array}), written as a safetensors file."""
    def damage(path: Path) -> None:
        from generator.render import play_model

        tensors = play_model.read_safetensors(path)
        edit(tensors)
        header, body, offset = {}, [], 0
        for name, a in tensors.items():
            raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
            header[f"transformer.{name}"] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
            body.append(raw)
            offset += len(raw)
        head = json.dumps(header).encode("utf-8")
        put(struct.pack("<Q", len(head)) + head + b"".join(body))(path)
    return damage


def _nan(t):
    t["ln_f.bias"][3] = np.nan


CASES = {
    # the tiny model's tokenizer (the review's case), weights and config
    "tokenizer-truncated": (TOKENIZER, truncated, "is not valid JSON"),
    "tokenizer-empty": (TOKENIZER, empty, "is empty"),
    "tokenizer-a-list": (TOKENIZER, put(b"[1, 2]"), "is not a JSON object"),
    "tokenizer-not-utf8": (TOKENIZER, not_utf8, "is not UTF-8"),
    "tokenizer-a-folder": (TOKENIZER, a_folder, "is not a regular file"),
    "tokenizer-missing": (TOKENIZER, missing, "is missing"),
    "tokenizer-without-merges": (TOKENIZER, json_edit(lambda d: d["model"].pop("merges")), "model.merges"),
    "tokenizer-a-token-short": (TOKENIZER, json_edit(lambda d: d["model"]["vocab"].pop(next(iter(d["model"]["vocab"])))), "0, 1, 2"),
    "tokenizer-not-a-bpe": (TOKENIZER, json_edit(lambda d: d["model"].__setitem__("type", "Nonsense")), "tokenizer"),
    "weights-truncated": (WEIGHTS, truncated, "do not hold shape"),
    "weights-empty": (WEIGHTS, empty, "is empty"),
    "weights-a-folder": (WEIGHTS, a_folder, "is not a regular file"),
    "weights-missing": (WEIGHTS, missing, "is missing"),
    "weights-header-garbage": (WEIGHTS, put(struct.pack("<Q", 4) + b"[1]\n" + b"\0" * 64), "unreadable header"),
    "weights-a-tensor-of-another-shape": (WEIGHTS, safetensors_edit(lambda t: t.__setitem__("wte.weight", t["wte.weight"][:100])), "wte.weight has shape [100, 128]"),
    "weights-a-tensor-gone": (WEIGHTS, safetensors_edit(lambda t: t.pop("h.2.mlp.c_fc.bias")), "missing h.2.mlp.c_fc.bias"),
    "weights-not-a-number": (WEIGHTS, safetensors_edit(_nan), "ln_f.bias holds a value that is not a finite number"),
    "config-truncated": (CONFIG, truncated, "is not valid JSON"),
    "config-empty": (CONFIG, empty, "is empty"),
    "config-a-folder": (CONFIG, a_folder, "is not a regular file"),
    "config-missing": (CONFIG, missing, "is missing"),
    "config-heads-do-not-divide": (CONFIG, json_edit(lambda d: d.__setitem__("n_head", 3)), "is not a multiple of n_head 3"),
    "config-layers-a-string": (CONFIG, json_edit(lambda d: d.__setitem__("n_layer", "4")), "has no usable n_layer"),
    # which of the two is wrong cannot be known: the weights are named, and config.json beside them
    "config-one-layer-more": (CONFIG, json_edit(lambda d: d.__setitem__("n_layer", 5)), (WEIGHTS, "missing h.4.ln_1.weight")),
    # the vendored Plotly bundle and its manifest
    "vendor-manifest-truncated": (VENDOR_JSON, truncated, "is not valid JSON"),
    "vendor-manifest-missing": (VENDOR_JSON, missing, "is missing"),
    "vendor-manifest-names-another-file": (VENDOR_JSON, json_edit(lambda d: d.__setitem__("file", "../../tiny_model/config.json")), "does not name the bundle"),
    "bundle-truncated": (BUNDLE, truncated, "does not match the sha256"),
    "bundle-missing": (BUNDLE, missing, "is missing"),
    "bundle-a-folder": (BUNDLE, a_folder, "is not a regular file"),
    # the scripts' parts, the stylesheet, a template
    "course-js-order-missing": (ORDER, missing, "is missing"),
    "course-js-order-lists-a-ghost": (ORDER, put(lambda old: old + b"ghost.js\n"), "listed but missing: ghost.js"),
    "play-part-missing": (PLAY_PART, missing, "is missing"),
    "play-part-not-utf8": (PLAY_PART, put(b"var x = 'caf\xe9';\n"), "is not UTF-8"),
    "course-css-missing": (CSS, missing, "is missing"),
    "course-css-a-folder": (CSS, a_folder, "is not a regular file"),
    "ablation-template-broken": (TEMPLATE, put(b"<div>{% for x in %}</div>\n"), "cannot be used to write play.js"),
    # the traces a page shows
    "index-truncated": ("traces/tiny/index.json", truncated, "is not valid JSON"),
}


def error_line(stderr: str, rel: str) -> str:
    assert "Traceback" not in stderr and 'File "' not in stderr, f"Python frames:\n{stderr}"
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {rel}: ") and ". Fix: " in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_file_the_asset_step_reads_is_one_line_and_writes_nothing(case, pristine, tmp_path):
    rel, damage, says = CASES[case]
    named, says = says if isinstance(says, tuple) else (rel, says)
    root = copy_of(pristine, tmp_path / "project")
    damage(root / rel)
    generated = root / "content" / "assets" / "generated"
    before = tree_digest(generated)
    done = assets(root)
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr, named)
    assert says in line, line
    assert tree_digest(generated) == before, "the failed asset step changed content/assets/generated/"
    assert sorted(p.name for p in generated.parent.iterdir()) == ["generated"], "a folder was left behind"


@pytest.mark.parametrize("case", ["tokenizer-truncated", "weights-a-tensor-of-another-shape", "bundle-missing", "config-missing"])
def test_make_site_says_the_same_line_and_keeps_the_old_site(case, pristine, tmp_path):
    rel, damage, says = CASES[case]
    root = copy_of(pristine, tmp_path / "project")
    site = root / "build" / "site"
    done = run([sys.executable, "-m", "generator", "site", "-d", str(site)], cwd=root, PYTHONPATH=str(root))
    assert done.returncode == 0, done.stderr
    old = tree_digest(site)
    damage(root / rel)
    done = run([sys.executable, "-m", "generator", "site", "-d", str(site)], cwd=root, PYTHONPATH=str(root))
    assert done.returncode == 1, done.stderr
    assert says in error_line(done.stderr, rel)
    assert tree_digest(site) == old
    assert not [p.name for p in site.parent.iterdir() if p.name.startswith(".site.")], "a temporary folder was left behind"


@pytest.mark.parametrize("case", ["tokenizer-truncated", "vendor-manifest-missing"])
def test_make_check_names_the_damaged_file_too(case, pristine, tmp_path):
    """`make check` (and `make serve`) write a missing asset through the Markdown extension, while
    a figure renders: the same line, not the figure's."""
    rel, damage, says = CASES[case]
    root = copy_of(pristine, tmp_path / "project")
    shutil.rmtree(root / "content" / "assets")
    damage(root / rel)
    done = run([sys.executable, "-m", "generator", "check", "--no-cache"], cwd=root, PYTHONPATH=str(root))
    assert done.returncode == 1, done.stderr
    assert says in error_line(done.stderr, rel)
