"""Which models the course traces, and how each one is loaded.

Two models are registered:

* ``tiny``: the course's own 4 × 4 × 128 GPT-2, committed in ``generator/tiny_model/``
  (trained by ``python -m generator train-tiny``). Its revision is the first 12 hex digits of
  the sha256 of ``model.safetensors``, computed at load, so a retrained checkpoint gets new
  trace keys.
* ``gpt2``: GPT-2 small, ``openai-community/gpt2`` pinned to one commit of its main branch
  (:data:`GPT2_REVISION`). It loads from the Hugging Face cache, from a local directory
  (``--gpt2-path`` or ``COURSE_GPT2_PATH``) or from the hub. Offline it fails fast with
  :class:`ModelUnavailable` and a one-line message saying what is missing and how to get it.
  A local directory's traces record the revision ``local-<sha12 of its weights file>`` (the
  pinned commit only for the hub snapshot folder named by it), so the pages, which show every
  figure's revision, never pass a local copy's numbers off as the published model's. A local copy
  is not a stand-in (``standIn: false``); tests/test_gpt2_e2e.py loads a random-weight one.

:func:`load_stand_in` builds a randomly initialised model with GPT-2 small's shape for tests and
benchmarks; its traces say ``standIn: true`` and must never be committed.

Everything is loaded in eval mode with ``attn_implementation="eager"``, so that the attention
weights the tracer computes can be checked against transformers' own.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from .. import schema
from .checkpoint import checkpoint_problem
from ..registry import GPT2_HF_NAME, GPT2_REVISION, GPT2_SMALL_SHAPE, MODELS, ModelSpec

PACKAGE_MODEL_DIR = Path(__file__).resolve().parents[1] / "tiny_model"

GPT2_PATH_ENV = "COURSE_GPT2_PATH"

STAND_IN_REVISION = "stand-in-random-init"
EOT = "<|endoftext|>"


class ModelError(Exception):
    """Base class of this module's errors."""


class UnknownModel(ModelError, KeyError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(name)

    def __str__(self) -> str:
        return f"unknown model {self.name!r} (known: {', '.join(MODELS)})"


class ModelUnavailable(ModelError):
    """The model's weights cannot be had here. ``str()`` is one line: what is missing and how to
    get it."""


@dataclass
class LoadedModel:
    """A model ready to trace, with a tokenizer that gives exact token strings (" her")."""

    spec: ModelSpec
    model: object  # transformers.GPT2LMHeadModel, eval mode, eager attention
    tokenizer_encode: Callable[[str], list[int]]
    token_text: Callable[[int], str]
    revision: str
    meta: dict = field(default_factory=dict)  # camelCase, schema.META_FIELDS plus standIn
    bos_id: int = 0  # <|endoftext|>: position 0 of every trace

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def n_ctx(self) -> int:
        from . import arch

        return arch.dims(self.model).n_ctx

    def ids_of(self, text: str, ids=None) -> list[int]:
        """The ids a trace of `text` reads (<|endoftext|> first), or `ids` as given; unchecked
        (tracing.token_ids checks them against the context and the vocabulary)."""
        return [int(i) for i in ids] if ids is not None else [self.bos_id] + list(self.tokenizer_encode(text))


def spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModel(name) from None


def sha12(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def library_versions() -> dict:
    import tokenizers
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "tokenizers": tokenizers.__version__}


def build_meta(spec_: ModelSpec, model, revision: str, tokenizer: str, stand_in: bool = False) -> dict:
    """Model metadata, camelCase through schema.META_FIELDS, plus ``standIn``."""
    from . import arch

    shape = arch.dims(model)
    snake = {
        "model": spec_.name,
        "hf_name": spec_.hf_name,
        "revision": revision,
        "n_layer": shape.n_layer,
        "n_head": shape.n_head,
        "width": shape.width,
        "head_dim": shape.head_dim,
        "n_ctx": shape.n_ctx,
        "vocab_size": shape.vocab,
        "n_params": int(sum(p.numel() for p in model.parameters())),
        "tokenizer": tokenizer,
        "library_versions": library_versions(),
        "schema_version": schema.SCHEMA_VERSION,
        "precision": {"compute": "float32", "significantDigits": schema.SIGNIFICANT_DIGITS},
    }
    assert set(snake) == set(schema.META_FIELDS), "build_meta out of step with schema.META_FIELDS"
    meta = {schema.camel(k): v for k, v in snake.items()}
    meta["standIn"] = bool(stand_in)
    return meta


# ---------------------------------------------------------------- tokenizers


def wrap_tokenizers(tok) -> tuple[Callable[[str], list[int]], Callable[[int], str]]:
    """encode/token_text for a `tokenizers.Tokenizer` (the tiny model's byte-level BPE)."""

    def encode(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False).ids)

    def token_text(i: int) -> str:
        # skip_special_tokens=False so that EOT reads "<|endoftext|>", not "".
        return tok.decode([int(i)], skip_special_tokens=False)

    return encode, token_text


def wrap_transformers(tok) -> tuple[Callable[[str], list[int]], Callable[[int], str]]:
    """encode/token_text for a transformers tokenizer (GPT-2's). No BOS is added, spaces are
    kept exactly as the byte-level BPE has them (" her")."""

    def encode(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False))

    def token_text(i: int) -> str:
        return tok.decode([int(i)], skip_special_tokens=False, clean_up_tokenization_spaces=False)

    return encode, token_text


def _eot_id(tok) -> int:
    """<|endoftext|>'s id in a `tokenizers.Tokenizer`."""
    i = tok.token_to_id(EOT)
    if i is None:
        raise ModelUnavailable(f"the tokenizer has no {EOT} token, which every trace starts with")
    return int(i)


def _eval(model):
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


# ---------------------------------------------------------------- tiny


def load_tiny(model_dir: Path | None = None) -> LoadedModel:
    from tokenizers import Tokenizer
    from transformers import GPT2LMHeadModel

    model_dir = Path(model_dir or PACKAGE_MODEL_DIR)
    weights = model_dir / "model.safetensors"
    tok_file = model_dir / "tokenizer.json"
    for f in (weights, tok_file, model_dir / "config.json"):
        if not f.is_file():
            raise ModelUnavailable(
                f"tiny: {f} is missing; train it with `python -m generator train-tiny` (make tiny-model)"
            )
    problem = checkpoint_problem("tiny", model_dir)
    if problem:
        raise ModelUnavailable(f"tiny: {problem}. Fix: restore generator/tiny_model/ from git, or retrain it with `make tiny-model`")
    revision = sha12(weights)
    model = _eval(GPT2LMHeadModel.from_pretrained(str(model_dir), attn_implementation="eager"))
    tok = Tokenizer.from_file(str(tok_file))
    encode, token_text = wrap_tokenizers(tok)
    s = MODELS["tiny"]
    meta = build_meta(s, model, revision, f"byte-level BPE, {tok.get_vocab_size()} tokens (tiny_model/tokenizer.json)")
    return LoadedModel(s, model, encode, token_text, revision, meta, bos_id=_eot_id(tok))


# ---------------------------------------------------------------- gpt2


def hub_reachable(timeout: float = 2.0) -> bool:
    """A cheap check (DNS + TCP connect, no HTTP) that the hub's host answers."""
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    url = urlparse(endpoint)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if proxy:  # then the proxy is what must answer
        p = urlparse(proxy)
        host, port = p.hostname or host, p.port or 3128
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _offline_env() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _gpt2_missing_message(where: str) -> str:
    return (
        f"gpt2: {GPT2_HF_NAME}@{GPT2_REVISION[:7]} {where}; run `make traces` on a machine with a network, "
        f"or set {GPT2_PATH_ENV}=/path/to/gpt2"
    )


def load_gpt2(
    path: str | Path | None = None,
    check_hub: Callable[[], bool] = hub_reachable,
    cache_dir: str | Path | None = None,
) -> LoadedModel:
    """GPT-2 small at the pinned revision, from `path` / COURSE_GPT2_PATH, the HF cache or the hub.

    `cache_dir` overrides the HF cache folder. A local directory (a `save_pretrained` folder or
    a hub snapshot) is taken as it is; its
    revision is the pinned one when the directory is that snapshot (its name is the commit),
    otherwise ``local-<sha12 of the weights>``, so its traces never pass for the pinned ones.
    """
    from transformers import AutoTokenizer, GPT2LMHeadModel

    s = MODELS["gpt2"]
    path = path or os.environ.get(GPT2_PATH_ENV) or None
    if path:
        d = Path(path)
        weights = next((d / n for n in ("model.safetensors", "pytorch_model.bin") if (d / n).is_file()), None)
        if not d.is_dir() or weights is None or not (d / "config.json").is_file():
            raise ModelUnavailable(
                f"gpt2: {d} is not a GPT-2 checkpoint folder (config.json + model.safetensors); "
                f"fix --gpt2-path / {GPT2_PATH_ENV}, or unset it to use the HF cache"
            )
        problem = checkpoint_problem("gpt2", d)
        if problem:  # before transformers, which fills a missing tensor with random numbers
            raise ModelUnavailable(f"gpt2: {problem}. Fix: point {GPT2_PATH_ENV} at a whole GPT-2 small folder (save_pretrained), or unset it")
        revision = GPT2_REVISION if d.name == GPT2_REVISION else f"local-{sha12(weights)}"
        try:
            model = GPT2LMHeadModel.from_pretrained(str(d), attn_implementation="eager", local_files_only=True)
            tok = AutoTokenizer.from_pretrained(str(d), local_files_only=True)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"gpt2: cannot load {d}: {str(e).splitlines()[0]}") from None
        check_local_tokenizer(d, tok)
    else:
        revision = GPT2_REVISION
        offline = _offline_env() or not check_hub()
        check_cached_gpt2(cache_dir)  # a damaged cache is refused before it is loaded
        try:
            kw = dict(revision=GPT2_REVISION, local_files_only=offline, cache_dir=cache_dir)
            model = GPT2LMHeadModel.from_pretrained(GPT2_HF_NAME, attn_implementation="eager", **kw)
            tok = AutoTokenizer.from_pretrained(GPT2_HF_NAME, **kw)
        except OSError:  # transformers raises OSError (EnvironmentError) for missing files
            where = "not in the HF cache and the hub is unreachable" if offline else "could not be downloaded"
            raise ModelUnavailable(_gpt2_missing_message(where)) from None
        check_cached_gpt2(cache_dir, required=True)  # what a download just put there, before any trace
    model = _eval(model)
    encode, token_text = wrap_transformers(tok)
    meta = build_meta(s, model, revision, f"{GPT2_HF_NAME} byte-level BPE, {len(tok)} tokens")
    return LoadedModel(s, model, encode, token_text, revision, meta, bos_id=int(tok.convert_tokens_to_ids(EOT)))


def cached_gpt2_folder(cache_dir: str | Path | None = None) -> Path | None:
    """The HF cache's snapshot folder of GPT-2 at the pinned revision, or None when it holds no
    config.json there (nothing is downloaded: the cache is only looked at)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(GPT2_HF_NAME, "config.json", cache_dir=cache_dir, revision=GPT2_REVISION)
    return Path(found).parent if isinstance(found, str) else None


def check_cached_gpt2(cache_dir: str | Path | None = None, required: bool = False) -> None:
    """Refuse, in one line, a cached GPT-2 snapshot with a missing, extra, mis-shaped or cut tensor
    or a config of another size: transformers would fill the gaps with random numbers."""
    folder = cached_gpt2_folder(cache_dir)
    if folder is None:
        if required:
            raise ModelUnavailable(f"gpt2: loaded, but its snapshot {GPT2_REVISION[:12]} is not in the HF cache to be checked")
        return
    problem = checkpoint_problem("gpt2", folder)
    if problem:
        raise ModelUnavailable(
            f"gpt2: the HF cache's copy is damaged: {problem}. Fix: delete {folder.parent.parent} "
            f"and download it again (make traces), or point {GPT2_PATH_ENV} at a whole GPT-2 small folder"
        )


# A local copy's tokenizer must be GPT-2's: a folder saved with a broken tokenizer (in
# transformers 5, GPT2TokenizerFast(vocab_file=, merges_file=) silently makes a one-token one)
# would otherwise fail on every sentence with a misleading "change the sentence".
TOKENIZER_PROBE = "Lily didn't want the red ball, so she gave it to her brother.\n  Café 123!"


def check_local_tokenizer(folder: Path, tok) -> None:
    """Refuse, in one line, a local GPT-2 folder whose tokenizer differs from the committed one."""
    from .. import tokens

    want = [t.id for t in tokens.encode("gpt2", TOKENIZER_PROBE)][1:]  # without the <|endoftext|> encode adds
    got = [int(i) for i in tok.encode(TOKENIZER_PROBE, add_special_tokens=False)]
    if got != want:
        raise ModelUnavailable(
            f"gpt2: {folder}'s tokenizer is not GPT-2's (it splits a probe sentence into {len(got)} tokens, "
            f"GPT-2 into {len(want)}); save the folder with GPT-2's tokenizer (vocab.json + merges.txt from generator/gpt2/)"
        )


# ---------------------------------------------------------------- stand-in and test models


def random_model(n_layer: int, n_head: int, n_embd: int, n_positions: int, vocab_size: int, seed: int = 0):
    """A randomly initialised GPT2LMHeadModel, eval mode, eager attention."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        n_positions=n_positions,
        vocab_size=vocab_size,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=50256 if vocab_size > 50256 else None,
        eos_token_id=50256 if vocab_size > 50256 else None,
        attn_implementation="eager",
    )
    return _eval(GPT2LMHeadModel(cfg))


def tiny_tokenizer():
    """The committed tiny tokenizer (a `tokenizers.Tokenizer`), as the site build loads it."""
    from .. import tokens

    try:
        return tokens.tokenizer("tiny")
    except tokens.NoTokenizer as e:
        raise ModelUnavailable(f"{e}; train it with `python -m generator train-tiny`") from None


def from_parts(name: str, model, tokenizer, revision: str, stand_in: bool = True, tokenizer_name: str = "") -> LoadedModel:
    """A LoadedModel from an in-memory model and a `tokenizers.Tokenizer` (tests, benchmarks)."""
    s = spec(name)
    encode, token_text = wrap_tokenizers(tokenizer)
    name_ = tokenizer_name or f"byte-level BPE, {tokenizer.get_vocab_size()} tokens"
    meta = build_meta(s, model, revision, name_, stand_in=stand_in)
    return LoadedModel(s, model, encode, token_text, revision, meta, bos_id=_eot_id(tokenizer))


def load_stand_in(tokenizer=None) -> LoadedModel:
    """GPT-2 small's shape (12 × 12 × 768, 1024 positions, 50257 tokens), random weights (seed 0),
    with the tiny tokenizer (its ids < 4096 are valid in GPT-2's vocabulary). Reported as
    ``model="gpt2"``, revision ``stand-in-random-init``, ``standIn: true``: for tests and
    ``make bench`` only, never for committed traces."""
    tok = tokenizer if tokenizer is not None else tiny_tokenizer()
    model = random_model(**GPT2_SMALL_SHAPE, seed=0)
    return from_parts("gpt2", model, tok, STAND_IN_REVISION, stand_in=True, tokenizer_name="tiny tokenizer (stand-in)")


def load_trained(name: str, model_dir: Path | None = None) -> LoadedModel:
    """One of the course's own checkpoints of another architecture than GPT-2 (tiny-rope), from
    its committed folder (registry.model_dir) or `model_dir`. Minimal: its checkpoint check
    against the committed config is GPT-2's only so far (model/checkpoint.py)."""
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    from ..registry import model_dir as committed_dir

    s = spec(name)
    folder = Path(model_dir or committed_dir(name))
    weights, tok_file = folder / "model.safetensors", folder / "tokenizer.json"
    for f in (weights, tok_file, folder / "config.json"):
        if not f.is_file():
            raise ModelUnavailable(f"{name}: {f} is missing; train it with `python -m generator train-tiny --model {name}`")
    model = _eval(AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager"))
    tok = Tokenizer.from_file(str(tok_file))
    encode, token_text = wrap_tokenizers(tok)
    meta = build_meta(s, model, sha12(weights), f"byte-level BPE, {tok.get_vocab_size()} tokens ({folder.name}/tokenizer.json)")
    return LoadedModel(s, model, encode, token_text, sha12(weights), meta, bos_id=_eot_id(tok))


def load(name: str, gpt2_path: str | Path | None = None, stand_in: bool = False) -> LoadedModel:
    """Load a registered model by name. ``stand_in=True`` gives the random stand-in for gpt2."""
    s = spec(name)
    if s.name == "tiny":
        return load_tiny()
    if s.trained_here:
        return load_trained(s.name)
    if stand_in:
        return load_stand_in()
    return load_gpt2(gpt2_path)


def set_threads(n: int) -> None:
    """torch's CPU threads for this process (make bench --threads; 1 for comparable timings)."""
    import torch

    torch.set_num_threads(n)


def torch_summary() -> str:
    """`torch <version>, <n> threads`, for a benchmark's header."""
    import torch

    return f"torch {torch.__version__}, {torch.get_num_threads()} threads"


def bare_forward(lm: LoadedModel, ids: list[int]):
    """A function that runs the model's own forward on `ids` with attentions and nothing
    captured: the tracer's baseline in make bench."""
    import torch

    x = torch.tensor([ids])  # (1, token)

    def run():
        with torch.inference_mode():
            lm.model(x, output_attentions=True, use_cache=False)

    return run


def import_libraries() -> None:
    """Import torch and transformers now (ImportError without the models extra), so that the
    preview pays for them once, before its first trace rather than in the middle of it."""
    import torch  # noqa: F401
    from transformers import GPT2LMHeadModel  # noqa: F401 (what load() builds on)
