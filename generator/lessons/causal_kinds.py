"""The causal chapter's directive kinds: what removing, swapping or reading off a head does, from
the `causal` block of each trace and the model's circuits.json / patching.json (generator/model/causal.py).

    ```ablation
    model: tiny
    sentence: "Lily wanted to play with"
    token: with              # the position whose next-token prediction is measured; default: the last
    targets: [her, his]      # two: logit(her) − logit(his); one: log P(her); none: the KL divergence
    ablation: zero           # zero (default) | mean: what replaces the removed head's output
    grid: lily               # optional: an attention figure above; each head's cell opens it there
    id: ab
    ```

    ```attribution
    model: tiny
    sentence: "Lily wanted to play with"
    token: with
    targets: [her, his]      # one or two tokens
    id: dla
    ```

    ```patching
    model: tiny
    sentences: ["Lily wanted to play with", "Ben wanted to play with"]   # same number of tokens
    token: with
    targets: [her, his]      # exactly two: the logit difference that is measured
    id: patch
    ```

    ```lens
    model: tiny
    sentence: "Lily wanted to play with"
    guesses: 1               # top guesses per cell, 1 to 5
    id: lens
    ```

    ```circuit
    model: tiny
    head: L4H4               # the head whose inputs are shown (layer and head counting from 1)
    kind: induction          # the score kind measured with each earlier head removed
    ablation: zero           # the mode its references read when they name none (the table shows both)
    id: circ
    ```

    ```pronouns
    model: tiny
    ablation: zero           # zero (default) | mean: how the sweep's head is removed in the cells
    id: sweep
    ```

A `pronouns` figure reads traces/<model>/pronouns.json (generator/model/pronoun_sweep.py): the
her/his test over a recorded set of names × templates, one head removed.

A target names a token of the vocabulary, not of the sentence: `her` is " her" (`·her`), and
`make traces` follows it in the sentence's trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..registry import KINDS as SCORE_KINDS
from ..registry import MODELS
from ..schema import LENS_K
from .body import show
from .errors import fail as _fail
from .values import Directive, TokenRef, int_option, model_option, sentence_option, text_option, token_option

ABLATIONS = ("zero", "mean")
HEAD_RE = re.compile(r"^L(\d+)H(\d+)$")


@dataclass(frozen=True)
class Ablation(Directive):
    model: str = ""
    sentence: str = ""
    token: TokenRef | None = None
    targets: tuple[str, ...] = ()
    ablation: str = "zero"
    grid: str | None = None
    caption: str | None = None


@dataclass(frozen=True)
class Attribution(Directive):
    model: str = ""
    sentence: str = ""
    token: TokenRef | None = None
    targets: tuple[str, ...] = ()
    caption: str | None = None


@dataclass(frozen=True)
class Patching(Directive):
    model: str = ""
    sentences: tuple[str, str] = ("", "")
    token: TokenRef | None = None
    targets: tuple[str, str] = ("", "")
    caption: str | None = None


@dataclass(frozen=True)
class Lens(Directive):
    model: str = ""
    sentence: str = ""
    guesses: int = 1
    caption: str | None = None


@dataclass(frozen=True)
class Circuit(Directive):
    model: str = ""
    layer: int = 1  # 1-based
    head: int = 1  # 1-based
    score: str = "induction"
    ablation: str = "zero"
    caption: str | None = None


@dataclass(frozen=True)
class Pronouns(Directive):
    model: str = ""
    ablation: str = "zero"
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "ablation": ({"model", "sentence", "token", "targets", "ablation", "grid", "id", "caption"}, {"model", "sentence"}),
    "attribution": ({"model", "sentence", "token", "targets", "id", "caption"}, {"model", "sentence", "targets"}),
    "patching": ({"model", "sentences", "token", "targets", "id", "caption"}, {"model", "sentences", "targets"}),
    "lens": ({"model", "sentence", "guesses", "id", "caption"}, {"model", "sentence"}),
    "circuit": ({"model", "head", "kind", "ablation", "id", "caption"}, {"model", "head"}),
    "pronouns": ({"model", "ablation", "id", "caption"}, {"model"}),
}


def targets_option(value: Any, where: str, kind: str, lo: int, hi: int) -> tuple[str, ...]:
    """A list of lo to hi token names (`her`, `·her`); checked against the vocabulary at render."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not lo <= len(value) <= hi or not all(isinstance(t, str) and t.strip() for t in value):
        want = f"{lo} to {hi}" if lo != hi else str(lo)
        _fail(where, f"{kind}: 'targets' must be a list of {want} token names, not {show(value)}", "write `targets: [her, his]`")
    names = tuple(t if t.startswith(" ") else t.strip() for t in value)
    if len(set(names)) != len(names):
        _fail(where, f"{kind}: 'targets' names the same token twice", "name two different tokens")
    return names


def ablation_option(value: Any, where: str, kind: str) -> str:
    if value not in ABLATIONS:
        _fail(where, f"{kind}: 'ablation' must be one of {', '.join(ABLATIONS)}, not {show(value)}",
              "write `ablation: zero` (the head adds nothing) or `ablation: mean` (it adds its average output)")
    return value


def head_option(value: Any, model: str, where: str, kind: str) -> tuple[int, int]:
    m = HEAD_RE.match(value) if isinstance(value, str) else None
    if not m:
        _fail(where, f"{kind}: 'head' must name a head like L4H4 (layer 4, head 4, counting from 1), not {show(value)}", "write `head: L4H4`")
    layer, head = int(m[1]), int(m[2])
    spec = MODELS[model]
    if not (1 <= layer <= spec.n_layer and 1 <= head <= spec.n_head):
        _fail(where, f"{kind}: head {value} is not in {model}, which has layers 1 to {spec.n_layer} of heads 1 to {spec.n_head}",
              f"name a head from L1H1 to L{spec.n_layer}H{spec.n_head}")
    return layer, head


def _token(data, where, kind):
    return token_option(data["token"], where, kind, "token") if "token" in data else None


def parse_ablation(data: dict, common: dict, where: str) -> Ablation:
    kind = "ablation"
    grid = data.get("grid")
    if grid is not None and not (isinstance(grid, str) and re.fullmatch(r"[a-z][a-z0-9_-]*", grid)):
        _fail(where, f"ablation: 'grid' must be the id of an attention figure, not {show(grid)}", "write `grid: lily`")
    return Ablation(
        **common,
        model=model_option(data["model"], where, kind),
        sentence=sentence_option(data["sentence"], where, kind),
        token=_token(data, where, kind),
        targets=targets_option(data["targets"], where, kind, 0, 2) if "targets" in data else (),
        ablation=ablation_option(data.get("ablation", "zero"), where, kind),
        grid=grid,
        caption=text_option(data.get("caption"), where, kind, "caption"),
    )


def parse_attribution(data: dict, common: dict, where: str) -> Attribution:
    kind = "attribution"
    return Attribution(
        **common,
        model=model_option(data["model"], where, kind),
        sentence=sentence_option(data["sentence"], where, kind),
        token=_token(data, where, kind),
        targets=targets_option(data["targets"], where, kind, 1, 2),
        caption=text_option(data.get("caption"), where, kind, "caption"),
    )


def parse_patching(data: dict, common: dict, where: str) -> Patching:
    kind = "patching"
    sentences = data["sentences"]
    if not isinstance(sentences, list) or len(sentences) != 2:
        _fail(where, "patching: 'sentences' must be a list of exactly two sentences",
              'write `sentences: ["the sentence patched into", "the sentence the head outputs come from"]`')
    return Patching(
        **common,
        model=model_option(data["model"], where, kind),
        sentences=tuple(sentence_option(s, where, kind) for s in sentences),
        token=_token(data, where, kind),
        targets=targets_option(data["targets"], where, kind, 2, 2),
        caption=text_option(data.get("caption"), where, kind, "caption"),
    )


def parse_lens(data: dict, common: dict, where: str) -> Lens:
    kind = "lens"
    guesses = int_option(data.get("guesses", 1), where, kind, "guesses")
    if not 1 <= guesses <= LENS_K:
        _fail(where, f"lens: 'guesses' must be from 1 to {LENS_K}, not {guesses}", "write `guesses: 1`")
    return Lens(**common, model=model_option(data["model"], where, kind), sentence=sentence_option(data["sentence"], where, kind),
                guesses=guesses, caption=text_option(data.get("caption"), where, kind, "caption"))


def parse_circuit(data: dict, common: dict, where: str) -> Circuit:
    kind = "circuit"
    model = model_option(data["model"], where, kind)
    layer, head = head_option(data["head"], model, where, kind)
    if layer == 1:
        _fail(where, f"circuit: head L1H{head} is in the first layer, so no earlier head can feed it", "name a head of layer 2 or later")
    score = data.get("kind", "induction")
    if score not in SCORE_KINDS:
        _fail(where, f"circuit: unknown score kind {show(score)}", f"use one of: {', '.join(SCORE_KINDS)}")
    return Circuit(**common, model=model, layer=layer, head=head, score=score,
                   ablation=ablation_option(data.get("ablation", "zero"), where, kind),
                   caption=text_option(data.get("caption"), where, kind, "caption"))


def parse_pronouns(data: dict, common: dict, where: str) -> Pronouns:
    kind = "pronouns"
    return Pronouns(**common, model=model_option(data["model"], where, kind),
                    ablation=ablation_option(data.get("ablation", "zero"), where, kind),
                    caption=text_option(data.get("caption"), where, kind, "caption"))


BUILDERS = {
    "ablation": parse_ablation,
    "attribution": parse_attribution,
    "patching": parse_patching,
    "lens": parse_lens,
    "circuit": parse_circuit,
    "pronouns": parse_pronouns,
}


def sentences(d: Directive) -> list[tuple[str, str]]:
    """(model, sentence) pairs a causal figure needs traced."""
    if isinstance(d, (Ablation, Attribution, Lens)):
        return [(d.model, d.sentence)]
    if isinstance(d, Patching):
        return [(d.model, s) for s in d.sentences]
    return []


def targets(d: Directive) -> list[tuple[str, str, tuple[str, ...]]]:
    """(model, sentence, target names) the traces must follow for this figure."""
    if isinstance(d, (Ablation, Attribution)) and d.targets:
        return [(d.model, d.sentence, d.targets)]
    if isinstance(d, Patching):
        return [(d.model, s, d.targets) for s in d.sentences]
    return []
