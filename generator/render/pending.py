"""The box of a figure whose sentences are not traced yet: what can be known without the model's
weights (the sentence's real tokens from the committed tokenizer, the grid's size from the model's
configuration) and one sentence for readers. What an author should do goes to the build log
(context.Missing.warning), never onto the page.

The same tokens check the figure before any trace exists: a sentence longer than the model's
context, a `token:` or `pick:` naming a token the sentence lacks, and a prose reference to a
pending figure naming a token, a position, a layer or a head it does not have are one-line errors
with or without a trace, worded as the traced figure words them (:func:`check_ref`)."""

from __future__ import annotations

import html as html_lib
from types import SimpleNamespace

from .. import tokens as tokenizer
from ..lessons.directives import Directive, parse_token_ref
from ..lessons.values import TokenRef
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..registry import config_facts
from . import templating
from .context import Ctx, Figure
from .ref_common import PENDING_REF, int_arg, ref_fail, token_arg
from .token_names import resolve_token, token_hits

READER_NAMES = {"gpt2": "GPT-2 small", "tiny": "the course's tiny model"}


def known_tokens(model: str, text: str) -> list[dict] | None:
    """The tokens a trace of `text` will have ({text, display}, as a trace holds them), or None
    without a committed tokenizer."""
    try:
        return [{"text": t.text, "display": t.display} for t in tokenizer.encode(model, text)]
    except tokenizer.NoTokenizer:
        return None


def reader_name(model: str) -> str:
    """A model as readers know it: 'GPT-2 small', 'the course's tiny model'."""
    return READER_NAMES.get(model, model)


def reader_names(models) -> str:
    """'GPT-2 small' or 'GPT-2 small and the course's tiny model', in the order given."""
    return " and ".join(reader_name(m) for m in dict.fromkeys(models))


def traces_note(models, again: bool = False, section: bool = False) -> str:
    """The note that stands in for a marked passage whose traces are missing (for readers); the
    short one (`again`) where the page has said so in full for the same models already; the
    section's one line (`section`) where a notice above says why (:func:`model_notice`)."""
    return templating.render("traces_note.html", names=reader_names(models), again=again, section=section)


def lacks_model(store, model: str) -> bool:
    """Whether this copy of the course was built without `model`: its trace store holds no trace
    of it at all (a copy built without the model's weights), not just a sentence not traced yet."""
    return store is not None and not store.entries(model)


def model_notice(models, whole_page: bool, figures: int) -> str:
    """The notice at the top of a page (or a section) whose every figure needs a model this copy
    lacks: what it shows here, and what a copy built with the weights adds."""
    return templating.render("model_notice.html", names=reader_names(models), whole_page=whole_page, figures=figures)


def nav_title(title: str) -> str:
    """A nav entry's title, marked for a page whose every figure needs a model this copy lacks
    (plain text: MkDocs and Zensical escape it)."""
    return html_lib.unescape(templating.render("nav_title.html", title=title)).strip()


def check_tokens(d: Directive, model: str, sentences: list[list[dict] | None], texts: list[str]) -> None:
    """What a trace would refuse, refused now: the context, the focus `token:`, a cell's `key:`
    (not after its token), the pick's tokens and a fixed head (pick.py, attention.focus_of,
    score_split and rope_distance word the same errors on a trace)."""
    facts = config_facts(model)
    for toks, text in zip(sentences, texts):
        if toks is not None and len(toks) > facts["nCtx"]:
            raise LessonError(d.where, f"{d.kind}: the sentence {text[:40]!r}… is {len(toks)} tokens, longer than {model}'s context of {facts['nCtx']} tokens", f"shorten the sentence to at most {facts['nCtx']} tokens")
    first = sentences[0]
    pick = getattr(d, "pick", None)
    if pick is not None and pick.rule == "fixed" and not (pick.layer <= facts["nLayer"] and pick.head <= facts["nHead"]):
        raise LessonError(d.where, f"{d.kind}: layer {pick.layer}, head {pick.head} is not in this trace ({facts['nLayer']} layers × {facts['nHead']} heads)", f"use a layer from 1 to {facts['nLayer']} and a head from 1 to {facts['nHead']}")
    if first is None:
        return
    query = len(first) - 1  # a figure's query token: the last unless `token:` names one
    if getattr(d, "token", None) is not None:
        query = resolve_token(d.token, first, d.where, f"{d.kind}: 'token'")
    key = getattr(d, "key", None)
    if isinstance(key, TokenRef):  # score-split, rope-distance: the cell's key (a stepper's key is a vector)
        k = resolve_token(key, first, d.where, f"{d.kind}: key")
        if k > query:
            raise LessonError(d.where, f"{d.kind}: key #{k} comes after token #{query}, and a token cannot look ahead",
                              "choose a key at or before the token")
    if pick is not None and pick.rule == "max-weight":
        src = resolve_token(pick.source, first, d.where, f"{d.kind}: pick.from")
        dst = resolve_token(pick.target, first, d.where, f"{d.kind}: pick.to")
        if dst > src:
            raise LessonError(d.where, f"{d.kind}: pick.to #{dst} comes after pick.from #{src}, and a token cannot look ahead", "swap from and to, or choose an earlier 'to' token")


def traces_pending(d: Directive, ctx: Ctx, model: str, texts: list[str]) -> str:
    every = list(getattr(d, "sentences", None) or [d.sentence])  # type: ignore[attr-defined]
    sentences = [known_tokens(model, t) for t in every]
    check_tokens(d, model, sentences, every)
    n = ctx.next_number()
    tracing = any(ctx.being_traced(model, t) for t in texts)  # `make serve` is tracing them: the page reloads soon
    ctx.register(d, Figure(d.kind, n, d, pending=True, numbers={"tokens": sentences, "tracing": tracing}))
    facts = config_facts(model)
    if tracing:
        return templating.render("tracing.html", n=n, kind=d.kind, model=model, reader_name=reader_name(model),
                                 sentences=[t for t in every if t in texts])
    shown = [{"text": t, "tokens": [x["display"] for x in toks] if toks else None} for t, toks in zip(every, sentences) if t in texts]
    for s in shown:  # a sentence's tokens are listed once a page: a later box links to that one
        if s["tokens"]:
            s["listed_in"] = ctx.tokens_listed.setdefault((model, s["text"]), n)
    return templating.render(
        "pending.html", n=n, kind=d.kind, model=model, reader_name=reader_name(model), sentences=shown,
        n_layer=facts["nLayer"], n_head=facts["nHead"],
    )


def scoreboard_pending(d: Directive, n: int, kinds: list[str]) -> str:
    """The box of a scoreboard without head scores: the model, its heads and the kinds, for readers."""
    facts = config_facts(d.model)  # type: ignore[attr-defined]
    return templating.render(
        "scoreboard_pending.html", n=n, model=d.model, reader_name=reader_name(d.model),  # type: ignore[attr-defined]
        kinds=", ".join(kinds), n_layer=facts["nLayer"], n_head=facts["nHead"],
    )


def check_ref(ref: Ref, fig: Figure, names: dict[str, tuple[int, int]]) -> str:
    """PENDING_REF for a reference to a pending figure, once its arguments are checked against
    what is known without the trace (the sentences' tokens, the model's layers and heads), as
    attention.ref and compare.ref check them on a trace. `names` is the figure kind's REFS."""
    if fig.kind == "scoreboard":
        return _check_scoreboard_ref(ref, fig)
    sentences = fig.numbers.get("tokens") or []
    if fig.kind not in ("attention", "compare") or not sentences or None in sentences:
        return PENDING_REF
    args, chosen = list(ref.args), [0, 0, 0]  # the sentence each token argument is looked up in
    if fig.kind == "compare":
        most = names[ref.name][1] - 1  # attention's most; one more names the sentence
        if ref.name == "compare" and len(args) == most:  # compare.sentence_with
            chosen = [0] + [_first_with(sentences, ref, args[0], a) for a in args[1:]]
        elif len(args) > most:
            chosen = [int_arg(ref, args.pop(), "sentence", 1, 2) - 1] * 3

    def pair(to: int, sentence: int) -> None:
        panel = SimpleNamespace(tokens=sentences[sentence])
        q, k = token_arg(ref, panel, args[0], "from"), token_arg(ref, panel, args[to], "to")
        if k > q:
            ref_fail(ref, f"#{k} comes after #{q}, and a token cannot look ahead", "name an earlier token second")

    if ref.name in ("weight", "score", "scaled", "moved", "headsfirst", "allheads"):
        pair(1, chosen[0])
    elif ref.name == "compare":
        pair(1, chosen[1])
        pair(2, chosen[2])
    elif ref.name in ("top", "argmax", "valuenorm", "othernorms"):
        q = token_arg(ref, SimpleNamespace(tokens=sentences[chosen[0]]), args[0], "token")
        if ref.name == "top" and len(args) > 1:
            int_arg(ref, args[1], "count", 1, q + 1)
    elif ref.name == "token":
        int_arg(ref, args[0].lstrip("#"), "position", 0, len(sentences[chosen[0]]) - 1)
    return PENDING_REF


def _first_with(sentences: list[list[dict]], ref: Ref, *names: str) -> int:
    """The first sentence holding every token of `names`, else sentence 1 (compare.sentence_with)."""
    for i, toks in enumerate(sentences):
        if all(token_hits(parse_token_ref(a, ref.where, "reference"), toks) for a in names):
            return i
    return 0


def _check_scoreboard_ref(ref: Ref, fig: Figure) -> str:
    kinds = fig.directive.scores  # type: ignore[attr-defined]
    if ref.args[0] not in kinds:
        ref_fail(ref, f"this scoreboard has no score '{ref.args[0]}'", f"use one of: {', '.join(kinds)}")
    facts = config_facts(fig.directive.model)  # type: ignore[attr-defined]
    if ref.name == "top" and len(ref.args) > 1:
        int_arg(ref, ref.args[1], "count", 1, facts["nLayer"] * facts["nHead"])
    if ref.name in ("score", "rank"):
        int_arg(ref, ref.args[1], "layer", 1, facts["nLayer"])
        int_arg(ref, ref.args[2], "head", 1, facts["nHead"])
    return PENDING_REF
