"""Both models' tokenizers, without torch: what a sentence's tokens are before it is traced.

The tiny model's byte-level BPE is committed with its checkpoint (``tiny_model/tokenizer.json``);
GPT-2's vocabulary and merges are committed in ``gpt2/`` (see its README). Both load with the
`tokenizers` library (Rust, no torch), so the site build knows every lesson sentence's tokens, its
length and whether a reference names one of them, with or without a trace. The tracer prepends
the same ``<|endoftext|>`` (:func:`encode` does too), so position 0 agrees everywhere.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from . import schema

EOT = "<|endoftext|>"
PACKAGE = Path(__file__).resolve().parent
TOKENIZER_FILES = {
    "tiny": (PACKAGE / "tiny_model" / "tokenizer.json",),
    "gpt2": (PACKAGE / "gpt2" / "vocab.json", PACKAGE / "gpt2" / "merges.txt"),
    "tiny-rope": (PACKAGE / "tiny_rope_model" / "tokenizer.json",),  # the tiny model's tokenizer, committed beside its config
}


class NoTokenizer(LookupError):
    pass


@dataclass(frozen=True)
class Token:
    id: int
    text: str  # exactly as the model reads it, leading space included (" her")
    display: str  # as the pages show it ("·her")


MAX_TOKENIZER_BYTES = 64 * 2**20  # GPT-2's vocab.json and merges.txt are about 1 MB and 0.5 MB


def shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(PACKAGE.parent).as_posix()
    except ValueError:
        return str(path)


def file_problem(path: Path) -> str | None:
    """Why a tokenizer file cannot be read (missing, not a regular file, too large), or None."""
    import stat

    try:
        st = path.stat()
    except OSError:
        return "is missing"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_size > MAX_TOKENIZER_BYTES:
        return f"is {st.st_size:,} bytes, over the limit of {MAX_TOKENIZER_BYTES:,}"
    return None


@functools.lru_cache(maxsize=None)
def tokenizer(model: str):
    """The `tokenizers.Tokenizer` of `model` (cached)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    files = TOKENIZER_FILES.get(model)
    if files is None:
        raise NoTokenizer(f"no committed tokenizer for model {model!r} (known: {', '.join(TOKENIZER_FILES)})")
    for f in files:
        problem = file_problem(f)
        if problem:
            raise NoTokenizer(f"{model}: {shown(f)} {problem}")
    try:
        if len(files) == 1:  # one tokenizer.json (the course's own models)
            return Tokenizer.from_file(str(files[0]))
        tok = Tokenizer(models.BPE.from_file(str(files[0]), str(files[1])))
    except Exception as exc:  # tokenizers raises plain Exception for a file it cannot parse
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise NoTokenizer(f"{model}: {' and '.join(shown(f) for f in files)} cannot be read as its tokenizer ({first})") from None
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([EOT])  # already id 50256 in the vocabulary: this only marks it special
    return tok


def bos_id(model: str) -> int:
    i = tokenizer(model).token_to_id(EOT)
    if i is None:
        raise NoTokenizer(f"{model}: the tokenizer has no {EOT}")
    return int(i)


def token_text(model: str, i: int) -> str:
    return tokenizer(model).decode([int(i)], skip_special_tokens=False)


def encode(model: str, text: str) -> list[Token]:
    """The tokens a trace of `text` will have: <|endoftext|> first, then the sentence's."""
    ids = [bos_id(model)] + list(tokenizer(model).encode(text, add_special_tokens=False).ids)
    out = []
    for i in ids:
        t = token_text(model, i)
        out.append(Token(int(i), t, schema.display_token(t)))
    return out


def byte_split_chars(model: str, text: str) -> list[str]:
    """The characters of `text` the model has no token for, so that it reads their UTF-8 bytes as
    tokens of their own, which the pages show as U+FFFD (an emoji: four '�'); in text order."""
    if "\ufffd" not in "".join(t.text for t in encode(model, text)):
        return []
    return [c for c in dict.fromkeys(text) if ord(c) > 127 and "\ufffd" not in c and any("\ufffd" in t.text for t in encode(model, c)[1:])]


def vocab_size(model: str) -> int:
    return int(tokenizer(model).get_vocab_size())


class UnknownToken(LookupError):
    """A token name that is no single token of the model's vocabulary; str() says why."""


def vocab_token(model: str, name: str) -> Token:
    """The one vocabulary token a lesson names outside its sentence (an ablation's `targets`):
    `her` is the token " her" (a word mid-sentence) when the vocabulary has it, else "her";
    `·her` or a name with its own leading space is exactly that. UnknownToken when the name is
    several tokens or none."""
    tok = tokenizer(model)
    if name.startswith("·"):
        tries = [" " + name[1:]]
    elif name.startswith(" ") or name == EOT:
        tries = [name]
    else:
        tries = [" " + name, name]
    for text in tries:
        ids = tok.encode(text, add_special_tokens=False).ids if text != EOT else [bos_id(model)]
        if len(ids) == 1:
            t = token_text(model, ids[0])
            return Token(int(ids[0]), t, schema.display_token(t))
    pieces = [token_text(model, i) for i in tok.encode(tries[0], add_special_tokens=False).ids]
    raise UnknownToken(f"{name!r} is not one token of {model}'s vocabulary (it is {len(pieces)}: "
                       + " ".join(schema.display_token(p) for p in pieces) + ")")
