"""The notebook cells of the chapters on the model's input: chapter 1's tokens and merges, and
chapter 2's vectors and layer norm (cells.py holds what every notebook shares and the later
chapters' cells)."""

from __future__ import annotations

import inspect

from .. import bpe
from .cells import Section


# ---------------------------------------------------------------- chapter 1: tokens and ids


BYTE_LEVEL = "\n" + inspect.getsource(bpe.byte_table) + '''

table = byte_table()


def byte_level(text):
    """The text's UTF-8 bytes, one printable character each, as the tokenizer's keys are written."""
    return "".join(table[b] for b in text.encode("utf-8"))


vocab = load_json("tiny/tokenizer.json")["model"]["vocab"]  # byte-level text -> id
print(len(vocab), "tokens in the vocabulary;", repr(byte_level(" her")), "is id", vocab[byte_level(" her")])
'''


def tokens(trace_file: str, text: str) -> Section:
    s = Section(files=[trace_file, "tiny/tokenizer.json"])
    s.md(f"""
## Tokens and their ids

The tiny model read “{text}” as the tokens below: position, id, and the text exactly as the
tokenizer has it (a leading space is part of the token). Position 0 is `<|endoftext|>`, which
every sentence in this course starts with.
""")
    s.code(f'''
tokenized = load_json({trace_file!r})
expect("ids", [t["id"] for t in tokenized["tokens"]])
expect("spaced", sum(t["text"].startswith(" ") for t in tokenized["tokens"]))
''')
    s.step("tokens")
    s.md("""
The ids are the tokens' places in the tokenizer's vocabulary (`data/tiny/tokenizer.json`). Its
keys are written in a byte-level alphabet, in which a space is `Ġ`:
""")
    s.code(BYTE_LEVEL)
    s.md("The token at position 0 is not text: `<|endoftext|>`, which marks where one text ends and the next begins.")
    s.step("endoftext")
    s.exercise("ids", "Look every token's text up in `vocab` (through `byte_level`), in order: the list of ids.",
               "token_ids", 'token_ids = [vocab[byte_level(t["text"])] for t in tokenized["tokens"]]')
    s.exercise("spaced", "How many of the sentence's tokens start with a space?",
               "spaced", 'spaced = sum(t["text"].startswith(" ") for t in tokenized["tokens"])')
    return s


def merges(word: str, model: str, with_byte_level: bool) -> Section:
    s = Section(files=[f"{model}/tokenizer.json"])
    s.md(f"""
## Byte-pair encoding, merge by merge

The chapter's merges figure replays the tokenizer's merge list on {word!r}: start from one piece
per byte, join the neighbouring pair that stands highest on the list, and again, until no pair of
the word is on it. The list is in the tokenizer's file, so the replay needs nothing else.
""")
    if with_byte_level:
        s.code(BYTE_LEVEL)
    s.code(f"word = {word!r}  # the figure's word")
    s.step("merges")
    return s


# ---------------------------------------------------------------- chapter 2: vectors, layer norm


def embedding(sentence_index: int, text: str, focus: int, focus_text: str) -> Section:
    s = Section(files=["tiny/vectors.json"])
    s.md(f"""
## A token's vector: embedding plus position

`data/tiny/vectors.json` holds, for “{text}”, each token's row of the embedding matrix
(`token`), the row of its position (`position`), and what the model adds up (`sum`), every
number to 5 significant digits.
""")
    s.code(f'''
vectors = load_json("tiny/vectors.json")
sentence = vectors["sentences"][{sentence_index}]
token_rows, position_rows = np.array(sentence["token"]), np.array(sentence["position"])  # (token, width)
print([t["text"] for t in sentence["tokens"]], token_rows.shape)
focus = {focus}  # {focus_text}, the token the chapter follows (positions count from 0)
digits5 = lambda a: 5e-5 * np.abs(np.asarray(a))  # half of the 5th significant digit, about
expect("sum", sentence["sum"], digits5(sentence["sum"]))
''')
    s.exercise("sum", "Each token's vector as the first layer reads it: its token row plus its position row.",
               "summed", "summed = token_rows + position_rows")
    s.md("One token's rows, as the chapter's first figure shows them:")
    s.step("embedding")
    return s


def neighbours() -> Section:
    s = Section(files=["tiny/vectors.json"])
    s.md("""
## Cosine similarity

How alike two rows are, whatever their lengths: their dot product divided by both lengths.
""")
    s.step("cosine")
    return s


def vector_map() -> Section:
    s = Section(files=["tiny/vectors.json"])
    s.md("""
## The map

The map's points were computed once, with numpy, when the course was built (principal component
analysis of the common tokens' rows); `vectors.json` keeps each point and what the two directions
hold of the spread.
""")
    s.step("map")
    return s


def layernorm(sentence_index: int, focus: int, focus_text: str) -> Section:
    s = Section(files=["tiny/vectors.json"])
    s.md("""
## Layer norm

Before attention, layer 1 normalises each token's vector: subtract its mean, divide by its
standard deviation (with `eps` inside the square root), then multiply by the layer's `weight`
and add its `bias`, number by number. The file keeps both steps: `normalised` and `ln1`.
""")
    s.code(f'''
vectors = load_json("tiny/vectors.json")
digits5 = lambda a: 5e-5 * np.abs(np.asarray(a))  # half of the 5th significant digit, about
ln = vectors["layerNorm"]
ln_sentence = vectors["sentences"][{sentence_index}]
x = np.array(ln_sentence["sum"])  # (token, width)
ln_focus = {focus}  # {focus_text}, the figure's token
print("layer", ln["layer"], "eps", ln["eps"], "width", len(ln["weight"]))
expect("normalised", ln_sentence["normalised"], digits5(ln_sentence["normalised"]))
expect("ln1", ln_sentence["ln1"], digits5(ln_sentence["ln1"]))
''')
    s.md("The first step for one token, as the page's figure shows it (without `eps`, which is tiny):")
    s.step("layernorm")
    s.exercise("normalised", "Normalise every row of `x`: (x − mean) / √(variance + eps), the variance "
               "being the mean of the squared differences (numpy's default, `ddof=0`).",
               "normalised", '''
mean = x.mean(axis=-1, keepdims=True)
variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
normalised = (x - mean) / np.sqrt(variance + ln["eps"])''')
    s.exercise("ln1", "Then scale by the layer's `weight` and shift by its `bias`.",
               "ln1", 'ln1 = normalised * np.array(ln["weight"]) + np.array(ln["bias"])')
    return s
