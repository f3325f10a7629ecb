"""The text follows the figure, visibly (issue 46, item 1), in Chromium on the session's shared
course build (CONTRACT.md, "Text that follows the figure"):

* a figure's caption starts with the state it shows, and follows a change of head (chapter 5's
  ablation grid opens another head in the figure above it);
* a prose number keeps its value; while its figure shows another state, a button right after it
  names the state the number is about, and pressing it brings the figure back; after that jump
  the figure offers "Back" to the state it had;
* hovering or focusing a number changes no figure; the keyboard does all of it;
* axe finds nothing on a page in that changed state, light and dark.
"""

from __future__ import annotations

import pytest

from course_builds import quiet, settle

from .test_a11y import axe

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PICKERS = """fid => ['layer', 'head', 'token'].map(c => +document.querySelector('#' + fid + ' select[data-control=' + c + ']').value)"""
# what the figure shows now: its pickers, its summary and its caption's first words
SHOWN = """fid => {
  const f = document.getElementById(fid);
  const sel = c => +f.querySelector('select[data-control=' + c + ']').value;
  const state = f.querySelector(':scope > figcaption .course-caption-state');
  return {layer: sel('layer'), head: sel('head'), token: sel('token'),
          tokenText: f.querySelector('select[data-control=token]').selectedOptions[0].textContent.replace(/^\\d+: /, '').split(' / ')[0],
          summary: f.querySelector('.course-summary').textContent,
          caption: state && state.textContent, hash: location.hash};
}"""
# the button after a frozen text (the next element sibling), as the reader sees it
ABOUT = """node => {
  const b = node.nextElementSibling;
  if (!b || !b.matches('button.course-ref-about')) return null;
  return {text: b.textContent, shown: !b.hidden && b.getClientRects().length > 0};
}"""
BACK = """fid => {
  const b = document.querySelector('#' + fid + ' button.course-back');
  return b && !b.hidden ? b.textContent : null;
}"""


@pytest.fixture
def site(course, server, open_site):
    def _open(name: str, **options):
        w = open_site(reduced_motion="reduce", **options)
        page = w.goto(f"{server.base}/{name}")
        settle(page)
        page.wait_for_function("() => window.course && window.course.figures.length > 0")
        return w, page
    return _open


def pick(page, fid: str, layer: int, head: int, token: int) -> None:
    """The figure to (layer, head, token), 0-based, by its pickers, as a reader would."""
    for control, value in (("layer", layer), ("head", head), ("token", token)):
        page.select_option(f"#{fid} select[data-control={control}]", str(value))
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[fid, f"{layer},{head},{token}"])
    page.wait_for_function(f"a => ({SHOWN})(a[0]).summary.startsWith('In layer ' + a[1] + ', head ' + a[2] + ',')", arg=[fid, layer + 1, head + 1])


def ref_state(page, i: int) -> dict:
    return page.evaluate("""i => {
      const s = document.querySelectorAll('span.course-ref')[i];
      return {fig: s.dataset.fig, layer: +s.dataset.layer, head: +s.dataset.head, q: +s.dataset.q, text: s.textContent};
    }""", i)


def weight_ref(page, kind: str = "attention") -> int:
    """The index of the page's first bound weight of an attention figure (a number with a head and
    a row) whose figure opens on the number's own state."""
    i = page.evaluate("""kind => [...document.querySelectorAll('span.course-ref.course-ref-cell')].map(s => {
        const f = document.getElementById(s.dataset.fig);
        return {s, f, ok: f.dataset.kind === kind && s.dataset.k != null && +s.dataset.layer === +f.dataset.layer
          && +s.dataset.head === +f.dataset.head && +s.dataset.q === +f.dataset.token};
      }).filter(r => r.ok).map(r => [...document.querySelectorAll('span.course-ref')].indexOf(r.s))[0]""", kind)
    assert i is not None, f"no bound {kind} weight whose figure opens on its state"
    return i


SHOW_TABS = """i => {
  for (let n = document.querySelectorAll('span.course-ref')[i]; n; n = n.parentElement) {
    if (!n.classList.contains('tabbed-block')) continue;
    const set = n.closest('.tabbed-set');
    const k = [...n.parentElement.children].indexOf(n);
    const input = set.querySelectorAll(':scope > input[type=radio]')[k];
    if (!input.checked) set.querySelector('label[for="' + input.id + '"]').click();
  }
}"""


@pytest.mark.parametrize("name, links", [
    ("causal.html", "table.course-causal-grid a[href^='#fig-']"),  # chapter 5's ablation grid
    ("heads.html", "section.course-score table a[href^='#fig-']"),  # a ranking beside its example grid
], ids=["ablation-grid", "head-types-ranking"])
def test_the_caption_follows_a_change_of_head_from_a_link(site, name, links):
    """A link into a figure (chapter 5's ablation grid, the head types page's rankings) opens
    another head there; the caption says the head shown, the author's words say which state they
    were written for, and Back returns."""
    w, page = site(name)
    fid = page.evaluate("sel => document.querySelector(sel).getAttribute('href').slice(1).split(':')[0]", links)
    before = page.evaluate(SHOWN, fid)
    assert before["caption"] == f"Layer {before['layer'] + 1}, head {before['head'] + 1}, token {before['tokenText']}.", before
    caption = page.locator(f"#{fid} > figcaption .course-caption")
    assert page.evaluate(ABOUT, caption.element_handle()) is None, "no button while the figure shows the caption's state"
    # a link to another head of the same figure
    links = page.locator(links.replace("a[href^='#fig-']", f"a[href^='#{fid}:']"))
    link, target = None, None
    for n in range(links.count()):
        href = links.nth(n).get_attribute("href")
        layer = int(href.split("layer=")[1].split(",")[0]) - 1
        head = int(href.split("head=")[1].split(",")[0]) - 1
        if (layer, head) != (before["layer"], before["head"]):
            link, target = links.nth(n), (layer, head)
            break
    assert target, "the grid links no other head"
    link.click()
    page.wait_for_function(f"a => ({PICKERS})(a[0]).slice(0, 2).join() === a[1]", arg=[fid, f"{target[0]},{target[1]}"])
    after = page.evaluate(SHOWN, fid)
    assert after["caption"] == f"Layer {target[0] + 1}, head {target[1] + 1}, token {after['tokenText']}.", after
    assert after["summary"].startswith(f"In layer {target[0] + 1}, head {target[1] + 1}, "), after
    about = page.evaluate(ABOUT, caption.element_handle())
    assert about and about["shown"], "the author's caption does not say which state it was written for"
    assert about["text"] == f"layer {before['layer'] + 1}, head {before['head'] + 1}, {before['tokenText']}", about
    back = page.evaluate(BACK, fid)
    assert back == f"Back to layer {before['layer'] + 1}, head {before['head'] + 1}, {before['tokenText']}", back
    page.click(f"#{fid} button.course-back")
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[fid, f"{before['layer']},{before['head']},{before['token']}"])
    assert page.evaluate(SHOWN, fid)["caption"] == before["caption"]
    page.wait_for_function(f"n => !({ABOUT})(n).shown", arg=caption.element_handle())
    assert page.evaluate(BACK, fid) is None, "Back stays after it was used"
    assert not w.errors, w.errors


def test_a_bound_number_names_its_state_and_brings_the_figure_back(site):
    """Chapter 3's first figure moved by its pickers: the Numbers tab's weight keeps its value and
    names layer, head and token; its button brings the figure back, then Back returns again."""
    w, page = site("attention.html")
    i = weight_ref(page)
    r = ref_state(page, i)
    page.evaluate(SHOW_TABS, i)
    span = page.locator("span.course-ref").nth(i)
    token_text = page.evaluate("a => document.querySelector('#' + a[0] + ' select[data-control=token]').options[a[1]].textContent.replace(/^\\d+: /, '')", [r["fig"], r["q"]])
    assert page.evaluate(ABOUT, span.element_handle()) is None
    away = ((r["layer"] + 1) % 4, (r["head"] + 1) % 4, 1 if r["q"] != 1 else 2)
    pick(page, r["fig"], *away)
    about = page.evaluate(ABOUT, span.element_handle())
    assert about and about["shown"], "the number does not say which state it is about"
    assert about["text"] == f"layer {r['layer'] + 1}, head {r['head'] + 1}, {token_text}", about
    assert span.text_content() == r["text"], "the number changed its value"
    assert "course-ref-away" in span.get_attribute("class"), "the number is not marked as about another state"
    span.locator("xpath=following-sibling::button[1]").click()
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[r["fig"], f"{r['layer']},{r['head']},{r['q']}"])
    page.wait_for_function(f"n => !({ABOUT})(n).shown", arg=span.element_handle())
    away_token = page.evaluate("a => document.querySelector('#' + a[0] + ' select[data-control=token]').options[a[1]].textContent.replace(/^\\d+: /, '')", [r["fig"], away[2]])
    assert page.evaluate(BACK, r["fig"]) == f"Back to layer {away[0] + 1}, head {away[1] + 1}, {away_token}"
    page.click(f"#{r['fig']} button.course-back")
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[r["fig"], ",".join(map(str, away))])
    assert not w.errors, w.errors


def test_hover_and_focus_change_no_figure(site):
    w, page = site("attention.html")
    i = weight_ref(page)
    r = ref_state(page, i)
    page.evaluate(SHOW_TABS, i)
    # the figure on another head whose grid is here, so that a change would be drawn at once
    away = ((r["layer"] + 1) % 4, (r["head"] + 1) % 4, 1 if r["q"] != 1 else 2)
    pick(page, r["fig"], *away)
    # the pick's own address, written a moment after it (CONTRACT.md, "Hash writes")
    page.wait_for_function("want => location.hash.includes(want)", arg=f"{r['fig']}:layer={away[0] + 1},head={away[1] + 1},token={away[2]}")
    before = page.evaluate(SHOWN, r["fig"])
    span = page.locator("span.course-ref").nth(i)
    span.hover()
    page.wait_for_function("i => document.querySelectorAll('span.course-ref')[i].classList.contains('course-ref-on')", arg=i)
    quiet(page)  # whatever the hover set off has run
    assert page.evaluate(SHOWN, r["fig"]) == before, "hovering a number changed its figure"
    page.mouse.move(2, 2)
    span.focus()
    page.wait_for_function("i => document.querySelectorAll('span.course-ref')[i].classList.contains('course-ref-on')", arg=i)
    quiet(page)
    assert page.evaluate(SHOWN, r["fig"]) == before, "focusing a number changed its figure"
    assert not w.errors, w.errors


def test_the_keyboard_moves_the_figure_and_back(site):
    w, page = site("attention.html")
    i = weight_ref(page)
    r = ref_state(page, i)
    page.evaluate(SHOW_TABS, i)
    away = ((r["layer"] + 1) % 4, (r["head"] + 1) % 4, 1 if r["q"] != 1 else 2)
    pick(page, r["fig"], *away)
    span = page.locator("span.course-ref").nth(i)
    span.focus()
    page.keyboard.press("Tab")  # the button that names the number's state comes next
    assert page.evaluate("() => document.activeElement.matches('button.course-ref-about')"), "Tab does not reach the state's button"
    page.keyboard.press("Space")
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[r["fig"], f"{r['layer']},{r['head']},{r['q']}"])
    page.focus(f"#{r['fig']} button.course-back")
    page.keyboard.press("Enter")
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[r["fig"], ",".join(map(str, away))])
    # Enter on the number itself is the same explicit move
    span.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[r["fig"], f"{r['layer']},{r['head']},{r['q']}"])
    assert not w.errors, w.errors


def test_the_first_live_number_says_what_it_is(site, server, open_site):
    w, page = site("attention.html")
    hint = page.evaluate("""() => {
      const h = document.querySelectorAll('.course-ref-hint');
      const first = [...document.querySelectorAll('article span.course-ref')].find(s => !s.closest('details:not([open])') && s.getClientRects().length > 0);
      return {count: h.length, text: h[0] && h[0].textContent,
              shown: !!h[0] && h[0].getClientRects().length > 0 && !h[0].closest('details:not([open])'),
              after: !!h[0] && first.compareDocumentPosition(h[0]) === Node.DOCUMENT_POSITION_FOLLOWING};
    }""")
    assert hint["count"] == 1 and hint["shown"] and hint["after"], hint
    assert hint["text"].startswith(" (a live number: press it to see where figure "), hint  # a weight: its cell
    # a live number does not look like a glossary term
    looks = page.evaluate("""() => {
      const look = e => { const cs = getComputedStyle(e); return [cs.backgroundColor, cs.borderBottomStyle, cs.textDecorationLine, cs.boxShadow].join('|'); };
      const term = document.querySelector('a.course-term abbr') || document.querySelector('a.course-term');
      return {num: look(document.querySelector('span.course-ref')), term: term && look(term)};
    }""")
    assert looks["term"] and looks["num"] != looks["term"], looks
    assert not w.errors, w.errors
    # a number bound to a whole figure whose state it does not set (the tokens page's token id,
    # of its fifth sentence) promises the figure, not that the figure shows it
    w = open_site(reduced_motion="reduce")
    page = w.goto(f"{server.base}/tokens.html", wait_painted=False)
    settle(page)
    page.wait_for_function("() => document.querySelector('.course-ref-hint')")
    first = page.evaluate("""() => {
      const s = [...document.querySelectorAll('article span.course-ref')].find(s => !s.closest('details:not([open])') && s.getClientRects().length > 0);
      const h = document.querySelector('.course-ref-hint');
      return {figureLevel: s.classList.contains('course-ref-figure'), text: h && h.textContent};
    }""")
    assert first["figureLevel"] and first["text"].startswith(" (a live number: press it to go to figure ") \
        and first["text"].endswith(", which it comes from)"), first


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_on_a_page_in_a_changed_state(site, scheme):
    w, page = site("attention.html", color_scheme=scheme)
    i = weight_ref(page)
    r = ref_state(page, i)
    page.evaluate(SHOW_TABS, i)
    pick(page, r["fig"], (r["layer"] + 1) % 4, (r["head"] + 1) % 4, 1 if r["q"] != 1 else 2)
    # then a link into the figure (a jump): the numbers' buttons and the figure's Back at once
    page.evaluate("fid => { location.hash = '#' + fid + ':layer=1,head=1,token=0'; }", r["fig"])
    page.wait_for_function(f"fid => ({BACK})(fid)", arg=r["fig"])
    assert page.evaluate(ABOUT, page.locator("span.course-ref").nth(i).element_handle())["shown"]
    quiet(page)
    found = axe(page, every_tab=False)
    assert found == [], found


def test_without_javascript_the_caption_names_the_state_the_page_shows(course, server, open_site):
    """No script: the caption's state is the opening state, the one the summary and the prose
    were written for; no number is styled or noted as live."""
    w = open_site(js=False)
    page = w.goto(f"{server.base}/causal.html", wait_painted=False)
    found = page.evaluate("""() => [...document.querySelectorAll('figure.course-fig[data-kind=attention], figure.course-fig[data-kind=compare]')]
      .filter(f => !f.classList.contains('course-pending')).map(f => {
        const sel = c => f.querySelector('select[data-control=' + c + ']');
        const tok = sel('token').selectedOptions[0].textContent.replace(/^\\d+: /, '').split(' / ')[0];
        return {state: f.querySelector(':scope > figcaption .course-caption-state').textContent,
                want: 'Layer ' + (+sel('layer').value + 1) + ', head ' + (+sel('head').value + 1) + ', token ' + tok + '.',
                summary: f.querySelector('.course-summary').textContent};
      })""")
    assert found, "causal.html has no attention figure"
    for f in found:
        assert f["state"] == f["want"], f
        assert f["summary"].startswith("In " + f["want"][0].lower() + f["want"][1:].split(", token")[0] + ", "), f
    assert page.evaluate("() => document.querySelectorAll('.course-ref-about, .course-ref-hint, .course-back').length") == 0
    live = page.evaluate("() => getComputedStyle(document.querySelector('span.course-ref')).backgroundColor")
    assert live in ("rgba(0, 0, 0, 0)", "transparent"), f"a number looks live without JavaScript: {live}"


def test_back_to_the_page_s_own_entry_shows_each_figure_as_it_opened(site):
    """Back from a link into a figure to the page's own entry (no hash) puts the figure as the page
    opened, with no "Back to" left; a link to a heading (a hash naming no figure) leaves a figure
    the reader changed alone."""
    w, page = site("heads.html")
    links = "section.course-score table a[href^='#fig-']"
    fid = page.evaluate("sel => document.querySelector(sel).getAttribute('href').slice(1).split(':')[0]", links)
    before = page.evaluate(SHOWN, fid)
    opening = f"{before['layer']},{before['head']},{before['token']}"
    others = page.locator(links.replace("a[href^='#fig-']", f"a[href^='#{fid}:']"))
    def head_of(href: str) -> tuple[int, int]:
        return int(href.split("layer=")[1].split(",")[0]) - 1, int(href.split("head=")[1].split(",")[0]) - 1

    link = next(others.nth(n) for n in range(others.count())
                if head_of(others.nth(n).get_attribute("href")) != (before["layer"], before["head"]))
    link.click()
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() !== a[1]", arg=[fid, opening])
    assert page.evaluate(BACK, fid), "a jump offers Back"
    page.go_back()
    page.wait_for_function(f"a => ({PICKERS})(a[0]).join() === a[1]", arg=[fid, opening])
    quiet(page)
    now = page.evaluate(SHOWN, fid)
    assert now["hash"] == "" and now["caption"] == before["caption"] and now["summary"] == before["summary"], now
    assert page.evaluate(BACK, fid) is None, "Back to the state before the jump is left after the page's own entry is back"
    # a changed figure, then a link to a heading: the figure keeps what the reader chose
    pick(page, fid, 1, 1, before["token"])
    page.evaluate("() => { location.hash = '#' + document.querySelector('article h2[id]').id; }")
    quiet(page)
    assert page.evaluate(PICKERS, fid) == [1, 1, before["token"]]
    assert not w.errors, w.errors


def test_a_compare_figure_s_caption_names_both_tokens_where_they_differ(site):
    """A compare figure's token menu says "1: Lily / Ben" where its sentences differ; its caption
    names both too (it named the first sentence's alone while the panels showed two)."""
    w, page = site("attention.html")
    fid, value, option = page.evaluate("""() => {
      for (const f of document.querySelectorAll('.course-fig[data-kind=compare]')) {
        const o = [...f.querySelectorAll('select[data-control=token] option')].find(o => o.textContent.includes(' / '));
        if (o) return [f.id, o.value, o.textContent];
      }
      return [null, null, null];
    }""")
    assert fid, "no compare figure whose sentences differ at a token"
    page.select_option(f"#{fid} select[data-control=token]", value)
    page.wait_for_function(f"v => +document.querySelector('#{fid} select[data-control=token]').value === v", arg=int(value))
    shown = page.evaluate(SHOWN, fid)
    named = option.split(": ", 1)[1]
    page.wait_for_function(f"() => document.querySelector('#{fid} > figcaption .course-caption-state').textContent.endsWith(', token {named}.')")
    assert page.evaluate(SHOWN, fid)["caption"] == f"Layer {shown['layer'] + 1}, head {shown['head'] + 1}, token {named}."
    assert not w.errors, w.errors


def test_an_address_naming_a_state_the_figure_lacks_is_rewritten_to_what_it_shows(site):
    """#fig-1:layer=9,head=0,token=99 is clamped to a state figure 1 has (layer 4, head 1, its last
    token): the address then says that state, not the one it does not show."""
    w, page = site("attention.html#fig-1:layer=9,head=0,token=99")
    page.wait_for_function("() => !location.hash.includes('layer=9')")
    shown = page.evaluate(SHOWN, "fig-1")
    assert shown["hash"] == f"#fig-1:layer={shown['layer'] + 1},head={shown['head'] + 1},token={shown['token']}", shown
    assert (shown["layer"], shown["head"]) == (3, 0), shown
    assert not w.errors, w.errors
