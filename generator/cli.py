"""Command line: `python -m generator <command>`. Heavy imports stay inside each command,
so that building the site never imports torch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_train_tiny(args: argparse.Namespace) -> int:
    from .model import training

    cfg = training.recipe(args.model)
    out = Path(args.out or training.TRAINED_MODEL_DIRS[args.model])
    run_dir = Path(args.run_dir or training.RUN_DIRS[args.model])
    if args.steps:
        cfg.steps = args.steps
    if args.hub:
        stories, source = training.hub_stories(args.hub_limit), "hf:roneneldan/TinyStories"
    else:
        corpora = [Path(c) for c in (args.corpus or training.DEFAULT_CORPORA)]
        missing = [str(c) for c in corpora if not c.is_file()]
        if missing:
            print(f"error: {missing[0]}: corpus file not found (give --corpus PATH, once per file)", file=sys.stderr)
            return 2
        stories, source = training.read_corpora(corpora)
    if args.fresh and (run_dir / "state.pt").is_file():
        (run_dir / "state.pt").unlink()
    log = training.train(cfg, stories, out, source, run_dir=run_dir)
    held, dedup = log["heldOut"], log["heldOutDedup"]
    print(
        f"held-out: {held['bitsPerChar']:.3f} bits/char, {held['natsPerToken']:.3f} nats/token "
        f"over {held['stories']} stories ({dedup['bitsPerChar']:.3f} bits/char over the {dedup['stories']} "
        f"sharing no {dedup['ngram']} words in a row with training); compute {log['wallSeconds']:.0f} s"
    )
    return 0


def cmd_evaluate_tiny(args: argparse.Namespace) -> int:
    """Measure the committed checkpoint on the held-out stories that share no 8 words in a row
    with a training story, and write the figures into its training_log.json (training.evaluate)."""
    import time

    from .model import training

    model_dir = Path(args.model_dir)
    corpora = [Path(c) for c in (args.corpus or training.DEFAULT_CORPORA)]
    for f in [model_dir / n for n in ("training_log.json", "model.safetensors", "tokenizer.json", "config.json")] + corpora:
        if not f.is_file():
            fix = "give --corpus PATH, once per file" if f in corpora else "run `make tiny-model`, or give --model-dir"
            print(f"error: {f}: not found ({fix})", file=sys.stderr)
            return 2
    start = time.time()
    try:
        training.evaluate(model_dir, corpora)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"took {time.time() - start:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator")
    sub = parser.add_subparsers(dest="command", required=True)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["check"]:  # editors and pre-commit call it often: skip the other commands' imports
        from .site import check

        check.add_parser(sub)
        args = parser.parse_args(argv)
        return args.func(args)

    p = sub.add_parser("train-tiny", help="train one of the course's own models (and the tiny model's tokenizer)")
    from .model.training import DEDUP_NGRAM, PACKAGE_MODEL_DIR, TRAINED_MODEL_DIRS

    p.add_argument("--corpus", action="append", help="stories separated by <|endoftext|> lines (repeatable; "
                   "default: both files of ../shared/data/tinystories/)")
    p.add_argument("--hub", action="store_true", help="load roneneldan/TinyStories with `datasets` instead")
    p.add_argument("--hub-limit", type=int, default=None, help="with --hub: use only the first N stories")
    p.add_argument("--model", choices=sorted(TRAINED_MODEL_DIRS), default="tiny",
                   help="which recipe: tiny (GPT-2 style) or tiny-rope (Llama style: rotary positions, grouped keys)")
    p.add_argument("--out", default=None, help="where to write the checkpoint (default: the model's package folder)")
    p.add_argument("--steps", type=int, default=0, help="override the number of optimiser steps")
    p.add_argument("--run-dir", default=None, help="where the resumable state is saved (default: build/<model>-run)")
    p.add_argument("--fresh", action="store_true", help="start over instead of resuming a stopped run")
    p.set_defaults(func=cmd_train_tiny)

    p = sub.add_parser("evaluate-tiny", help=f"measure the tiny model on the held-out stories that share no {DEDUP_NGRAM} "
                       "words in a row with a training story, into its training_log.json")
    p.add_argument("--model-dir", default=str(PACKAGE_MODEL_DIR), help="the checkpoint and its training_log.json")
    p.add_argument("--corpus", action="append", help="the story files it was trained on (repeatable; "
                   "default: both files of ../shared/data/tinystories/)")
    p.set_defaults(func=cmd_evaluate_tiny)

    from .bench import suite as bench
    from .model import trace_run

    trace_run.add_parser(sub)  # traces
    bench.add_parser(sub)  # bench

    from .site import publish, zensical_build

    publish.add_parsers(sub, engines={"zensical": zensical_build.build_zensical})  # assets, site

    from .site import downloads

    downloads.add_parser(sub)  # downloads (the site command makes them too; this remakes them from build/site)

    from .site import serve

    serve.add_parser(sub)  # serve (make serve): the live preview that traces on save

    from .site import reference

    reference.add_parser(sub)  # reference: docs/reference.md and docs/architecture.md's module table

    from .site import check

    check.add_parser(sub)  # check (make check): every lesson checked, nothing built

    from .site import scaffold

    scaffold.add_parser(sub)  # lesson (make lesson NAME=...): a new lesson from the template

    args = parser.parse_args(argv)
    return args.func(args)
