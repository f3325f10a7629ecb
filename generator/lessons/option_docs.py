"""What each figure kind shows and what each of its options takes, in an author's words, for the
reference that `make reference` writes (docs/reference.md). Nothing here parses: directives.py
does. tests/test_reference.py holds this table to the parser: every option of every kind has a row,
and every example parses (each kind's required examples together, then one more option at a
time), so an example cannot go stale."""

from __future__ import annotations

from typing import NamedTuple


class Option(NamedTuple):
    takes: str  # the value's type, in words
    default: str  # what the figure does without it ("required" for a required option)
    example: str  # one YAML line, as a lesson writes it


# What the reader gets from each kind, in one sentence.
KINDS: dict[str, str] = {
    "attention": "one head's attention weights on one sentence: a heatmap, a coloured table, a summary sentence, "
                 "the top three, pickers for token, layer and head, and every head as small multiples",
    "compare": "two sentences in the same head, side by side, with the focus row's differences",
    "stepper": "a made-up example worked by hand: each token's query, key and value, then the score grid, "
               "÷√d, softmax, the mix of values and the result for one token",
    "softmax": "a live widget: the reader edits the scores and sees the weights",
    "scoreboard": "the previous-token, duplicate-token, induction and attention-sink scores of every head, "
                  "as heatmaps and sortable tables, linked to an example grid of each head",
    "training": "the tiny model's loss curve, and the best head of each score kind against the training step",
    "predictions": "the model's top next tokens after every token of each sentence, one table per sentence",
    "tokens": "sentences cut into tokens by both tokenizers side by side, with ids and the words they cut differently",
    "merges": "byte-pair encoding building one word from its bytes, step by step, from the model's merge list",
    "embedding": "a sentence's token, position and summed vectors, as a heatmap",
    "layernorm": "one token's vector through layer 1's layer norm: before, normalised, after",
    "neighbours": "each word's nearest tokens by cosine similarity, and dot products of chosen pairs",
    "map": "a two-dimensional map (PCA) of common tokens, with the chosen words marked",
    "ablation": "a layers × heads table of what removing each head does at one token",
    "attribution": "each part's direct share of a logit or a logit difference at one token; the parts add up",
    "patching": "each head's output moved from one sentence into the other, and what that does at one token",
    "lens": "the logit lens: the top guesses read off the model after the embedding and after each layer",
    "guess": "a \"Guess first\" question's choices: the reader picks one and checks it, and the page says "
             "whether it is right and gives the answer with its numbers; the traces decide which choice is right "
             "(hidden without JavaScript, where the question's collapsed answer stays as it is)",
    "circuit": "what feeds one head: each earlier head's effect on its score and on the loss, "
               "and the composition scores from the weights",
    "architecture": "the model as a picture, drawn from its config: the embedding, each layer's heads and MLP adding "
                    "into the residual stream, the unembedding, with the parts the page's figures read marked “here”",
    "arrows": "a stepper's two-number vectors drawn as arrows: the query, the keys and their shadows on the query (the dot product), "
              "the scores and shares as bars, then the values scaled by their shares and added into the result",
    "pronouns": "the her/his test over many sentences, one head: a table of templates × names (female, then male), "
                "each cell logit(·her) − logit(·his) with every head, then with the recorded head removed, signed colours, "
                "and the head whose removal moves it most where that is another head",
    "score-split": "why a head looks where it looks: one head's score for one query and key, split into the parts "
                   "that made it (token, position, earlier heads and MLPs, biases) as signed bars that add up to it, "
                   "beside the query's row, with pickers for the query, the key and the side",
    "rope-distance": "position by rotation: one head of a rotary model, one query and one key placed at every distance "
                     "apart, score against distance as a line, beside the head's mean over the scoring sentences, the "
                     "pair's real distance marked (a table without JavaScript)",
    "kv-cache": "what each model keeps of every token while it writes (its KV cache), as a table from configuration alone: "
                "numbers and bytes per token, for its longest text, with sliding windows, and without shared keys; "
                "the course's models and current open models cited from their published config.json",
    "masks": "which keys each query may see, as grids side by side: causal, a sliding window, and causal with a learned sink",
}

_TOKEN = "a token by its text (`her`, `·her`) or its position (`#6`, counting `<|endoftext|>` as #0)"

# Options that mean the same in every kind that takes them.
OPTIONS: dict[str, Option] = {
    "id": Option("a name: a letter, then letters, digits, `_` or `-`", "no id: prose cannot refer to the figure", "id: lily"),
    "model": Option("`tiny` or `gpt2`", "required", "model: tiny"),
    "sentence": Option("text (quote it when it holds `:` or `#`)", "required", 'sentence: "Lily wanted to play with her"'),
    "caption": Option("text", "a caption written from the figure's options", 'caption: "Where ·her looks"'),
    "token": Option(_TOKEN, "the last token", "token: her"),
    "layer": Option("a whole number, counting from 1", "none: give `layer` and `head`, or `pick`", "layer: 3"),
    "head": Option("a whole number, counting from 1", "none: give `layer` and `head`, or `pick`", "head: 3"),
    "pick": Option("a rule: `{rule: max-weight, from: …, to: …}`, `previous-token`, `first-token`, `self`, "
                   "or `{best: <score kind>, rank: n}`", "none: give `layer` and `head`, or `pick`",
                   "pick: {rule: max-weight, from: her, to: Lily}"),
    "targets": Option("a list of one or two token names", "required", "targets: [her, his]"),
    "ablation": Option("`zero` or `mean`", "zero", "ablation: mean"),
    "guesses": Option("a whole number from 1 to 5", "5", "guesses: 3"),
    "pattern-only": Option("`true` or `false`; on an attention or compare figure, only with `pick: {best: …}`",
                           "false: a head the figure names for a job needs a causal number about it on the page",
                           "pattern-only: true"),
}

# Options whose meaning depends on the kind.
BY_KIND: dict[tuple[str, str], Option] = {
    ("attention", "heads"): Option("`one`, or `group`: beside the head, the other query heads that read the same key and value "
                                   "(a model whose heads share keys, like `tiny-rope`)", "one", "heads: group"),
    ("attention", "show_heads"): Option("true or false", "false: the small multiples start closed", "show_heads: true"),
    ("compare", "sentences"): Option("a list of two sentences", "required",
                                     'sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]'),
    ("compare", "token"): Option(_TOKEN, "the token the page's first reference to the figure reads, else the last", "token: her"),
    ("stepper", "tokens"): Option("a list of token names", "required", "tokens: [Lily, wanted, she]"),
    ("stepper", "query"): Option("a list of vectors (lists of numbers), one per token", "required",
                                 "query: [[1, 0], [0, 1], [1, 1]]"),
    ("stepper", "key"): Option("a list of vectors, one per token, as long as the queries", "required",
                               "key: [[2, 0], [0, 1], [1, 0]]"),
    ("stepper", "value"): Option("a list of vectors, one per token", "required", "value: [[1, 0], [0, 1], [1, 1]]"),
    ("stepper", "focus"): Option("a token by its text (which must be unique) or its position counting from 1",
                                 "the last token", "focus: she"),
    ("softmax", "scores"): Option("a list of numbers", "required", "scores: [2, 1, 0]"),
    ("softmax", "labels"): Option("a list of labels, one per score", "the positions 1, 2, 3, …", "labels: [Lily, wanted, she]"),
    ("scoreboard", "scores"): Option("a list of score kinds: `previous-token`, `duplicate-token`, `induction`, `sink`",
                                     "all four", "scores: [induction]"),
    ("training", "model"): Option("`tiny`", "tiny", "model: tiny"),
    ("predictions", "sentences"): Option("a list of sentences", "required", 'sentences: ["Lily wanted to play with"]'),
    ("tokens", "sentences"): Option("a list of 1 to 12 sentences", "required", 'sentences: ["Lily wanted to play"]'),
    ("tokens", "models"): Option("a list of models", "both: `[tiny, gpt2]`", "models: [gpt2]"),
    ("merges", "word"): Option("one word, with its leading space if it has one", "required", 'word: " playing"'),
    ("merges", "model"): Option("`tiny`, `tiny-rope` (the same tokenizer) or `gpt2`", "tiny", "model: gpt2"),
    ("embedding", "model"): Option("`tiny`", "required", "model: tiny"),
    ("layernorm", "model"): Option("`tiny`", "required", "model: tiny"),
    ("neighbours", "model"): Option("`tiny`", "required", "model: tiny"),
    ("map", "model"): Option("`tiny`", "required", "model: tiny"),
    ("neighbours", "words"): Option("a list of 1 to 12 words the tiny model has as one token", "required", "words: [her, Lily]"),
    ("neighbours", "pairs"): Option("a list of pairs of words", "no dot products", "pairs: [[her, his]]"),
    ("map", "mark"): Option("a list of 1 to 12 words to mark on the map", "required", "mark: [her, Lily]"),
    ("ablation", "targets"): Option("a list of one or two token names",
                                    "none: the figure measures the change in the whole next-token distribution (KL divergence)",
                                    "targets: [her, his]"),
    ("ablation", "grid"): Option("the id of an attention figure above on the page", "no links", "grid: lily"),
    ("patching", "sentences"): Option("a list of two sentences with as many tokens", "required",
                                      'sentences: ["Lily wanted to play with her", "Ben wanted to play with his"]'),
    ("lens", "guesses"): Option("a whole number from 1 to 5", "1", "guesses: 3"),
    ("guess", "choices"): Option("a list of 2 to 6 choices: each `{say: text, when: condition}`, a condition being "
                                 "`reference op value` (op: < <= > >= = !=) or a list of them that must all hold; "
                                 "plain texts with `right:`", "required",
                                 'choices: [{say: flips, when: "ab.ablated(L2H3) < 0"}, {say: holds, when: "ab.ablated(L2H3) >= 0"}]'),
    ("guess", "right"): Option("a reference, without braces, whose text is the right choice", "each choice's `when` decides",
                               "right: lily.argmax(her)"),
    ("guess", "answer"): Option("a sentence, with `{{ }}` references, that the verdict gives after the reader's choice", "required",
                                'answer: "It goes from {{ ab.clean }} to {{ ab.ablated(L2H3) }}."'),
    ("circuit", "head"): Option("a head, as `L4H4` (layer 4, head 4)", "required", "head: L4H4"),
    ("architecture", "here"): Option("a part or a list of up to 4: `embedding`, `unembedding`, `residual`, `heads`, a layer's heads "
                                     "(`L2`), a head (`L2H3`) or a layer's MLP (`MLP2`)", "nothing marked", "here: L2H3"),
    ("arrows", "stepper"): Option("the id of a stepper figure above on the page, whose vectors have 2 numbers", "required", "stepper: toy"),
    ("arrows", "show"): Option("`all`, `scores` (steps 1 to 3: query, keys, scores, shares) or `mixing` (steps 4 and 5: the values added up)",
                               "all: the five steps", "show: mixing"),
    ("score-split", "token"): Option(_TOKEN + "; the query, whose row the figure explains", "the last token", "token: her"),
    ("score-split", "key"): Option(_TOKEN + "; at or before `token`", "where the head looks most from `token`", "key: Lily"),
    ("score-split", "side"): Option("`key` (the key's parts, the query whole), `query` (the query's parts), or `table` "
                                    "(layer 1 of a learned-position model only: both, two by two; a rotary model has no "
                                    "position part to make a table of)", "key", "side: query"),
    ("rope-distance", "model"): Option("a model with rotary positions: `tiny-rope`", "tiny-rope", "model: tiny-rope"),
    ("rope-distance", "pick"): Option("`{best: <score kind>, rank: n}` (a rule by weights needs a trace this figure does not draw)",
                                      "none: give `layer` and `head`, or `pick`", "pick: {best: previous-token}"),
    ("rope-distance", "token"): Option(_TOKEN + "; the query", "the last token", "token: Sam"),
    ("rope-distance", "key"): Option(_TOKEN + "; at or before `token`", "the token just before `token`", "key: to"),
    ("kv-cache", "models"): Option("a list of the course's models (`tiny`, `tiny-rope`, `gpt2`) and the ids of "
                                   "generator/literature/open_models.yml (`llama-2-7b`, `mistral-7b`, …)",
                                   "every one of them, the course's first", "models: [tiny, tiny-rope, gpt2, llama-2-7b]"),
    ("kv-cache", "bytes"): Option("`2` (half precision, as models are usually run) or `4` (float32, as the course's models are stored)",
                                  "2", "bytes: 4"),
    ("masks", "tokens"): Option("a whole number from 3 to 16: the rows and columns of each grid", "8", "tokens: 6"),
    ("masks", "window"): Option("a whole number from 1 to one less than `tokens`: the tokens a query sees, itself included",
                                "3", "window: 2"),
    ("circuit", "kind"): Option("a score kind: `previous-token`, `duplicate-token`, `induction`, `sink`", "induction",
                                "kind: induction"),
}


def option(kind: str, name: str) -> Option | None:
    return BY_KIND.get((kind, name)) or OPTIONS.get(name)
