"""Per-model causal measurements (the model's circuits.json, written by `make traces` through
generator/circuits_file.py): QK and OV composition scores from the weights (Elhage et al. 2021),
every head's kind scores on the scoring set of generator/heads.py with each head ablated, and the
in-context-learning losses (the loss on the second copy of repeated random tokens against the
first) clean and with each head ablated. The ablation runs are generator/causal.py's."""

from __future__ import annotations

import numpy as np
import torch

from . import heads, schema
from .causal import CausalConfig, Reference, blocks, dims, log_softmax, w_out, ablation, followed_tokens, residual_parts
from .models import LoadedModel


def _folded(lm: LoadedModel):
    """Per head W_Q, W_K, W_V (width, head_dim) with ln_1's gain folded in, and W_O (head_dim,
    width), float64, as TransformerLens's fold_ln does for the gain."""
    L, H, W, d = dims(lm)
    out = []
    for block in blocks(lm):
        g = block.ln_1.weight.double()[:, None]  # (width, 1)
        w = block.attn.c_attn.weight.double()  # (width, 3 · width)
        q, k, v = (g * w[:, i * W : (i + 1) * W] for i in range(3))  # each (width, width)
        out.append([(q[:, h * d : (h + 1) * d], k[:, h * d : (h + 1) * d], v[:, h * d : (h + 1) * d],
                     w_out(block, h, d).double()) for h in range(H)])
    return out


def _frob_product(a_left, a_right, b_left, b_right) -> float:
    """‖(a_left a_right)(b_left b_right)‖_F for low-rank factors, through QR of the outer factors
    (a_left (width, r), a_right (r, width), b_left (width, r), b_right (r, width))."""
    qa, ra = torch.linalg.qr(a_left)  # (width, r), (r, r)
    qb, rb = torch.linalg.qr(b_right.T)  # (width, r), (r, r)
    core = ra @ (a_right @ b_left) @ rb.T  # (r, r)
    return float(core.norm())


def _frob(left, right) -> float:
    q, r = torch.linalg.qr(left)  # (width, r), (r, r)
    return float((r @ right).norm())


def composition(lm: LoadedModel) -> dict:
    """Q-, K- and V-composition scores ‖M_left M_right‖ / (‖M_left‖ ‖M_right‖) between every head
    (sender) and every head of a later layer (receiver), M_left = W_OV of the sender and M_right =
    W_QK, W_QKᵀ or W_OV of the receiver (Elhage et al. 2021; TransformerLens's
    all_composition_scores). Also the same score for random Gaussian matrices of these shapes,
    the level a score must clear to mean anything."""
    L, H, W, d = dims(lm)
    f = _folded(lm)
    scores = np.zeros((3, L, H, L, H))  # (kind, sender layer, head, receiver layer, head)
    with torch.inference_mode():
        ov = [[(v, o) for (_q, _k, v, o) in row] for row in f]
        qk = [[(q, k.T) for (q, k, _v, _o) in row] for row in f]
        norm_ov = [[_frob(*ov[l][h]) for h in range(H)] for l in range(L)]
        norm_qk = [[_frob(*qk[l][h]) for h in range(H)] for l in range(L)]
        for l1 in range(L):
            for h1 in range(H):
                v1, o1 = ov[l1][h1]
                for l2 in range(l1 + 1, L):
                    for h2 in range(H):
                        q2, k2t = qk[l2][h2]
                        v2, o2 = ov[l2][h2]
                        denom_qk = norm_ov[l1][h1] * norm_qk[l2][h2]
                        scores[0, l1, h1, l2, h2] = _frob_product(v1, o1, q2, k2t) / denom_qk  # Q: W_OV1 W_QK2
                        scores[1, l1, h1, l2, h2] = _frob_product(v1, o1, k2t.T, q2.T) / denom_qk  # K: W_OV1 W_QK2ᵀ
                        scores[2, l1, h1, l2, h2] = _frob_product(v1, o1, v2, o2) / (norm_ov[l1][h1] * norm_ov[l2][h2])  # V
        g = torch.Generator().manual_seed(0)
        base = []
        for _ in range(8):
            a, b, c, e = (torch.randn(*s, generator=g, dtype=torch.float64) for s in ((W, d), (d, W), (W, d), (d, W)))
            base.append(_frob_product(a, b, c, e) / (_frob(a, b) * _frob(c, e)))
    return {"kinds": ["q", "k", "v"], "scores": scores, "baseline": float(np.mean(base))}


def circuits(lm: LoadedModel, ref: Reference, config: CausalConfig = CausalConfig()) -> dict:
    """The per-model causal file: composition scores; every head's kind scores on the scoring
    set with each head ablated (zero and mean); the in-context-learning score, clean and with
    each head ablated. The scoring texts' ablation runs are the ones their traces made (lm's
    memo), or are run here when those traces were kept from an earlier run."""
    L, H, W, d = dims(lm)
    requests = heads.scoring_requests(lm.name, dict(lm.meta))
    modes = tuple(config.ablations)
    kinds = list(heads.KINDS)
    memo = lm.__dict__.setdefault("_circuit_parts", {})
    per_text = []
    for req in requests:
        ids = lm.ids_of(req.text, req.ids)
        key = (tuple(int(i) for i in ids), modes, ref.record.get("sha"))
        if key not in memo:
            rp = residual_parts(lm, ids)
            top = log_softmax(rp["logits"]).topk(schema.TOP_K_PREDICTIONS, dim=-1).indices.numpy()
            ablation(lm, ids, ref, followed_tokens(top, ()), config)
        per_text.append((req, memo[key]))
    clean_scores = np.zeros((len(kinds), L, H))
    ablated_scores = np.zeros((len(modes), L * H, len(kinds), L, H))
    for ki, kind in enumerate(kinds):
        use = [m for r, m in per_text if (r.ids is not None) == (kind in heads.REPEATED_KINDS)]
        n = sum(m["clean"][kind][1] for m in use)
        clean_scores[ki] = sum(m["clean"][kind][0] for m in use) / n
        ablated_scores[:, :, ki] = sum(m["ablated"][kind][0] for m in use) / sum(m["ablated"][kind][1] for m in use)
    icl = [m for _r, m in per_text if m["icl"] is not None]
    comp = composition(lm)
    return {
        "ablations": list(modes),
        "kinds": kinds,
        "cleanScores": clean_scores,  # (kind, layer, head)
        "ablatedScores": ablated_scores,  # (mode, ablated head, kind, layer, head)
        "iclClean": np.mean([m["icl_clean"] for m in icl], axis=0),  # (2,) loss on the first copy, on the second copy
        "iclAblated": np.mean([m["icl"] for m in icl], axis=0),  # (mode, ablated head, 2)
        "composition": comp["scores"],  # (q|k|v, sender layer, head, receiver layer, head)
        "compositionKinds": comp["kinds"],
        "compositionBaseline": comp["baseline"],
        "meanReference": dict(ref.record),
        "scoringSet": heads.SCORING_SET_VERSION,
    }
