  // ------------------------------------------------------------------ merges (chapter 1)

  // One step at a time, Back and Next.
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
    function showMerges(k) {
      at = Math.max(0, Math.min(k, steps.length));
      Array.prototype.forEach.call(steps, function (li, i) { li.hidden = i >= at; });
      back.disabled = at === 0;
      next.disabled = at === steps.length;
      status.textContent = at === 0 ? 'Before the first merge. Press Next.'
        : 'Merge ' + at + ' of ' + steps.length + (at === steps.length ? '. No pair of the word is in the list now: these are its tokens.' : '.');
    }
    back.addEventListener('click', function () { showMerges(at - 1); });
    next.addEventListener('click', function () { showMerges(at + 1); });
    showMerges(0);
  }
