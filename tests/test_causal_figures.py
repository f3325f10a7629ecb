"""The causal figures (ablation, attribution, patching, lens, circuit) built from the committed
tiny traces: what they and their references print is what the stored numbers say; the conclusion
words follow the numbers; a figure that names a head for a job needs a causal number about it;
their mistakes are one line each."""

from __future__ import annotations

import inspect
import re
import shutil

import numpy as np
import pytest
from conftest import REPO, run_build, unbound, write_project

from generator.store import circuits_file
from generator import heads, tokens
from generator.render import causal_data
from generator.store import TraceStore

LILY = "Lily wanted to play with"
BEN = "Ben wanted to play with"

FIGURES = f'''# Causal

```attention
model: tiny
sentence: "{LILY}"
layer: 2
head: 3
id: grid
```

```ablation
model: tiny
sentence: "{LILY}"
targets: [her, his]
grid: grid
id: ab
```

Clean {{{{ ab.clean }}}}; without L2H3 {{{{ ab.ablated(L2H3) }}}} ({{{{ ab.effect(L2H3) }}}}, mean
{{{{ ab.effect(L2H3, mean) }}}}); the head {{{{ ab.verdict(L2H3) }}}} it; top {{{{ ab.top(2) }}}};
others at most {{{{ ab.others(L2H3) }}}}.

```attribution
model: tiny
sentence: "{LILY}"
targets: [her, his]
id: dla
```

Share {{{{ dla.share(L2H3) }}}} of {{{{ dla.total }}}} ({{{{ dla.percent(L2H3) }}}}).

```patching
model: tiny
sentences: ["{LILY}", "{BEN}"]
targets: [her, his]
id: patch
```

Patched {{{{ patch.patched(L2H3) }}}}, {{{{ patch.percent(L2H3) }}}} of the gap.

```patching
model: tiny
sentences: ["{BEN}", "{LILY}"]
targets: [her, his]
id: back
```

Back: {{{{ back.percent(L2H3) }}}} of the way.

```lens
model: tiny
sentence: "{LILY}"
id: lens
```

Lens {{{{ lens.guess(2, with) }}}}, first {{{{ lens.first(with, her) }}}}.

```circuit
model: tiny
head: L4H4
kind: induction
id: circ
```

Without L3H3 {{{{ circ.without(L3H3) }}}}, loss {{{{ circ.losswithout(L3H3) }}}}, comp {{{{ circ.comp(q, L3H3) }}}}.
Uniform {{{{ circ.uniform }}}}; mean loss {{{{ circ.losswithout(L3H3, mean) }}}}.

```ablation
model: tiny
sentence: "{LILY}"
id: abkl
```

KL without L2H3 {{{{ abkl.effect(L2H3) }}}}; most {{{{ abkl.top(1) }}}}.

```attention
model: tiny
sentence: "{LILY}"
layer: 4
head: 1
id: sink
```

Moved {{{{ sink.moved(with, #0) }}}}.

```ablation
model: tiny
sentence: "{LILY}"
targets: [her]
id: abher
```

Log P {{{{ abher.clean }}}}, without L2H3 {{{{ abher.ablated(L2H3) }}}}.

```attribution
model: tiny
sentence: "{LILY}"
targets: [her]
id: dlaher
```

One target: {{{{ dlaher.measure }}}} is {{{{ dlaher.total }}}}.
'''


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("causal")
    write_project(root, {"causal.md": FIGURES})
    shutil.rmtree(root / "traces")
    shutil.copytree(REPO / "traces", root / "traces")
    built = run_build(root)
    assert built.ok, built.log
    return root, built


def text_of(html: str) -> str:
    html = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    html = unbound(html)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def stored(root, text):
    return TraceStore(root / "traces").load("tiny", text)


def ids(*names):
    return [tokens.vocab_token("tiny", n).id for n in names]


def test_ablation_numbers_are_the_stored_ones(course):
    root, built = course
    page = text_of(built.html("causal.md"))
    c = stored(root, LILY)["causal"]
    pos = len(c["followed"]) - 1
    her, his = (int(np.flatnonzero(c["followed"][pos] == i)[-1]) for i in ids("her", "his"))
    clean = c["cleanLogit"][pos, her] - c["cleanLogit"][pos, his]
    m = c["ablations"].index("zero")
    effect = c["dLogit"][m, 1, 2, pos, her] - c["dLogit"][m, 1, 2, pos, his]
    sign = lambda x: f"{x:+.2f}".replace("-", "\u2212")  # noqa: E731
    assert f"Clean {sign(clean)}; without L2H3 {sign(clean + effect)} ({sign(effect)}," in page
    assert "the head carries most of it" in page, "removing it takes away more than half of the clean value"
    # every cell of the grid is the stored change, and links to the head in the attention figure
    grid = built.html("causal.md").split('data-kind="ablation"')[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>(?:<a href=\"([^\"]+)\"[^>]*>)?([^<]+)", grid)
    assert len(cells) == 16
    want = c["dLogit"][m, :, :, pos, her] - c["dLogit"][m, :, :, pos, his]
    assert [t for _, t in cells] == [sign(x) if sign(x) not in ("+0.00", "\u22120.00") else "0.00" for x in want.ravel()]
    assert cells[6][0] == f"#fig-1:layer=2,head=3,token={pos}"


def test_attribution_parts_add_up_on_the_page(course):
    root, built = course
    fig = built.html("causal.md").split('data-kind="attribution"')[1].split("</figure>")[0]
    shares = [float(x.replace("\u2212", "-")) for x in re.findall(r'<td style="[^"]*">([^<]+)</td>', fig)]
    total = float(re.search(r"Sum</th><td>([^<]+)</td>", fig)[1].replace("\u2212", "-"))
    assert len(shares) == 1 + 16 + 4 + 1
    assert abs(sum(shares) - total) <= 0.005 * len(shares), "each share is rounded to 2 decimals"


def test_a_one_target_attribution_splits_the_logit_and_says_so(course):
    """Direct shares add up to a logit, not to a log-probability: a one-target figure names its
    measure logit(·her), and its total is the clean run's logit of ·her."""
    root, built = course
    fig = built.html("causal.md").split('data-kind="attribution"')[2].split("</figure>")[0]
    c = stored(root, LILY)["causal"]
    pos = 5
    her = int(np.flatnonzero(np.asarray(c["followed"][pos]) == ids("her")[0])[-1])
    logit = f"{c['cleanLogit'][pos, her]:.2f}".replace("-", "\u2212")
    assert f"logit(\u00b7her) is {logit}" in text_of(fig)
    assert "log P" not in text_of(fig)
    assert f"One target: logit(\u00b7her) is {logit}." in text_of(built.html("causal.md"))


def test_patching_and_lens_and_circuit_read_their_files(course):
    root, built = course
    page = text_of(built.html("causal.md"))
    store = TraceStore(root / "traces")
    pair = circuits_file.find_pair(store, "tiny", LILY, BEN, ids("her", "his"), 6, 4, 4)
    pos = 5
    a = pair["cleanA"][pos, 0] - pair["cleanA"][pos, 1]
    b = pair["cleanB"][pos, 0] - pair["cleanB"][pos, 1]
    p = pair["patched"][1, 2, pos, 0] - pair["patched"][1, 2, pos, 1]
    assert f"Patched {p:+.2f}".replace("-", "\u2212") in page
    assert f"{round(100 * (p - a) / (b - a))}% of the gap" in page  # rounded once, from the exact numbers
    back = circuits_file.find_pair(store, "tiny", BEN, LILY, ids("her", "his"), 6, 4, 4)
    gap = lambda lg: lg[pos, 0] - lg[pos, 1]  # noqa: E731
    share = (back["patched"][1, 2, pos, 0] - back["patched"][1, 2, pos, 1] - gap(back["cleanA"])) / (gap(back["cleanB"]) - gap(back["cleanA"]))
    assert f"Back: {round(100 * share)}% of the way" in page  # 89.52 %: 90%, where 10.99 / 12.28 as shown gives 89%
    c = stored(root, LILY)["causal"]
    guess = c["tokenTexts"][str(int(c["lensIds"][2, pos, 0]))]
    assert f"Lens {guess.replace(' ', '·', 1) if guess.startswith(' ') else guess} {c['lensProbs'][2, pos, 0]:.2f}" in page
    circ = circuits_file.load_circuits(store, "tiny", tuple(heads.KINDS), 4, 4)
    k = circ["kinds"].index("induction")
    assert f"Without L3H3 {circ['ablatedScores'][0, 10, k, 3, 3]:.2f}, loss {circ['iclAblated'][0, 10, 1]:.2f}" in page


def test_the_circuit_table_gives_both_ablations_losses_and_the_uniform_guess(course):
    root, built = course
    page = text_of(built.html("causal.md"))
    circ = circuits_file.load_circuits(TraceStore(root / "traces"), "tiny", tuple(heads.KINDS), 4, 4)
    from generator.registry import config_facts
    assert f"Uniform {np.log(config_facts('tiny')['vocabSize']):.2f}; mean loss {circ['iclAblated'][1, 10, 1]:.2f}." in page
    table = built.html("causal.md").split('data-kind="circuit"')[1].split("</table>")[0]
    assert re.findall(r'<th scope="col">Loss, second copy \((\w+)\)</th>', table) == list(circ["ablations"])
    row = re.search(r'<th scope="row">L3H3</th>((?:<td>[^<]*</td>)+)</tr>', table)[1]
    cells = re.findall(r"<td>([^<]*)</td>", row)
    want = [circ["ablatedScores"][m, 10, circ["kinds"].index("induction"), 3, 3] for m in range(2)] + [circ["iclAblated"][m, 10, 1] for m in range(2)]
    assert cells[:4] == [f"{x:.2f}" for x in want]


def test_a_kl_grid_is_the_distance_itself_unsigned_and_says_which_way(course):
    root, built = course
    page = text_of(built.html("causal.md"))
    c = stored(root, LILY)["causal"]
    kl = c["kl"][c["ablations"].index("zero"), :, :, -1]
    assert f"KL without L2H3 {kl[1, 2]:.2f};" in page and "KL without L2H3 +" not in page
    fig = built.html("causal.md").split('data-kind="ablation"')[2].split("</figure>")[0]
    assert "KL(clean ‖ ablated)" in fig and "change in the KL" not in text_of(fig)
    cells = re.findall(r"<td[^>]*>([^<]+)</td>", fig.split("</table>")[0])
    assert cells == [f"{x:.2f}" for x in kl.ravel()]


def test_what_a_sink_moves_is_the_exact_weight_times_the_value_size(course):
    root, built = course
    t = stored(root, LILY)
    w = np.asarray(t["layers"][3]["heads"][0]["weights"], dtype=float)
    norm = t["causal"]["valueNorms"][3, 0, 0]
    assert f"Moved {w[5, 0] * norm:.2f}." in text_of(built.html("causal.md"))


def test_a_log_probability_has_a_true_minus_like_the_signed_numbers_beside_it(course):
    root, built = course
    c = stored(root, LILY)["causal"]
    pos = len(c["followed"]) - 1
    her = int(np.flatnonzero(c["followed"][pos] == ids("her")[0])[-1])
    clean, m = c["cleanLogprob"][pos, her], c["ablations"].index("zero")
    minus = lambda x: f"{x:.2f}".replace("-", "\u2212")  # noqa: E731
    page = text_of(built.html("causal.md"))
    assert f"Log P {minus(clean)}, without L2H3 {minus(clean + c['dLogprob'][m, 1, 2, pos, her])}." in page
    fig = built.html("causal.md").split('data-kind="ablation"')[3].split("</figure>")[0]
    summary = text_of(re.search(r'<p class="course-summary">.*?</p>', fig, re.S)[0])
    assert f"is {minus(clean)}." in summary and "-" not in summary


@pytest.mark.parametrize("removed, whole, words", [
    (6.0, 7.32, "carries most of"), (3.66, 7.32, "carries most of"), (3.65, 7.32, "carries part of"),
    (1.47, 7.32, "carries part of"), (0.10, 7.32, "carries a small part of"), (-0.5, 7.32, "works against"),
    (-1.5, -4.0, "carries part of"), (-2.0, -4.0, "carries most of"), (0.0, 0.0, "carries a small part of"),
])
def test_conclusion_words_follow_the_numbers_as_shown(removed, whole, words):
    assert causal_data.verdict(removed, whole) == words


def test_signed_cells_keep_their_text_readable():
    from generator.render.format import contrast_ratio

    for x in (-1.0, -0.8, 0.6, 1.0):
        style = causal_data.signed_style(x, 1.0)
        bg = tuple(int(style.split("#")[1][i:i + 2], 16) for i in (0, 2, 4))
        fg = (0, 0, 0) if "color:#000" in style else (255, 255, 255)
        assert contrast_ratio(bg, fg) >= 4.5, style
    assert "rgba(" in causal_data.signed_style(0.1, 1.0) and "color" not in causal_data.signed_style(0.1, 1.0)


JOB_PAGE = '''# Jobs

```attention
model: tiny
sentence: "Lily wanted to play with her"
pick: {best: previous-token}
id: prev
```

The head at layer {{ prev.layer }}.
'''


def _build(tmp_path, text):
    write_project(tmp_path, {"jobs.md": text})
    shutil.rmtree(tmp_path / "traces")
    shutil.copytree(REPO / "traces", tmp_path / "traces")
    return run_build(tmp_path)


def test_a_head_named_for_a_job_needs_a_causal_number_on_its_page(tmp_path):
    built = _build(tmp_path, JOB_PAGE)
    assert not built.ok
    line = [ln for ln in built.log.splitlines() if "names L1H4 for a job" in ln]
    assert line and "content/jobs.md:3:" in line[0] and "Traceback" not in built.log


def test_saying_it_is_only_a_pattern_in_words_is_no_longer_enough(tmp_path):
    """The magic phrase is gone: the page must mark the figure, and the fix says how."""
    built = _build(tmp_path, JOB_PAGE + "\nThis grid is only a pattern.\n")
    assert not built.ok
    line = next(ln for ln in built.log.splitlines() if "names L1H4 for a job" in ln)
    assert "Fix: add `pattern-only: true` to the figure" in line and "only a pattern" not in line.split("Fix:")[0]


def test_pattern_only_prints_a_fixed_sentence_in_the_figure_and_passes(tmp_path):
    built = _build(tmp_path, JOB_PAGE.replace("id: prev\n", "pattern-only: true\nid: prev\n"))
    assert built.ok, built.log
    html = built.html("jobs.md")
    figure = html[html.index('data-kind="attention"'):html.index("</figure>")]
    caption = figure[figure.index("<figcaption"):figure.index("</figcaption>")]
    note = re.findall(r'<span class="course-pattern-only">(.*?)</span>', caption)
    assert note == ["<strong>Only a pattern:</strong> this head was picked by its score, and a score shows where a head looks, not what it does."]
    assert "course-pattern-only" not in _build(tmp_path, JOB_PAGE + "\n```ablation\nmodel: tiny\n"
                                               f'sentence: "{LILY}"\nid: ab\n```\n\n{{{{ ab.effect(L1H4) }}}}\n').html("jobs.md")


def test_make_check_finds_an_untested_job_as_the_build_does(tmp_path):
    """`make check` draws no figure; it must still refuse what the build refuses."""
    import subprocess
    import sys

    _build(tmp_path, JOB_PAGE)
    out = subprocess.run([sys.executable, "-m", "generator", "check", "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    assert "content/jobs.md:3: this figure names L1H4 for a job" in out.stderr
    (tmp_path / "content" / "jobs.md").write_text(JOB_PAGE.replace("id: prev\n", "pattern-only: true\nid: prev\n"), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "generator", "check", "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("body, problem", [
    ("layer: 1\nhead: 4\npattern-only: true",
     "attention: 'pattern-only' says the head a figure picked for a job is only a pattern, and this figure picks no head for a job"),
    ("pick: {best: previous-token}\npattern-only: yes please", "attention: 'pattern-only' must be true or false, not 'yes please'"),
])
def test_pattern_only_is_refused_where_it_says_nothing_true(body, problem):
    """At its own line (the fence is line 3; the option is the body's last line)."""
    from generator.lessons.directives import parse_directive
    from generator.lessons.errors import LessonError

    text = f'model: tiny\nsentence: "{LILY}"\n{body}\n'
    with pytest.raises(LessonError) as e:
        parse_directive("attention", text, "content/jobs.md:3")
    assert e.value.problem == problem
    assert e.value.where == f"content/jobs.md:{3 + len(text.splitlines())}"


def test_a_causal_number_about_that_head_is_enough(tmp_path):
    page = JOB_PAGE + f'''
```ablation
model: tiny
sentence: "{LILY}"
id: ab
```

Removing it moves the prediction by {{{{ ab.effect(L1H4) }}}}.
'''
    built = _build(tmp_path, page)
    assert built.ok, built.log
    other = page.replace("ab.effect(L1H4)", "ab.effect(L2H2)")
    assert not _build(tmp_path, other).ok, "a number about another head does not test this one"


# (kind, body, message, the line of the option it names or 0 for the fence)
MISTAKES = [
    ("ablation", f'sentence: "{LILY}"\ntargets: [her, his, him]', "ablation: 'targets' must be a list of 0 to 2 token names", 6),
    ("ablation", f'sentence: "{LILY}"\nablation: half', "ablation: 'ablation' must be one of zero, mean, not 'half'", 6),
    ("ablation", f'sentence: "{LILY}"\ntargets: [xqzvw]', "ablation: targets: 'xqzvw' is not one token of tiny's vocabulary", 6),
    ("attribution", f'sentence: "{LILY}"', "attribution: missing option 'targets'", 0),
    ("patching", f'sentences: ["{LILY}", "Ben wanted to play"]\ntargets: [her, his]', "patching: the two sentences are 6 and 5 tokens", 5),
    ("lens", f'sentence: "{LILY}"\nguesses: 9', "lens: 'guesses' must be from 1 to 5, not 9", 6),
    ("circuit", "head: L9H1", "circuit: head L9H1 is not in tiny, which has layers 1 to 4 of heads 1 to 4", 5),
    ("circuit", "head: L1H2", "circuit: head L1H2 is in the first layer", 5),
    ("circuit", "head: L4H4\nkind: copying", "circuit: unknown score kind 'copying'", 6),
    ("ablation", f'sentence: "{LILY}"\ntargets: [her, " her"]', "ablation: 'targets' names the same token twice ('her' and ' her' are both ·her)", 6),
    ("patching", f'sentences: ["{LILY}", "{BEN}"]\ntargets: [·his, his]', "patching: 'targets' names the same token twice ('·his' and 'his' are both ·his)", 6),
]


@pytest.mark.parametrize("kind, body, message, line", MISTAKES, ids=[f"{k}-{i}" for i, (k, _b, _m, _l) in enumerate(MISTAKES)])
def test_a_causal_figure_mistake_is_one_line_at_its_option(tmp_path, kind, body, message, line):
    """`line`: the line of the option the mistake is in (the fence is line 3, `model: tiny` 4,
    the body 5 and 6), or 0 for a mistake of the whole block, which names the fence's line."""
    built = _build(tmp_path, f"# Bad\n\n```{kind}\nmodel: tiny\n{body}\n```\n")
    assert not built.ok
    hits = [ln for ln in built.log.splitlines() if message in ln]
    assert hits and f"content/jobs.md:{line or 3}:" in hits[0], built.log[-800:]
    assert "Traceback" not in built.log and not (tmp_path / "site" / "jobs.html").exists()


def test_an_unknown_part_names_every_kind_of_part_in_the_fix(tmp_path):
    built = _build(tmp_path, f'# Bad\n\n```attribution\nmodel: tiny\nsentence: "{LILY}"\ntargets: [her, his]\nid: d\n```\n\n'
                             "Its share: {{ d.share(L5H1) }}.\n")
    assert not built.ok
    assert ("content/jobs.md:10: reference {{ d.share(L5H1) }}: no part 'L5H1'. "
            "Fix: name one of: embedding, L1H1…L4H4, MLP1…MLP4, biases") in built.log, built.log[-600:]


def _pair_short(doc):
    """The Lily/Ben pair's cleanA one position short; returns the line the build must print."""
    n = next(i for i, e in enumerate(doc["pairs"]) if (e["a"], e["b"]) == (LILY, BEN))
    doc["pairs"][n]["cleanA"] = doc["pairs"][n]["cleanA"][:-1]
    return f"traces/tiny/patching.json: pair {n} cleanA has shape (5, 2), not (6, 2)"


def _pair_twice(doc):
    """The Lily/Ben pair listed a second time, with other numbers: which one the figure showed
    depended on the order of the list."""
    n = next(i for i, e in enumerate(doc["pairs"]) if (e["a"], e["b"]) == (LILY, BEN))
    doc["pairs"].append({**doc["pairs"][n], "cleanA": [[x + 1 for x in row] for row in doc["pairs"][n]["cleanA"]]})
    return f"traces/tiny/patching.json: pairs {n} and {len(doc['pairs']) - 1} are both of {LILY!r} and {BEN!r}"


def _clean_scores_one_cell(doc):
    doc["cleanScores"] = [[[0.5]]]
    return "traces/tiny/circuits.json: cleanScores has shape (1, 1, 1), not (4, 4, 4)"


@pytest.mark.parametrize("figure, name, damage", [
    (f'patching\nmodel: tiny\nsentences: ["{LILY}", "{BEN}"]\ntargets: [her, his]', "patching.json", _pair_short),
    (f'patching\nmodel: tiny\nsentences: ["{LILY}", "{BEN}"]\ntargets: [her, his]', "patching.json", _pair_twice),
    ("circuit\nmodel: tiny\nhead: L4H4", "circuits.json", _clean_scores_one_cell),
])
def test_a_damaged_causal_file_is_one_line_naming_it(tmp_path, figure, name, damage):
    """A damaged patching.json or circuits.json is the store's one line, naming the file as
    traces/tiny/<name> with one fix; before, the figure wrapped it: the lesson's line, the file's
    absolute path and two "Fix:" parts."""
    import json

    write_project(tmp_path, {"jobs.md": f"# Bad\n\n```{figure}\n```\n"})
    shutil.rmtree(tmp_path / "traces")
    shutil.copytree(REPO / "traces", tmp_path / "traces")
    path = tmp_path / "traces" / "tiny" / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    says = damage(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    built = run_build(tmp_path)
    assert not built.ok
    want = f"{says}. Fix: run `make traces`, which rewrites it from the model"
    hits = [re.sub(r"^(?:ERROR|WARNING)\s+-\s+", "", ln) for ln in built.log.splitlines() if says in ln]
    assert hits == [want], built.log[-1500:]
    assert "Traceback" not in built.log and not (tmp_path / "site" / "jobs.html").exists()


def test_a_measure_s_tokens_are_text_in_a_reference():
    """{{ id.measure }} of ablation, attribution and patching figures names the target tokens; a
    token is data (GPT-2 has "<" and "</b" among its words), so the reference escapes it."""
    from generator.render import ablation, attribution, causal_data, patching

    targets = [{"display": "</b"}, {"display": "<i>"}]
    assert causal_data.measure_html(targets) == "logit(&lt;/b) − logit(&lt;i&gt;)"
    assert causal_data.measure_html(targets[:1], one="logit") == "logit(&lt;/b)"
    for module in (ablation, attribution, patching):  # each reference prints it escaped, not measure_name's text
        body = inspect.getsource(module.ref)
        assert "measure_html(" in body and "measure_name(" not in body, module.__name__
