"""Where each architecture keeps its parts: the one module that knows transformers' module names.

The tracer, the causal runs, the score split and the circuits read a model only through the
functions here, so GPT-2 (`GPT2LMHeadModel`: LayerNorm, fused q|k|v with biases, learned position
table) and Llama (`LlamaForCausalLM`: RMSNorm, separate q, k, v without biases, rotary positions,
grouped keys and values) take one code path. Which adapter a model gets is a fact of the registry
(`ModelSpec.architecture`); the adapter is picked from the loaded model's config, so a stand-in of
either shape works too.

Conventions, for both architectures:

* every projection matrix is returned as (in, out): `x @ w + b` (GPT-2's Conv1D already is;
  torch's Linear is transposed here);
* q is (…, token, head, head_dim); k and v are (…, token, kv_head, head_dim), before rotation;
  query head h reads key/value head `group_of(h)` (GPT-2: kv_head = head);
* `rotation(model, T)` is None for a model with a position table, else (cos, sin), each
  (token, head_dim), and `rotate(x, cos, sin)` turns q or k by its position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Adapter:
    name: str  # "gpt2" or "llama": registry.ModelSpec.architecture
    norm_centres: bool  # LayerNorm subtracts the mean (GPT-2); RMSNorm does not (Llama)
    has_position_table: bool  # learned absolute positions (GPT-2), else rotary


GPT2 = Adapter("gpt2", norm_centres=True, has_position_table=True)
LLAMA = Adapter("llama", norm_centres=False, has_position_table=False)
ADAPTERS = {"gpt2": GPT2, "llama": LLAMA}


def adapter(model) -> Adapter:
    kind = getattr(model.config, "model_type", "")
    try:
        return ADAPTERS[kind]
    except KeyError:
        raise ValueError(f"no adapter for model type {kind!r} (known: {', '.join(ADAPTERS)})") from None


# ---------------------------------------------------------------- shape


@dataclass(frozen=True)
class Dims:
    n_layer: int
    n_head: int
    n_kv_head: int
    width: int
    head_dim: int
    n_ctx: int
    vocab: int

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.n_head // self.n_kv_head


def dims(model) -> Dims:
    c = model.config
    if adapter(model) is GPT2:
        return Dims(int(c.n_layer), int(c.n_head), int(c.n_head), int(c.n_embd), int(c.n_embd) // int(c.n_head),
                    int(c.n_positions), int(c.vocab_size))
    H = int(c.num_attention_heads)
    return Dims(int(c.num_hidden_layers), H, int(c.num_key_value_heads or H), int(c.hidden_size),
                int(getattr(c, "head_dim", None) or c.hidden_size // H), int(c.max_position_embeddings), int(c.vocab_size))


def group_of(head: int, d: Dims) -> int:
    """The key/value head that query head `head` reads (transformers' repeat_kv order)."""
    return head // d.group


# ---------------------------------------------------------------- modules


def body(model):
    """The stack without the unembedding: GPT2Model or LlamaModel."""
    return model.transformer if adapter(model) is GPT2 else model.model


def blocks(model):
    return body(model).h if adapter(model) is GPT2 else body(model).layers


def token_embedding(model) -> torch.nn.Embedding:
    return body(model).wte if adapter(model) is GPT2 else body(model).embed_tokens


def position_embedding(model) -> torch.nn.Embedding | None:
    """The learned position table, or None for a rotary model."""
    return body(model).wpe if adapter(model) is GPT2 else None


def final_norm(model):
    return body(model).ln_f if adapter(model) is GPT2 else body(model).norm


def attention(block):
    return block.attn if hasattr(block, "attn") else block.self_attn


def attn_norm(block):
    """The norm in front of attention (ln_1 / input_layernorm)."""
    return block.ln_1 if hasattr(block, "ln_1") else block.input_layernorm


def mlp_norm(block):
    return block.ln_2 if hasattr(block, "ln_2") else block.post_attention_layernorm


def out_proj(block):
    """The module whose input is the heads' outputs side by side (c_proj / o_proj): head h's
    output is columns head_slice(h) of that input."""
    a = attention(block)
    return a.c_proj if hasattr(a, "c_proj") else a.o_proj


def mlp(block):
    return block.mlp  # both architectures name it so


def unembedding(model):
    """The output layer (lm_head), tied to the token embedding in the course's models."""
    return model.lm_head


def head_slice(h: int, d: Dims) -> slice:
    """Head h's columns of the out-projection's input (and of q's width)."""
    return slice(h * d.head_dim, (h + 1) * d.head_dim)


def kv_slice(h: int, d: Dims) -> slice:
    """The columns of k's and v's width that query head h reads: its key/value group's."""
    g = group_of(h, d)
    return slice(g * d.head_dim, (g + 1) * d.head_dim)


def head_out_rows(block, h: int, d: Dims) -> torch.Tensor:
    """Head h's rows of W_O: (head_dim, width), its output's way into the stream."""
    return out_weights(block)[0][head_slice(h, d), :]  # (head_dim, width)


def attention_weights(output) -> torch.Tensor:
    """The attention weights from an attention module's forward output (both return
    (output, weights) in eager mode): (batch, head, query, key)."""
    return output[1]


def scaling(block) -> float:
    return float(attention(block).scaling)


# ---------------------------------------------------------------- weights, as (in, out)


def _in_out(linear) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(weight as (in, out), bias or None) of a Conv1D or a Linear."""
    if type(linear).__name__ == "Conv1D":
        return linear.weight, linear.bias
    return linear.weight.T, linear.bias


def qkv_weights(block) -> tuple[torch.Tensor, ...]:
    """(w_q, w_k, w_v, b_q, b_k, b_v): w_q (width, head·head_dim), w_k and w_v (width,
    kv_head·head_dim), biases of the same widths (zeros where the model has none)."""
    a = attention(block)
    if hasattr(a, "c_attn"):
        w, b = _in_out(a.c_attn)  # (width, 3 · width), (3 · width,)
        W = w.shape[0]
        return (*w.split(W, dim=1), *b.split(W))
    out = []
    for lin in (a.q_proj, a.k_proj, a.v_proj):
        w, b = _in_out(lin)  # (width, out)
        out.append((w, b if b is not None else torch.zeros(w.shape[1], dtype=w.dtype)))
    (wq, bq), (wk, bk), (wv, bv) = out
    return wq, wk, wv, bq, bk, bv


def out_weights(block) -> tuple[torch.Tensor, torch.Tensor]:
    """(w_o, b_o): w_o (head·head_dim, width), b_o (width,) (zeros where the model has none)."""
    w, b = _in_out(out_proj(block))
    return w, (b if b is not None else torch.zeros(w.shape[1], dtype=w.dtype))


def norm_parts(norm) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(gain, bias, eps) of a LayerNorm or an RMSNorm (bias zeros for RMSNorm)."""
    g = norm.weight
    b = getattr(norm, "bias", None)
    eps = float(getattr(norm, "eps", None) or getattr(norm, "variance_epsilon", 1e-6))
    return g, (b if b is not None else torch.zeros_like(g)), eps


def norm_scale(norm, x: torch.Tensor, centres: bool) -> torch.Tensor:
    """The per-token divisor a norm applies to x (…, token, width): frozen, it makes the norm
    linear in x, which is what a split of the stream into parts needs. Returns (…, token, 1).
    LayerNorm's is the standard deviation (its variance as torch's LayerNorm takes it, biased);
    RMSNorm's the root mean square."""
    _, _, eps = norm_parts(norm)
    if centres:
        return (x.var(dim=-1, unbiased=False, keepdim=True) + eps).sqrt()  # (…, token, 1)
    return torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)  # (…, token, 1)


def frozen_norm(norm, parts: torch.Tensor, x: torch.Tensor, centres: bool) -> torch.Tensor:
    """Each part of the stream x through `norm` with its scale frozen at x: parts (part, token,
    width) summing to x (token, width); returns (part, token, width), summing to norm(x) less the
    norm's bias (a LayerNorm's bias is no part's: the caller gives it to the biases part)."""
    gain = norm_parts(norm)[0].to(parts.dtype)  # (width,)
    scale = norm_scale(norm, x, centres)  # (token, 1)
    centred = parts - parts.mean(dim=-1, keepdim=True) if centres else parts  # (part, token, width)
    return centred / scale * gain  # (part, token, width)


def norm_bias(norm) -> torch.Tensor:
    """A LayerNorm's bias, zeros for an RMSNorm: (width,)."""
    return norm_parts(norm)[1]


def has_biases(model) -> bool:
    """Whether the attention projections carry biases (GPT-2's do; a Llama's only when its
    config asks): the score split keeps a biases part only then (an MLP's bias is in its output)."""
    return adapter(model) is GPT2 or bool(getattr(model.config, "attention_bias", False))


def positions(model) -> str:
    """How positions enter: "learned" (a position table added to the stream) or "rotary" (q and
    k turned by their positions): registry.config_facts' word for it."""
    return "learned" if adapter(model).has_position_table else "rotary"


# ---------------------------------------------------------------- projections and rotation


def project(block, x_normed: torch.Tensor, d: Dims) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q (…, token, head, head_dim), k and v (…, token, kv_head, head_dim), before rotation, from
    the normed stream x_normed (…, token, width)."""
    wq, wk, wv, bq, bk, bv = qkv_weights(block)
    lead = x_normed.shape[:-1]
    q = (x_normed @ wq.to(x_normed.dtype) + bq.to(x_normed.dtype)).view(*lead, d.n_head, d.head_dim)  # (…, token, head, head_dim)
    k = (x_normed @ wk.to(x_normed.dtype) + bk.to(x_normed.dtype)).view(*lead, d.n_kv_head, d.head_dim)  # (…, token, kv_head, head_dim)
    v = (x_normed @ wv.to(x_normed.dtype) + bv.to(x_normed.dtype)).view(*lead, d.n_kv_head, d.head_dim)  # (…, token, kv_head, head_dim)
    return q, k, v


def qkv_hooks(block, seen: dict) -> list:
    """Forward hooks that put the model's own q, k, v projections (before rotation) into
    `seen["q"]`, `seen["k"]`, `seen["v"]`, each (batch, token, out). Returns the handles."""
    a = attention(block)
    if hasattr(a, "c_attn"):
        def fused(_mod, _inp, output):
            W = output.shape[-1] // 3
            seen["q"], seen["k"], seen["v"] = output.detach().split(W, dim=-1)  # each (batch, token, width)
        return [a.c_attn.register_forward_hook(fused)]

    def one(name):
        def hook(_mod, _inp, output):
            seen[name] = output.detach()  # (batch, token, out)
        return hook
    return [getattr(a, f"{n}_proj").register_forward_hook(one(n)) for n in ("q", "k", "v")]


def rotation(model, T: int, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(cos, sin), each (token, head_dim), for positions 0..T-1; None without rotary positions."""
    if adapter(model).has_position_table:
        return None
    rot = body(model).rotary_emb
    pos = torch.arange(T)[None]  # (1, token)
    probe = torch.zeros(1, T, 1, dtype=dtype)
    cos, sin = rot(probe, pos)  # each (1, token, head_dim)
    return cos[0].to(dtype), sin[0].to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (…, token, head, head_dim) turned by its position: dimension i pairs with i + head_dim/2
    (transformers' rotate_half layout). cos and sin are (token, head_dim)."""
    c = cos[:, None, :].to(x.dtype)  # (token, 1, head_dim)
    s = sin[:, None, :].to(x.dtype)  # (token, 1, head_dim)
    return x * c + rotate_half(x) * s


def frequencies(model) -> torch.Tensor | None:
    """The rotation's angular speed per dimension pair, radians per position: (head_dim / 2,)."""
    if adapter(model).has_position_table:
        return None
    return body(model).rotary_emb.inv_freq.detach().clone()


def rope_theta(model) -> float | None:
    """The rotation's base (theta), or None without rotary positions."""
    if adapter(model).has_position_table:
        return None
    c = model.config
    params = getattr(c, "rope_parameters", None) or {}
    return float(params.get("rope_theta", getattr(c, "rope_theta", 10000.0)))


# ---------------------------------------------------------------- building models


# transformers' config class of each architecture, and how the course's shape words map onto it.
CONFIG_CLASSES = {"gpt2": "GPT2Config", "llama": "LlamaConfig"}


def new_model(architecture: str, *, n_layer: int, n_head: int, width: int, n_ctx: int, vocab: int,
              n_kv_head: int | None = None, head_dim: int | None = None, inner: int | None = None,
              eot: int | None = None, seed: int = 0):
    """A randomly initialised model of `architecture` ("gpt2" or "llama"), eval mode, eager
    attention, no dropout; the shape in the course's words (Dims). For tests and stand-ins."""
    import transformers

    if architecture == "gpt2":
        kw = dict(n_layer=n_layer, n_head=n_head, n_embd=width, n_positions=n_ctx, vocab_size=vocab, n_inner=inner,
                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=eot, eos_token_id=eot)
    else:
        kw = dict(num_hidden_layers=n_layer, num_attention_heads=n_head, num_key_value_heads=n_kv_head or n_head,
                  hidden_size=width, head_dim=head_dim or width // n_head, intermediate_size=inner or 4 * width,
                  max_position_embeddings=n_ctx, vocab_size=vocab, tie_word_embeddings=True, attention_dropout=0.0,
                  bos_token_id=eot, eos_token_id=eot)
    cfg = getattr(transformers, CONFIG_CLASSES[architecture])(**kw)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model
