"""`training` figures: the tiny model's training log (loss curve, validation table), and the
`{{ model.tiny.training.<field> }}` references."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..lessons import directives as D
from . import templating
from .context import Ctx, Figure, Missing
from .format import esc, f2, whole
from .refs import PENDING_REF, ref_fail

REFS: dict[str, tuple[int, int]] = {}  # figure references; its numbers are model.tiny.training.*
MAX_TRAINING_POINTS = 400  # training-loss points kept for the plot (the log has one per step)
FIELDS = ("bitsPerChar", "natsPerToken", "steps", "tokensSeen", "finalLoss", "validationLoss", "wallMinutes", "nParams", "trainStories", "validationStories", "source")


def load_log(path: Path | str) -> dict | None:
    p = Path(path)
    if not p.is_file():
        return None
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
        out["source"] = esc(log["source"])
    return out


def render(d: D.Training, ctx: Ctx) -> str:
    log = ctx.training_log
    n = ctx.next_number()
    if log is None:
        ctx.register(d, Figure("training", n, d, pending=True))
        return templating.render("training_pending.html", n=n, model=d.model, log_path=ctx.training_log_path)
    f = fields(log)
    payload = {
        "steps": [{"step": p["step"], "loss": p["loss"]} for p in thin(log.get("steps", []))],
        "validation": [{"step": p["step"], "loss": p["loss"]} for p in log.get("validation", [])],
    }
    validation = [
        (whole(p["step"]), whole(p["tokens"]), f2(p["loss"]), str(int(round(p["wallSeconds"] / 60))) if "wallSeconds" in p else "–")
        for p in log.get("validation", [])
    ]
    summary = f if "steps" in f and "bitsPerChar" in f else None
    ctx.register(d, Figure("training", n, d))
    return templating.render(
        "training.html", n=n, model=d.model, summary=summary, validation=validation, payload=payload,
        n_params=whole(log.get("nParams", 0)), corpus=log.get("source", "unknown"), sha=str(log.get("corpusSha256", ""))[:12],
    )


def model_ref(ref, parts: list[str], ctx: Ctx) -> str:
    """`{{ model.tiny.training.<field> }}` (`parts` is the reference's name split at dots)."""
    if parts[0] != "tiny":
        ref_fail(ref, "only the tiny model has a training log", "write `{{ model.tiny.training.bitsPerChar }}`")
    if len(parts) != 3:
        ref_fail(ref, "name one training field", "write `{{ model.tiny.training.bitsPerChar }}`")
    if ref.args:
        ref_fail(ref, "model references take no arguments", "write `{{ model.tiny.training.bitsPerChar }}`")
    if ctx.training_log is None:
        ctx.note_missing(Missing("tiny", Missing.TRAINING_LOG), ref.where)
        if parts[2] not in FIELDS:
            ref_fail(ref, f"unknown training field '{parts[2]}'", f"use one of: {', '.join(FIELDS)}")
        return PENDING_REF
    values = fields(ctx.training_log)
    if parts[2] not in values:
        ref_fail(ref, f"the training log has no field '{parts[2]}'", f"use one of: {', '.join(sorted(values))}")
    return values[parts[2]]
