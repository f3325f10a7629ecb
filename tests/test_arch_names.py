"""Issue 52: the causal data and the score split read a model only through generator/model/arch.py,
so GPT-2, tiny and tiny-rope take one code path. No module named here may name one of
transformers' GPT-2 or Llama modules, a config field of either, or test the architecture."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

THROUGH_ARCH = ("causal.py", "robust.py", "circuits.py", "pronoun_sweep.py", "score_parts.py")
# transformers' names for GPT-2's and Llama's parts and config fields, and architecture tests
NAMES = re.compile(r"\.transformer\b|\bc_attn\b|\bc_proj\b|\bc_fc\b|\bln_f\b|\bln_[12]\b|\bwpe\b|\bwte\b|\bmodel_type\b"
                   r"|\.attn\b|\bself_attn\b|\b[qkvo]_proj\b|\binput_layernorm\b|\bpost_attention_layernorm\b"
                   r"|\bembed_tokens\b|\blm_head\b|\brotary_emb\b|\.layers\b|\bmodel\.config\b|\bcfg\.|\bn_embd\b|\bn_positions\b"
                   r"|\bnum_attention_heads\b|\bnum_key_value_heads\b|\bhidden_size\b|\bhasattr\(|\"llama\"|'llama'")


@pytest.mark.parametrize("name", THROUGH_ARCH)
def test_the_module_reads_the_model_only_through_arch(name):
    text = (REPO / "generator" / "model" / name).read_text(encoding="utf-8")
    found = [(n, m.group(0)) for n, line in enumerate(text.splitlines(), 1) for m in NAMES.finditer(line)]
    assert not found, f"generator/model/{name} names a model's parts itself (ask model/arch.py): {found[:5]}"
