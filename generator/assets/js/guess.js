  // ------------------------------------------------------------------ guesses

  // A "Guess first" question's choices (CONTRACT.md, `guess`): the reader picks one and checks
  // it; the verdict says which they chose, whether it is right, and the answer with the numbers
  // the page was built from. Nothing is stored or sent: the form never submits.
  function guessVerdict(data, chosen) {
    var said = 'You chose \u2018' + data.choices[chosen] + '\u2019. ';
    if (chosen === data.right) return said + 'Right. ' + data.answer;
    return said + 'Not quite: the answer is \u2018' + data.choices[data.right] + '\u2019. ' + data.answer;
  }

  function initGuess(form, data) {
    if (!data || !data.choices || typeof data.right !== 'number') return;
    var verdict = form.querySelector('.course-guess-verdict');
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      var picked = form.querySelector('input[type="radio"]:checked');
      if (!picked) {
        verdict.textContent = 'Choose one answer first.';
        verdict.removeAttribute('data-right');
        return;
      }
      var chosen = Number(picked.value);
      verdict.textContent = guessVerdict(data, chosen);
      verdict.setAttribute('data-right', chosen === data.right ? 'true' : 'false');
    });
    // another choice picked: the verdict was about the one before, so it goes until Check
    form.addEventListener('change', function (e) {
      if (!e.target.matches('input[type="radio"]')) return;
      verdict.textContent = '';
      verdict.removeAttribute('data-right');
    });
    form.hidden = false;
  }
