"""A made-up causal block (schema.CAUSAL_FIELDS) of the right shapes, whose numbers hold what the
store checks: the direct-logit parts add up to the clean logits, KL divergences are not negative,
probabilities lie in [0, 1] and every id has its text."""

from __future__ import annotations

import numpy as np


def fake_causal(n_layer: int, n_head: int, n_tokens: int, vocab_size: int = 4096, targets=(), seed: int = 0,
                ablations=("zero", "mean")) -> dict:
    from generator import schema

    rng = np.random.default_rng([seed, n_layer, n_head, n_tokens])
    targets = sorted({int(t) for t in targets})
    dims = schema.causal_dims(n_layer, n_head, n_tokens, len(targets), len(ablations))
    k, T, F = schema.TOP_K_PREDICTIONS, n_tokens, dims["followed"]
    top = np.stack([rng.choice(np.arange(1, min(vocab_size, 60)), size=k, replace=False) for _ in range(T)])
    followed = np.concatenate([top, np.tile(np.asarray(targets, dtype=np.int64), (T, 1)).reshape(T, len(targets))], axis=1)
    dla = rng.uniform(-1, 1, (dims["part"], T, F))
    lens_ids = rng.integers(1, min(vocab_size, 60), (dims["stage"], T, schema.LENS_K))
    ids = sorted({int(i) for i in followed.ravel()} | {int(i) for i in lens_ids.ravel()})
    probs = np.sort(rng.uniform(0, 0.2, (dims["stage"], T, schema.LENS_K)), axis=-1)[..., ::-1]
    block = {
        "targets": targets,
        "ablations": list(ablations),
        "parts": schema.causal_parts(n_layer, n_head),
        "meanReference": {"texts": "synthetic", "version": 1, "sha": "000000000000", "positions": 1},
        "tokenTexts": {str(i): f" w{i}" for i in ids},
        "followed": followed,
        "lensIds": lens_ids,
        "cleanLogit": dla.sum(axis=0),
        "cleanLogprob": -rng.uniform(0.1, 5, (T, F)),
        "kl": rng.uniform(0, 0.5, (dims["ablation"], n_layer, n_head, T)),
        "dLogit": rng.uniform(-2, 2, (dims["ablation"], n_layer, n_head, T, F)),
        "dLogprob": rng.uniform(-2, 2, (dims["ablation"], n_layer, n_head, T, F)),
        "dla": dla,
        "valueNorms": rng.uniform(0.5, 5, (n_layer, n_head, T)),
        "lensProbs": probs.copy(),
    }
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in block.items()}  # plain, as the tracer gives it
