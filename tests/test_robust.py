"""The robust copying test (generator/model/robust.py) against the independent numpy GPT-2 route
(tests/numpy_gpt2.py): the second copy's loss with one head removed by zeros, by its
in-distribution mean per position, and by resampling from other texts, each to 1e-4; and the
intervals hold their values."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numpy_gpt2 as ref  # noqa: E402

from generator import heads  # noqa: E402
from generator.model import causal, load as models, robust  # noqa: E402

pytestmark = pytest.mark.slow
ATOL = 1e-4
LENGTH = 5


@pytest.fixture(scope="module")
def lm():
    torch.set_num_threads(1)
    return models.load_tiny()


@pytest.fixture(scope="module")
def weights():
    return ref.load(models.PACKAGE_MODEL_DIR / "model.safetensors")


def _second_copy_loss(weights, ids, replace=None) -> float:
    lp = ref.log_softmax(ref.forward(weights, ids, 4, replace=replace)[0])
    return float(np.mean([-lp[i - 1, ids[i]] for i in range(LENGTH + 2, 2 * LENGTH + 1)]))


def _z(weights, ids, layer):
    """Layer `layer`'s head outputs (token, head, head_dim) on ids, from numpy."""
    seen = {}

    def keep(l, z):
        if l == layer:
            seen["z"] = z.copy()
        return z

    ref.forward(weights, ids, 4, replace=keep)
    return seen["z"]


def test_three_ways_of_removing_a_head_agree_with_numpy(lm, weights):
    vocab = heads.vocab_for("tiny", dict(lm.meta))
    test = robust.texts(vocab, LENGTH, 3, seed=47, name="test")
    source = robust.texts(vocab, LENGTH, 2, seed=47, name="source")
    assert not (test[:, None] == source[None]).all(-1).any(), "the sources are other texts"
    out, clean = robust.ablated_losses(lm, test, source, causal.reference(lm), LENGTH)
    M = robust.METHODS
    for layer, head in [(0, 3), (2, 2)]:
        a = layer * 4 + head
        zs = [_z(weights, list(t), layer) for t in test]
        indist = np.mean([z[:, head] for z in zs], axis=0)  # (token, head_dim)
        srcs = [_z(weights, list(s), layer)[:, head] for s in source]

        def put(value):
            def fn(l, z):
                if l == layer:
                    z[:, head] = value
                return z
            return fn

        for i, t in enumerate(test):
            ids = list(t)
            assert abs(out[M.index("zero"), a, i] - _second_copy_loss(weights, ids, put(0.0))) < ATOL
            assert abs(out[M.index("indist"), a, i] - _second_copy_loss(weights, ids, put(indist))) < ATOL
            want = np.mean([_second_copy_loss(weights, ids, put(s)) for s in srcs])
            assert abs(out[M.index("resample"), a, i] - want) < ATOL
            assert abs(out[M.index("mean"), a, i] - _second_copy_loss(weights, ids, put(causal.reference(lm).means[layer, head]))) < ATOL
            assert abs(clean[i, 1] - _second_copy_loss(weights, ids)) < ATOL


def test_the_texts_are_seeded_and_an_interval_holds_its_mean():
    vocab = heads.VOCABS["tiny"]
    a, b = robust.texts(vocab, 10, 4, 47, "test"), robust.texts(vocab, 10, 4, 47, "test")
    assert (a == b).all() and a.shape == (4, 21) and (a[:, 1:11] == a[:, 11:]).all() and (a[:, 0] == vocab.eot).all()
    assert not (robust.texts(vocab, 10, 4, 48, "test") == a).all()
    values = np.random.default_rng(0).normal(size=(3, 50))
    draws = np.random.default_rng(1).integers(0, 50, size=(400, 50))
    iv = robust.interval(values, draws)
    assert iv.shape == (3, 3) and (iv[:, 1] < iv[:, 0]).all() and (iv[:, 0] < iv[:, 2]).all()
    assert np.allclose(iv[:, 0], values.mean(-1))
