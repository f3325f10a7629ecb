"""`python tests/random_tiny_cli.py traces ...`: `python -m generator traces ...` with the tiny
model replaced by a randomly initialised model of the same shape (4 × 4 × 128, 256 positions,
revision "test-random") and a small tokenizer, for tests that must run before (or without) the
trained checkpoint. Everything else is generator.cli unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_helpers  # noqa: E402

from generator.model import load as models  # noqa: E402

_load_trained = models.load_trained


def load_trained(name, model_dir=None):
    """The tiny model replaced; any other checkpoint trained here loads as it is."""
    if name == "tiny":
        return trace_helpers.random_tiny(revision="test-random")
    return _load_trained(name, model_dir)


models.load_trained = load_trained
models.load_tiny = lambda model_dir=None: trace_helpers.random_tiny(revision="test-random")

from generator.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
