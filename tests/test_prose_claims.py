"""What the chapters' prose claims, checked against the numbers and the pages.

Each test reads the session's shared build of the real course (course_builds.shared_course:
the tiny model traced, GPT-2 untraced, as on any machine without its weights) and, for chapter 2's
map, the vectors.json that build used, so a sentence that stops being true of the numbers, or an
old wording that comes back, fails here.
"""

from __future__ import annotations

import html
import re

import pytest

from course_builds import shared_course

from generator.store import vectors_file
from generator.render.vector_data import num


@pytest.fixture(scope="module")
def course():
    return shared_course()


@pytest.fixture(scope="module")
def site(course):
    return course / "build" / "site"


def article(site, name: str) -> str:
    page = (site / name).read_text(encoding="utf-8")
    return page[page.index("<article") : page.index("</article>")]


INLINE_TAG = re.compile(r"</?(?:a|abbr|em|strong|code|span|sup|sub|kbd|math|mi|mn|mo|mrow)\b[^>]*>")


def text_of(fragment: str) -> str:
    """A fragment's visible words, scripts left out and white space collapsed; an inline tag (a
    glossary term's link, a token's code) joins the words around it as a reader reads them."""
    fragment = re.sub(r"<(script|style)\b.*?</\1>", " ", fragment, flags=re.S)
    fragment = INLINE_TAG.sub("", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def prose(fragment: str) -> str:
    """The words outside figures (and their pending boxes)."""
    return text_of(re.sub(r"<figure\b.*?</figure>", " ", fragment, flags=re.S))


def section(fragment: str, heading: str) -> str:
    """The HTML from the `##` heading that starts with `heading` to the next `##` heading."""
    start = re.search(r"<h2[^>]*>\s*" + re.escape(heading), fragment)
    assert start, heading
    end = fragment.find("<h2", start.end())
    return fragment[start.start() : end if end != -1 else len(fragment)]


# ---------------------------------------------------------------- item 9: chapter 2's map


def test_the_maps_prose_says_only_what_its_numbers_show(course, site):
    m = vectors_file.read(course / "traces", "tiny").doc["map"]
    at = {t["text"]: t for t in m["tokens"] + m["marks"]}
    x = lambda w: at[" " + w]["x"]  # noqa: E731
    y = lambda w: at[" " + w]["y"]  # noqa: E731
    words = prose(section(article(site, "vectors.html"), "A map of the vectors"))
    # the old claims are gone
    assert "the pronouns sit higher than the names" not in words
    assert "The biggest difference among these rows is whether a token is a word of its own" not in words
    # first direction: a tendency, with whole words that sit among the pieces, shown by their numbers
    assert "The dots far to the left are mostly pieces of words" in words
    assert f"·sorry, at {num(x('sorry'))}, and ·learned, at {num(x('learned'))}, sit among the pieces" in words
    assert x("sorry") < 0 and x("learned") < 0 and x("happ") < x("sorry")  # among the pieces, left of the middle
    assert "without sorting the tokens cleanly by it" in words
    # second direction: its small share is said where it is read, and its claim holds
    assert f"The second direction holds only {round(100 * m['explained'][1])}% of the spread, and it does not tell pronouns from names" in words
    assert min(y("she"), y("her")) > max(y("Lily"), y("Tom"))  # "The pronouns in small letters sit above the names"
    assert f"·She and ·He with a capital letter, as they begin a sentence, sit at {num(y('She'))} and {num(y('He'))}" in words
    for cap in ("She", "He"):  # "nearer ·Lily than ·she or ·he"
        assert abs(y(cap) - y("Lily")) < min(abs(y(cap) - y("she")), abs(y(cap) - y("he"))), cap
    assert f"·he ({num(y('he'))})" in words


# ---------------------------------------------------------------- item 10: chapter 4 without its numbers


WANG = [("previous-token", "2.2", "4.11"), ("duplicate-token", "0.1", "3.0"), ("induction", "5.5", "6.9")]


def test_gpt2_page_reads_true_with_and_without_its_traces(site):
    page = article(site, "gpt2.html")
    words = prose(page)
    box = text_of(re.search(r'<div class="admonition info">.*?</div>', page, flags=re.S).group(0))
    assert "Every figure on this page is GPT-2 small" not in box
    assert "when the course is built with the model's weights at hand" in box
    # what a copy built without the weights shows is said once, by the notice such a copy has
    # (test_gpt2_chapter.py), not in a box every copy shows
    assert "may have been built without them" not in box
    assert "The compare figure showed" not in words
    assert "A single head is one of 144." in words
    assert "which GPT-2 reads before every text" not in words
    assert "which this course puts before every sentence it gives GPT-2" in words and "its tokenizer does not add it by itself" in words
    # no goal, recap or description promises a scoreboard the page may not have
    goals = text_of(page[page.index("You will learn to") : page.index('<div class="admonition info">')])
    recap = prose(section(page, "Recap"))
    for part, name in ((goals, "goals"), (recap, "recap")):
        assert "scoreboard" not in part and "can be found among" not in part, name
    description = re.search(r'<meta name="description" content="([^"]*)"', (site / "gpt2.html").read_text(encoding="utf-8")).group(1)
    assert "scoreboard" not in description


def test_gpt2_page_gives_wang_et_al_s_heads_as_literature_in_every_build(site):
    """The list stands outside any passage that needs traces: this build has no GPT-2 traces, and
    it is there. It is the paper's list (the one test_gpt2_literature checks scores against),
    counted from 0 as the paper counts, and said to be the paper's finding."""
    from test_gpt2_literature import LITERATURE

    words = prose(article(site, "gpt2.html"))
    lit = words[words.index("What the literature found.") :]
    lit = lit[: lit.index("A caution.")]
    assert "Wang et al. (2022)" in lit and "layer.head, both counted from 0" in lit
    assert "This list is the paper's finding, not a measurement of this course" in lit
    for kind, a, b in WANG:
        assert f"{kind} heads {a} and {b}" in lit, kind
    assert sorted((k, f"{l}.{h}") for k, l, h in LITERATURE) == sorted((k, n) for k, a, b in WANG for n in (a, b))
    assert "their head 5.5 is our layer 6, head 6" in lit
    assert "Interpretability in the Wild" in words  # the source, cited


def test_the_index_promises_no_gpt2_heads_and_says_what_can_still_be_wrong(site):
    words = prose(article(site, "index.html"))
    assert "cannot disagree" not in words and "the kinds of heads it learned" not in words
    assert "so the text and the figure cannot show different numbers" in words
    assert "What the text says a number means is still written by hand, and can be wrong" in words
    assert "a copy built without them says so in place of each figure" in words


# ---------------------------------------------------------------- item 11: order and terms


def first_sentence_with(fragment: str, word: str) -> str | None:
    """The HTML of the sentence of the prose (figures left out) where `word` is first used."""
    body = re.sub(r"<figure\b.*?</figure>", " ", fragment, flags=re.S)
    for para in re.findall(r"<(?:p|li)\b.*?</(?:p|li)>", body, flags=re.S):
        words = re.sub(r"<[^>]+>", "", para)
        if word.lower() not in words.lower():
            continue
        # split the paragraph's HTML at sentence ends in its text, keep the sentence with the word
        for sentence in re.split(r"(?<=[.;:])\s+(?=[A-Z<])", para):
            if word.lower() in re.sub(r"<[^>]+>", "", sentence).lower():
                return sentence
        return para
    return None


def points_forward(sentence: str | None) -> bool:
    """No use, or a use that links to the head-types page and says what the scoreboard is."""
    return sentence is None or ('href="heads.html' in sentence and "scores every head" in text_of(sentence))


def test_the_scoreboard_is_explained_and_pointed_to_where_chapters_2_and_3_first_name_it(site):
    for name in ("vectors.html", "attention.html"):
        assert points_forward(first_sentence_with(article(site, name), "scoreboard")), name
    # the check can fail: the sentence chapter 3 had named the scoreboard without saying what it is
    old = ('<p>This grid shows a second head on the same sentence: the highest-scoring previous-token head on '
           'the scoreboard, layer 1, head 4, the same head that tops the previous-token scoreboard on the '
           '<a href="heads.html">head-types page</a>. Almost every token gives most of its attention to the '
           'token just before it.</p>')
    assert not points_forward(first_sentence_with(old, "scoreboard"))


def test_chapter_2_leaves_attentions_terms_to_chapter_3_which_defines_the_head_types(site):
    """Chapter 2's last section once previewed chapter 3 in 13 new terms in one paragraph (issue 45);
    it now says what attention does in plain words, and chapter 3 names each head type where it
    says what the type does."""
    words = prose(article(site, "vectors.html"))
    for term in ("previous-token head", "duplicate-token head", "induction head", "softmax", "query", "causal mask"):
        assert term not in words, term
    assert "each token compares itself with every earlier token" in words
    words = prose(article(site, "attention.html"))
    assert ("Others look for an earlier copy of the current word (a duplicate-token head), for the word that "
            "followed that copy (an induction head") in words


def test_softmax_is_glossed_before_the_stepper_uses_it(site):
    qkv = section(article(site, "attention.html"), "Queries, keys and values")
    before = text_of(qkv[: qkv.index("<figure")])
    assert "softmax, which turns scores into shares that add up to 1 (next section)" in before


def test_chapter_3_leads_to_the_pages_the_navigation_puts_next(site):
    """Its "Next" names first the page its footer's next link opens (the playground), then the
    head types page, which the playground's own footer leads to."""
    page = article(site, "attention.html")
    nxt = re.search(r"<li>Next: (.*?)</li>", page, flags=re.S).group(1)
    assert re.findall(r'<a href="(\w+)\.html">', nxt) == ["play", "heads"], nxt
    assert re.match(r'<a href="play\.html">Try your own sentence</a>', nxt), nxt
    footer = (site / "attention.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="play\.html" class="md-footer__link md-footer__link--next"', footer)
    after = (site / "play.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="heads\.html" class="md-footer__link md-footer__link--next"', after)


def test_the_glossary_defines_feed_forward_network_and_both_senses_of_attention_sink(site):
    glossary = (site / "glossary.html").read_text(encoding="utf-8")
    assert 'id="feed-forward-network"' in glossary
    entry = lambda slug: text_of(re.search(rf'id="{slug}".*?</h2>(.*?)<h2', glossary, flags=re.S).group(1))  # noqa: E731
    ffn = entry("feed-forward-network")
    assert "each token's vector on its own" in ffn and "residual stream" in ffn
    sink = entry("attention sink".replace(" ", "-"))
    assert sink.startswith("A token, usually the first one") and "also a head that parks most of its attention on such a token" in sink
    # its first use in chapter 2 links to it, and reads as a sentence
    vectors = article(site, "vectors.html")
    assert 'href="glossary.html#feed-forward-network"' in vectors
    assert "feed-forward step (a small network that works on each token's vector alone" in prose(vectors)
