"""GPT-2's forward pass in plain numpy (float64) from a safetensors file: the independent route
the causal tests check generator/model/causal.py against. Written from the GPT-2 paper's architecture
(pre-layer-norm blocks, causal attention, GELU-new MLP, tied unembedding), not from transformers."""

from __future__ import annotations

import numpy as np


def load(path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return {k.removeprefix("transformer."): v.astype(np.float64) for k, v in load_file(str(path)).items()}


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu_new(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def forward(w: dict, ids, n_head: int, replace=None):
    """Logits (token, vocab) and every layer's attention weights (layer, head, q, k).
    replace(layer, z) may rewrite the heads' outputs z (token, head, head_dim) before W_O."""
    ids = list(ids)
    T = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]  # (token, width)
    W = x.shape[1]
    d = W // n_head
    L = len({k.split(".")[1] for k in w if k.startswith("h.")})
    mask = np.triu(np.ones((T, T), bool), 1)
    att_all = []
    for l in range(L):
        p = f"h.{l}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # (token, 3 width)
        q, k, v = (qkv[:, i * W:(i + 1) * W].reshape(T, n_head, d).transpose(1, 0, 2) for i in range(3))  # (head, token, d)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)  # (head, q, k)
        s = np.where(mask, -np.inf, s)
        a = np.exp(s - s.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        att_all.append(a)
        z = (a @ v).transpose(1, 0, 2)  # (token, head, d)
        if replace is not None:
            z = replace(l, z.copy())
        x = x + z.reshape(T, W) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].T, np.stack(att_all)


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))
