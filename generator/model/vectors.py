"""`make traces`, last step: freeze chapter 2's vectors of the tiny model into traces/tiny/vectors.json.

From the committed checkpoint (loaded by generator/model/load.py) and the chapter's figures
(lessons.vector_kinds.needs), it writes:

* for every sentence of an `embedding` or `layernorm` figure: each token's row of the embedding
  matrix (wte), its position's row (wpe), their sum (the input of layer 1), that sum normalised
  (mean 0, standard deviation 1) and the output of layer 1's ln_1 (normalised × weight + bias);
* for every word a `neighbours` or `map` figure names: its embedding row and its closest rows by
  cosine similarity over the whole vocabulary (vectors_file.CONFIG.nearest of them);
* a 2-D map: the first CONFIG.map_tokens tokens of the vocabulary that are a space and two or more letters
  (whole words, and pieces that begin longer words, like " happ"; BPE gives ids in the order it
  learned its merges, so the earliest are the most frequent), projected on the two principal axes
  of their embedding rows (PCA with numpy), with the lesson's words projected the same way.

Every number comes from the weights; nothing is typed in. The writer rounds and checks the
document (vectors_file.write) and writes it atomically.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from .. import schema

from ..store import vectors_file
from ..lessons import pages
from ..lessons.errors import LessonError
from ..lessons.vector_kinds import needs

WORD_START_RE = re.compile(r"^ [A-Za-z]{2,}$")  # " ball", " happ": a space and two or more letters (not " a")


def token_entry(model: str, i: int) -> dict:
    from .. import tokens

    text = tokens.token_text(model, int(i))
    return {"id": int(i), "text": text, "display": schema.display_token(text), "spoken": schema.spoken_token(text)}


def sentence_rows(lm, text: str) -> dict:
    """The embedding rows of one sentence and its layer-1 layer norm, checked against the model."""
    import torch

    from .. import tokens
    from . import arch

    ids = [tokens.bos_id(lm.name)] + lm.tokenizer_encode(text)  # (token,)
    with torch.no_grad():
        idx = torch.tensor(ids)
        tok = arch.token_embedding(lm.model).weight[idx]  # (token, width)
        pos = arch.position_embedding(lm.model).weight[: len(ids)]  # (token, width): VECTOR_MODELS have a position table
        total = tok + pos  # (token, width): the input of layer 1
        ln = arch.attn_norm(arch.blocks(lm.model)[0])
        mean = total.mean(dim=-1, keepdim=True)  # (token, 1)
        var = total.var(dim=-1, unbiased=False, keepdim=True)  # (token, 1)
        normalised = (total - mean) / torch.sqrt(var + ln.eps)  # (token, width)
        out = normalised * ln.weight + ln.bias  # (token, width)
        hidden = lm.model(idx[None], output_hidden_states=True).hidden_states[0][0]  # (token, width)
        if not torch.allclose(hidden, total, atol=1e-6) or not torch.allclose(ln(total), out, atol=1e-5):
            raise AssertionError(f"tiny: the embedding sum or ln_1 of {text!r} does not match the model's own")
    return {
        "text": text,
        "tokens": [token_entry(lm.name, i) for i in ids],
        "token": tok.tolist(), "position": pos.tolist(), "sum": total.tolist(),
        "normalised": normalised.tolist(), "ln1": out.tolist(),
    }


def nearest(matrix: np.ndarray, unit: np.ndarray, i: int, model: str, k: int) -> list[dict]:
    cos = unit @ unit[i]  # (vocab,)
    cos[i] = -np.inf  # not itself
    order = np.lexsort((np.arange(len(cos)), -cos))[:k]  # (k,): ties by id, the same order every time
    return [{"token": token_entry(model, j), "cosine": float(cos[j])} for j in order]


def map_doc(matrix: np.ndarray, model: str, marks: list[int], n: int) -> dict:
    from .. import tokens

    chosen = [i for i in range(len(matrix)) if WORD_START_RE.match(tokens.token_text(model, i))][:n]
    rows = matrix[chosen]  # (n, width)
    centre = rows.mean(axis=0)  # (width,)
    _, s, vt = np.linalg.svd(rows - centre, full_matrices=False)  # vt: (n, width)
    axes = vt[:2]  # (2, width)
    # an SVD's signs are arbitrary: turn each axis so its largest entry is positive
    axes = axes * np.sign(axes[np.arange(2), np.abs(axes).argmax(axis=1)])[:, None]  # (2, width)
    explained = (s[:2] ** 2 / np.sum(s**2)).tolist()  # (2,)

    def placed(ids):
        xy = (matrix[ids] - centre) @ axes.T  # (len(ids), 2)
        return [token_entry(model, i) | {"x": float(x), "y": float(y)} for i, (x, y) in zip(ids, xy)]

    return {
        "rule": f"the first {len(chosen)} tokens of the vocabulary made of a space and two or more letters (whole words, and pieces that begin longer words), in the order BPE learned them",
        "tokens": placed(chosen), "marks": placed(marks), "explained": explained,
    }


def build(lm, sentences: list[str], words: list[tuple[str, int]]) -> dict:
    """The vectors.json document for the tiny model `lm`."""
    from . import arch

    matrix = arch.token_embedding(lm.model).weight.detach().double().numpy()  # (vocab, width)
    norms = np.linalg.norm(matrix, axis=1)  # (vocab,)
    unit = matrix / norms[:, None]  # (vocab, width)
    ln = arch.attn_norm(arch.blocks(lm.model)[0])
    return {
        "format": vectors_file.FORMAT,
        "model": lm.name,
        "revision": lm.revision,
        "width": int(matrix.shape[1]),
        "vocabSize": int(matrix.shape[0]),
        "layerNorm": {"layer": 0, "weight": ln.weight.tolist(), "bias": ln.bias.tolist(), "eps": float(ln.eps)},
        "sentences": [sentence_rows(lm, s) for s in sentences],
        "words": [
            {"word": w, "token": token_entry(lm.name, i), "vector": matrix[i].tolist(), "norm": float(norms[i]),
             "nearest": nearest(matrix, unit, i, lm.name, vectors_file.CONFIG.nearest)}
            for w, i in words
        ],
        "map": map_doc(matrix, lm.name, [i for _, i in words], vectors_file.CONFIG.map_tokens),
    }


def lesson_needs(content_dir: Path) -> tuple[list[str], list[tuple[str, int]]]:
    """The sentences and (word, id) pairs the lessons' vector figures use; a word that is not one
    vocabulary entry is a LessonError at its figure's line."""
    directives = pages.parse_content(content_dir)
    sentences, words = needs(directives)
    resolved = []
    for word, where in words:
        try:
            resolved.append((word, vectors_file.word_token("tiny", word)[0]))
        except vectors_file.UnknownWord as e:
            raise LessonError(where, str(e), "name a word the tiny model has as one token, or another spelling (·word for the spaced one)") from None
    return [s for s, _ in sentences], resolved


def write_for_lessons(models: list[str], traces_dir: Path | str, content_dir: Path | str, stand_in: bool = False, out=None, err=None,
                      force: bool = False) -> int:
    """The `make traces` hook: rewrite traces/tiny/vectors.json. 0 on success (or when the tiny
    model is not selected), 2 for a lesson mistake (one line), 1 when the model is missing."""
    out, err = out or sys.stdout, err or sys.stderr
    if "tiny" not in models or stand_in:
        return 0
    from . import load as models_mod

    try:
        sentences, words = lesson_needs(Path(content_dir))
    except LessonError as e:
        print(str(e), file=err)
        return 2
    try:
        lm = models_mod.load("tiny")
    except models_mod.ModelUnavailable as e:
        print(str(e), file=err)
        return 1
    if not force and covers(traces_dir, lm.revision, sentences, words):
        print(f"tiny: vectors of {len(sentences)} sentences and {len(words)} words kept (written already)", file=out)
        return 0
    p = vectors_file.write(traces_dir, "tiny", build(lm, sentences, words))
    print(f"tiny: vectors of {len(sentences)} sentences and {len(words)} words -> {p}", file=out)
    return 0


def covers(traces_dir: Path | str, revision: str, sentences: list[str], words: list[tuple[str, int]]) -> bool:
    """Whether the stored vectors.json (checked as it is read) is this revision's, for exactly these
    sentences and words: then it is kept, so that `make traces` on a checkout rewrites none of its
    bytes (its map's SVD or a norm can differ in the last digits on another machine)."""
    from ..store import StoreError

    try:
        have = vectors_file.read(traces_dir, "tiny")
    except StoreError:  # damaged: written again
        return False
    if have is None or have.revision != revision:
        return False
    return ([s["text"] for s in have.doc["sentences"]] == list(sentences)
            and [(w["word"], w["token"]["id"]) for w in have.doc["words"]] == [(w, int(i)) for w, i in words])
