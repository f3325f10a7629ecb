"""A checkpoint is checked against the committed config before transformers loads it
(generator/model/checkpoint.py): a missing, unexpected or mis-shaped tensor, a file cut short, a
config of another size or a pickle is refused in one line, for both models, and nothing is traced
from it. transformers itself would fill a missing tensor with random numbers and only warn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from generator.model import checkpoint, load
from generator.model.load import ModelUnavailable

TINY = Path(__file__).resolve().parents[1] / "generator" / "tiny_model"
GPT2_CONFIG = Path(__file__).resolve().parents[1] / "generator" / "gpt2" / "config.json"


def tiny_copy(tmp_path: Path) -> Path:
    d = tmp_path / "tiny"
    shutil.copytree(TINY, d)
    return d


def test_the_committed_tiny_checkpoint_is_whole():
    assert checkpoint.checkpoint_problem("tiny", TINY) is None


def test_gpt2_small_has_148_tensors():
    assert len(checkpoint.expected_tensors(checkpoint.committed_shape("gpt2"), "gpt2")) == 148


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.pop("transformer.h.2.mlp.c_fc.bias"), "1 of the 52 tensors are missing (first: h.2.mlp.c_fc.bias)"),
    (lambda t: t.update({"transformer.h.9.ln_1.weight": np.zeros(128, np.float32)}), "1 unexpected tensor(s) (first: h.9.ln_1.weight)"),
    (lambda t: t.update({"transformer.h.0.attn.c_proj.weight": np.zeros((128, 64), np.float32)}), "tensor h.0.attn.c_proj.weight is [128, 64], not [128, 128]"),
])
def test_a_tiny_checkpoint_with_a_wrong_tensor_is_refused(tmp_path, edit, expected):
    d = tiny_copy(tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    edit(tensors)
    save_file(tensors, str(d / "model.safetensors"))
    assert checkpoint.checkpoint_problem("tiny", d) == f"{d / 'model.safetensors'}: {expected}"
    with pytest.raises(ModelUnavailable) as err:
        load.load_tiny(d)
    assert "\n" not in str(err.value) and expected in str(err.value) and "Fix:" in str(err.value)


def test_a_truncated_checkpoint_is_refused(tmp_path):
    d = tiny_copy(tmp_path)
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])
    problem = checkpoint.checkpoint_problem("tiny", d)
    assert problem and "runs past the end of the file" in problem
    (d / "model.safetensors").write_bytes(data[:100])
    assert "cut short, or not safetensors" in checkpoint.checkpoint_problem("tiny", d)


def test_a_config_of_another_size_is_refused_before_anything_is_allocated(tmp_path):
    d = tiny_copy(tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg["n_embd"] = 4096
    (d / "config.json").write_text(json.dumps(cfg))
    assert checkpoint.checkpoint_problem("tiny", d) == f"{d / 'config.json'}: n_embd is 4096, not 128 as in the committed tiny_model/config.json"


def gpt2_folder(tmp_path: Path, tensors: dict) -> Path:
    d = tmp_path / "gpt2"
    d.mkdir()
    shutil.copyfile(GPT2_CONFIG, d / "config.json")
    save_file(tensors, str(d / "model.safetensors"))
    return d


def test_a_gpt2_folder_holding_one_of_its_tensors_is_refused(tmp_path):
    d = gpt2_folder(tmp_path, {"wte.weight": np.zeros((2, 2), np.float32)})
    with pytest.raises(ModelUnavailable) as err:
        load.load_gpt2(path=d)
    msg = str(err.value)
    assert "\n" not in msg and "147 of the 148 tensors are missing" in msg and load.GPT2_PATH_ENV in msg


def test_a_pickle_checkpoint_is_refused(tmp_path):
    d = tmp_path / "gpt2"
    d.mkdir()
    shutil.copyfile(GPT2_CONFIG, d / "config.json")
    (d / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(ModelUnavailable) as err:
        load.load_gpt2(path=d)
    assert "a pickle checkpoint is not read" in str(err.value)


def test_a_gpt2_config_of_48_layers_is_refused(tmp_path):
    d = gpt2_folder(tmp_path, {"wte.weight": np.zeros((2, 2), np.float32)})
    cfg = json.loads((d / "config.json").read_text())
    cfg["n_layer"] = 48
    (d / "config.json").write_text(json.dumps(cfg))
    assert "n_layer is 48, not 12" in checkpoint.checkpoint_problem("gpt2", d)


def hf_cache(tmp_path: Path, tensors: dict | None = None) -> tuple[Path, Path]:
    """An HF cache laid out as huggingface_hub writes it, holding GPT-2's pinned snapshot folder."""
    from generator.registry import GPT2_HF_NAME, GPT2_REVISION

    cache = tmp_path / "hub"
    repo = cache / ("models--" + GPT2_HF_NAME.replace("/", "--"))
    snapshot = repo / "snapshots" / GPT2_REVISION
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(GPT2_REVISION)
    shutil.copyfile(GPT2_CONFIG, snapshot / "config.json")
    if tensors is not None:
        save_file(tensors, str(snapshot / "model.safetensors"))
    return cache, snapshot


def test_the_hf_cache_snapshot_is_found_without_the_network(tmp_path):
    cache, snapshot = hf_cache(tmp_path, {"wte.weight": np.zeros((2, 2), np.float32)})
    assert load.cached_gpt2_folder(cache) == snapshot
    assert load.cached_gpt2_folder(tmp_path / "empty") is None


@pytest.mark.parametrize("edit, expected", [
    ("one tensor", "147 of the 148 tensors are missing"),
    ("no weights", "model.safetensors: is missing"),
    ("48 layers", "n_layer is 48, not 12"),
])
def test_a_damaged_hf_cache_copy_is_refused_before_it_is_loaded(tmp_path, monkeypatch, edit, expected):
    cache, snapshot = hf_cache(tmp_path, None if edit == "no weights" else {"wte.weight": np.zeros((2, 2), np.float32)})
    if edit == "48 layers":
        cfg = json.loads((snapshot / "config.json").read_text())
        (snapshot / "config.json").write_text(json.dumps(cfg | {"n_layer": 48}))
    import transformers

    def never(*a, **k):  # the check comes first: transformers must not be asked to load it
        raise AssertionError("transformers was asked to load a damaged cache")

    monkeypatch.setattr(transformers.GPT2LMHeadModel, "from_pretrained", never)
    with pytest.raises(ModelUnavailable) as err:
        load.load_gpt2(check_hub=lambda: False, cache_dir=cache)
    msg = str(err.value)
    assert "\n" not in msg and "HF cache's copy is damaged" in msg and expected in msg
    assert str(snapshot) in msg and "Fix:" in msg


@pytest.mark.parametrize("damage", ["cut in half", "cut to 100 bytes", "one tensor gone"])
def test_make_traces_with_a_damaged_committed_tiny_checkpoint_is_one_line_and_writes_nothing(tmp_path, damage):
    """The reviewer's case as a user meets it: a checkout whose generator/tiny_model/model.safetensors
    is damaged. `python -m generator traces` exits non-zero with one line naming the file and a
    Fix, no traceback, and the store is not created."""
    import os
    import subprocess
    import sys

    checkout = tmp_path / "checkout"
    shutil.copytree(TINY.parent, checkout / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    weights = checkout / "generator" / "tiny_model" / "model.safetensors"
    data = weights.read_bytes()
    if damage == "one tensor gone":
        tensors = load_file(str(weights))
        tensors.pop(next(iter(tensors)))
        save_file(tensors, str(weights))
    else:
        weights.write_bytes(data[: len(data) // 2] if damage == "cut in half" else data[:100])
    (tmp_path / "content").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "generator", "traces", "--models", "tiny", "--sentence", "Lily wanted to play",
                           "--traces-dir", str(tmp_path / "traces"), "--content", str(tmp_path / "content")],
                          cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out, out
    [line] = [x for x in out.splitlines() if "model.safetensors" in x]
    assert str(weights) in line and "Fix:" in line, line
    assert not (tmp_path / "traces" / "tiny").exists() or not any((tmp_path / "traces" / "tiny").glob("*.json")), "a trace was written"


def sparse_safetensors(path: Path, shapes: dict[str, tuple[int, ...]]) -> None:
    """A float32 safetensors file of these tensors whose data is a hole (a sparse file): GPT-2
    small's 500 MB take no disk and no time, and the header is what the check reads."""
    import struct

    header, offset = {}, 0
    for name, shape in shapes.items():
        n = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + offset)


@pytest.mark.parametrize("edit, expected", [
    ("none", None),
    ("remove", "1 of the 148 tensors are missing (first: h.7.attn.c_proj.bias)"),
    ("add", "1 unexpected tensor(s) (first: h.12.ln_1.weight)"),
    ("reshape", "tensor h.3.mlp.c_fc.weight is [768, 3072, 1], not [768, 3072]"),
])
def test_a_gpt2_shaped_checkpoint_with_one_tensor_removed_added_or_reshaped_is_refused(tmp_path, monkeypatch, edit, expected):
    shapes = {f"transformer.{k}": v for k, v in checkpoint.expected_tensors(checkpoint.committed_shape("gpt2"), "gpt2").items()}
    if edit == "remove":
        shapes.pop("transformer.h.7.attn.c_proj.bias")
    elif edit == "add":
        shapes["transformer.h.12.ln_1.weight"] = (768,)
    elif edit == "reshape":
        shapes["transformer.h.3.mlp.c_fc.weight"] = (768, 3072, 1)
    d = tmp_path / "gpt2"
    d.mkdir()
    shutil.copyfile(GPT2_CONFIG, d / "config.json")
    sparse_safetensors(d / "model.safetensors", shapes)
    problem = checkpoint.checkpoint_problem("gpt2", d)
    if expected is None:
        assert problem is None
        return
    assert problem == f"{d / 'model.safetensors'}: {expected}"
    import transformers

    def never(*a, **k):
        raise AssertionError("transformers was asked to load a damaged checkpoint")

    monkeypatch.setattr(transformers.GPT2LMHeadModel, "from_pretrained", never)
    with pytest.raises(ModelUnavailable) as err:
        load.load_gpt2(path=d)
    assert "\n" not in str(err.value) and expected in str(err.value)
