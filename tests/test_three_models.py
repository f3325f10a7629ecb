"""One code path for three models (issue 52): the tiny GPT-2, a Llama of tiny-rope's shape (rotary
positions, 4 query heads sharing 2 key/value heads) and GPT-2 small's shape go through the same
tracer (model/tracing.py, which reads a model only through model/arch.py), the same schema-5 store
and the same loader; no module outside the registry and arch.py names an architecture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from generator import schema
from generator.store import TraceStore
from generator.store.files import DamagedFile
from trace_helpers import REPO, fake_doc, random_tiny, small_tokenizer

TEXT = "Lily wanted to play with her ball."


def random_rope(seed: int = 0):
    """tiny-rope's committed shape (its config.json), random weights: no checkpoint needed."""
    from generator.model import load

    return load.from_parts("tiny-rope", load.random_like("tiny-rope", seed=seed), small_tokenizer(), "test-random")


def traced_and_stored(lm, tmp_path: Path) -> tuple[dict, "object"]:
    """The one path: capture (self-checked against transformers' own weights and out-projection
    input), the document, the store's file, the loader. The causal block is a stand-in (causal.py is
    its own test's)."""
    from causal_helpers import fake_causal
    from generator.model import tracing

    ids = tracing.token_ids(lm, TEXT)
    cap = tracing.capture(lm, ids)
    tracing.self_check(cap, lm.name)
    doc = tracing.to_document(lm, TEXT, cap, ids_given=False)
    d = lm.dims
    doc["causal"] = fake_causal(d.n_layer, d.n_head, len(ids), vocab_size=d.vocab)
    TraceStore(tmp_path).write(doc)
    return TraceStore(tmp_path).load(lm.name, TEXT), cap


def check_groups(trace: dict, rotary: bool) -> None:
    """Query heads of one group read identical k and v (their kvHead's); the scores are q·k of the
    restored (rotated) q and k; a rotary model's q and k are its unrotated ones turned by position."""
    torch = pytest.importorskip("torch")
    from generator.model import arch

    meta = trace["meta"]
    H, G, d = meta["nHead"], meta["nKvHead"], meta["headDim"]
    assert meta["positions"] == ("rotary" if rotary else "learned") and (meta["ropeTheta"] is not None) == rotary
    T = len(trace["tokens"])
    freq = 1.0 / meta["ropeTheta"] ** (np.arange(0, d, 2) / d) if rotary else None  # (head_dim / 2,)
    for layer in trace["layers"]:
        assert len(layer["kvHeads"]) == G
        for h, head in enumerate(layer["heads"]):
            g = h // (H // G)
            assert head["kvHead"] == g
            assert head["k"] == layer["kvHeads"][g]["k"] and head["v"] == layer["kvHeads"][g]["v"]
            q, k = np.array(head["q"]), np.array(head["k"])  # (token, head_dim)
            scaled = q @ k.T / np.sqrt(d)  # (query, key)
            below = np.tril(np.ones((T, T), dtype=bool))
            sm = np.array([[0.0 if x is None else x for x in r] for r in head["scaledMasked"]])
            assert np.abs(scaled - sm)[below].max() <= 2e-3 * (1 + np.abs(sm).max())
            if rotary:
                angle = np.arange(T)[:, None] * np.concatenate([freq, freq])[None, :]  # (token, head_dim)
                cos, sin = torch.tensor(np.cos(angle)), torch.tensor(np.sin(angle))
                turned = arch.rotate(torch.tensor(head["qUnrotated"])[:, None, :], cos, sin)[:, 0].numpy()  # (token, head_dim)
                assert np.abs(turned - q).max() <= 2e-3 * (1 + np.abs(q).max())
                assert not np.allclose(head["qUnrotated"][1:], head["q"][1:])  # position 0 is not turned
            else:
                assert head["qUnrotated"] == head["q"] and head["kUnrotated"] == head["k"]
        groups = [[h for h in range(H) if h // (H // G) == g] for g in range(G)]
        assert all(len(set(json.dumps(layer["heads"][h]["v"]) for h in grp)) == 1 for grp in groups)


@pytest.mark.parametrize("which", ["tiny", "tiny-rope"])
def test_each_model_takes_the_one_path(which, tmp_path):
    pytest.importorskip("torch")
    lm = random_tiny(seed=2, sharpen=4.0) if which == "tiny" else random_rope(seed=2)
    trace, cap = traced_and_stored(lm, tmp_path)
    assert trace["meta"]["architecture"] == ("llama" if which == "tiny-rope" else "gpt2")
    assert trace["meta"]["nKvHead"] == (2 if which == "tiny-rope" else 4)
    assert [len(k) for k in cap.k] == [trace["meta"]["nKvHead"]] * trace["meta"]["nLayer"]
    check_groups(trace, rotary=which == "tiny-rope")


@pytest.mark.slow
def test_the_gpt2_shaped_traces_take_the_one_path(gpt2_shaped):
    """GPT-2 small's shape, from the run's one GPT-2-shaped course (traced through the CLI, so
    self-checked before it was written): 12 groups of one head each."""
    store = TraceStore(gpt2_shaped.traces)
    entry = min(store.entries("gpt2"), key=lambda e: e["nTokens"])
    trace = store.load("gpt2", entry["text"], entry.get("ids"))
    assert trace["meta"]["nKvHead"] == trace["meta"]["nHead"] == 12
    check_groups(trace, rotary=False)


def test_a_schema_4_file_is_refused_in_one_line(tmp_path):
    store = TraceStore(tmp_path)
    path = store.write(fake_doc("a b c"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["schemaVersion"] = 4
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    with pytest.raises(DamagedFile) as err:
        TraceStore(tmp_path).load("tiny", "a b c")
    message = str(err.value)
    assert "\n" not in message and "schemaVersion 4" in message and "make traces" in message


@pytest.mark.parametrize("edit, said", [
    (lambda d: d["layers"][0].pop("kvHeads"), "kvHeads"),
    (lambda d: d["meta"].update(nKvHead=3), "nKvHead"),
    (lambda d: d["meta"].update(positions="rotary"), "kUnrotated"),  # a rotary file stores unrotated keys
    (lambda d: d["meta"].update(architecture="llama"), "architecture"),
])
def test_a_schema_5_file_with_a_broken_layout_is_refused(tmp_path, edit, said):
    path = TraceStore(tmp_path).write(fake_doc("a b c"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    with pytest.raises(DamagedFile) as err:
        TraceStore(tmp_path).load("tiny", "a b c")
    assert said in str(err.value) and "\n" not in str(err.value)


# What names an architecture: transformers' module and class names, config keys that say which
# architecture a config is, and tests of them.
ARCHITECTURE_NAMES = re.compile(
    r'c_attn|q_proj|k_proj|o_proj|model_type|"llama"|LlamaFor|LlamaConfig|GPT2LMHead|GPT2Config|GPT2Model'
    r'|\.transformer\.|"transformer\.|\.self_attn|\.wte\b|\.wpe\b|hasattr\([^)]*"(?:attn|ln_1|c_proj)"')
ALLOWED = {
    "generator/registry.py": "every fact about a model",
    "generator/model/arch.py": "the registry's torch side: the one module that knows transformers' module names",
    "generator/model/training.py": "builds each architecture from its recipe (registry facts, transformers' config classes)",
    "generator/notebooks/causal_cells.py": "the notebook's numpy GPT-2, run on the weights of VECTOR-style GPT-2 models only",
    "generator/render/play_model.py": "the playground reimplements the tiny GPT-2 in the browser (tiny only)",
}


def test_no_module_outside_the_registry_names_an_architecture():
    found = []
    for path in sorted((REPO / "generator").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ARCHITECTURE_NAMES.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not found, "ask model/arch.py or the registry instead:\n" + "\n".join(found)


def test_a_pending_figure_of_a_model_trained_here_says_make_traces_not_the_gpt2_download():
    """tiny-rope's pending warning told the author to set COURSE_GPT2_PATH."""
    from generator.registry import MODELS
    from generator.render.context import Missing

    for name, model in MODELS.items():
        said = Missing(name, Missing.TRACE).remedy()
        assert ("COURSE_GPT2_PATH" in said) is (not model.trained_here), (name, said)
        if model.trained_here:
            assert said == f"Run `make traces` ({model.short_name} runs here in seconds).", said
