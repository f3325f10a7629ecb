"""Helpers for the hardening tests (catalogue, crash safety, determinism, injection): run the
real commands as subprocesses into tmp folders, and fingerprint folders.

`python -m generator traces` needs the trained tiny checkpoint (generator/tiny_model/). Where it
is missing, :func:`traces_command` runs the same command line through tests/random_tiny_cli.py,
which swaps in a randomly initialised model of the tiny shape and otherwise runs generator.cli
unchanged."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY_DIR = REPO / "generator" / "tiny_model"
HAVE_TINY = (TINY_DIR / "model.safetensors").is_file() and (TINY_DIR / "tokenizer.json").is_file()
RANDOM_CLI = Path(__file__).resolve().parent / "random_tiny_cli.py"


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e.update(
        PYTHONHASHSEED="0",
        NO_MKDOCS_2_WARNING="1",
        TQDM_DISABLE="1",
        HF_HUB_OFFLINE="1",
        SOURCE_DATE_EPOCH="1700000000",
        OMP_NUM_THREADS="1",
    )
    e.update(extra)
    return e


def traces_command(*args: str, real: bool | None = None) -> list[str]:
    """`python -m generator traces ARGS` (with the random tiny stand-in when the trained one is
    missing, or when real=False)."""
    use_real = HAVE_TINY if real is None else real
    head = [sys.executable, "-m", "generator"] if use_real else [sys.executable, str(RANDOM_CLI)]
    return head + ["traces", "--models", "tiny", *args]


def run(cmd: list[str], cwd: Path = REPO, timeout: float = 300, **env_extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env(**env_extra), capture_output=True, text=True, timeout=timeout)


def tree_digest(root: Path, skip=lambda rel: False) -> dict[str, str]:
    """{relative path: sha256} of every file under root (empty when root does not exist)."""
    root = Path(root)
    if not root.exists():
        return {}
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if not skip(rel):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def tree_stat(root: Path) -> dict[str, tuple[int, int]]:
    """{relative path: (mtime_ns, size)} of every file and folder under root."""
    root = Path(root)
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.rglob("*"))}
