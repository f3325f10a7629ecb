"""`rope-distance` figures: position by rotation. One head of a rotary model, one query and one key
from a sentence, the two vectors placed at every distance apart (traces/<model>/rotary.json,
generator/model/rotary.py): a line of score against distance, beside the head's mean line over
the scoring sentences, the pair's real distance marked. Without JavaScript the same numbers are a
table (CONTRACT.md, `rope-distance`)."""

from __future__ import annotations

from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..schema import display_token, spoken_token
from ..store import rotary_file
from . import templating
from .causal_data import head_label, head_words
from .context import Ctx, Figure, Missing
from .format import minus2, tok, whole
from .pending import traces_pending
from .pick import best_head
from .ref_common import int_arg, ref_fail
from .token_names import resolve_token

# score: the pair's real score; distance: their real distance; query, key: the tokens; head:
# "layer 2, head 1"; label: L2H1; at(d) / meanAt(d): the pair's / the head's mean score at distance
# d; peak / meanPeak: the distance (within the mean's range) where the pair's / the mean curve is
# highest; peakWords / meanPeakWords: that distance in words ("the token itself", "the token just
# before", "3 tokens back"); low / high: the pair's lowest and highest score over that range;
# maxDistance: the range's end; longest: the farthest apart two tokens of the scoring sentences
# stand; nearPeak / nearPeakWords: where the mean is highest up to that distance; group: the head's key/value group, from 1. The model's shape, as
# rotary.json records it (headDim, numbers per head): apart (the real distance in words), sentences (how many the mean is
# over), pairs (turning pairs per head), theta (θ of the turns), queryHeads, kvHeads, perGroup (query heads per
# key/value head), layers; kept / keptWithout: numbers a token keeps for its keys and values in
# every layer, with the model's shared keys and with one key and value per query head.
REFS = {"longest": (0, 0), "nearPeak": (0, 0), "nearPeakWords": (0, 0), "theta": (0, 0), "headDim": (0, 0), "pairs": (0, 0), "apart": (0, 0), "sentences": (0, 0), "queryHeads": (0, 0), "kvHeads": (0, 0), "perGroup": (0, 0), "layers": (0, 0),
        "kept": (0, 0), "keptWithout": (0, 0), "score": (0, 0), "distance": (0, 0), "query": (0, 0), "key": (0, 0), "head": (0, 0), "label": (0, 0),
        "at": (1, 1), "meanAt": (1, 1), "peak": (0, 0), "meanPeak": (0, 0), "peakWords": (0, 0),
        "meanPeakWords": (0, 0), "low": (0, 0), "high": (0, 0), "maxDistance": (0, 0), "group": (0, 0)}
ARGS: dict[str, tuple[str, ...]] = {"at": ("distance",), "meanAt": ("distance",)}
TABLE_ROWS = 17  # distances 0..16 in the table without JavaScript, and every distance its summary names


def distance_words(d: int) -> str:
    """A distance as a reader reads it."""
    if d == 0:
        return "the token itself"
    if d == 1:
        return "the token just before"
    return f"{d} tokens back"


def apart_words(d: int) -> str:
    return "the same token" if d == 0 else "1 token apart" if d == 1 else f"{d} tokens apart"


def _rotary(ctx: Ctx, d):
    if ctx.store is None:
        return None
    return rotary_file.read(ctx.store.root, d.model)  # a damaged file: its own one line, naming it (markdown/kept_errors.store_failure)


def _peak(values: list[float]) -> int:
    """Where a curve is highest; ties: the nearest distance."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def render(d, ctx: Ctx) -> str:
    rot = _rotary(ctx, d)
    meta = ctx.store.model_meta(d.model) if ctx.store is not None else None
    sentence = rot.sentence(d.sentence) if rot is not None and (meta is None or meta.get("revision") == rot.revision) else None
    if sentence is None:
        ctx.note_missing(Missing(d.model, Missing.TRACE, d.sentence), d.where)
        return traces_pending(d, ctx, d.model, [d.sentence])
    tokens = [{"id": i, "text": t, "display": display_token(t), "spoken": spoken_token(t)}
              for i, t in zip(sentence["ids"], sentence["tokens"])]
    query = len(tokens) - 1 if d.token is None else resolve_token(d.token, tokens, d.where, f"{d.kind}: token")
    if d.key is None:
        if query == 0:
            raise LessonError(d.where, f"{d.kind}: token #0 has no token before it", "name a later `token:`, or a `key:`")
        key = query - 1
    else:
        key = resolve_token(d.key, tokens, d.where, f"{d.kind}: key")
    if key > query:
        raise LessonError(d.where, f"{d.kind}: key #{key} comes after token #{query}, and a token cannot look ahead",
                          "choose a key at or before the token")
    pair = rot.pair(d.sentence, query, key)
    if pair is None:
        ctx.note_missing(Missing(d.model, Missing.TRACE, d.sentence), d.where)
        return traces_pending(d, ctx, d.model, [d.sentence])
    if d.pick.rule == "best":
        layer, head = best_head(d.pick, d.model, ctx, d.where, d.kind)
        ctx.pattern_only.add(d.where)  # a pattern of the rotation, no job: the caption says so
    else:
        layer, head = d.pick.layer - 1, d.pick.head - 1
    doc = rot.doc
    top = doc["maxDistance"]
    curve = pair["curve"][layer][head]
    mean = rot.mean(layer + 1, head + 1)
    shown = curve[:top + 1]
    numbers = {
        "score": pair["score"][layer][head], "distance": pair["distance"], "curve": curve, "mean": mean,
        "peak": _peak(shown), "meanPeak": _peak(mean), "longest": doc["meanLongest"],
        "nearPeak": _peak(mean[:min(doc["meanLongest"], top) + 1]), "low": min(shown), "high": max(shown), "maxDistance": top,
        "group": head // (doc["nHead"] // doc["nKvHead"]), "tokens": tokens, "query": query, "key": key,
        "meanOver": len(doc["meanOver"]), "shape": {k: doc[k] for k in ("nLayer", "nHead", "nKvHead", "headDim", "ropeTheta")},
    }
    n = ctx.next_number()
    ctx.register(d, Figure("rope-distance", n, d, layer=layer, head=head, focus=query, numbers=numbers))
    named = {pair["distance"], shown.index(numbers["low"]), shown.index(numbers["high"]), numbers["peak"], numbers["meanPeak"]}  # the summary's
    rows = sorted(set(range(min(TABLE_ROWS, top + 1))) | {min(x, len(curve) - 1) for x in named})
    table = [{"distance": x, "score": minus2(curve[x]), "mean": minus2(mean[x]) if x <= top else "–",
              "real": x == pair["distance"]} for x in rows]
    payload = {"layer": layer + 1, "head": head + 1, "distance": pair["distance"], "score": pair["score"][layer][head],
               "curve": curve, "mean": mean, "maxDistance": top}
    prov = {"caption": d.caption, "revision": rot.revision[:12], "theta": f"{doc['ropeTheta']:,}", "mean_over": len(doc["meanOver"]),
            "pattern_only": "this head was picked by its score" if d.pick.rule == "best" else None}
    return templating.render(
        "rope_distance.html", n=n, model=d.model, head=head_words(layer, head), label=head_label(layer, head),
        query=tok(tokens[query]), key=tok(tokens[key]), apart=apart_words(pair["distance"]), score=minus2(pair["score"][layer][head]),
        peak=distance_words(numbers["peak"]), mean_peak=distance_words(numbers["meanPeak"]),
        low=minus2(numbers["low"]), high=minus2(numbers["high"]), top=top, rows=table, through=min(TABLE_ROWS, top + 1) - 1, payload=payload, prov=prov,
    )


def ref(ref: Ref, fig: Figure) -> str:
    x = fig.numbers
    shape = x["shape"]
    if ref.name in ("theta", "headDim", "queryHeads", "kvHeads", "layers"):
        return whole(shape[{"theta": "ropeTheta", "headDim": "headDim", "queryHeads": "nHead", "kvHeads": "nKvHead", "layers": "nLayer"}[ref.name]])
    if ref.name == "apart":
        return apart_words(x["distance"])
    if ref.name == "sentences":
        return whole(x["meanOver"])
    if ref.name == "pairs":
        return whole(shape["headDim"] // 2)
    if ref.name == "perGroup":
        return whole(shape["nHead"] // shape["nKvHead"])
    if ref.name in ("kept", "keptWithout"):
        heads = shape["nKvHead"] if ref.name == "kept" else shape["nHead"]
        return whole(2 * shape["nLayer"] * heads * shape["headDim"])  # a key and a value per head and layer
    panel_tokens = x["tokens"]
    if ref.name in ("at", "meanAt"):
        values = x["curve"] if ref.name == "at" else x["mean"]
        return minus2(values[int_arg(ref, ref.args[0], "distance", 0, len(values) - 1)])
    if ref.name == "score":
        return minus2(x["score"])
    if ref.name in ("distance", "peak", "meanPeak", "maxDistance", "longest", "nearPeak"):
        return str(x[ref.name])
    if ref.name in ("low", "high"):
        return minus2(x[ref.name])
    if ref.name == "peakWords":
        return distance_words(x["peak"])
    if ref.name == "nearPeakWords":
        return distance_words(x["nearPeak"])
    if ref.name == "meanPeakWords":
        return distance_words(x["meanPeak"])
    if ref.name == "query":
        return str(tok(panel_tokens[x["query"]]))
    if ref.name == "key":
        return str(tok(panel_tokens[x["key"]]))
    if ref.name == "head":
        return head_words(fig.layer, fig.head)
    if ref.name == "label":
        return head_label(fig.layer, fig.head)
    if ref.name == "group":
        return str(x["group"] + 1)
    ref_fail(ref, f"no reference {ref.name!r}", f"use one of: {', '.join(REFS)}")
