  // ---- tokens: one sentence at a time, its tokens in the console as `tokens`
  function initTokens(fig, data) {
    var controls = fig.querySelector('.course-controls');
    var select = fig.querySelector('select[data-control="sentence"]');
    var blocks = fig.querySelectorAll('.course-token-sentence');
    function show(i) {
      Array.prototype.forEach.call(blocks, function (b) { b.hidden = b.getAttribute('data-sentence') !== String(i); });
      var s = data.sentences[i];
      var current = { text: s.text };
      data.models.forEach(function (m) { current[m] = s.tokens[m]; });
      window.tokens = current;
    }
    if (controls) controls.hidden = false;
    if (select) select.addEventListener('change', function () { show(parseInt(select.value, 10) || 0); });
    show(select ? parseInt(select.value, 10) || 0 : 0);
  }

  // ---- merges: one step at a time, Back and Next
  function initMerges(fig) {
    var steps = fig.querySelectorAll('.course-merge-step');
    if (!steps.length) return;
    var at = 0;
    var nav = document.createElement('div');
    nav.className = 'course-step-nav course-merge-nav';
    var back = document.createElement('button');
    back.type = 'button';
    back.textContent = 'Back';
    var next = document.createElement('button');
    next.type = 'button';
    next.textContent = 'Next';
    var status = document.createElement('p');
    status.className = 'course-merge-status';
    status.setAttribute('aria-live', 'polite');
    nav.appendChild(back);
    nav.appendChild(next);
    nav.appendChild(status);
    fig.querySelector('.course-merge-steps').insertAdjacentElement('beforebegin', nav);
    function go(k) {
      at = Math.max(0, Math.min(k, steps.length));
      Array.prototype.forEach.call(steps, function (li, i) { li.hidden = i >= at; });
      back.disabled = at === 0;
      next.disabled = at === steps.length;
      status.textContent = at === 0 ? 'Before the first merge. Press Next.'
        : 'Merge ' + at + ' of ' + steps.length + (at === steps.length ? '. No pair of the word is in the list now: these are its tokens.' : '.');
    }
    back.addEventListener('click', function () { go(at - 1); });
    next.addEventListener('click', function () { go(at + 1); });
    go(0);
  }

