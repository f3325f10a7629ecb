"""The rendering stage: a parsed directive and the traces it names -> HTML (CONTRACT.md).

One module per figure kind, each with ``render(directive, ctx)``, the references it answers
(``REFS``: name -> (fewest, most) arguments) and ``ref(ref, figure)``; its HTML comes from
``templates/<kind>.html``. :data:`KINDS` is the registry. Nothing here reads Markdown or writes
files, and nothing imports torch. Every lesson mistake raises
:class:`generator.lessons.errors.LessonError` (one line: ``path:line: problem. Fix: remedy``).

References (tokens by text, `her` / `·her` / `' her'`, or by position `#6`; layers and heads
count from 1; weights have 2 decimals, the softmax widget's 3):

    attention   {{ id.layer }} {{ id.head }} {{ id.layer0 }} {{ id.head0 }} (0-based, for Code views)
                {{ id.weight(her, Lily) }} {{ id.score(her, Lily) }} {{ id.scaled(her, Lily) }}
                {{ id.top(her, 3) }} {{ id.argmax(her) }} {{ id.tokens }} {{ id.token(6) }}
                {{ id.rule }} {{ id.sentence }} {{ id.selfmean }} (average weight on oneself)
                {{ id.valuenorm(#0) }} (‖v W_O‖ of that token) {{ id.othernorms(#0) }} (the others'
                median) {{ id.moved(with, #0) }} (weight × valuenorm) {{ id.headsfirst(her, Lily) }}
                ("2 of the 16": heads whose largest weight from ·her is on Lily)
                {{ id.allheads(her, Lily) }} (that weight averaged over every head)
                {{ id.compare(her, Ben, Lily) }}: ·her's weight on Ben against its weight on Lily, in
                words: "more than", "less than", or "about the same as" when the two weights as shown
                (2 decimals) differ by less than 0.05 (render.attention.SAME_WITHIN)
    compare     the same, with the sentence (1 or 2) as an extra last argument, default 1:
                {{ id.weight(her, Ben, 2) }} {{ id.top(her, 3, 2) }}; without one, compare(her, Ben, Lily)
                takes each weight from the first sentence that has its token (Ben: 2, Lily: 1)
    stepper     {{ id.score(she, Lily) }} {{ id.scaled(she, Lily) }} {{ id.weight(she, Lily) }}
                {{ id.out(she) }} (a vector) {{ id.out(1) }} (entry 1 of the focus output)
                {{ id.sqrtd }} {{ id.tokens }} {{ id.dim }} (numbers per vector)
                {{ id.query(she) }} {{ id.key(she) }} {{ id.value(she) }} (vectors as given)
                {{ id.dot(she, Lily) }} (the dot product written out: "2 × 2 + 0 × 0")
    softmax     {{ id.weight(1) }} {{ id.exp(1) }} (by label, else by position; #1 always a position)
                {{ id.total }} (e^x and the total in scientific notation from 1e6, 1.97e+434)
    scoreboard  {{ id.top(induction, 3) }} {{ id.score(induction, 6, 6) }} {{ id.rank(induction, 6, 6) }}
                {{ id.chance(induction) }} (the score of a head spreading its attention evenly)
                {{ id.best(induction) }} (the highest score of that kind, alone)
    predictions {{ id.tokens }} {{ id.guess(with, 2) }} (the first guess after ·with in sentence 2, "·his 0.73")
    ablation    {{ id.clean }} {{ id.effect(L2H3) }} {{ id.ablated(L2H3) }} {{ id.others(L2H3) }} (the largest
                change of any other head) {{ id.top(3) }} {{ id.head(1) }} ("layer 2, head 3")
                {{ id.verdict(L2H3) }} ("carries most of" / "carries part of" / "carries a small part
                of" / "works against", from the share of the clean value removed: 0.5, 0.2, 0)
                {{ id.measure }} {{ id.token }}; each takes the ablation as a last argument (zero, mean);
                a verdict with none must be the same under every ablation the trace holds, else the
                build asks for a scoped one, {{ id.verdict(L2H3, zero) }}
    attribution {{ id.total }} {{ id.share(L2H3) }} {{ id.percent(MLP4) }} {{ id.top(3) }} {{ id.verdict(L2H3) }}
                {{ id.measure }} (parts: embedding, L1H1 …, MLP1 …, biases)
    patching    {{ id.clean(1) }} {{ id.effect(L2H3) }} {{ id.patched(L2H3) }} {{ id.top(3) }}
                {{ id.percent(L2H3) }} (of the gap between the sentences) {{ id.verdict(L2H3) }}
    lens        {{ id.guess(2, with) }} (the top guess after layer 2 at ·with; 0 is the embedding)
                {{ id.first(with, her) }} ("after layer 2": the first stage whose top guess is ·her)
    circuit     {{ id.score }} {{ id.without(L3H3) }} {{ id.without(L3H3, mean) }} {{ id.drop(3) }}
                {{ id.comp(q, L3H3) }} {{ id.baseline }} {{ id.loss(2) }} {{ id.losswithout(L3H3) }}
                {{ id.lossrise(4) }} {{ id.kindscore(L4H1) }} {{ id.kindscore(L3H3, duplicate-token) }}
                {{ id.kindtop(2) }} {{ id.topcomp(q, 1) }} {{ id.head }} {{ id.uniform }} (a uniform guess's loss)
                the robust test (circuits.json `robust`; a method: zero, mean, indist, resample; a repeat
                length, default 10; a number with its 95 % interval, "6.67 (6.03 to 7.50)"):
                {{ id.rise(L1H4, resample) }} {{ id.rloss(L3H3, zero, 40) }} {{ id.rclean(2) }} {{ id.rtop(3, resample) }}
                {{ id.rscore(L4H4, 40) }} {{ id.rtexts }} {{ id.rsources }} {{ id.rlengths }}
                {{ id.needs(L1H4) }} ("needs" / "does not need": only where two methods agree at every
                length, else the build asks for a scoped one) {{ id.needs(L3H3, zero) }} (scoped)
    tokens      {{ id.count(tiny) }} {{ id.count(gpt2, 2) }} (tokens of sentence 1, or 2)
                {{ id.pieces(gpt2, Lily) }} {{ id.split(gpt2, Lily) }} {{ id.id(tiny, Lily) }} (how a word is
                cut: how many pieces, the pieces, the first piece's id; a sentence number last)
                {{ id.vocab(gpt2) }} {{ id.eot(gpt2) }} (vocabulary size, <|endoftext|>'s id)
                {{ id.differ }} {{ id.differ(2) }} (words the two tokenizers cut differently) {{ id.sentences }}
    merges      {{ id.steps }} {{ id.start }} (tokens before the first merge) {{ id.rank(2) }}
                {{ id.pair(2) }} (step 2's merge and its rank in the merge list) {{ id.result }}
                {{ id.merges }} (merges in the list) {{ id.word }} {{ id.bytes }} (byte tokens: 256)
    embedding   {{ id.width }} {{ id.tokens }} {{ id.id(her) }} {{ id.position(her) }}
                {{ id.value(her, 3) }} {{ id.value(her, 3, token) }} (dimension 3 of the sum, or of the
                token or position row) {{ id.norm(her) }} {{ id.norm(her, sum) }} (length; default the token row)
    layernorm   {{ id.mean(before) }} {{ id.std(normalised) }} {{ id.min(after) }} {{ id.max(after) }}
                {{ id.value(after, 3) }} (the vector before, normalised, after) {{ id.token }} {{ id.width }}
                {{ id.position }}
    neighbours  {{ id.nearest(her) }} {{ id.nearest(her, 3) }} ("·she 0.61, ·his 0.52, …") {{ id.top(her) }}
                {{ id.cosine(her, his) }} {{ id.dot(her, his) }} {{ id.norm(her) }} {{ id.token(her) }}
                {{ id.k }} (neighbours shown per word)
    map         {{ id.count }} (tokens on the map) {{ id.explained(1) }} (the share of variance axis 1 holds)
                {{ id.x(her) }} {{ id.y(her) }} {{ id.close(her) }} {{ id.close(her, 3) }} (the marked word's
                nearest tokens on the map) {{ id.rule }} (which tokens the map shows)
    models      {{ model.gpt2.nLayer }} nHead width headDim nCtx nParams vocabSize revision hfName
                nHeads (layers × heads) sqrtHeadDim (2 decimals); the KV cache from the config: nKvHead
                kvShare (query heads per key/value head) kvNumbers kvNumbersUnshared (numbers kept per
                token) kvBytes kvContextBytes kvContextBytesUnshared (float32, as stored; a context of
                nCtx tokens) kvBytes16 kvContextBytes16 (at 16 bits): "4,096 bytes", "1.05 MB"
    training    {{ model.tiny.training.bitsPerChar }} natsPerToken (over all held-out stories) steps
                tokensSeen finalLoss validationLoss wallMinutes nParams trainStories validationStories
                source (the corpus files, "stories.txt and more-stories.txt");
                validationWindows validationTokens (what each logged validation loss, validationLoss
                the last, was measured on: the same windows of held-out text every time);
                bitsPerCharDedup natsPerTokenDedup dedupStories (over only the held-out stories that
                share no dedupNgram words in a row with a training story: `make evaluate-tiny`);
                repeatPercent randomPercent (the training windows that repeat a stretch, and that
                repeat random tokens); validationAt(500) ("4.29 at step 500");
                from the log's headScores:
                {{ model.tiny.training.headScore(induction) }} (last logged best score)
                {{ model.tiny.training.headStep(induction, 0.3) }} (first logged step reaching 0.3)
                {{ model.tiny.training.headChance(induction) }}
                {{ model.tiny.training.headScoreAt(induction, 750) }} ("0.83 at step 750", a logged step)
                {{ model.tiny.training.headJump(induction) }} ("from 0.15 at step 500 to 0.83 at step 750",
                the largest rise) headPeak(kind) ("0.90 at step 2,750") headLeaders(kind) ("layer 4,
                heads 1 and 4": every head that was the best)
    pronouns    {{ id.cases }} {{ id.names }} {{ id.templates }} {{ id.head }} {{ id.top }} (cases where the head
                is the one whose removal moves the difference most) {{ id.her(female) }} {{ id.her(male, clean) }}
                (cases of a group, female / male / all, that prefer ·her; mode zero, mean or clean)
                {{ id.flips }} {{ id.flips(mean) }} (cases that change side) {{ id.survive }} (templates where
                every female name keeps ·her) {{ id.turn }} (templates where a male name switches to ·her)
                {{ id.clean(hugged, Ben) }} {{ id.removed(hugged, Ben, mean) }} {{ id.tophead(hugged, Ben) }}
                (one case: a word only its template has, and a name)
    architecture, arrows: no references (a drawn diagram shows the model's config or a stepper's numbers)
    score-split {{ id.score }} {{ id.weight }} (the cell's) {{ id.share(position) }} {{ id.percent(L1H4) }}
                (a part's share of the score, and that as a percent; a table's parts query.key: position.position)
                {{ id.top(3) }} {{ id.largest }} (parts in words: "position of ·ball") {{ id.head }} {{ id.query }}
                {{ id.key }} {{ id.side }} {{ id.unrotated }} {{ id.rotation }} (a rotary model's: the cell's score
                with the rotation left out, and what the rotation adds to it)
    rope-distance {{ id.score }} {{ id.distance }} {{ id.apart }} ("1 token apart") {{ id.query }} {{ id.key }}
                {{ id.head }} {{ id.label }} {{ id.group }} {{ id.at(5) }} {{ id.meanAt(1) }} (the pair's / the
                head's mean score at a distance) {{ id.peak }} {{ id.peakWords }} {{ id.meanPeak }}
                {{ id.meanPeakWords }} {{ id.nearPeak }} {{ id.nearPeakWords }} (where the mean peaks within
                {{ id.longest }}, the farthest pair of the scoring sentences) {{ id.low }} {{ id.high }}
                {{ id.maxDistance }} {{ id.sentences }}; the model's shape: {{ id.theta }} {{ id.headDim }}
                {{ id.pairs }} {{ id.queryHeads }} {{ id.kvHeads }} {{ id.perGroup }} {{ id.layers }}
                {{ id.kept }} {{ id.keptWithout }} (numbers a token keeps for its keys and values, shared / unshared)
    kv-cache    {{ id.perToken(llama-2-7b) }} {{ id.context(m) }} {{ id.unshared(m) }} (bytes, at the figure's
                precision: per token, for the longest text, and with one key/value head per query head)
                {{ id.numbers(m) }} (numbers kept per token) {{ id.tokens(m) }} {{ id.window(m) }} {{ id.share(m) }}
                (query heads per key/value head) {{ id.layers(m) }} {{ id.heads(m) }} {{ id.kvHeads(m) }}
    masks       {{ id.tokens }} {{ id.window }}
    page        {{ page.minutes }} {{ page.words }} (generator/markdown/lesson.py)
"""

from __future__ import annotations

import re
from types import ModuleType

from ..lessons.directives import DIRECTIVE_KINDS, Directive
from ..lessons.refs import Ref
from . import attention, compare, model_refs as models, pending, predictions, scoreboard, softmax, stepper, training_figure as training
from . import embedding, layernorm, merges, neighbours, token_split, vector_map  # chapters 1 and 2
from . import ablation, attribution, circuit, lens, patching, pronouns  # the causal chapter
from . import architecture, arrows  # the drawn diagrams
from . import guess  # a "Guess first" question's choices
from . import score_split  # why a head looks where it looks
from . import rope_distance  # position by rotation
from . import kv_cache, masks  # what a model keeps while it writes, and which keys a query sees
from .context import Ctx
from .ref_common import check_arity, ref_fail

KINDS: dict[str, ModuleType] = {
    "attention": attention,
    "compare": compare,
    "stepper": stepper,
    "softmax": softmax,
    "scoreboard": scoreboard,
    "training": training,
    "predictions": predictions,
    "tokens": token_split,  # chapter 1
    "merges": merges,
    "embedding": embedding,  # chapter 2
    "layernorm": layernorm,
    "neighbours": neighbours,
    "map": vector_map,
    "ablation": ablation,  # the causal chapter
    "attribution": attribution,
    "patching": patching,
    "lens": lens,
    "circuit": circuit,
    "pronouns": pronouns,
    "architecture": architecture,  # the drawn diagrams
    "arrows": arrows,
    "guess": guess,
    "score-split": score_split,
    "rope-distance": rope_distance,
    "kv-cache": kv_cache,
    "masks": masks,
}
assert set(KINDS) == set(DIRECTIVE_KINDS), "every directive kind has one renderer"


def render(d: Directive, ctx: Ctx) -> str:
    """HTML of one directive. Raises LessonError on lesson mistakes."""
    return KINDS[d.kind].render(d, ctx)


def render_ref(ref: Ref, ctx: Ctx) -> str:
    """HTML for one `{{ ... }}` reference, from the figures already rendered on the page."""
    if ref.target == "model":
        return models.ref(ref, ctx)
    fig = ctx.figures.get(ref.target)
    if fig is None and ref.target == "page":  # the lesson extension fills these in before any figure is read
        ref_fail(ref, "it is filled in by the lesson extension, which mkdocs.yml does not load",
                 "add `- generator.markdown.lesson` under markdown_extensions in mkdocs.yml, as the repository's does")
    if fig is None:
        known = ", ".join(sorted(ctx.figures)) or "none"
        ref_fail(ref, f"no figure with id '{ref.target}' on this page (ids here: {known})", "give the figure `id: " + ref.target + "` or use one of the ids above")
    module = KINDS[fig.kind]
    check_arity(ref, fig.kind, module.REFS, module.ARGS)
    if fig.pending:  # its arguments checked against the tokens known without the trace
        return pending.check_ref(ref, fig, module.REFS)
    out = module.ref(ref, fig)
    if fig.kind in CAUSAL_KINDS:  # the heads this number is about back the jobs figures name
        ctx.causal_heads.update(heads_named(" ".join(ref.args) + " " + str(out)))
        if fig.kind == "circuit":
            ctx.causal_heads.add(f"L{fig.layer + 1}H{fig.head + 1}")
    return out


CAUSAL_KINDS = ("ablation", "attribution", "patching", "circuit")
_HEAD_NAME = re.compile(r"\bL(\d+)H(\d+)\b|\blayer (\d+), head (\d+)")


def heads_named(text: str) -> set[str]:
    """Every head a text names, as L2H3 or as 'layer 2, head 3'."""
    return {f"L{m[1] or m[3]}H{m[2] or m[4]}" for m in _HEAD_NAME.finditer(text)}


def untested_jobs(ctx: Ctx) -> list[tuple[str, str, str]]:
    """The heads that figures on the page name for a job (`pick: {best: kind}`, a scoreboard's
    examples) with no causal number about them on the page, but for figures marked
    `pattern-only: true`, which tell the reader so."""
    return [j for j in ctx.job_heads if j[2] not in ctx.causal_heads and j[0] not in ctx.pattern_only]
