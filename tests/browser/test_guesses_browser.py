"""A "Guess first" question's choices on the built course, in Chromium: a wrong choice gets
another verdict than the right one, all of it by keyboard alone, and without JavaScript the form
stays hidden and the collapsed answer is there as before."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_a_wrong_choice_gets_another_verdict_than_the_right_one_by_keyboard_alone(open_site, server):
    w = open_site()
    w.goto(f"{server.base}/causal.html")
    page = w.page
    form = page.locator("form.course-guess").first
    form.wait_for(state="visible")
    data = form.evaluate("f => JSON.parse(f.querySelector('script.course-data').textContent)")
    radios = form.locator("input[type=radio]")
    verdicts = {}
    for chosen in (data["right"], (data["right"] + 1) % len(data["choices"])):
        form.evaluate("f => { f.tabIndex = -1; f.focus(); }")  # just before the group, as a reader tabbing down the page
        page.keyboard.press("Tab")  # into the radio group
        assert page.evaluate("document.activeElement.type") == "radio"
        for _ in range(len(data["choices"])):  # back to the first choice (the group remembers the last one checked)
            if radios.nth(0).evaluate("r => r === document.activeElement"):
                break
            page.keyboard.press("ArrowUp")
        page.keyboard.press("Space")
        for _ in range(chosen):
            page.keyboard.press("ArrowDown")
        assert radios.nth(chosen).is_checked()
        page.keyboard.press("Tab")  # to the button
        assert page.evaluate("document.activeElement.classList.contains('course-guess-check')")
        page.keyboard.press("Enter")
        verdict = form.locator(".course-guess-verdict")
        verdict.wait_for(state="visible")
        verdicts[chosen] = verdict.inner_text()
    right, wrong = verdicts[data["right"]], verdicts[(data["right"] + 1) % len(data["choices"])]
    assert right != wrong
    assert right.startswith(f"You chose \u2018{data['choices'][data['right']]}\u2019. Right.")
    assert wrong.startswith(f"You chose \u2018{data['choices'][(data['right'] + 1) % len(data['choices'])]}\u2019. Not quite")
    assert data["answer"] in right and data["answer"] in wrong  # the frozen numbers, in both
    assert form.locator(".course-guess-verdict").get_attribute("aria-live") == "polite"
    assert page.url.endswith("/causal.html")  # nothing was sent: the form never submits
    # another choice picked after a verdict: the verdict was about the one before, and goes
    radios.nth(data["right"]).check()
    assert form.locator(".course-guess-verdict").text_content() == ""
    assert form.locator(".course-guess-verdict").get_attribute("data-right") is None
    assert w.errors == []


def test_without_javascript_the_question_keeps_its_collapsed_answer(open_site, server):
    w = open_site(js=False)
    w.goto(f"{server.base}/causal.html", wait_painted=False)
    page = w.page
    assert page.locator("form.course-guess").count() >= 1
    assert not page.locator("form.course-guess").first.is_visible()
    assert page.locator("details.question").first.is_visible()


@pytest.mark.parametrize("viewport,scheme", [(1280, "light"), (1280, "dark"), (375, "light"), (375, "dark")])
def test_a_graded_guess_has_no_axe_violation_and_a_visible_focus(open_site, server, viewport, scheme):
    """axe-core on every guess of a page once each is graded (a wrong choice, so the verdict
    shows), at both widths, light and dark; the focus ring shows on the choices and the button."""
    from .test_a11y import FOCUS_STYLE, axe

    w = open_site(viewport={"width": viewport, "height": 900}, color_scheme=scheme)
    w.goto(f"{server.base}/circuits.html")
    page = w.page
    forms = page.locator("form.course-guess")
    assert forms.count() == 3
    for i in range(forms.count()):
        form = forms.nth(i)
        form.wait_for(state="visible")
        data = form.evaluate("f => JSON.parse(f.querySelector('script.course-data').textContent)")
        radio = form.locator("input[type=radio]").nth((data["right"] + 1) % len(data["choices"]))
        radio.focus()
        page.keyboard.press("Space")
        assert page.evaluate(FOCUS_STYLE)["visible"]
        page.keyboard.press("Tab")
        style = page.evaluate(FOCUS_STYLE)
        assert "course-guess-check" in style["cls"].split() and (style["outline"] or style["shadow"]), style
        page.keyboard.press("Enter")
        form.locator(".course-guess-verdict").wait_for(state="visible")
    violations = axe(page, every_tab=False)
    assert violations == [], violations
    assert w.errors == []
