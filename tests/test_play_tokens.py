"""The playground's tokenizer (generator/assets/play/bpe.js) against the `tokenizers` library, on
more than 2,000 generated strings, in one node process; and its model asset against the committed
safetensors file (generator/render/play_model.py)."""

from __future__ import annotations

import base64
import json
import random
import shutil
import struct
import subprocess
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from generator import tokens
from generator.render import play_model

REPO = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")

WORDS = ("Lily", "Ben", "wanted", "to", "play", "with", "her", "ball", "the", "dog", "Once", "upon", "a", "time",
         "don't", "I'm", "you're", "they've", "we'll", "she'd", "it's", "HE'S", "can't", "3.14", "2026", "1,000")
ACCENTED = ("café", "naïve", "Zoë", "résumé", "Ångström", "jalapeño", "crème brûlée", "façade", "Øresund", "Łódź")
EMOJI = ("😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🐶", "🎈", "✨", "🧑🏿‍🚀", "1️⃣")
SCRIPTS = ("日本語のテキスト", "中文句子。", "한국어 문장", "שלום עולם", "مرحبا بالعالم", "नमस्ते दुनिया", "สวัสดีครับ",
           "Привет, мир", "Γειά σου κόσμε", "‏RTL mark‎")
SPACES = (" ", "  ", "   ", "\n", "\n\n", "\n\n\n", "\t", " \n ", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085",
          "\ufeff", "\u200b", "\u2009", "\u000b", "\u000c")
PUNCT = ("!", "?", ".", ",", "...", "—", "–", "\"", "'", "(", ")", "<", ">", "&", "<b>", "</script>", "#", "@", "$5", "%")
RANGES = ((0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x6ff), (0x900, 0x97f), (0xe00, 0xe7f),
          (0x2000, 0x206f), (0x3040, 0x30ff), (0x4e00, 0x4fff), (0xac00, 0xacff), (0xff00, 0xffef), (0x1f300, 0x1f6ff))


def committed_sentences() -> list[str]:
    from generator.store.traces import TraceStore

    return [e["text"] for e in TraceStore(REPO / "traces").entries("tiny") if not e.get("ids")]


def generated_strings(n: int = 2100, seed: int = 28) -> list[str]:
    """Every committed sentence, then `n` seeded strings mixing words, accents (NFC and NFD),
    emoji, other scripts (right to left ones too), runs of spaces and newlines, punctuation,
    <|endoftext|> and random code points."""
    rng = random.Random(seed)
    pools = (WORDS, ACCENTED, EMOJI, SCRIPTS, SPACES, PUNCT)
    out = committed_sentences()
    for i in range(n):
        pieces = []
        for _ in range(rng.randint(1, 14)):
            r = rng.random()
            if r < 0.12:
                lo, hi = rng.choice(RANGES)
                pieces.append("".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(1, 6))))
            elif r < 0.14:
                pieces.append(tokens.EOT)
            else:
                pieces.append(rng.choice(rng.choice(pools)))
            pieces.append(rng.choice(("", " ", " ", " ", "\n", "  ")))
        s = "".join(pieces)
        out.append(unicodedata.normalize("NFD" if i % 3 == 0 else "NFC", s))
    out += [" " * 40, "\n" * 30, " \n" * 20, "a" * 300, "ab" * 200, tokens.EOT * 3, "x" + tokens.EOT]
    return out


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("play")
    (d / "play-model.js").write_bytes(play_model.play_model_js())
    (d / "play.js").write_text(play_model.play_js(), encoding="utf-8")
    return d / "play-model.js", d / "play.js"


def run_node(assets, texts: list[str], mode: str = "ids", tmp: Path | None = None):
    inputs = (tmp or assets[0].parent) / f"inputs-{mode}.json"
    inputs.write_text(json.dumps(texts), encoding="utf-8")
    done = subprocess.run([NODE, str(REPO / "tests" / "play_node.js"), str(assets[0]), str(assets[1]), str(inputs), mode],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_node
def test_the_page_tokenizer_cuts_as_tokenizers_does(assets):
    texts = generated_strings()
    assert len(texts) >= 2000
    assert any(unicodedata.normalize("NFD", t) == t != unicodedata.normalize("NFC", t) for t in texts)
    got = run_node(assets, texts)
    tok = tokens.tokenizer("tiny")
    wrong = [(t, ids) for t, ids in zip(texts, got) if ids != tok.encode(t, add_special_tokens=False).ids]
    assert not wrong, f"{len(wrong)} of {len(texts)} strings cut differently, first: {wrong[0][0]!r}"


@needs_node
def test_a_changed_merge_is_found(assets, tmp_path):
    """The comparison can fail: with the first merge dropped, 'the' no longer cuts as tokenizers does."""
    src = assets[0].read_text(encoding="ascii")
    broken = tmp_path / "play-model.js"
    broken.write_text(src.replace('"merges":["h e",', '"merges":["zz zz",', 1), encoding="ascii")
    assert broken.read_text(encoding="ascii") != src
    got = run_node((broken, assets[1]), ["the"], tmp=tmp_path)
    assert got[0] != tokens.tokenizer("tiny").encode("the", add_special_tokens=False).ids


@needs_node
def test_token_texts_are_tokenizers_decode(assets):
    """What the page shows for a token is tokenizers' decode([id]), a cut UTF-8 sequence as U+FFFD."""
    texts = ["Lily 😀 café\n\n 日本", tokens.EOT + "x"]
    got = run_node(assets, texts, mode="trace")
    for g in got:
        assert g["texts"] == [tokens.token_text("tiny", i) for i in g["ids"]]


def test_the_weights_asset_holds_the_committed_float32_weights():
    doc = json.loads(play_model.play_model_js().decode("ascii").removeprefix("window.coursePlayModel = ").rstrip(";\n"))
    raw = np.frombuffer(base64.b64decode(doc["weights"]), "<f4")
    ref = play_model.read_safetensors()
    assert [t["name"] for t in doc["tensors"]] == play_model.tensor_order(4)
    for t in doc["tensors"]:
        a = raw[t["offset"]: t["offset"] + int(np.prod(t["shape"]))].reshape(t["shape"])
        assert np.array_equal(a, ref[t["name"]]), t["name"]
    assert raw.size == sum(int(np.prod(ref[n].shape)) for n in play_model.tensor_order(4))
    tok = json.loads(play_model.TOKENIZER.read_text(encoding="utf-8"))["model"]
    assert len(doc["merges"]) == len(tok["merges"]) and doc["vocab"][0] == tokens.EOT


@pytest.mark.parametrize("damage, says", [
    (lambda b: b[:5], "shorter than a safetensors header"),
    (lambda b: struct.pack("<Q", 10**9) + b[8:], "does not fit the file"),
    (lambda b: b[:8] + b"x" + b[9:], "unreadable header"),
    (lambda b: b[:-4], "do not hold shape"),
])
def test_a_damaged_weights_file_is_one_line(tmp_path, damage, says):
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(damage(play_model.WEIGHTS.read_bytes()))
    with pytest.raises(play_model.WeightsError, match=says):
        play_model.read_safetensors(bad)


def test_the_mean_ablation_reference_is_the_traces():
    """The asset's headMeans, each head's mean output for mean-ablation, are the mean of the
    committed traces' own head outputs over the reference texts (every position but 0), within
    the files' int16 step, and its record is the one every trace's causal block holds."""
    from generator import heads
    from generator.store.traces import TraceStore

    doc = json.loads(play_model.play_model_js().decode("ascii").removeprefix("window.coursePlayModel = ").rstrip(";\n"))
    means = np.array(doc["headMeans"])  # (layer, head, head_dim)
    store = TraceStore(REPO / "traces")
    total, n, step = np.zeros_like(means), 0, 0.0
    for text in heads.SCORING_SENTENCES:
        t = store.load("tiny", text)
        assert t["causal"]["meanReference"] == doc["meanReference"], text
        out = np.array([[h["out"] for h in layer["heads"]] for layer in t["layers"]])  # (layer, head, token, head_dim)
        total += out[:, :, 1:].sum(axis=2)
        n += out.shape[2] - 1
        step = max(step, max(h["out"]["scale"] for layer in t.stored_layers for h in layer["heads"]) / 2)
    assert n == doc["meanReference"]["positions"]
    err = np.abs(total / n - means).max()
    assert err <= step + 1e-6, f"headMeans off the traces' mean head outputs by {err:.1e} (int16 step {step:.1e})"
    assert np.abs(means).max() > 100 * step  # not all near zero: zero-ablation's numbers would pass too
