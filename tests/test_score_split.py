"""The score split (generator/model/score_parts.py): every attention score as a sum of the parts of
the residual stream that made it, checked three ways: the parts add up to the tracer's own score
on every committed tiny sentence; they agree with the same split computed from an independent
numpy GPT-2 (tests/numpy_gpt2.py's architecture, float64); and the GPT-2-shaped stand-in takes the
same path. Also: splits.json is checked as it is read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numpy_gpt2 as ref  # noqa: E402

from generator import schema  # noqa: E402
from generator.model import load as models, score_parts as score_split, tracing  # noqa: E402
from generator.store import DamagedFile, splits_file  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
TOM = "Tom had a red ball. Tom gave the red ball to Sam."


@pytest.fixture(scope="module")
def lm():
    torch.set_num_threads(1)
    return models.load_tiny()


def committed_sentences() -> list[str]:
    index = json.loads((REPO / "traces" / "tiny" / "index.json").read_text(encoding="utf-8"))
    return [e["text"] for e in index["traces"] if "ids" not in e]


def test_every_split_adds_up_to_the_tracers_score_on_every_committed_sentence(lm):
    texts = committed_sentences()
    assert len(texts) >= 10
    for text in texts:
        ids = tracing.token_ids(lm, text)
        cap = tracing.capture(lm, ids)
        split = score_split.split_scores(lm, ids)
        below = np.tril(np.ones((len(ids), len(ids))))
        for l in range(4):
            theirs = (cap.scores[l].double() * float(lm.model.transformer.h[l].attn.scaling)).numpy() * below  # (head, query, key)
            for h in range(4):
                for side in ("key", "query") + (("table",) if l == 0 else ()):
                    total = split[side][(l, h)].reshape(-1, len(ids), len(ids)).sum(0)  # (query, key)
                    assert np.abs(total - theirs[h]).max() < schema.SPLIT_ATOL, (text, l, h, side)


def numpy_split(w: dict, ids: list[int], n_head: int, layer: int, head: int) -> dict:
    """The same split from a numpy GPT-2 written from the paper (numpy_gpt2's blocks), float64:
    each part of the stream entering `layer`, through ln_1 frozen, to q and k pieces."""
    T = len(ids)
    tok, pos = w["wte.weight"][ids], w["wpe.weight"][:T]  # (token, width)
    W = tok.shape[1]
    d = W // n_head
    parts = [tok, pos]
    heads_out, mlps, bias = [], [], np.zeros((T, W))
    x = tok + pos
    mask = np.triu(np.ones((T, T), bool), 1)
    for l in range(layer):
        p = f"h.{l}."
        hn = ref.layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = hn @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # (token, 3 width)
        q, k, v = (qkv[:, i * W:(i + 1) * W].reshape(T, n_head, d).transpose(1, 0, 2) for i in range(3))  # (head, token, d)
        s = np.where(mask, -np.inf, q @ k.transpose(0, 2, 1) / np.sqrt(d))  # (head, query, key)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        z = a @ v  # (head, token, d)
        wo = w[p + "attn.c_proj.weight"]  # (width, width)
        heads_out += [z[h] @ wo[h * d:(h + 1) * d] for h in range(n_head)]  # each (token, width)
        bias = bias + w[p + "attn.c_proj.bias"]
        x = x + z.transpose(1, 0, 2).reshape(T, W) @ wo + w[p + "attn.c_proj.bias"]
        m = ref.gelu_new(ref.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"]) @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        mlps.append(m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"])
        x = x + mlps[-1]
    parts = np.stack(parts + heads_out + mlps + [bias])  # (part, token, width)
    assert np.abs(parts.sum(0) - x).max() < 1e-9
    p = f"h.{layer}."
    sigma = np.sqrt(x.var(-1, keepdims=True) + 1e-5)  # (token, 1)
    normed = (parts - parts.mean(-1, keepdims=True)) / sigma * w[p + "ln_1.weight"]  # (part, token, width)
    normed[-1] += w[p + "ln_1.bias"]
    cw, cb = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
    cols_q, cols_k = slice(head * d, (head + 1) * d), slice(W + head * d, W + (head + 1) * d)
    qp, kp = normed @ cw[:, cols_q], normed @ cw[:, cols_k]  # (part, token, d)
    qp[-1] += cb[cols_q]
    kp[-1] += cb[cols_k]
    below = np.tril(np.ones((T, T)))
    return {"key": np.einsum("id,pjd->pij", qp.sum(0), kp) / np.sqrt(d) * below,
            "query": np.einsum("pid,jd->pij", qp, kp.sum(0)) / np.sqrt(d) * below,
            "table": np.einsum("aid,bjd->abij", qp, kp) / np.sqrt(d) * below}


def test_the_split_agrees_with_an_independent_numpy_route(lm):
    w = ref.load(models.PACKAGE_MODEL_DIR / "model.safetensors")
    ids = tracing.token_ids(lm, TOM)
    split = score_split.split_scores(lm, ids)
    for layer, head in [(0, 3), (1, 2), (3, 0), (3, 3)]:
        mine = numpy_split(w, ids, 4, layer, head)
        for side in ("key", "query") + (("table",) if layer == 0 else ()):
            assert np.abs(split[side][(layer, head)] - mine[side]).max() < schema.SPLIT_ATOL, (layer, head, side)
        assert split["key"][(layer, head)].shape[0] == len(schema.split_parts(layer, 4))


def test_a_gpt2_shaped_model_takes_the_same_path():
    """GPT-2's committed shape (12 heads of 64, width 768), 3 of its 12 layers to stay fast,
    random weights: the same code, parts named by the schema, adding up, agreeing with numpy."""
    cfg = json.loads((models.PACKAGE_MODEL_DIR.parent / "gpt2" / "config.json").read_text())
    model = models.random_model(3, cfg["n_head"], cfg["n_embd"], 64, 4096, seed=5)
    lm = models.from_parts("gpt2", model, models.tiny_tokenizer(), "test-random")
    ids = tracing.token_ids(lm, "Lily wanted to play with her")
    split = score_split.split_scores(lm, ids, heads=[(0, 11), (2, 5)])
    assert sorted(split["key"]) == [(0, 11), (2, 5)] and list(split["table"]) == [(0, 11)]
    assert split["key"][(2, 5)].shape == (len(schema.split_parts(2, 12)), len(ids), len(ids))
    assert len(schema.split_parts(2, 12)) == 2 + 2 * 12 + 2 + 1
    w = {k.removeprefix("transformer."): v.detach().double().numpy() for k, v in model.state_dict().items()}
    mine = numpy_split(w, ids, 12, 2, 5)
    assert np.abs(split["key"][(2, 5)] - mine["key"]).max() < schema.SPLIT_ATOL
    assert np.abs(split["query"][(2, 5)] - mine["query"]).max() < schema.SPLIT_ATOL


def test_the_committed_splits_add_up_to_the_stored_trace_scores():
    from generator.store import TraceStore

    splits = splits_file.read(REPO / "traces", "tiny")
    assert splits is not None and splits.doc["sentences"], "traces/tiny/splits.json holds the lessons' sentences"
    store = TraceStore(REPO / "traces")
    for s in splits.doc["sentences"]:
        trace = store.load("tiny", s["text"])
        assert [t["id"] for t in trace["tokens"]] == s["ids"]
        T = len(s["ids"])
        rows, cols = np.tril_indices(T)
        assert len(s["heads"]) == 16
        for e in s["heads"]:
            stored = np.array(trace["layers"][e["layer"] - 1]["heads"][e["head"] - 1]["scaledMasked"], dtype=float)[rows, cols]
            # the trace's scores are int16 × scale: within half a step of the split's own
            assert np.abs(np.array(e["score"]) - stored).max() < 5e-3
            for side in ("key", "query", "table"):
                if side in e:
                    total = np.array(e[side]).reshape(-1, len(e["score"])).sum(0)
                    assert np.abs(total - np.array(e["score"])).max() < schema.SPLIT_ATOL


def test_a_damaged_splits_file_is_one_line_naming_it(tmp_path):
    doc = json.loads((REPO / "traces" / "tiny" / splits_file.FILE).read_text(encoding="utf-8"))
    doc["sentences"][0]["heads"][5]["key"][1][3] += 0.5  # one part no longer adds up
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / splits_file.FILE).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DamagedFile) as e:
        splits_file.read(tmp_path, "tiny")
    line = str(e.value)
    assert "splits.json" in line and "adds up to the score" in line and "\n" not in line
    doc["sentences"][0]["heads"][5]["key"][1][3] -= 0.5
    doc["format"] = 99
    (tmp_path / "tiny" / splits_file.FILE).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DamagedFile, match="format 99"):
        splits_file.read(tmp_path, "tiny")


def test_the_playgrounds_split_is_the_tracers_on_every_committed_sentence(lm, tmp_path):
    """The playground's forward pass (generator/assets/play/forward.js, under node) splits every
    score of every head as the tracer does, to 1e-4, on every committed sentence."""
    import shutil
    import subprocess

    from generator.render import play_model

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    (tmp_path / "play-model.js").write_bytes(play_model.play_model_js())
    (tmp_path / "play.js").write_text(play_model.play_js(), encoding="utf-8")
    texts = committed_sentences()
    (tmp_path / "inputs.json").write_text(json.dumps(texts), encoding="utf-8")
    done = subprocess.run([node, str(REPO / "tests" / "play_node.js"), str(tmp_path / "play-model.js"), str(tmp_path / "play.js"),
                           str(tmp_path / "inputs.json"), "split"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    worst = 0.0
    for text, page in zip(texts, got):
        ids = tracing.token_ids(lm, text)
        assert page["ids"] == ids, text
        split = score_split.split_scores(lm, ids)
        T = len(ids)
        rows, cols = np.tril_indices(T)
        for e in page["heads"]:
            lh = (e["layer"] - 1, e["head"] - 1)
            assert e["parts"] == schema.split_parts(lh[0], 4)
            for side in ("key", "query", "table"):
                if side == "table" and lh[0] != 0:
                    assert e["table"] is None
                    continue
                mine = split[side][lh].reshape(-1, T, T)[:, rows, cols]  # (part, cell)
                worst = max(worst, float(np.abs(np.asarray(e[side]) - mine).max()))
            worst = max(worst, float(np.abs(np.asarray(e["score"]) - split["score"][lh][rows, cols]).max()))
    assert worst < schema.SPLIT_ATOL, worst
