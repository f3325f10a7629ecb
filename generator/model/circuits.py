"""Per-model causal measurements (the model's circuits.json, written by `make traces` through
generator/store/circuits_file.py): QK and OV composition scores from the weights (Elhage et al. 2021),
every head's kind scores on the scoring set of generator/heads.py with each head ablated, and the
in-context-learning losses (the loss on the second copy of repeated random tokens against the
first) clean and with each head ablated. The ablation runs are generator/model/causal.py's.

Composition by weights and rotary positions: the scores below multiply W_Q, W_K, W_V and W_O as
they are stored. A rotary model (Llama) turns each query and key by its position between W_Q / W_K
and the dot product, so its real W_QK differs for every distance between query and key; the score
here is that of distance 0 (no turn), and says nothing about position. circuits.json records it
(`compositionPositions`). Grouped keys and values: query head h's W_K and W_V are its key/value
group's (arch.group_of), so the query heads of one group share their K- and V-side factors."""

from __future__ import annotations

import numpy as np
import torch

from .. import heads, schema
from .causal import CausalConfig, Reference, dims, log_softmax, w_out, ablation, followed_tokens, residual_parts
from .rerun import blocks
from . import arch, robust
from .load import LoadedModel


# What circuits.json says of a rotary model's composition scores (the module's docstring).
COMPOSITION_ROTARY = ("rotary: the scores multiply the stored weights, as if query and key were at the same "
                      "position; the rotation between W_Q, W_K and the dot product is left out, so they say "
                      "nothing about position")


def _folded(lm: LoadedModel):
    """Per query head W_Q, W_K, W_V (width, head_dim) with the attention norm's gain folded in,
    and W_O (head_dim, width), float64, as TransformerLens's fold_ln does for the gain. W_K and
    W_V are the head's key/value group's (the same matrices for every head of a group)."""
    shape = arch.dims(lm.model)
    L, H, W, d = dims(lm)
    out = []
    for block in blocks(lm):
        g = arch.norm_parts(arch.attn_norm(block))[0].double()[:, None]  # (width, 1)
        q, k, v = (g * w.double() for w in arch.qkv_weights(block)[:3])  # (width, head·d), (width, kv_head·d) twice
        out.append([(q[:, arch.head_slice(h, shape)], k[:, arch.kv_slice(h, shape)], v[:, arch.kv_slice(h, shape)],
                     w_out(block, h, d).double()) for h in range(H)])
    return out


def _r(m: torch.Tensor) -> torch.Tensor:
    """R of m = QR (m is width × r): ‖Q X‖ = ‖X‖, so R stands for m in Frobenius norms."""
    return torch.linalg.qr(m)[1]  # (r, r)


def composition(lm: LoadedModel) -> dict:
    """Q-, K- and V-composition scores ‖M_left M_right‖ / (‖M_left‖ ‖M_right‖) between every head
    (sender) and every head of a later layer (receiver), M_left = W_OV of the sender and M_right =
    W_QK, W_QKᵀ or W_OV of the receiver (Elhage et al. 2021; TransformerLens's
    all_composition_scores). Also the same score for random Gaussian matrices of these shapes,
    the level a score must clear to mean anything.

    Every matrix here is a product of a (width, d) and a (d, width) factor, so each norm is that of
    a d × d core: with A = V O (sender) and B = X Y (receiver), ‖A B‖ = ‖R_V (O X) R_Yᵀ‖ with R_V,
    R_Yᵀ from one QR per head, and ‖A‖ = ‖R_V O‖."""
    L, H, W, d = dims(lm)
    f = _folded(lm)
    scores = np.zeros((3, L, H, L, H))  # (kind, sender layer, head, receiver layer, head)
    with torch.inference_mode():
        V = torch.stack([torch.stack([f[l][h][2] for h in range(H)]) for l in range(L)])  # (layer, head, width, d)
        O = torch.stack([torch.stack([f[l][h][3] for h in range(H)]) for l in range(L)])  # (layer, head, d, width)
        Q = torch.stack([torch.stack([f[l][h][0] for h in range(H)]) for l in range(L)])  # (layer, head, width, d)
        K = torch.stack([torch.stack([f[l][h][1] for h in range(H)]) for l in range(L)])  # (layer, head, width, d)
        rV, rQ, rK = (torch.linalg.qr(m)[1] for m in (V, Q, K))  # (layer, head, d, d)
        rOt = torch.linalg.qr(O.transpose(-1, -2))[1]  # (layer, head, d, d): W_O = (Q R)ᵀ
        ov_core = rV @ O  # (layer, head, d, width): ‖W_OV‖ = ‖R_V O‖
        norm_ov = ov_core.flatten(-2).norm(dim=-1)  # (layer, head)
        norm_qk = (rQ @ rK.transpose(-1, -2)).flatten(-2).norm(dim=-1)  # (layer, head): ‖W_Q W_Kᵀ‖
        # receiver factors (left: width × d, right R: d × d) for Q (W_Q W_Kᵀ), K (W_K W_Qᵀ), V (W_V W_O)
        right = {"q": (Q, rK), "k": (K, rQ), "v": (V, rOt)}
        for c, kind in enumerate("qkv"):
            left, r_right = right[kind]
            for l1 in range(L - 1):
                mid = torch.einsum("hdw,lgwe->hlgde", ov_core[l1], left[l1 + 1 :])  # (sender, layer', receiver, d, d)
                core = mid @ r_right[l1 + 1 :].transpose(-1, -2).unsqueeze(0)  # (sender, layer', receiver, d, d)
                num = core.flatten(-2).norm(dim=-1)  # (sender, layer', receiver)
                denom = norm_ov[l1][:, None, None] * (norm_ov if kind == "v" else norm_qk)[l1 + 1 :][None]
                scores[c, l1, :, l1 + 1 :, :] = (num / denom).numpy()
        g = torch.Generator().manual_seed(0)
        base = []
        for _ in range(8):
            a, b, x, y = (torch.randn(*s, generator=g, dtype=torch.float64) for s in ((W, d), (d, W), (W, d), (d, W)))
            core = _r(a) @ (b @ x) @ _r(y.T).T
            base.append(float(core.norm() / ((_r(a) @ b).norm() * (_r(y.T) @ x.T).norm())))
    return {"kinds": ["q", "k", "v"], "scores": scores, "baseline": float(np.mean(base))}


def circuits(lm: LoadedModel, ref: Reference, config: CausalConfig = CausalConfig(), scoring: str = "full",
             with_robust: bool = True) -> dict:
    """The per-model causal file: composition scores; every head's kind scores on the scoring
    set with each head ablated (zero and mean); the in-context-learning score, clean and with
    each head ablated. The scoring texts' ablation runs are the ones their traces made (lm's
    memo), or are run here when those traces were kept from an earlier run. `scoring`: the
    scoring set's size (heads.SCORING_SIZES)."""
    L, H, W, d = dims(lm)
    requests = heads.scoring_requests(lm.name, dict(lm.meta), **heads.scoring_size(scoring))
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
        **({} if arch.positions(lm.model) == "learned" else {"compositionPositions": COMPOSITION_ROTARY}),
        "meanReference": dict(ref.record),
        "scoringSet": heads.SCORING_SET_VERSION,
    } | ({"robust": robust.robust(lm, ref, robust.SIZES[scoring])} if with_robust else {})  # four methods, intervals, a sweep
