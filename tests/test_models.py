"""Model loading: the registry, exact token strings, GPT-2 failing fast offline, the stand-in."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("torch")

from generator.model import load as models, tracing  # noqa: E402
from generator import schema, tokens
from trace_helpers import HAVE_TINY, NO_TINY_REASON, TINY_DIR, small_tokenizer  # noqa: E402

SEED = "Lily wanted to play with her"


def test_unknown_model_lists_known_names():
    with pytest.raises(models.UnknownModel) as e:
        models.load("gpt3")
    assert str(e.value) == "unknown model 'gpt3' (known: tiny, gpt2, tiny-rope)"
    assert isinstance(e.value, KeyError)


def test_registry():
    assert models.MODELS["gpt2"].revision == models.GPT2_REVISION == "607a30d783dfa663caf39e06633721c8d4cfcd7e"
    assert models.MODELS["gpt2"].hf_name == "openai-community/gpt2"
    assert models.MODELS["tiny"].revision is None  # computed from the weights at load


@pytest.mark.skipif(not HAVE_TINY, reason=NO_TINY_REASON)
def test_committed_tokenizer_seed_sentence():
    encode, token_text = models.wrap_tokenizers(models.tiny_tokenizer())
    assert [token_text(i) for i in encode(SEED)] == ["Lily", " wanted", " to", " play", " with", " her"]


@pytest.mark.skipif(not HAVE_TINY, reason=NO_TINY_REASON)
def test_tiny_revision_is_weights_hash():
    import hashlib

    lm = models.load("tiny")
    want = hashlib.sha256((TINY_DIR / "model.safetensors").read_bytes()).hexdigest()[:12]
    assert lm.revision == lm.meta["revision"] == want
    assert not lm.model.training and lm.model.config._attn_implementation == "eager"


def test_token_text_is_exact_with_leading_spaces():
    encode, token_text = models.wrap_tokenizers(small_tokenizer())
    pieces = [token_text(i) for i in encode("Lily wanted to play with her dog.")]
    assert "".join(pieces) == "Lily wanted to play with her dog."
    assert " her" in pieces and pieces[0] == "Lily"


def test_gpt2_offline_fails_fast_with_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv(models.GPT2_PATH_ENV, raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    started = time.monotonic()
    with pytest.raises(models.ModelUnavailable) as e:
        models.load_gpt2(check_hub=lambda: False, cache_dir=tmp_path)
    assert time.monotonic() - started < 10
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("gpt2: openai-community/gpt2@607a30d")
    assert "not in the HF cache" in msg and "COURSE_GPT2_PATH" in msg and "make traces" in msg


def test_gpt2_hf_hub_offline_skips_the_network_check(tmp_path, monkeypatch):
    monkeypatch.delenv(models.GPT2_PATH_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_check():
        raise AssertionError("HF_HUB_OFFLINE=1 must not probe the network")

    with pytest.raises(models.ModelUnavailable, match="not in the HF cache"):
        models.load_gpt2(check_hub=no_check, cache_dir=tmp_path)


def test_gpt2_bad_local_path(tmp_path, monkeypatch):
    monkeypatch.setenv(models.GPT2_PATH_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(models.ModelUnavailable) as e:
        models.load_gpt2()
    assert "\n" not in str(e.value) and "nowhere" in str(e.value)


def test_hub_reachable_is_bounded(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    started = time.monotonic()
    assert models.hub_reachable(timeout=1.0) is False
    assert time.monotonic() - started < 3


SMALL_GPT2 = {"n_layer": 2, "n_head": 2, "n_embd": 64, "n_positions": 64, "vocab_size": 50257, "n_inner": 256}


@pytest.fixture
def small_gpt2_allowed(monkeypatch):
    """These tests are about the tokenizer route, on a small checkpoint: the shape check
    (tests/test_checkpoint.py) is told to expect that small shape instead of GPT-2 small's."""
    from generator.model import checkpoint

    monkeypatch.setattr(checkpoint, "committed_shape", lambda name: dict(SMALL_GPT2))


def save_small_gpt2(folder, tokenizer) -> None:
    """A small GPT-2-shaped checkpoint (2 layers, width 64, GPT-2's vocabulary) with `tokenizer`."""
    models.random_model(2, 2, 64, 64, 50257, seed=3).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def gpt2_tokenizer():
    from transformers import GPT2TokenizerFast

    return GPT2TokenizerFast.from_pretrained(str(tokens.PACKAGE / "gpt2"))


def test_gpt2_from_local_folder_with_transformers_tokenizer(tmp_path, small_gpt2_allowed):
    """The --gpt2-path route, on a small GPT-2-shaped checkpoint saved here with GPT-2's
    committed tokenizer: loads in eval mode with eager attention, and the transformers tokenizer
    gives the committed tokenizer's tokens."""
    save_small_gpt2(tmp_path, gpt2_tokenizer())
    lm = models.load_gpt2(tmp_path)
    assert lm.revision.startswith("local-") and lm.meta["hfName"] == "openai-community/gpt2"
    assert not lm.model.training and lm.model.config._attn_implementation == "eager"
    ids = lm.tokenizer_encode(SEED)
    assert [lm.token_text(i) for i in ids] == [t.text for t in tokens.encode("gpt2", SEED)[1:]]
    assert "".join(lm.token_text(i) for i in ids) == SEED and lm.token_text(ids[-1]) == " her"
    assert tracing.trace(lm, SEED)["tokens"][-1]["display"] == "·her"


def test_a_local_folder_with_another_tokenizer_is_refused_in_one_line(tmp_path, small_gpt2_allowed):
    """A local copy whose tokenizer is not GPT-2's (here the tiny model's BPE) would fail on every
    sentence later with a misleading message: it is refused when loaded, naming the folder."""
    from transformers import PreTrainedTokenizerFast

    save_small_gpt2(tmp_path, PreTrainedTokenizerFast(tokenizer_object=small_tokenizer()))
    with pytest.raises(models.ModelUnavailable) as e:
        models.load_gpt2(tmp_path)
    message = str(e.value)
    assert "\n" not in message and str(tmp_path) in message and "not GPT-2's" in message


def test_short_revision_keeps_a_local_copy_marked():
    assert schema.short_revision("607a30d783dfa663caf39e06633721c8d4cfcd7e") == "607a30d783df"
    assert schema.short_revision("local-0123456789abcdef") == "local-0123456789ab"
    assert schema.short_revision("stand-in-random-init") == "stand-in-ran"


def test_stand_in_has_gpt2_small_s_shape():
    lm = models.load_stand_in(small_tokenizer())
    assert lm.name == "gpt2" and lm.revision == "stand-in-random-init" and lm.meta["standIn"] is True
    assert lm.meta["nParams"] == 124_439_808  # GPT-2 small's parameter count (tied embeddings)
    cfg = lm.model.config
    assert (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_positions, cfg.vocab_size) == (12, 12, 768, 1024, 50257)


@pytest.mark.slow
def test_gpt2_shaped_trace_shapes(gpt2_shaped):
    """A trace of GPT-2 small's shape, from the run's one GPT-2-shaped course (tests/gpt2_store.py:
    the tracer on a random GPT-2 small, as on the stand-in, which has the same shape)."""
    from generator.store import TraceStore

    doc = TraceStore(gpt2_shaped.traces).load("gpt2", "The animal didn't cross the street because it was too tired")
    T = len(doc["tokens"])
    assert T == 13 and doc["model"] == "gpt2"  # <|endoftext|> + 12 tokens
    assert len(doc["layers"]) == 12
    for layer in doc["layers"]:
        assert len(layer["heads"]) == 12
        assert len(layer["attnConcat"]) == T and len(layer["attnConcat"][0]) == 768
        h = layer["heads"][11]
        assert len(h["q"][0]) == len(h["out"][0]) == 64 and len(h["weights"]) == len(h["weights"][0]) == T
    assert len(doc["predictions"]) == T and all(len(r) == 5 for r in doc["predictions"])
