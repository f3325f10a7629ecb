"""The committed tokenizers (generator/tokens.py) and configuration facts (registry.config_facts):
no torch, no network, the same tokens as the tracer and, where the hub is reachable, as GPT-2's own."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

import pytest

from generator import registry, tokens
from trace_helpers import REPO

GPT2_DIR = REPO / "generator" / "gpt2"


def test_committed_gpt2_files_match_their_readme_hashes():
    readme = (GPT2_DIR / "README.md").read_text(encoding="utf-8")
    for name in ("vocab.json", "merges.txt", "config.json"):
        want = re.search(rf"`{re.escape(name)}`.*\| ([0-9a-f]{{64}}) \|", readme).group(1)
        assert hashlib.sha256((GPT2_DIR / name).read_bytes()).hexdigest() == want, name
    assert "Modified MIT License" in (GPT2_DIR / "LICENSE").read_text(encoding="utf-8")


def test_gpt2_tokens_are_gpt2s():
    assert [t.id for t in tokens.encode("gpt2", "Hello world")] == [50256, 15496, 995]
    assert tokens.vocab_size("gpt2") == 50257 and tokens.bos_id("gpt2") == 50256
    shown = [t.display for t in tokens.encode("gpt2", "Lily didn't want to play with her ball.")]
    assert shown[:4] == ["<|endoftext|>", "L", "ily", "·didn"] and shown[4] == "'t"


def test_tiny_tokens_put_endoftext_first_and_keep_the_seed_sentence_whole():
    toks = tokens.encode("tiny", "Lily wanted to play with her")
    assert [t.display for t in toks] == ["<|endoftext|>", "Lily", "·wanted", "·to", "·play", "·with", "·her"]
    assert toks[0].id == tokens.bos_id("tiny")
    assert "".join(t.text for t in toks[1:]) == "Lily wanted to play with her"


def test_unknown_model_has_no_tokenizer():
    with pytest.raises(tokens.NoTokenizer, match="gpt3"):
        tokens.tokenizer("gpt3")


def test_tokens_do_not_import_torch():
    code = "import sys; from generator import tokens; tokens.encode('gpt2', 'a b'); tokens.encode('tiny', 'a'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def test_config_facts_without_weights():
    g = registry.config_facts("gpt2")
    assert (g["nLayer"], g["nHead"], g["width"], g["headDim"], g["nCtx"], g["vocabSize"]) == (12, 12, 768, 64, 1024, 50257)
    assert g["nParams"] == 124_439_808  # the released model's count
    t = registry.config_facts("tiny")
    assert (t["nLayer"], t["nHead"], t["width"], t["headDim"]) == (4, 4, 128, 32)


def test_config_facts_param_count_matches_a_built_model():
    torch = pytest.importorskip("torch")  # noqa: F841
    from generator.model import load as models

    lm = models.load_tiny()
    assert registry.config_facts("tiny")["nParams"] == sum(p.numel() for p in lm.model.parameters())


def test_tiny_tokens_equal_the_tracers():
    pytest.importorskip("torch")
    from generator.model import load as models, tracing

    lm = models.load_tiny()
    for text in ("Lily wanted to play with her", "Once upon a time, there was a cat named Tom.", "héllo 🙂"):
        assert [t.id for t in tokens.encode("tiny", text)] == tracing.token_ids(lm, text)


def test_committed_gpt2_tokenizer_gives_the_hubs_ids():
    pytest.importorskip("transformers")
    from generator.model import load as models

    if not models.hub_reachable():
        pytest.skip("the Hugging Face Hub is unreachable here: the committed GPT-2 tokenizer is checked against the hub's where it can be reached")
    from transformers import AutoTokenizer

    hub = AutoTokenizer.from_pretrained(registry.GPT2_HF_NAME, revision=registry.GPT2_REVISION)
    texts = ["Hello world", "Lily didn't want to play with her ball.", "  spaces\tand\nnewlines", "naïve café 🙂"]
    texts += [r.text for r in __import__("generator.heads", fromlist=["x"]).scoring_requests("gpt2", {}) if r.ids is None]
    for text in texts:
        assert [t.id for t in tokens.encode("gpt2", text)][1:] == hub.encode(text, add_special_tokens=False), text


@pytest.mark.parametrize("damage, says", [
    (lambda f: f.write_text(f.read_text(encoding="utf-8")[:5000], encoding="utf-8"), "cannot be read as its tokenizer (EOF while parsing"),
    (lambda f: (f.unlink(), f.symlink_to("/dev/zero")), "is not a regular file"),
    (lambda f: f.unlink(), "is missing"),
])
def test_a_damaged_tokenizer_file_is_one_line_naming_it(tmp_path, monkeypatch, damage, says):
    import shutil

    from generator import tokens as T

    f = tmp_path / "tokenizer.json"
    shutil.copyfile(T.TOKENIZER_FILES["tiny"][0], f)
    damage(f)
    monkeypatch.setitem(T.TOKENIZER_FILES, "tiny", (f,))
    T.tokenizer.cache_clear()
    try:
        with pytest.raises(T.NoTokenizer) as err:
            T.tokenizer("tiny")
        assert str(err.value).startswith(f"tiny: {f} ") and says in str(err.value) and "\n" not in str(err.value)
    finally:
        monkeypatch.undo()
        T.tokenizer.cache_clear()
