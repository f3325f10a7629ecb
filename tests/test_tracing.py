"""The tracer against the model's own computations, on a random model of the tiny shape."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from generator import schema  # noqa: E402
from generator.model import tracing
from trace_helpers import HAVE_TINY, NO_TINY_REASON, random_tiny  # noqa: E402

TEXT = "Lily wanted to play with her ball."


@pytest.fixture(scope="module")
def lm():
    return random_tiny(seed=1, sharpen=6.0)


@pytest.fixture(scope="module")
def doc(lm):
    return tracing.trace(lm, TEXT)


@pytest.fixture(scope="module")
def reference(lm):
    """What the model itself computes, gathered here independently of the tracer."""
    ids = [lm.bos_id] + lm.tokenizer_encode(TEXT)
    c_proj_in = {}
    handles = [
        block.attn.c_proj.register_forward_pre_hook(lambda m, a, i=i: c_proj_in.__setitem__(i, a[0].detach()))
        for i, block in enumerate(lm.model.transformer.h)
    ]
    try:
        with torch.no_grad():
            res = lm.model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    finally:
        for h in handles:
            h.remove()
    return {"ids": ids, "res": res, "c_proj_in": c_proj_in}


def t(x):
    return torch.tensor(x, dtype=torch.float64)


def test_position_0_is_endoftext_and_attends_to_itself(lm, doc):
    assert [tok["text"] for tok in doc["tokens"]][:3] == ["<|endoftext|>", "Lily", " wanted"]
    assert doc["tokens"][0]["id"] == lm.bos_id
    for layer in doc["layers"]:
        for head in layer["heads"]:
            assert head["weights"][0][0] == pytest.approx(1.0, abs=1e-6)
            assert all(w == 0 for w in head["weights"][0][1:])


def test_weights_equal_output_attentions(doc, reference):
    for l, layer in enumerate(doc["layers"]):
        theirs = reference["res"].attentions[l][0].double()  # (head, query, key)
        ours = t([h["weights"] for h in layer["heads"]])  # (head, query, key)
        assert (ours - theirs).abs().max().item() <= 1e-6


def test_out_equals_c_proj_input_slices(doc, reference):
    for l, layer in enumerate(doc["layers"]):
        cin = reference["c_proj_in"][l][0].double()  # (token, width)
        d = len(layer["heads"][0]["out"][0])
        for h, head in enumerate(layer["heads"]):
            assert (t(head["out"]) - cin[:, h * d : (h + 1) * d]).abs().max().item() <= 1e-5
        assert (t(layer["attnConcat"]) - cin).abs().max().item() <= 1e-5


def test_attn_concat_is_heads_side_by_side(doc):
    # attnConcat is what the model fed c_proj; the heads' recomputed outs side by side match it to
    # the self-check's tolerance (bit for bit in practice, not promised across machines)
    for layer in doc["layers"]:
        outs = [t(h["out"]) for h in layer["heads"]]  # each (token, head_dim)
        assert (torch.cat(outs, dim=1) - t(layer["attnConcat"])).abs().max().item() <= tracing.OUT_ATOL


def test_qkv_equal_c_attn_of_layer_norm(lm, doc, reference):
    hidden = reference["res"].hidden_states  # layer l's input at index l
    W = lm.model.config.n_embd
    with torch.no_grad():
        for l, block in enumerate(lm.model.transformer.h):
            qkv = block.attn.c_attn(block.ln_1(hidden[l]))[0].double()  # (token, 3 * width)
            for name, part in zip("qkv", qkv.split(W, dim=-1)):
                d = W // len(doc["layers"][l]["heads"])
                for h, head in enumerate(doc["layers"][l]["heads"]):
                    assert (t(head[name]) - part[:, h * d : (h + 1) * d]).abs().max().item() <= 1e-5


def test_scores_scaled_masked_and_softmax_relations(doc):
    for layer in doc["layers"]:
        for head in layer["heads"]:
            q, k = t(head["q"]), t(head["k"])
            d = q.shape[1]
            assert (t(head["scores"]) - q @ k.T).abs().max().item() <= 1e-4
            T = len(head["scores"])
            for i in range(T):
                row = head["scaledMasked"][i]
                assert all(x is None for x in row[i + 1 :]), "future cells must be null"
                for j in range(i + 1):
                    assert row[j] == pytest.approx(head["scores"][i][j] / math.sqrt(d), rel=1e-5, abs=1e-6)
                assert sum(head["weights"][i]) == pytest.approx(1.0, abs=1e-5)


def test_attention_is_not_uniform(doc):
    # guards the sharpened fixture: a uniform model would make the comparisons above too easy
    last = doc["layers"][0]["heads"][0]["weights"][-1]
    assert max(last) - min(last) > 0.05


def test_predictions_top5_sorted_and_match_logits(lm, doc, reference):
    probs = torch.softmax(reference["res"].logits[0].double(), dim=-1)  # (token, vocab)
    assert len(doc["predictions"]) == len(doc["tokens"])
    for pos, row in enumerate(doc["predictions"]):
        assert len(row) == schema.TOP_K_PREDICTIONS == 5
        ps = [p["prob"] for p in row]
        assert ps == sorted(ps, reverse=True)
        best = probs[pos].topk(5)
        assert [p["id"] for p in row][0] == int(best.indices[0])
        for p in row:
            assert p["prob"] == pytest.approx(float(probs[pos, p["id"]]), rel=1e-5, abs=1e-9)
            assert p["text"] == lm.token_text(p["id"])
            assert p["display"] == schema.display_token(p["text"])
        assert ps[-1] >= float(best.values[-1]) - 1e-6


def test_token_records(lm, doc):
    ids = [lm.bos_id] + lm.tokenizer_encode(TEXT)
    assert [tok["id"] for tok in doc["tokens"]] == ids
    assert "".join(tok["text"] for tok in doc["tokens"][1:]) == TEXT
    her = next(tok for tok in doc["tokens"] if tok["text"] == " her")
    assert her["display"] == "·her" and her["spoken"] == "space her"


def test_shapes_and_names(lm, doc):
    T, H, L = len(doc["tokens"]), 4, 4
    assert len(doc["layers"]) == L
    for layer in doc["layers"]:
        assert len(layer["heads"]) == H
        assert len(layer["attnConcat"]) == T and len(layer["attnConcat"][0]) == 128
        for head in layer["heads"]:
            assert list(head) == [a.camel for a in schema.HEAD_ACTIVATIONS] + ["kvHead"]
            for a in schema.HEAD_ACTIVATIONS:
                cols = 32 if a.shape[1] == "head_dim" else T
                assert len(head[a.camel]) == T and all(len(r) == cols for r in head[a.camel])
    assert set(schema.META_FIELDS.values()) <= set(doc["meta"]) and doc["meta"]["standIn"] is True
    assert "ids" not in doc


def test_explicit_ids_are_traced_and_recorded(lm):
    ids = [5, 17, 300, 4095]
    d = tracing.trace(lm, "scoring text", ids=ids)
    assert d["ids"] == ids and [tok["id"] for tok in d["tokens"]] == ids


def test_too_long_names_the_context(lm):
    with pytest.raises(tracing.TooLong, match="context of 256 tokens"):
        tracing.token_ids(lm, "x", ids=[1] * 257)
    with pytest.raises(tracing.TraceError, match="outside the vocabulary"):
        tracing.token_ids(lm, "x", ids=[4096])
    with pytest.raises(tracing.TraceError):
        tracing.token_ids(lm, "")


def test_self_check_catches_wrong_weights(lm):
    cap = tracing.capture(lm, lm.tokenizer_encode("Ben wanted to play"))
    tracing.self_check(cap, "ok")
    cap.weights[2] = cap.weights[2].clone()
    cap.weights[2][1, 3, 0] += 1e-4
    with pytest.raises(tracing.TraceCheckError, match="layer 2.*output_attentions"):
        tracing.self_check(cap, "tampered")
    cap = tracing.capture(lm, lm.tokenizer_encode("Ben wanted to play"))
    cap.out[1] = cap.out[1] * 1.001
    with pytest.raises(tracing.TraceCheckError, match="out-projection"):
        tracing.self_check(cap, "tampered")


@pytest.mark.skipif(not HAVE_TINY, reason=NO_TINY_REASON)
def test_trained_tiny_seed_sentence():
    from generator.model import load as models

    lm = models.load_tiny()
    d = tracing.trace(lm, "Lily wanted to play with her")
    assert [tok["text"] for tok in d["tokens"]] == ["<|endoftext|>", "Lily", " wanted", " to", " play", " with", " her"]
    assert d["meta"]["standIn"] is False and len(d["meta"]["revision"]) == 12
    assert all(h["weights"][0][0] == pytest.approx(1.0) for layer in d["layers"] for h in layer["heads"])
