  // ------------------------------------------------------------------ stepper

  function initStepper(fig) {
    var steps = fig.querySelectorAll('li.course-step');
    var total = steps.length;
    if (!total) return null;
    var back = fig.querySelector('button[data-action="back"]');
    var next = fig.querySelector('button[data-action="next"]');
    var status = fig.querySelector('.course-step-status');
    if (!back || !next) {
      var nav = el('div', 'course-step-nav');
      back = el('button', 'course-step-back', 'Back');
      back.type = 'button';
      back.setAttribute('data-action', 'back');
      next = el('button', 'course-step-next', 'Next');
      next.type = 'button';
      next.setAttribute('data-action', 'next');
      nav.appendChild(back);
      if (!status) {
        status = el('p', 'course-step-status');
        nav.appendChild(status);
      }
      nav.appendChild(next);
      var list = fig.querySelector('ol.course-steps');
      list.parentNode.insertBefore(nav, list);
    }
    if (!status) {
      status = el('p', 'course-step-status');
      back.parentNode.insertBefore(status, next);
    }
    status.setAttribute('aria-live', 'polite');
    var k = 0;
    function showStep(i, announce) {
      k = Math.max(0, Math.min(total - 1, i));
      Array.prototype.forEach.call(steps, function (li, j) { li.classList.toggle('is-current', j === k); });
      status.textContent = 'Step ' + (k + 1) + ' of ' + total;
      back.setAttribute('aria-disabled', k === 0 ? 'true' : 'false');
      next.setAttribute('aria-disabled', k === total - 1 ? 'true' : 'false');
      if (announce) fig.dispatchEvent(new CustomEvent('course:statechange', { detail: { step: k } }));
    }
    back.addEventListener('click', function () { showStep(k - 1, true); });
    next.addEventListener('click', function () { showStep(k + 1, true); });
    fig.addEventListener('keydown', function (ev) {
      if (ev.target.closest('input, select, textarea')) return;
      if (ev.key === 'ArrowLeft') { ev.preventDefault(); showStep(k - 1, true); }
      if (ev.key === 'ArrowRight') { ev.preventDefault(); showStep(k + 1, true); }
    });
    fig.classList.add('course-stepping');
    showStep(0, false);
    return { el: fig, id: fig.id, show: showStep };
  }
