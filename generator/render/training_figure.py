"""`training` figures: the tiny model's training log (loss curve, validation table; the best
head of each score kind against step, with its chance level), and the
`{{ model.tiny.training.<field> }}` references, among them the head-score ones in ARG_FIELDS:
`headScore(induction)` (the last logged best score), `headStep(induction, 0.3)` (the first
logged step whose best score reaches 0.3), `headChance(induction)`, and phrases that name their
steps (`headScoreAt`, `headJump`, `headPeak`, `headLeaders`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from .. import registry
from ..lessons.directives import Training
from ..store.files import stat_stamp
from . import templating
from .context import Ctx, Figure, Missing
from .format import esc, f2, percent, shown, whole
from .ref_common import PENDING_REF, ref_fail

REFS: dict[str, tuple[int, int]] = {}  # figure references; its numbers are model.tiny.training.*
ARGS: dict[str, tuple[str, ...]] = {}
MAX_TRAINING_POINTS = 400  # training-loss points kept for the plot (the log has one per step)
FIELDS = ("bitsPerChar", "natsPerToken", "steps", "tokensSeen", "finalLoss", "validationLoss", "wallMinutes", "nParams", "trainStories", "validationStories", "source",
          "bitsPerCharDedup", "natsPerTokenDedup", "dedupStories", "dedupNgram", "validationWindows", "validationTokens",
          "repeatPercent", "randomPercent")
# fields that take arguments: name -> the arguments' names
# (the phrases name their steps, so the prose never types a number the log did not give)
ARG_FIELDS = {
    "headScore": ("kind",),            # 0.60: the last logged best score
    "headStep": ("kind", "level"),     # 600: the first logged step whose best score reaches level
    "headChance": ("kind",),           # 0.06
    "headScoreAt": ("kind", "step"),   # "0.20 at step 250": a logged step's best score
    "headJump": ("kind",),             # "from 0.15 at step 500 to 0.83 at step 750": the largest rise
    "headPeak": ("kind",),             # "0.90 at step 2,750": the highest score, at its step
    "headLeaders": ("kind",),          # "layer 4, heads 1 and 4": every head that was ever the best
    "validationAt": ("step",),         # "4.29 at step 500": a logged validation loss
}


_LOGS: dict[Path, tuple[tuple[int, int, int], object]] = {}


def load_log(path: Path | str) -> dict | None:
    """The parsed log, or None when there is none; parsed once per process while the file stays
    the same (every page asks for it; `make serve` rebuilds on each save). Callers check it."""
    p = Path(path)
    if not p.is_file():
        return None
    stamp = stat_stamp(p.stat())
    kept = _LOGS.get(p)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    log = parse_log_file(p)
    _LOGS[p] = (stamp, log)
    return log


def parse_log_file(p: Path):
    return json.loads(p.read_text(encoding="utf-8"))


def thin(points: list[dict], limit: int = MAX_TRAINING_POINTS) -> list[dict]:
    if len(points) <= limit:
        return points
    stride = math.ceil(len(points) / limit)
    kept = points[::stride]
    if kept[-1] is not points[-1]:
        kept.append(points[-1])
    return kept


def fields(log: dict) -> dict[str, str]:
    """The `{{ model.tiny.training.<field> }}` values, as text (escaped where needed)."""
    held = log.get("heldOut", {})
    steps = log.get("steps", [])
    out = {}
    if "bitsPerChar" in held:
        out["bitsPerChar"] = f2(held["bitsPerChar"])
    if "natsPerToken" in held:
        out["natsPerToken"] = f2(held["natsPerToken"])
    dedup = log.get("heldOutDedup", {})  # the held-out stories sharing no n-gram with training (generator/model/training.py)
    for key, name, fmt in (("bitsPerChar", "bitsPerCharDedup", f2), ("natsPerToken", "natsPerTokenDedup", f2), ("stories", "dedupStories", whole), ("ngram", "dedupNgram", whole)):
        if key in dedup:
            out[name] = fmt(dedup[key])
    sample = log.get("validationSample", {})  # what each logged validation loss was measured on
    for key, name in (("windows", "validationWindows"), ("tokens", "validationTokens")):
        if key in sample:
            out[name] = whole(sample[key])
    if steps:
        out["steps"] = whole(steps[-1]["step"])
        out["tokensSeen"] = whole(steps[-1]["tokens"])
        out["finalLoss"] = f2(steps[-1]["loss"])
    if log.get("validation"):
        out["validationLoss"] = f2(log["validation"][-1]["loss"])
    wall = log.get("wallSeconds")
    if wall is None and log.get("validation"):
        wall = log["validation"][-1].get("wallSeconds")
    if wall is not None:
        out["wallMinutes"] = str(int(round(wall / 60)))
    if "nParams" in log:
        out["nParams"] = whole(log["nParams"])
    for k, v in (log.get("stories") or {}).items():
        out[f"{k}Stories"] = whole(v)
    if "source" in log:
        out["source"] = esc(source_names(log["source"]))
    cfg = log.get("config") or {}
    share, random = cfg.get("repeat_share"), cfg.get("repeat_random")
    if all(type(x) in (int, float) and 0 <= x <= 1 for x in (share, random)):
        out["repeatPercent"] = percent(share)  # windows that hold a repeated stretch
        out["randomPercent"] = percent(share * random)  # windows whose repeat is random tokens
    return out


def source_names(source) -> str:
    """The corpus files: a list of `{file, stories, sha256}` (older logs: one string), as
    "stories.txt and more-stories.txt"."""
    if isinstance(source, list):
        return " and ".join(str(s.get("file", "?")) if isinstance(s, dict) else str(s) for s in source)
    return str(source)


def head_series(log: dict) -> dict | None:
    """The plot's data: every logged step and, per score kind, the best head's score and chance."""
    points = log.get("headScores") or []
    if not points:
        return None
    chance = log.get("headChance") or {}
    kinds = [k for k in registry.KINDS if any(k in p.get("best", {}) for p in points)]
    return {
        "steps": [p["step"] for p in points],
        "series": [
            {
                "kind": k, "label": registry.NAMES[k], "chance": chance.get(k),
                "scores": [p["best"][k]["score"] if k in p.get("best", {}) else None for p in points],
                "heads": [head_label(p["best"].get(k)) for p in points],
            }
            for k in kinds
        ],
    }


def head_label(best: dict | None) -> str:
    return f"L{best['layer'] + 1} H{best['head'] + 1}" if best else "–"


def head_rows(log: dict, series: dict) -> list[list[str]]:
    """The no-JS table: step, tokens seen, then each kind's best score and head."""
    rows = []
    for i, p in enumerate(log["headScores"]):
        cells = [whole(p["step"]), whole(p["tokens"]) if "tokens" in p else "–"]
        for s in series["series"]:
            score = s["scores"][i]
            cells.append("–" if score is None else f"{f2(score)} ({s['heads'][i]})")
        rows.append(cells)
    return rows


def head_names(heads: list[tuple[int, int]]) -> str:
    """Distinct (layer, head) pairs, 0-based, in order of first appearance, as a reader counts
    them: "layer 4, head 1", "layer 4, heads 1 and 4", "layer 1, head 4 and layer 4, head 1"."""
    seen = list(dict.fromkeys(heads))
    join = lambda xs: xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]  # noqa: E731
    layers = {layer for layer, _ in seen}
    if len(layers) == 1:
        nums = [str(h + 1) for _, h in seen]
        return f"layer {seen[0][0] + 1}, head{'s' if len(nums) > 1 else ''} {join(nums)}"
    return join([f"layer {layer + 1}, head {h + 1}" for layer, h in seen])


def head_ref(ref, name: str, log: dict) -> str:
    """`headScore(kind)`, `headStep(kind, level)`, `headChance(kind)` from the log's headScores."""
    fix = "write e.g. `{{ model.tiny.training.headStep(induction, 0.3) }}`"
    want = ARG_FIELDS[name]
    if len(ref.args) != len(want):
        ref_fail(ref, f"'{name}' takes {len(want)} argument{'s' if len(want) != 1 else ''} ({', '.join(want)}), not {len(ref.args)}", fix)
    if name == "validationAt":
        logged = {p["step"]: p["loss"] for p in log.get("validation") or []}
        step = int(ref.args[0]) if ref.args[0].isdigit() else None
        if step not in logged:
            ref_fail(ref, f"step {ref.args[0]!r} has no logged validation loss", f"choose one of {', '.join(whole(s) for s in list(logged)[:6])}…")
        return f"{f2(logged[step])} at step {whole(step)}"
    kind = ref.args[0]
    if kind not in registry.KINDS:
        ref_fail(ref, f"unknown score kind {kind!r}", f"use one of: {', '.join(registry.KINDS)}")
    if name == "headChance":
        chance = (log.get("headChance") or {}).get(kind)
        if chance is None:
            ref_fail(ref, f"the training log has no chance level for {kind}", "retrain with `make tiny-model`, which logs headChance")
        return f2(chance)
    points = [p for p in log.get("headScores") or [] if kind in p.get("best", {})]
    if not points:
        ref_fail(ref, f"the training log has no {kind} scores (headScores)", "retrain with `make tiny-model`, which logs the best head of each kind")
    scores = [(p["step"], p["best"][kind]["score"]) for p in points]
    at = lambda step, score: f"{f2(score)} at step {whole(step)}"  # noqa: E731
    if name == "headScore":
        return f2(scores[-1][1])
    if name == "headScoreAt":
        logged = dict(scores)
        step = int(ref.args[1]) if ref.args[1].isdigit() else None
        if step not in logged:
            ref_fail(ref, f"step {ref.args[1]!r} is not one the log scored (it scored every {whole(scores[1][0] - scores[0][0]) if len(scores) > 1 else whole(scores[0][0])} steps, {whole(scores[0][0])} to {whole(scores[-1][0])})", "choose a logged step")
        return at(step, logged[step])
    if name == "headJump":
        if len(scores) < 2:
            ref_fail(ref, f"the log scored {kind} heads only once", "write headScore instead")
        i = max(range(1, len(scores)), key=lambda i: shown(scores[i][1]) - shown(scores[i - 1][1]))
        if shown(scores[i][1]) <= shown(scores[i - 1][1]):
            ref_fail(ref, f"the best {kind} score never rises in the log", "write headScore instead")
        return f"from {at(*scores[i - 1])} to {at(*scores[i])}"
    if name == "headPeak":  # the step of the highest score itself (the first, on an exact tie)
        return at(*max(scores, key=lambda s: (s[1], -s[0])))
    if name == "headLeaders":
        return head_names([(p["best"][kind]["layer"], p["best"][kind]["head"]) for p in points])
    try:
        level = float(ref.args[1])
    except ValueError:
        level = math.nan
    if not 0 <= level <= 1:
        ref_fail(ref, f"level {ref.args[1]!r} is not a number from 0 to 1", "write a score like 0.3")
    for p in points:
        if p["best"][kind]["score"] >= level:
            return whole(p["step"])
    top = max(points, key=lambda p: p["best"][kind]["score"])
    ref_fail(ref, f"the best {kind} head never reaches {ref.args[1]} in the log (at most {f2(top['best'][kind]['score'])}, at step {whole(top['step'])})", "choose a lower level")


def render(d: Training, ctx: Ctx) -> str:
    log = ctx.training_log
    n = ctx.next_number()
    if log is None:
        ctx.register(d, Figure("training", n, d, pending=True))
        return templating.render("training_pending.html", n=n, model=d.model, log_path=ctx.training_log_path)
    f = fields(log)
    heads = head_series(log)
    payload = {
        "steps": [{"step": p["step"], "loss": p["loss"]} for p in thin(log.get("steps", []))],
        "validation": [{"step": p["step"], "loss": p["loss"]} for p in log.get("validation", [])],
    }
    if heads:
        payload["heads"] = {"steps": heads["steps"], "series": [{k: s[k] for k in ("kind", "label", "chance", "scores", "heads")} for s in heads["series"]]}
    timed = any("wallSeconds" in p for p in log.get("validation", []))  # older logs timed each point
    validation = [
        [whole(p["step"]), whole(p["tokens"]), f2(p["loss"])] + ([str(int(round(p["wallSeconds"] / 60))) if "wallSeconds" in p else "–"] if timed else [])
        for p in log.get("validation", [])
    ]
    summary = f if "steps" in f and "bitsPerChar" in f else None
    ctx.register(d, Figure("training", n, d))
    return templating.render(
        "training.html", n=n, model=d.model, summary=summary, validation=validation, payload=payload,
        validation_columns=["Step", "Tokens seen", "Validation loss"] + (["Minutes"] if timed else []),
        heads=heads and {
            "columns": ["Step", "Tokens seen"] + [s["label"] for s in heads["series"]],
            "rows": head_rows(log, heads),
            "chance": [f2(s["chance"]) if s["chance"] is not None else "–" for s in heads["series"]],
            "last": [(s["label"], f2(s["scores"][-1]) if s["scores"][-1] is not None else "–", f2(s["chance"]) if s["chance"] is not None else "–") for s in heads["series"]],
            "step": whole(heads["steps"][-1]),
        },
        n_params=whole(log.get("nParams", 0)), corpus=source_names(log.get("source", "unknown")), sha=str(log.get("corpusSha256", ""))[:12],
    )


def model_ref(ref, parts: list[str], ctx: Ctx) -> str:
    """`{{ model.tiny.training.<field> }}` (`parts` is the reference's name split at dots)."""
    if parts[0] != "tiny":
        ref_fail(ref, "only the tiny model has a training log", "write `{{ model.tiny.training.bitsPerChar }}`")
    if len(parts) != 3:
        ref_fail(ref, "name one training field", "write `{{ model.tiny.training.bitsPerChar }}`")
    if ref.args and parts[2] not in ARG_FIELDS:
        ref_fail(ref, f"'{parts[2]}' takes no arguments", "write `{{ model.tiny.training.bitsPerChar }}`")
    if ctx.training_log is None:
        ctx.note_missing(Missing("tiny", Missing.TRAINING_LOG), ref.where)
        if parts[2] not in FIELDS and parts[2] not in ARG_FIELDS:
            ref_fail(ref, f"unknown training field '{parts[2]}'", f"use one of: {', '.join(FIELDS + tuple(ARG_FIELDS))}")
        return PENDING_REF
    if parts[2] in ARG_FIELDS:
        return head_ref(ref, parts[2], ctx.training_log)
    values = fields(ctx.training_log)
    if parts[2] not in values:
        ref_fail(ref, f"the training log has no field '{parts[2]}'", f"use one of: {', '.join(sorted(values) + list(ARG_FIELDS))}")
    return values[parts[2]]


# ---------------------------------------------------------------- the log's held-out figures, checked on read

TRAINING_LOG_FIX = "restore the file from git, or run `make tiny-model` to write it again"


# The held-out figures the pages quote, checked when the log is read (generator/model/training.py writes
# them): section -> (field -> "rate" for a positive finite number or "count" for a whole number
# from 1, and whether every field must be there). heldOut's fields are checked where present
# (older logs lack some); the sections that evaluate-tiny adds are written whole, and it writes
# them again.
HELD_OUT_FIELDS = {
    "heldOut": ({"bitsPerChar": "rate", "natsPerToken": "rate", "stories": "count", "chars": "count", "tokens": "count"}, False),
    "heldOutDedup": ({"bitsPerChar": "rate", "natsPerToken": "rate", "stories": "count", "chars": "count", "tokens": "count",
                      "heldOutStories": "count", "ngram": "count"}, True),
    "validationSample": ({"batches": "count", "windows": "count", "windowTokens": "count", "tokens": "count"}, True),
}
# how to mend each section: the one the training run writes, or one `make evaluate-tiny` writes again
SECTION_FIX = {"heldOut": TRAINING_LOG_FIX}
EVALUATE_FIX = "restore the file from git, or run `make evaluate-tiny` to measure it again"


def training_log_problem(log: dict) -> tuple[str, str] | None:
    """What is wrong with the log's held-out figures (HELD_OUT_FIELDS), in one line, and how to
    mend it; None when nothing is."""
    for section, (wanted, whole_section) in HELD_OUT_FIELDS.items():
        if section not in log:
            continue
        fail = lambda problem: (problem, SECTION_FIX.get(section, EVALUATE_FIX))  # noqa: E731
        part = log[section]
        if not isinstance(part, dict):
            return fail(f"'{section}' is a JSON {type(part).__name__}, not an object of numbers")
        for key, kind in wanted.items():
            if key not in part:
                if whole_section:
                    return fail(f"'{section}' has no '{key}'")
                continue
            v = part[key]
            number = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if kind == "rate" and not (number and v > 0):
                return fail(f"'{section}.{key}' is {_shown_value(v)}, not a positive number")
            if kind == "count" and not (number and v == int(v) and v >= 1):
                return fail(f"'{section}.{key}' is {_shown_value(v)}, not a whole number from 1")
    dedup, sample = log.get("heldOutDedup"), log.get("validationSample")
    if dedup and dedup["stories"] > dedup["heldOutStories"]:
        return (f"'heldOutDedup.stories' ({dedup['stories']}) is more than the {dedup['heldOutStories']} held-out "
                "stories it was drawn from", EVALUATE_FIX)
    if sample and sample["tokens"] != sample["windows"] * sample["windowTokens"]:
        return (f"'validationSample.tokens' ({sample['tokens']}) is not windows × windowTokens "
                f"({sample['windows']} × {sample['windowTokens']})", EVALUATE_FIX)
    return None


def _shown_value(v) -> str:
    text = json.dumps(v, ensure_ascii=False)  # NaN and Infinity as JSON would write them
    return text if len(text) <= 40 else text[:37] + "..."
