"""One GPT-2-shaped course per test run, shared by every test (and every xdist worker) that needs
GPT-2's shape: the `gpt2_shaped` fixture (tests/conftest.py) -> :class:`Gpt2Shaped`.

GPT-2 small's published shape with random weights (transformers' GPT2LMHeadModel, seed 0) is
saved with `save_pretrained`, with the committed tokenizer, as a user's local copy would be.
`python -m generator traces --models gpt2 --scoring-set small` loads it through COURSE_GPT2_PATH
(no stand-in flag, COURSE_ALLOW_STANDIN unset, the hub switched off) and traces every GPT-2
sentence of a copy of the course and the small scoring set (heads.SCORING_SIZES: the same code as
the full set, on 3 of its 12 texts); `python -m generator site --strict` builds that copy.

The first worker that asks builds it under a file lock, in the run's shared temporary folder
(beside the workers' own); the others wait for it and read the same folder. A failed build is
recorded there, so each test that needs it fails at once with the same message instead of
building again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GPT2_FILES = REPO / "generator" / "gpt2"
FOLDER = "gpt2-shaped-course"
SCORING_SET = "small"


def run(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("COURSE_ALLOW_STANDIN", "COURSE_GPT2_PATH")}
    # one torch thread: the suite's other worker has the other core (two threads on one free core
    # took 267 s against 238 s for one, the GPT-2-shaped trace beside a busy loop)
    full.update({"NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}, **env)
    return subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, timeout=1500)  # GPT-2-shaped: the whole chapter, its scoring set and circuits.json


def save_random_gpt2(folder: Path) -> None:
    """GPT-2 small's published shape with random weights, saved as a user's local copy would be."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    config = GPT2Config.from_json_file(str(GPT2_FILES / "config.json"))
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(folder)
    # from_pretrained reads vocab.json and merges.txt (transformers 5 ignores them as constructor
    # arguments and makes a tokenizer of one token)
    tokenizer = GPT2TokenizerFast.from_pretrained(str(GPT2_FILES))
    assert len(tokenizer) == config.vocab_size
    tokenizer.save_pretrained(folder)


@dataclass(frozen=True)
class Gpt2Shaped:
    root: Path  # the course copy: content/, traces/ (tiny and tiny-rope committed, gpt2 traced here), site/
    log: str  # the strict site build's output
    sha12: str  # the first 12 hex digits of the sha256 of the local copy's weights

    @property
    def traces(self) -> Path:
        return self.root / "traces"


def build(base: Path) -> Gpt2Shaped:
    """The local copy and the course traced and built with it, under `base` (see the module)."""
    local = base / "gpt2-local-copy"
    local.mkdir(parents=True, exist_ok=True)
    save_random_gpt2(local)
    root = base / "course-copy"
    shutil.copytree(REPO / "content", root / "content", ignore=shutil.ignore_patterns("generated"))
    for model in ("tiny", "tiny-rope"):  # the committed traces of the course's own models
        shutil.copytree(REPO / "traces" / model, root / "traces" / model)
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "custom_dir: overrides" in config
    (root / "mkdocs.yml").write_text(config.replace("custom_dir: overrides", f"custom_dir: {json.dumps(str(REPO / 'overrides'))}"), encoding="utf-8")
    repo_gpt2 = REPO / "traces" / "gpt2"
    before = sorted(repo_gpt2.rglob("*")) if repo_gpt2.is_dir() else []
    env = {"COURSE_GPT2_PATH": str(local), "PYTHONPATH": str(REPO)}
    traced = run([sys.executable, "-m", "generator", "traces", "--models", "gpt2", "--scoring-set", SCORING_SET,
                  "--traces-dir", str(root / "traces"), "--content", str(root / "content")], root, env)
    assert traced.returncode == 0, traced.stdout + traced.stderr
    after = sorted(repo_gpt2.rglob("*")) if repo_gpt2.is_dir() else []
    assert before == after, "tracing the local copy wrote into the repository's traces/gpt2"
    built = run([sys.executable, "-m", "generator", "site", "--strict", "--no-downloads", "-f", "mkdocs.yml", "-d", str(root / "site")], root, env)
    assert built.returncode == 0, built.stdout + built.stderr
    sha12 = hashlib.sha256((local / "model.safetensors").read_bytes()).hexdigest()[:12]
    (root / "site.log").write_text(built.stdout + built.stderr, encoding="utf-8")
    (base / "made.json").write_text(json.dumps({"sha12": sha12}), encoding="utf-8")
    return Gpt2Shaped(root, built.stdout + built.stderr, sha12)


def shared(run_tmp: Path) -> Gpt2Shaped:
    """The run's one GPT-2-shaped course, in `run_tmp` (the folder every worker of this pytest run
    shares), built by whichever caller comes first (course_builds.built_once)."""
    from course_builds import built_once

    base = built_once(run_tmp, FOLDER, build)
    root = base / "course-copy"
    record = json.loads((base / "made.json").read_text(encoding="utf-8"))
    return Gpt2Shaped(root, (root / "site.log").read_text(encoding="utf-8"), record["sha12"])
