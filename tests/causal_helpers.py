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


def fake_robust(n_layer: int, n_head: int, rise=None, lengths=(5, 10)) -> dict:
    """A circuits.json `robust` block (generator/model/robust.py) of the given shape: every loss
    rise 0 but where `rise` says, {(method, head index): value}, at every length; each interval
    ±0.1 around its value."""
    import numpy as np

    methods = ["zero", "mean", "indist", "resample"]
    A = n_layer * n_head

    def spread(v):
        v = np.asarray(v, dtype=float)
        return np.stack([v, v - 0.1, v + 0.1], axis=-1)

    out = []
    for length in lengths:
        r = np.zeros((4, A))
        for (m, a), v in (rise or {}).items():
            r[methods.index(m), a] = v
        out.append({"length": length, "cleanLoss": spread([9.0, 2.0]), "loss": spread(2.0 + r), "rise": spread(r),
                    "scores": np.clip(spread(np.full((2, n_layer, n_head), 0.5)), 0, 1)})
    return {"methods": methods, "scoredKinds": ["duplicate-token", "induction"],
            "config": {"lengths": list(lengths), "n_texts": 8, "n_sources": 2, "n_boot": 100, "seed": 47},
            "sets": {}, "lengths": out}
