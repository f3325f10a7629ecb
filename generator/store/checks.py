"""What a trace or an index read from disk must be before anything uses it (:func:`check_trace`,
:func:`check_index`): the sentence the index points it to, shapes consistent with its meta, and
weights that are distributions. Every failure is a one-line :class:`DamagedFile`."""

from __future__ import annotations

from pathlib import Path

from .. import schema
from .files import BEYOND, KEY_RE, TRACE_FILE_RE, DamagedFile, ids_key, plausible_array

ROW_SUM_TOL = 1e-3  # stored weights are int16 × scale (error ≤ 1.6e-5 each); a row of them sums to 1 within this


def _grid(path: Path, name: str, rows, shape: tuple[int, int], triangle: bool = False):
    """A float64 array of `rows` with exactly `shape`; in a triangle grid, cells above the
    diagonal must be null (None) and come back as 0."""
    import numpy as np

    if triangle:
        if not isinstance(rows, list) or len(rows) != shape[0]:
            raise DamagedFile(path, f"{name} has {len(rows) if isinstance(rows, list) else 'no'} rows, not {shape[0]}")
        clean = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != shape[1] or any(x is not None for x in row[i + 1 :]):
                raise DamagedFile(path, f"{name} row {i} is not {shape[1]} cells with nulls above the diagonal")
            clean.append(row[: i + 1] + [0.0] * (shape[1] - i - 1))
        rows = clean
    try:
        a = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise DamagedFile(path, f"{name} is not a grid of numbers") from None
    if a.shape != shape:
        raise DamagedFile(path, f"{name} has shape {a.shape}, not {shape}")
    if not plausible_array(a):
        raise DamagedFile(path, f"{name} holds a value that is not a finite number or is {BEYOND}")
    return a


def check_trace(doc, path: Path, model: str, text: str, ids=None) -> dict:
    """`doc`, read from `path`, if it is the trace of (model, text, ids) that the current schema
    describes: key = file name, shapes consistent with its meta, weights rows that are
    distributions. Otherwise DamagedFile, one line."""
    import numpy as np

    if not isinstance(doc, dict):
        raise DamagedFile(path, "is not a trace (not a JSON object)")
    if doc.get("schemaVersion") != schema.SCHEMA_VERSION:
        raise DamagedFile(path, f"has schemaVersion {doc.get('schemaVersion')!r}, not {schema.SCHEMA_VERSION}")
    key = doc.get("key")
    if not isinstance(key, str) or not KEY_RE.match(key) or f"{key}.json" != path.name:
        raise DamagedFile(path, f"names its key {str(key)[:40]!r}, which is not its file name")
    if doc.get("model") != model or doc.get("text") != text or ids_key(doc.get("ids")) != ids_key(ids):
        raise DamagedFile(path, f"holds the trace of {str(doc.get('text'))[:60]!r} ({doc.get('model')!r}), "
                                f"not of {text[:60]!r} ({model!r}) that the index points it to")
    meta = doc.get("meta")
    try:
        L, H, d = (int(meta[k]) for k in ("nLayer", "nHead", "headDim"))
    except (TypeError, KeyError, ValueError):
        raise DamagedFile(path, "has no usable meta (nLayer, nHead, headDim)") from None
    vocab = meta.get("vocabSize")
    if type(vocab) is not int or vocab <= 0:
        raise DamagedFile(path, "has no usable meta vocabSize")
    G = check_kv_meta(meta, path, model)
    tokens = doc.get("tokens")
    if not isinstance(tokens, list) or not tokens:
        raise DamagedFile(path, "has no list of tokens")
    for i, t in enumerate(tokens):
        if not isinstance(t, dict) or not all(isinstance(t.get(k), str) for k in TOKEN_TEXTS) or not _is_id(t.get("id"), vocab):
            raise DamagedFile(path, f"token {i} is not {{id: a token id below vocabSize {vocab}, text, display, spoken: strings}}")
        if t["display"] != schema.display_token(t["text"]) or t["spoken"] != schema.spoken_token(t["text"]):
            raise DamagedFile(path, f"token {i}'s display or spoken text is not its text's (a page prints them)")
    T = len(tokens)
    if ids is not None and [t["id"] for t in tokens] != [int(i) for i in ids]:
        raise DamagedFile(path, "holds token ids other than the ones it was asked for")
    layers = doc.get("layers")
    if not isinstance(layers, list) or len(layers) != L:
        raise DamagedFile(path, f"has {len(layers) if isinstance(layers, list) else 'no'} layers, its meta says {L}")
    for l, layer in enumerate(layers):
        hs = layer.get("heads") if isinstance(layer, dict) else None
        if not isinstance(hs, list) or len(hs) != H:
            raise DamagedFile(path, f"layer {l} has {len(hs) if isinstance(hs, list) else 'no'} heads, its meta says {H}")
        _grid(path, f"layer {l} attnConcat", layer.get(schema.camel("attn_concat")), (T, H * d))
        kvs = layer.get("kvHeads")
        if not isinstance(kvs, list) or len(kvs) != G:
            raise DamagedFile(path, f"layer {l} has {len(kvs) if isinstance(kvs, list) else 'no'} kvHeads, its meta says nKvHead {G}")
        for g, kv in enumerate(kvs):
            for f in ("k", "v", "kUnrotated"):
                _grid(path, f"layer {l} kvHead {g} {f}", kv.get(f) if isinstance(kv, dict) else None, (T, d))
        for h, head in enumerate(hs):
            where = f"layer {l} head {h}"
            if not isinstance(head, dict):
                raise DamagedFile(path, f"{where} is not an object")
            if head.get("kvHead") != h // (H // G):
                raise DamagedFile(path, f"{where} reads key/value head {str(head.get('kvHead'))[:10]}, not {h // (H // G)}")
            for a in schema.HEAD_ACTIVATIONS:
                square = a.shape == ("query", "key")
                grid = _grid(path, f"{where} {a.camel}", head.get(a.camel), (T, T) if square else (T, d),
                             triangle=a.camel == "scaledMasked")
                if a.camel == "weights":
                    if np.triu(grid, 1).any():
                        raise DamagedFile(path, f"{where} has weight on a later token, which the mask forbids")
                    if grid.min() < -1e-9 or grid.max() > 1 + 1e-9:
                        raise DamagedFile(path, f"{where} has a weight outside [0, 1] ({grid.min():.3g} to {grid.max():.3g})")
                    worst = float(np.abs(grid.sum(axis=1) - 1).max())
                    if worst > ROW_SUM_TOL:
                        raise DamagedFile(path, f"{where} has a weights row that sums to 1 ± {worst:.3g}, not a share of attention")
    preds = doc.get("predictions")
    if not isinstance(preds, list) or len(preds) != T:
        raise DamagedFile(path, f"has {len(preds) if isinstance(preds, list) else 'no'} prediction rows for {T} tokens")
    for i, row in enumerate(preds):
        _check_guesses(path, i, row, vocab)
    check_causal(doc.get("causal"), path, meta, L, H)
    return doc


def check_kv_meta(meta: dict, path: Path, model: str) -> int:
    """The meta's architecture, nKvHead, positions and ropeTheta agree with each other and with the
    registry's model; returns nKvHead. DamagedFile, one line, otherwise."""
    import math

    from ..registry import MODELS

    H = int(meta["nHead"])
    G = meta.get("nKvHead")
    if type(G) is not int or G <= 0 or H % G:
        raise DamagedFile(path, f"has meta nKvHead {str(G)[:12]}, not a divisor of nHead {H}")
    spec = MODELS.get(model)
    arch = meta.get("architecture")
    if not isinstance(arch, str) or (spec is not None and arch != spec.architecture):
        want = spec.architecture if spec else "an architecture"
        raise DamagedFile(path, f"has meta architecture {str(arch)[:20]!r}, not {want!r}")
    positions, theta = meta.get("positions"), meta.get("ropeTheta")
    if positions not in schema.POSITIONS or (spec is not None and positions != ("rotary" if spec.rotary else "learned")):
        raise DamagedFile(path, f"has meta positions {str(positions)[:20]!r}, not the model's ({', '.join(schema.POSITIONS)})")
    ok_theta = theta is None if positions == "learned" else (type(theta) in (int, float) and math.isfinite(theta) and theta > 0)
    if not ok_theta:
        raise DamagedFile(path, f"has meta ropeTheta {str(theta)[:20]}, which {positions} positions do not have")
    return G


TOKEN_TEXTS = ("text", "display", "spoken")  # a token's strings (a guess has no spoken: the page derives it)


def _is_id(i, vocab: int) -> bool:
    """A token id of a vocabulary of `vocab` tokens (a bool is not one)."""
    return type(i) is int and 0 <= i < vocab


def _check_guesses(path: Path, i: int, row, vocab: int) -> None:
    """One position's guesses: token ids of the vocabulary, with their text and display strings and
    probabilities in [0, 1], most likely first, adding up to at most 1 (a page prints them as they are)."""
    ok = isinstance(row, list) and all(
        isinstance(g, dict) and _is_id(g.get("id"), vocab)
        and isinstance(g.get("text"), str) and isinstance(g.get("display"), str)
        and isinstance(g.get("prob"), (int, float)) and not isinstance(g.get("prob"), bool)
        for g in row)
    if not ok:
        raise DamagedFile(path, f"prediction row {i} is not a list of guesses with id (below vocabSize {vocab}), text, display and prob")
    if any(g["display"] != schema.display_token(g["text"]) for g in row):
        raise DamagedFile(path, f"prediction row {i} has a guess whose display is not its text's (a page prints it)")
    probs = [float(g["prob"]) for g in row]
    if any(not (0 <= p <= 1) for p in probs):  # NaN fails too
        raise DamagedFile(path, f"prediction row {i} has a probability outside [0, 1] ({', '.join(f'{p:.3g}' for p in probs)})")
    if any(b > a + 1e-6 for a, b in zip(probs, probs[1:])) or sum(probs) > 1 + 1e-4:
        raise DamagedFile(path, f"prediction row {i} is not guesses most likely first that add up to at most 1")


CAUSAL_ABLATIONS = ("zero", "mean")
KL_TOL = 1e-3  # a KL divergence is ≥ 0; int16 × scale may take a tiny one just below


def check_causal(block, path: Path, meta: dict, L: int, H: int) -> None:
    """The decoded causal block (store_codec.decode_causal gave its arrays their shapes): what its
    lists say agrees with its arrays, ids lie in the vocabulary and have their texts, and the
    numbers are what they claim to be (a KL divergence is not negative, a probability lies in
    [0, 1])."""
    import numpy as np

    def bad(problem: str):
        raise DamagedFile(path, f"causal {problem}")

    if not isinstance(block, dict):
        bad("is missing")
    vocab = meta.get("vocabSize")
    if type(vocab) is not int or vocab <= 0:
        bad("cannot be checked: meta has no vocabSize")
    targets = block["targets"]
    if not all(type(t) is int and 0 <= t < vocab for t in targets) or targets != sorted(set(targets)):
        bad("targets are not sorted distinct token ids of the vocabulary")
    ab = block["ablations"]
    if not ab or len(set(ab)) != len(ab) or any(a not in CAUSAL_ABLATIONS for a in ab):
        bad(f"ablations are {str(ab)[:40]}, not distinct names of {', '.join(CAUSAL_ABLATIONS)}")
    if block["parts"] != schema.causal_parts(L, H):
        bad("parts are not the embedding, every head, every MLP and the biases")
    if not isinstance(block["meanReference"], dict):
        bad("meanReference is not an object")
    texts = block["tokenTexts"]
    if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
        bad("tokenTexts is not an object of token texts")
    followed, lens_ids = block["followed"], block["lensIds"]
    for name, ids in (("followed", followed), ("lensIds", lens_ids)):
        if ids.size and (ids.min() < 0 or ids.max() >= vocab):
            bad(f"{name} holds a token id outside the vocabulary")
        missing = {str(int(i)) for i in np.unique(ids)} - set(texts)
        if missing:
            bad(f"tokenTexts lacks the text of token {sorted(missing, key=int)[0]}, which {name} uses")
    k = schema.TOP_K_PREDICTIONS
    if targets and not (followed[:, k:] == np.asarray(targets)[None, :]).all():
        bad("followed does not end in the targets at every position")
    if block["kl"].min() < -KL_TOL:
        bad(f"kl holds {block['kl'].min():.3g}, and a KL divergence is never negative")
    probs = block["lensProbs"]
    if probs.min() < -1e-4 or probs.max() > 1 + 1e-4:
        bad("lensProbs holds a number outside [0, 1]")
    if block["cleanLogprob"].max() > 1e-3:
        bad("cleanLogprob holds a log-probability above 0")


def check_index(index, path: Path, model: str) -> dict:
    def bad(problem: str):
        raise DamagedFile(path, problem)

    if not isinstance(index, dict):
        bad("is not an index (not a JSON object)")
    if index.get("model") != model:
        bad(f"is the index of {str(index.get('model'))[:40]!r}, in the folder of {model!r}")
    if not isinstance(index.get("meta"), dict) or not isinstance(index["meta"].get("revision"), str):
        bad("has no meta with a revision")
    entries = index.get("traces")
    if not isinstance(entries, list):
        bad("has no list of traces")
    for n, e in enumerate(entries):
        ok = (
            isinstance(e, dict)
            and isinstance(e.get("text"), str)
            and isinstance(e.get("file"), str)
            and TRACE_FILE_RE.match(e["file"])
            and (e.get("ids") is None or (isinstance(e["ids"], list) and all(type(i) is int for i in e["ids"])))
        )
        if not ok:
            bad(f"entry {n} is not {{text, ids?, file: <12 hex digits>.json}}")
    # one entry per sentence: with two, which trace a figure got would depend on their order
    seen: dict = {}
    for n, e in enumerate(entries):
        k = (e["text"], ids_key(e.get("ids")))
        if k in seen:
            bad(f"entries {seen[k]} and {n} both list {e['text'][:60]!r}")
        seen[k] = n
    return index
