"""Head-type scores: how much of each head's attention lands on four textbook patterns.

Pure numpy over attention weights shaped ``(layer, head, query, key)`` whose rows sum to 1
(masked cells 0). Every score is a *share of attention*: the average, over the query rows where
the pattern is defined, of the total weight the row puts on the pattern's cells. A head that does
exactly the pattern scores 1; a head that never does scores 0. This is the measure of
TransformerLens's head detector (the weight on a pattern divided by the total weight), restricted
to the rows where the pattern exists, as in Olsson et al. (2022) for induction heads.

The four kinds (positions count from 0 here; the pages count tokens from 1):

``previous-token`` (Elhage et al. 2021; Wang et al. 2022)
    mean over queries i >= 2 of w[i, i-1].
``duplicate-token`` (Wang et al. 2022)
    mean, over queries i that have an earlier copy of their own token, of the summed weight on
    those earlier copies: sum of w[i, j] over j < i with ids[j] == ids[i].
``induction`` (Olsson et al. 2022)
    mean, over the same queries, of the summed weight on the tokens right after the earlier
    copies: sum of w[i, j+1] over j < i with ids[j] == ids[i]. On a random sequence repeated
    twice this is the weight each token of the second copy puts on the token that followed it
    the first time.
``sink`` (Xiao et al. 2023)
    mean over queries i >= 2 of w[i, 0], the weight on the very first token.

Row i = 1 is left out of the previous-token and sink scores because there the previous token *is*
the first token: that row cannot tell the two patterns apart, and counting it would give every
sink head some previous-token score and every previous-token head some sink score. (Row 0 can
only look at itself.) TransformerLens divides by every row instead, so its numbers are a little
lower; the ranking of heads is the same idea.

Scoring texts (:func:`scoring_requests`): previous-token and sink are measured on the fixed natural
sentences of :data:`SCORING_SENTENCES` (each traced, like every trace, after the model's
``<|endoftext|>``, so the sink score is the weight on that token); duplicate-token
and induction on :data:`N_RANDOM` sequences of :data:`RANDOM_LENGTH` distinct random ordinary
tokens, each prefixed by the model's ``<|endoftext|>`` and repeated twice. The random ids come
from sha256, not from a random-number library, so they never change with a library version.

Next to each score kind heads.json keeps its *chance level* (:func:`chance`): the score of a head
that spreads every row evenly over the tokens it can see, on the same texts. A head follows a
pattern only when it scores well above that.

:func:`write_scores` writes ``traces/<model>/heads.json`` (deterministic bytes, atomically);
:func:`load_scores` reads it back for the site build. No torch anywhere in this module.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .registry import DEFINITIONS, KINDS, NAMES, REPEATED_KINDS, TITLES, VOCABS, Vocab  # noqa: F401 (heads.TITLES etc. for callers)
from .store.codec import weight_grid
from . import schema
from .store import KEY_RE, DamagedFile, TraceRequest, TraceStore, atomic_write, dumps, read_json, round_floats, trace_key

MAX_HEADS_BYTES = 2 * 1024 * 1024

HEADS_FILE = "heads.json"
FORMAT_VERSION = 3  # 2: adds `chance`; 3: adds `scoringSet` (the fixed texts' version), traces start with EOT
# The scoring set: fixed natural sentences, and repeated random tokens (below). Lessons never add to
# it, so a new lesson cannot change a scoreboard. Bump SCORING_SET_VERSION with any change here.
SCORING_SET_VERSION = 1


def texts_digest(texts: Iterable[str]) -> str:
    """12 hex digits naming a list of texts, in order: what a mean-ablation reference records of
    the texts it averaged over (meanReference.sha), so a reader can tell they are these."""
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode()).hexdigest()[:12]
SCORING_SENTENCES = (
    "Lily saw a big dog in the park, and the dog saw Lily.",
    "Once upon a time, there was a little boy named Tom. He had a red ball and a small cat.",
    "The sun was warm, so the children played by the river until it was time to go home.",
    "One day, Ben and his mom went to the store to buy some milk and bread.",
    "The little bird was sad because it could not find its nest in the tall tree.",
    "Mia gave her friend a big hug and said, \"Thank you for the pretty flower!\"",
    "After lunch, Sam and Max built a tall tower of blocks, but it fell down.",
    "The cat jumped on the table and knocked over a cup of water.",
)

N_RANDOM = 4  # repeated random sequences per model
RANDOM_LENGTH = 10  # distinct random tokens in each copy; a trace is 1 + 2 * RANDOM_LENGTH tokens
# How many of the scoring texts are traced: (repeated random sequences, natural sentences). "full"
# is the course's, always. "small" is for the test suite's GPT-2-shaped runs (`python -m generator
# traces --scoring-set small`, refused for the committed traces/): the same code path on 2 + 1 of
# the 4 + 8 texts (2 random: with one, a random-weight model can leave the induction kind without an
# example grid), since every scoring text costs a GPT-2-shaped model a
# trace with its head ablation over the 50,257-word unembedding (about 8 CPU-seconds each).
SCORING_SIZES = {"full": (N_RANDOM, len(SCORING_SENTENCES)), "small": (2, 1)}
SCORING_SEED = "heads-2022"
RANDOM_TEXT = "Random tokens, repeated twice ({n} of {total})"


def vocab_for(model_name: str, model_meta: dict | None) -> Vocab:
    """The stand-in is GPT-2-shaped but uses the tiny tokenizer, so it draws tiny's ids."""
    if (model_meta or {}).get("standIn") or model_name not in VOCABS:
        return VOCABS["tiny"]
    return VOCABS[model_name]


# ---------------------------------------------------------------- the scores


def _as_weights(w) -> np.ndarray:
    a = np.asarray(w, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"weights must be (layer, head, query, key) with square grids, not {a.shape}")
    return a


def _shares(w: np.ndarray, targets: Sequence[Sequence[int]]) -> tuple[np.ndarray, int]:
    """(sum over scored queries of the weight on their target keys, number of scored queries).

    targets[i] is the set of key positions that count for query i; an empty set means the
    query is not scored. Returns a (layer, head) array of sums."""
    total = np.zeros(w.shape[:2])
    n = 0
    for i, keys in enumerate(targets):
        if len(keys):
            total += w[:, :, i, list(keys)].sum(axis=-1)
            n += 1
    return total, n


def pattern_targets(kind: str, ids: Sequence[int]) -> list[tuple[int, ...]]:
    """For each query position, the key positions that the pattern `kind` puts its weight on
    (empty where the query is not scored). Positions are 0-based."""
    T = len(ids)
    if kind == "previous-token":
        return [(i - 1,) if i >= 2 else () for i in range(T)]
    if kind == "sink":
        return [(0,) if i >= 2 else () for i in range(T)]
    if kind in ("duplicate-token", "induction"):
        shift = 0 if kind == "duplicate-token" else 1
        out = []
        for i in range(T):
            earlier = sorted({j + shift for j in range(i) if ids[j] == ids[i]})
            out.append(tuple(earlier))
        return out
    raise ValueError(f"unknown score kind {kind!r} (known: {', '.join(KINDS)})")


def score_parts(kind: str, weights, ids: Sequence[int]) -> tuple[np.ndarray, int]:
    """(layer × head sums of on-pattern weight, number of scored queries) for one trace."""
    w = _as_weights(weights)
    if len(ids) != w.shape[-1]:
        raise ValueError(f"{len(ids)} ids for a grid of {w.shape[-1]} tokens")
    return _shares(w, pattern_targets(kind, ids))


def pooled(kind: str, samples: Iterable[tuple[object, Sequence[int]]]) -> tuple[np.ndarray, int]:
    """(layer × head score of `kind`, number of scored queries), pooled over (weights, ids)
    samples: every scored query of every sample counts once. Raises ValueError when no query
    can be scored."""
    total, n = None, 0
    for weights, ids in samples:
        s, k = score_parts(kind, weights, ids)
        total = s if total is None else total + s
        n += k
    if total is None or n == 0:
        raise ValueError(f"{kind}: no query in the scoring texts has the pattern (too short, or no repeats)")
    return np.clip(total / n, 0.0, 1.0), n


def score(kind: str, samples: Iterable[tuple[object, Sequence[int]]]) -> np.ndarray:
    """The layer × head score of `kind`, pooled over (weights, ids) samples."""
    return pooled(kind, samples)[0]


def uniform_weights(T: int) -> np.ndarray:
    """(1, 1, T, T): every row spread evenly over the tokens it can see (1/(i+1) each)."""
    w = np.tril(np.ones((T, T)))
    return (w / w.sum(axis=1, keepdims=True))[None, None]


def chance(kind: str, id_lists: Iterable[Sequence[int]]) -> float:
    """The score of a head that spreads every row evenly over the tokens it can see, on the same
    texts: the level a score must clearly beat before the head can be said to follow the pattern."""
    return float(score(kind, [(uniform_weights(len(ids)), ids) for ids in id_lists])[0, 0])


def previous_token_score(weights) -> np.ndarray:
    w = _as_weights(weights)
    return score("previous-token", [(w, range(w.shape[-1]))])


def sink_score(weights) -> np.ndarray:
    w = _as_weights(weights)
    return score("sink", [(w, range(w.shape[-1]))])


def duplicate_token_score(weights, ids: Sequence[int]) -> np.ndarray:
    return score("duplicate-token", [(weights, ids)])


def induction_score(weights, ids: Sequence[int]) -> np.ndarray:
    return score("induction", [(weights, ids)])


# ---------------------------------------------------------------- scoring texts


def random_ids(vocab: Vocab, n: int, label: str) -> list[int]:
    """`n` distinct ids from [vocab.low, vocab.high), ranked by sha256(seed, label, id)."""
    if vocab.high - vocab.low < n:
        raise ValueError(f"cannot draw {n} distinct ids from [{vocab.low}, {vocab.high})")

    def rank(i: int) -> bytes:
        return hashlib.sha256(f"{SCORING_SEED}:{label}:{i}".encode()).digest()

    return sorted(range(vocab.low, vocab.high), key=rank)[:n]


def repeated_random_ids(vocab: Vocab, index: int, length: int = RANDOM_LENGTH) -> tuple[int, ...]:
    seq = random_ids(vocab, length, f"seq{index}")
    return tuple([vocab.eot] + seq + seq)


def scoring_requests(
    model_name: str | dict,
    model_meta: dict | None = None,
    n_random: int = N_RANDOM,
    random_length: int = RANDOM_LENGTH,
    n_sentences: int | None = None,
) -> list[TraceRequest]:
    """Every trace the scores of `model_name` need: the repeated random sequences first (ids
    given), then the fixed scoring sentences (the first `n_sentences` of them; all by default).
    Never the lessons' sentences: a new lesson must not change a scoreboard.

    ``scoring_requests(meta)`` (the model's metadata alone, whose ``model`` names it) is the same
    as ``scoring_requests(meta["model"], meta)``."""
    if isinstance(model_name, dict):
        model_name, model_meta = model_name["model"], model_name
    vocab = vocab_for(model_name, model_meta)
    out = [
        TraceRequest(model_name, RANDOM_TEXT.format(n=k + 1, total=n_random), repeated_random_ids(vocab, k, random_length))
        for k in range(n_random)
    ]
    out += [TraceRequest(model_name, text) for text in list(dict.fromkeys(SCORING_SENTENCES))[:n_sentences]]
    return out


def scoring_size(name: str) -> dict:
    """scoring_requests' keywords for a size of SCORING_SIZES ("full" or "small")."""
    n_random, n_sentences = SCORING_SIZES[name]
    return {"n_random": n_random, "n_sentences": n_sentences}


def _texts_for(kind: str, requests: Sequence[TraceRequest]) -> list[TraceRequest]:
    random = [r for r in requests if r.ids is not None]
    natural = [r for r in requests if r.ids is None]
    return random if kind in REPEATED_KINDS else natural


# ---------------------------------------------------------------- heads.json


def example_text(kind: str, mat: np.ndarray, reqs: Sequence[TraceRequest], get) -> TraceRequest:
    """The scoring text on which the kind's best head shows its pattern most clearly (its highest
    score on one text; ties go to the earlier text), so the example grid shows the job."""
    layer, head = min(np.ndindex(mat.shape), key=lambda lh: (-mat[lh], lh))

    def on_one(req) -> float:
        w, ids = get(req)[:2]
        part, n = score_parts(kind, w, ids)
        return float(part[layer, head] / n) if n else -1.0

    return max(enumerate(reqs), key=lambda ir: (on_one(ir[1]), -ir[0]))[1]


def compute(store: TraceStore, model_name: str, requests: Sequence[TraceRequest]) -> dict:
    """The heads.json document for `model_name` from the stored traces of `requests`."""
    meta = store.model_meta(model_name)
    if meta is None:
        raise FileNotFoundError(f"no traces of {model_name!r} in {store.root}; run `python -m generator traces`")
    revision = meta["revision"]
    cache: dict[TraceRequest, tuple[np.ndarray, list[int], str]] = {}

    def get(req: TraceRequest):
        if req not in cache:
            path = store.lookup(req.model, req.text, req.ids, revision=revision)
            if path is None:
                store.load(req.model, req.text, req.ids)  # raises MissingTrace with the remedy
                raise FileNotFoundError(f"trace of {req.text!r} for {model_name} is from another revision than {revision}")
            doc = store.load(req.model, req.text, req.ids)  # checked: shapes, distributions
            cache[req] = (weight_grid(doc), [t["id"] for t in doc["tokens"]], path.stem)
        return cache[req]

    scores, chances, examples, used = {}, {}, {}, {}
    for kind in KINDS:
        reqs = _texts_for(kind, requests)
        if not reqs:
            raise ValueError(f"{kind}: no scoring texts for {model_name}")
        mat, n_queries = pooled(kind, [get(r)[:2] for r in reqs])
        scores[kind] = mat.tolist()
        chances[kind] = chance(kind, [get(r)[1] for r in reqs])
        ex = example_text(kind, mat, reqs, get)
        examples[kind] = {"model": ex.model, "text": ex.text, "ids": None if ex.ids is None else list(ex.ids), "key": get(ex)[2]}
        used[kind] = {
            "traces": [get(r)[2] for r in reqs],
            "queries": n_queries,
        }
    n_layer, n_head = len(scores[KINDS[0]]), len(scores[KINDS[0]][0])
    return {
        "formatVersion": FORMAT_VERSION,
        "model": model_name,
        "revision": revision,
        "standIn": bool(meta.get("standIn", False)),
        "nLayer": n_layer,
        "nHead": n_head,
        "scoringSet": SCORING_SET_VERSION,
        "kinds": list(KINDS),
        "definitions": dict(DEFINITIONS),
        "scores": round_floats(scores),
        "chance": round_floats(chances),
        "examples": examples,
        "scoredOn": used,
    }


def heads_path(root: Path | str, model_name: str) -> Path:
    return Path(root) / model_name / HEADS_FILE


def write_scores(store: TraceStore, model_name: str, **request_kw) -> Path:
    """Compute every score of `model_name` from its stored scoring traces and write
    ``<store root>/<model>/heads.json`` atomically. The bytes depend only on the traces."""
    requests = scoring_requests(model_name, store.model_meta(model_name), **request_kw)
    doc = compute(store, model_name, requests)
    path = heads_path(store.root, model_name)
    atomic_write(path, dumps(doc))
    return path


# ---------------------------------------------------------------- reading, for the site build

class StandInRefused(RuntimeError):
    pass


@dataclass(frozen=True)
class HeadScores:
    """A model's heads.json, read back. Layers and heads are 0-based here."""

    doc: dict
    path: Path

    model = property(lambda self: self.doc["model"])
    revision = property(lambda self: self.doc["revision"])
    n_layer = property(lambda self: self.doc["nLayer"])
    n_head = property(lambda self: self.doc["nHead"])

    def matrix(self, kind: str) -> np.ndarray:
        if kind not in self.doc["scores"]:
            raise KeyError(f"{kind!r} is not scored in {self.path} (scored: {', '.join(self.doc['scores'])})")
        return np.asarray(self.doc["scores"][kind], dtype=np.float64)

    def chance(self, kind: str) -> float:
        """The score of a head that spreads its attention evenly (see :func:`chance`)."""
        return float(self.doc["chance"][kind])

    def example(self, kind: str) -> dict:
        return self.doc["examples"][kind]

    def ranked(self, kind: str) -> list[tuple[int, int, float]]:
        """Every (layer, head, score), highest score first; ties by layer, then head."""
        m = self.matrix(kind)
        cells = [(l, h, float(m[l, h])) for l in range(m.shape[0]) for h in range(m.shape[1])]
        return sorted(cells, key=lambda c: (-c[2], c[0], c[1]))

    def top(self, kind: str, n: int = 1) -> list[tuple[int, int, float]]:
        return self.ranked(kind)[:n]


def _as_store(store_or_root: TraceStore | Path | str) -> TraceStore:
    return store_or_root if isinstance(store_or_root, TraceStore) else TraceStore(store_or_root)


def _is_id(i) -> bool:
    return type(i) is int and 0 <= i < 2**31


def check_scores(doc, path: Path, model_name: str, model_meta: dict | None = None) -> dict:
    """`doc` if it is a heads.json of the current format for `model_name`, with every score a
    number in [0, 1] on an nLayer × nHead grid, a definition and the scoring traces of every kind,
    and every example naming a trace key (its ids, if any, a list of token ids); otherwise
    DamagedFile, one line. With `model_meta` (the store index's meta) of the same revision,
    nLayer × nHead must be the traced model's layers × heads."""
    def bad(problem: str):
        raise DamagedFile(path, problem, "run `make traces`: it rewrites heads.json from the stored traces")

    if not isinstance(doc, dict):
        bad("is not a heads.json (not a JSON object)")
    if doc.get("model") != model_name:
        bad(f"holds the scores of {str(doc.get('model'))[:40]!r}, not of {model_name!r}")
    L, H = doc.get("nLayer"), doc.get("nHead")
    if type(L) is not int or type(H) is not int or not (0 < L <= 256 and 0 < H <= 256):
        bad("has no usable nLayer and nHead")
    if isinstance(model_meta, dict) and model_meta.get("revision") == doc.get("revision"):
        ml, mh = model_meta.get("nLayer"), model_meta.get("nHead")
        if (L, H) != (ml, mh):
            bad(f"says {L} layers × {H} heads, but the traces of {model_name} have {ml} × {mh}")
    scores, chances, examples = doc.get("scores"), doc.get("chance"), doc.get("examples")
    if not all(isinstance(x, dict) for x in (scores, chances, examples)):
        bad("lacks scores, chance or examples")
    definitions, used = doc.get("definitions"), doc.get("scoredOn")
    if not isinstance(definitions, dict):
        bad("has no definitions (an object of each kind's definition)")
    if not isinstance(used, dict):
        bad("has no scoredOn (an object of each kind's scoring traces)")
    for kind in KINDS:
        try:
            mat = np.asarray(scores[kind], dtype=np.float64)
            c = float(chances[kind])
            ex = examples[kind]
        except (KeyError, TypeError, ValueError):
            bad(f"has no usable {kind} scores, chance and example")
        if mat.shape != (L, H) or not np.isfinite(mat).all() or mat.min() < 0 or mat.max() > 1 or not 0 <= c <= 1:
            bad(f"{kind} scores are not numbers in [0, 1] on a {L} × {H} grid")
        ok = isinstance(ex, dict) and isinstance(ex.get("text"), str) and isinstance(ex.get("key"), str) \
            and KEY_RE.match(ex["key"]) and (ex.get("ids") is None or (
                isinstance(ex["ids"], list) and ex["ids"] and all(_is_id(i) for i in ex["ids"])))
        if not ok:
            bad(f"the {kind} example is not {{text, ids: null or a list of token ids, key: 12 hex digits}}")
        # the key is a digest of what the trace is about: one that is not its text's names another
        # trace (checked for the store's revision: scores of another one are stale, not damaged)
        want = trace_key(model_name, str(doc.get("revision")), schema.SCHEMA_VERSION, ex["text"], ex.get("ids"))
        current = isinstance(model_meta, dict) and model_meta.get("revision") == doc.get("revision")
        if current and (ex["key"] != want or ex.get("model", model_name) != model_name):
            bad(f"the {kind} example names the trace {ex['key']}, but the trace of its text {ex['text'][:60]!r} is {want}")
        if not isinstance(definitions.get(kind), str) or not definitions[kind].strip():
            bad(f"has no definition of {kind}")
        on = used.get(kind)
        ok = isinstance(on, dict) and isinstance(on.get("traces"), list) and on["traces"] \
            and all(isinstance(k, str) and KEY_RE.match(k) for k in on["traces"]) \
            and type(on.get("queries")) is int and on["queries"] > 0
        if not ok:
            bad(f"scoredOn.{kind} is not {{traces: a list of trace keys (12 hex digits), queries: a positive count}}")
    return doc


def _read_scores(store: TraceStore, model_name: str) -> dict | None:
    path = heads_path(store.root, model_name)
    if not path.is_file():
        return None
    doc = read_json(path, MAX_HEADS_BYTES, "run `make traces`: it rewrites heads.json from the stored traces")
    if isinstance(doc, dict) and doc.get("formatVersion") != FORMAT_VERSION:
        return None
    return check_scores(doc, path, model_name, store.model_meta(model_name))


def example_requests(store_or_root: TraceStore | Path | str, model_name: str) -> list[TraceRequest]:
    """The example traces heads.json names (one per distinct scoring text), for the asset step
    that copies every trace a page shows; [] without a heads.json."""
    doc = _read_scores(_as_store(store_or_root), model_name)
    if doc is None:
        return []
    reqs = [TraceRequest(model_name, e["text"], e["ids"]) for e in doc["examples"].values()]
    return list(dict.fromkeys(reqs))


def load_scores(store_or_root: TraceStore | Path | str, model_name: str, allow_stand_in: bool = False) -> HeadScores | None:
    """heads.json of `model_name` in the store (normally traces/), or None when it is missing or
    was computed from another revision than the traces now stored; DamagedFile when it cannot be
    trusted. A stand-in's scores raise :class:`StandInRefused` unless `allow_stand_in` (the site
    build passes its own policy, COURSE_ALLOW_STANDIN)."""
    store = _as_store(store_or_root)
    path = heads_path(store.root, model_name)
    doc = _read_scores(store, model_name)
    if doc is None:
        return None
    meta = store.model_meta(model_name)
    if meta is None or meta.get("revision") != doc.get("revision"):
        return None
    if doc.get("standIn") and not allow_stand_in:
        raise StandInRefused(f"{path}: scores of the random-init stand-in, which is for tests only")
    return HeadScores(doc, path)
