"""The causal measurements (generator/model/causal.py) against an independent route: GPT-2's forward pass
written again in numpy from the committed safetensors (tests/numpy_gpt2.py), with the head's
output zeroed, replaced by its mean, or moved from another sentence. Also: the attribution parts
add up to the logit, and the lens ends on the model's own prediction."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numpy_gpt2 as ref  # noqa: E402

from generator.model import causal, circuits, load as models, tracing  # noqa: E402
from generator import heads

pytestmark = pytest.mark.slow
ATOL = 1e-4
LILY = "Lily wanted to play with"
BEN = "Ben wanted to play with"


@pytest.fixture(scope="module")
def lm():
    torch.set_num_threads(1)
    return models.load_tiny()


@pytest.fixture(scope="module")
def weights():
    return ref.load(models.PACKAGE_MODEL_DIR / "model.safetensors")


@pytest.fixture(scope="module")
def targets(lm):
    return sorted({lm.tokenizer_encode(" her")[0], lm.tokenizer_encode(" his")[0]})


@pytest.fixture(scope="module")
def block(lm, targets):
    ids = tracing.token_ids(lm, LILY)
    cap = tracing.capture(lm, ids)
    return ids, causal.sentence_block(lm, ids, cap.v, targets=targets)


def test_the_numpy_route_is_the_model(lm, weights):
    ids = tracing.token_ids(lm, LILY)
    logits, _ = ref.forward(weights, ids, 4)
    with torch.inference_mode():
        theirs = lm.model(torch.tensor([ids])).logits[0].double().numpy()
    assert np.abs(logits - theirs).max() < ATOL


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablation_agrees_with_a_numpy_forward_with_the_head_removed(lm, weights, block, mode):
    ids, b = block
    m = b["ablations"].index(mode)
    means = causal.reference(lm).means  # (layer, head, head_dim)
    clean, _ = ref.forward(weights, ids, 4)
    clean_lp = ref.log_softmax(clean)
    idx = b["followed"]  # (token, followed)
    for layer, head in [(1, 2), (0, 3), (3, 0), (2, 2)]:
        def removed(l, z, layer=layer, head=head):
            if l == layer:
                z[:, head] = 0 if mode == "zero" else means[layer, head]
            return z

        logits, _ = ref.forward(weights, ids, 4, replace=removed)
        lp = ref.log_softmax(logits)
        want_logit = np.take_along_axis(logits, idx, -1) - np.take_along_axis(clean, idx, -1)
        want_lp = np.take_along_axis(lp, idx, -1) - np.take_along_axis(clean_lp, idx, -1)
        want_kl = (np.exp(clean_lp) * (clean_lp - lp)).sum(-1)
        assert np.abs(b["dLogit"][m, layer, head] - want_logit).max() < ATOL
        assert np.abs(b["dLogprob"][m, layer, head] - want_lp).max() < ATOL
        assert np.abs(b["kl"][m, layer, head] - want_kl).max() < ATOL


def test_the_mean_is_each_heads_average_output_over_the_reference_texts(lm, weights):
    got = causal.reference(lm).means
    total, n = 0, 0
    for text in heads.SCORING_SENTENCES:
        ids = tracing.token_ids(lm, text)
        seen = {}

        def keep(l, z):
            seen[l] = z.copy()
            return z

        ref.forward(weights, ids, 4, replace=keep)
        total = total + np.stack([seen[l][1:].sum(0) for l in range(4)])  # (layer, head, d)
        n += len(ids) - 1
    assert np.abs(got - total / n).max() < ATOL


def test_attribution_parts_add_up_to_the_clean_logit(block):
    _, b = block
    assert np.abs(b["dla"].sum(axis=0) - b["cleanLogit"]).max() < ATOL


def test_the_largest_direct_share_is_the_head_times_its_unembedding(lm, weights, block):
    """One part recomputed by hand: head (1, 2)'s output through W_O, centred, divided by ln_f's
    σ of the clean run, times γ, onto the unembedding of the followed tokens."""
    ids, b = block
    seen = {}

    def keep(l, z):
        seen[l] = z.copy()
        return z

    ref.forward(weights, ids, 4, replace=keep)
    grab = {}

    def keep_stream(_m, a):  # the residual stream ln_f reads gives σ (returns None: input unchanged)
        grab["x"] = a[0][0].double().numpy()

    h = lm.model.transformer.ln_f.register_forward_pre_hook(keep_stream)
    with torch.inference_mode():
        lm.model(torch.tensor([ids]))
    h.remove()
    final_in = grab["x"]
    sigma = np.sqrt(final_in.var(-1) + 1e-5)[:, None]  # (token, 1)
    part = seen[1][:, 2] @ weights["h.1.attn.c_proj.weight"][64:96]  # (token, width)
    part = (part - part.mean(-1, keepdims=True)) / sigma * weights["ln_f.weight"]
    want = np.einsum("tw,tnw->tn", part, weights["wte.weight"][b["followed"]])
    assert np.abs(b["dla"][b["parts"].index("L2H3")] - want).max() < ATOL


def test_value_norms_are_the_values_through_w_o(lm, weights, block):
    ids, b = block
    cap = tracing.capture(lm, ids)
    v = cap.v[1][2].double().numpy()  # (token, head_dim)
    want = np.linalg.norm(v @ weights["h.1.attn.c_proj.weight"][64:96], axis=-1)
    assert np.abs(b["valueNorms"][1, 2] - want).max() < ATOL


def test_the_lens_ends_on_the_models_prediction(lm, block):
    ids, b = block
    doc = tracing.to_document(lm, LILY, tracing.capture(lm, ids), ids_given=False)
    assert [[p["id"] for p in row] for row in doc["predictions"]] == b["lensIds"][-1].tolist()
    assert np.abs(np.array([[p["prob"] for p in row] for row in doc["predictions"]]) - b["lensProbs"][-1]).max() < 1e-5


def test_patching_agrees_with_moving_the_heads_output_in_numpy(lm, weights, targets):
    ia, ib = tracing.token_ids(lm, LILY), tracing.token_ids(lm, BEN)
    got = causal.patching(lm, ia, ib, targets)
    source = {}

    def keep(l, z):
        source[l] = z.copy()
        return z

    ref.forward(weights, ib, 4, replace=keep)
    for layer, head in [(1, 2), (3, 1)]:
        def put(l, z, layer=layer, head=head):
            if l == layer:
                z[:, head] = source[layer][:, head]
            return z

        logits, _ = ref.forward(weights, ia, 4, replace=put)
        assert np.abs(got["patched"][layer, head] - logits[:, targets]).max() < ATOL


def test_patching_refuses_sentences_of_different_lengths(lm, targets):
    with pytest.raises(ValueError, match="same length"):
        causal.patching(lm, tracing.token_ids(lm, LILY), tracing.token_ids(lm, "Ben wanted to play"), targets)


@pytest.fixture(scope="module")
def circ(lm):
    return circuits.circuits(lm, causal.reference(lm), with_robust=False)  # the robust block: test_robust.py


def test_kind_scores_with_a_head_removed_agree_with_numpy(lm, weights, circ):
    """Layer 4, head 4's induction score with layer 3, head 3 zeroed, from numpy attention weights."""
    reqs = [r for r in heads.scoring_requests("tiny", dict(lm.meta)) if r.ids is not None]

    def zero(l, z):
        if l == 2:
            z[:, 2] = 0
        return z

    samples = [(ref.forward(weights, list(r.ids), 4, replace=zero)[1], list(r.ids)) for r in reqs]
    want = heads.score("induction", samples)
    k = circ["kinds"].index("induction")
    got = circ["ablatedScores"][circ["ablations"].index("zero"), 2 * 4 + 2, k]
    assert np.abs(got - want).max() < ATOL
    clean = heads.score("induction", [(ref.forward(weights, list(r.ids), 4)[1], list(r.ids)) for r in reqs])
    assert np.abs(circ["cleanScores"][k] - clean).max() < ATOL


def test_the_in_context_learning_losses_agree_with_numpy(lm, weights, circ):
    reqs = [r for r in heads.scoring_requests("tiny", dict(lm.meta)) if r.ids is not None]
    n = heads.RANDOM_LENGTH
    firsts, seconds = [], []
    for r in reqs:
        ids = list(r.ids)
        lp = ref.log_softmax(ref.forward(weights, ids, 4)[0])
        firsts.append(np.mean([-lp[i - 1, ids[i]] for i in range(2, n + 1)]))
        seconds.append(np.mean([-lp[i - 1, ids[i]] for i in range(n + 2, 2 * n + 1)]))
    assert abs(circ["iclClean"][0] - np.mean(firsts)) < ATOL
    assert abs(circ["iclClean"][1] - np.mean(seconds)) < ATOL
    assert circ["iclClean"][1] < circ["iclClean"][0], "the tiny model copies: the second copy is easier"


def test_composition_scores_agree_with_dense_matrices(lm, circ):
    """Q-, K- and V-composition of two heads from full width × width matrices (no QR shortcut)."""
    sd = {k: v.double() for k, v in lm.model.state_dict().items()}
    W, d = 128, 32

    def mats(l, h):
        g = sd[f"transformer.h.{l}.ln_1.weight"][:, None]
        wa = sd[f"transformer.h.{l}.attn.c_attn.weight"]
        q, k, v = (g * wa[:, i * W + h * d: i * W + (h + 1) * d] for i in range(3))
        o = sd[f"transformer.h.{l}.attn.c_proj.weight"][h * d:(h + 1) * d]
        return q @ k.T, v @ o

    def score(a, b):
        return float((a @ b).norm() / (a.norm() * b.norm()))

    for (l1, h1), (l2, h2) in [((2, 2), (3, 3)), ((0, 3), (3, 3)), ((0, 0), (1, 2))]:
        _, ov1 = mats(l1, h1)
        qk2, ov2 = mats(l2, h2)
        for c, right in enumerate((qk2, qk2.T, ov2)):
            assert abs(circ["composition"][c, l1, h1, l2, h2] - score(ov1, right)) < 1e-6
    assert 0 < circ["compositionBaseline"] < 0.5


def test_a_gpt2_shaped_model_takes_the_same_path(tmp_path):
    """The causal block of a GPT-2-shaped model (GPT-2's committed config, 2 of its 12 layers to
    stay fast) from the same code: shapes from the schema, parts adding up, 12 heads a layer."""
    import json

    from generator import schema

    cfg = json.loads((models.PACKAGE_MODEL_DIR.parent / "gpt2" / "config.json").read_text())
    model = models.random_model(2, cfg["n_head"], cfg["n_embd"], 64, 4096, seed=3)
    lm = models.from_parts("gpt2", model, models.tiny_tokenizer(), "test-random")
    ids = tracing.token_ids(lm, LILY)
    doc = tracing.trace(lm, LILY, targets=[318, 344])
    b = doc["causal"]
    dims = schema.causal_dims(2, 12, len(ids), 2, 2)
    for a in schema.CAUSAL_ARRAYS + schema.CAUSAL_ID_ARRAYS:
        assert np.asarray(b[a.camel]).shape == tuple(dims[x] for x in a.shape), a.camel
    assert np.abs(np.sum(b["dla"], axis=0) - np.asarray(b["cleanLogit"])).max() < 1e-3
    assert len(b["parts"]) == 1 + 2 * 12 + 2 + 1
