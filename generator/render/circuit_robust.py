"""A `circuit` figure's references to circuits.json's `robust` block (generator/model/robust.py):
the copying test under four ways of removing a head, on many texts of several lengths, with
95 % intervals, and the one verdict word about it, checked to hold before it is printed.

A causal number always carries its method (`zero`, `mean`, `indist`, `resample`), given in the
reference. A verdict without a method is a claim that the finding is robust: the build prints it
only when, at every repeat length of the sweep, at least two methods give that verdict and none
gives the opposite one; otherwise it stops with one line asking for the claim to be scoped, by
naming the method and length it holds for (and saying so in the prose).
"""

from __future__ import annotations

from ..lessons.refs import Ref
from .causal_data import head_arg, head_label
from .format import minus2, shown
from .ref_common import int_arg, ref_fail

# rise(head, method[, length]): the second copy's loss rise without the head, "6.67 (6.03 to 7.50)";
# rloss(head, method[, length]): that loss; rclean(copy[, length]): the clean loss of copy 1 or 2;
# rtop(n, method[, length]): the n heads whose removal raises the loss most; rscore(head[, length]):
# the figure's kind score on the sweep's texts; needs(head[, method, length]): "needs" / "does
# not need" (see the module's docstring); rtexts, rsources, rlengths: the sets' sizes.
REFS = {"rise": (2, 3), "rloss": (2, 3), "rclean": (1, 2), "rtop": (2, 3), "rscore": (1, 2), "needs": (1, 3),
        "rtexts": (0, 0), "rsources": (0, 0), "rlengths": (0, 0)}
ARGS = {"rise": ("head", "method", "length"), "rloss": ("head", "method", "length"), "rclean": ("copy", "length"),
        "rtop": ("n", "method", "length"), "rscore": ("head", "length"), "needs": ("head", "method", "length")}
MAIN_LENGTH = 10  # the length a reference means when it names none: the scoring set's (heads.RANDOM_LENGTH)
# A head is needed for copying when removing it raises the second copy's loss by more than this
# (nats per token), the whole 95 % interval above it; not needed when the whole interval is below it.
NEEDS_RISE = 0.5
VERDICTS = {1: "needs", -1: "does not need"}


def _length(ref: Ref, robust: dict, arg: str | None) -> dict:
    lengths = [e["length"] for e in robust["lengths"]]
    want = MAIN_LENGTH if arg is None else int_arg(ref, arg, "repeat length", 1, max(lengths))
    for e in robust["lengths"]:
        if e["length"] == want:
            return e
    ref_fail(ref, f"no repeat length {want} in the sweep ({', '.join(map(str, lengths))})", "use one of those lengths")


def _method(ref: Ref, robust: dict, arg: str) -> int:
    if arg not in robust["methods"]:
        ref_fail(ref, f"{arg!r} is not a method of the robust test", f"write one of: {', '.join(robust['methods'])}")
    return robust["methods"].index(arg)


def _with_interval(v) -> str:
    """A value and its 95 % interval, a negative one with a true minus as the course's other signed numbers."""
    return f"{minus2(float(v[0]))} ({minus2(float(v[1]))} to {minus2(float(v[2]))})"


def verdict(row) -> int:
    """1 needed, -1 not needed, 0 the interval straddles NEEDS_RISE. row: (value, low, high)."""
    return 1 if row[1] > NEEDS_RISE else -1 if row[2] < NEEDS_RISE else 0


def robust_verdict(robust: dict, a: int) -> tuple[int | None, list[str]]:
    """The verdict on removed head `a` that holds at every length under at least two methods with
    none opposite, or None, and each length's verdicts in words (for the error)."""
    found, words = set(), []
    for e in robust["lengths"]:
        vs = [verdict(e["rise"][m, a]) for m in range(len(robust["methods"]))]
        held = [v for v in (1, -1) if vs.count(v) >= 2 and -v not in vs]
        found.add(held[0] if held else None)
        words.append(f"length {e['length']}: " + ", ".join(f"{m} {VERDICTS.get(v, 'unclear')}" for m, v in zip(robust["methods"], vs)))
    return (found.pop() if len(found) == 1 else None), words


def ref(ref: Ref, doc: dict, L: int, H: int, kind: str) -> str:
    robust = doc["robust"]
    cfg = robust["config"]
    if ref.name == "rtexts":
        return str(cfg["n_texts"])
    if ref.name == "rsources":
        return str(cfg["n_sources"])
    if ref.name == "rlengths":
        ls = [str(e["length"]) for e in robust["lengths"]]
        return ", ".join(ls[:-1]) + " and " + ls[-1] if len(ls) > 1 else ls[0]
    if ref.name == "rclean":
        e = _length(ref, robust, ref.args[1] if len(ref.args) > 1 else None)
        return _with_interval(e["cleanLoss"][int_arg(ref, ref.args[0], "copy", 1, 2) - 1])
    if ref.name == "rscore":
        if kind not in robust["scoredKinds"]:
            ref_fail(ref, f"the sweep scores only {', '.join(robust['scoredKinds'])}", "use it on a figure of one of those kinds")
        l, h = head_arg(ref, ref.args[0], L, H)
        e = _length(ref, robust, ref.args[1] if len(ref.args) > 1 else None)
        return _with_interval(e["scores"][robust["scoredKinds"].index(kind), l, h])
    if ref.name == "rtop":
        n = int_arg(ref, ref.args[0], "count", 1, L * H)
        m = _method(ref, robust, ref.args[1])
        e = _length(ref, robust, ref.args[2] if len(ref.args) > 2 else None)
        order = sorted(range(L * H), key=lambda a: (-shown(float(e["rise"][m, a, 0])), a))
        return ", ".join(f"{head_label(a // H, a % H)} {_with_interval(e['rise'][m, a])}" for a in order[:n])
    l, h = head_arg(ref, ref.args[0], L, H)
    a = l * H + h
    if ref.name in ("rise", "rloss"):
        m = _method(ref, robust, ref.args[1])
        e = _length(ref, robust, ref.args[2] if len(ref.args) > 2 else None)
        return _with_interval(e["rise" if ref.name == "rise" else "loss"][m, a])
    # needs
    if len(ref.args) == 1:
        v, words = robust_verdict(robust, a)
        if v is None:
            ref_fail(ref, f"removing {ref.args[0]} gives no verdict that two methods share at every length ({'; '.join(words)})",
                     f"scope the claim: name the method and length it holds for, {{{{ {ref.target}.needs({ref.args[0]}, resample, 10) }}}}, and say in words what it depends on")
        return VERDICTS[v]
    m = _method(ref, robust, ref.args[1])
    e = _length(ref, robust, ref.args[2] if len(ref.args) > 2 else None)
    v = verdict(e["rise"][m, a])
    if v == 0:
        ref_fail(ref, f"with {ref.args[1]} at length {e['length']}, the loss rise without {ref.args[0]} is {_with_interval(e['rise'][m, a])}, an interval across {NEEDS_RISE}",
                 "write the numbers ({{ id.rise(head, method) }}) instead of a verdict")
    return VERDICTS[v]
