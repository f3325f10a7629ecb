"""Command line: `python -m generator <command>`. Heavy imports stay inside each command,
so that building the site never imports torch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_train_tiny(args: argparse.Namespace) -> int:
    from . import training

    cfg = training.TrainConfig()
    if args.steps:
        cfg.steps = args.steps
    if args.hub:
        stories, source = training.hub_stories(args.hub_limit), "hf:roneneldan/TinyStories"
    else:
        corpus = Path(args.corpus)
        if not corpus.is_file():
            print(f"error: {corpus}: corpus file not found (give --corpus PATH)", file=sys.stderr)
            return 2
        stories, source = training.read_stories(corpus), corpus.name
    log = training.train(cfg, stories, Path(args.out), source)
    held = log["heldOut"]
    print(
        f"held-out: {held['bitsPerChar']:.3f} bits/char, {held['natsPerToken']:.3f} nats/token "
        f"over {held['stories']} stories; wall {log['wallSeconds']:.0f} s"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train-tiny", help="train the tiny model and its tokenizer")
    from .training import DEFAULT_CORPUS, PACKAGE_MODEL_DIR

    p.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="stories separated by <|endoftext|> lines")
    p.add_argument("--hub", action="store_true", help="load roneneldan/TinyStories with `datasets` instead")
    p.add_argument("--hub-limit", type=int, default=None, help="with --hub: use only the first N stories")
    p.add_argument("--out", default=str(PACKAGE_MODEL_DIR), help="where to write the checkpoint")
    p.add_argument("--steps", type=int, default=0, help="override the number of optimiser steps")
    p.set_defaults(func=cmd_train_tiny)

    from . import bench, trace_run

    trace_run.add_parser(sub)  # traces
    bench.add_parser(sub)  # bench

    from . import publish

    publish.add_parsers(sub)  # assets, site

    from . import downloads

    downloads.add_parser(sub)  # downloads (the site command makes them too; this remakes them from build/site)

    args = parser.parse_args(argv)
    return args.func(args)
