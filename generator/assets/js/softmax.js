  // ------------------------------------------------------------------ softmax widget

  var SOFTMAX_DECIMALS = 3; // as the renderer's f"{w:.3f}"
  var SCORE_LIMIT = 1e6; // as a lesson's own numbers (lessons/values.py MAX_MAGNITUDE)
  var SCORE_STEP = 0.1; // the arrow keys' step
  // A score, read strictly: a sign (- or the page's −), digits with a point for decimals, an
  // exponent. Number() alone would take "0x10" as 16 and "" as 0, and a number box drops the
  // characters it cannot take ("1,5" became 15).
  var SCORE_RE = /^[+\-\u2212]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+\-]?\d+)?$/;

  // {value} or {problem}: what is wrong with the text, said to the reader.
  function readScore(raw) {
    var text = String(raw).trim();
    if (text === '') return { problem: 'is empty' };
    var quoted = '\u201c' + text + '\u201d';
    if (!SCORE_RE.test(text)) {
      var hint = /^[+\-\u2212]?\d*,\d+$/.test(text) ? ' (decimals take a point: ' + text.replace(',', '.') + ')'
        : /^[+\-\u2212]?0[xXbBoO]/.test(text) ? ' (only decimal numbers are read)' : '';
      return { problem: 'reads ' + quoted + ', which is not a number' + hint };
    }
    var v = Number(text.replace('\u2212', '-'));
    if (!isFinite(v) || Math.abs(v) > SCORE_LIMIT) {
      return { problem: 'reads ' + quoted + ', which is too large (scores go up to ' + SCORE_LIMIT.toLocaleString('en-US') + ' in size)' };
    }
    return { value: v };
  }

  function initSoftmax(fig) {
    var data = ownData(fig) || {};
    var inputs = Array.prototype.slice.call(fig.querySelectorAll('input[data-score]'));
    if (!inputs.length) return null;
    var status = fig.querySelector('.course-softmax-status');
    if (!status) {
      status = el('p', 'course-softmax-status');
      var anchor = fig.querySelector('figcaption');
      if (anchor && anchor.parentNode === fig) fig.insertBefore(status, anchor);
      else fig.appendChild(status);
    }
    status.setAttribute('aria-live', 'polite');
    if (!status.id) status.id = fig.id + '-status';
    function name(i) {
      var labels = data.labels || [];
      return labels[i] != null ? 'The score for \u201c' + labels[i] + '\u201d' : 'Score ' + (i + 1);
    }
    function update() {
      var read = inputs.map(function (inp) { return readScore(inp.value); });
      var vals = read.map(function (r) { return r.problem ? NaN : r.value; });
      var valid = [];
      vals.forEach(function (v, i) { if (!isNaN(v)) valid.push(i); });
      var ws = softmax(valid.map(function (i) { return vals[i]; }));
      var weights = vals.map(function () { return NaN; });
      valid.forEach(function (i, n) { weights[i] = ws[n]; });
      inputs.forEach(function (inp, n) {
        var i = inp.getAttribute('data-score');
        var bad = isNaN(vals[n]);
        if (bad) {
          inp.setAttribute('aria-invalid', 'true');
          inp.setAttribute('aria-describedby', status.id);
        } else {
          inp.removeAttribute('aria-invalid');
          inp.removeAttribute('aria-describedby');
        }
        var out = fig.querySelector('output.course-weight[data-i="' + i + '"]');
        var bar = fig.querySelector('.course-bar[data-i="' + i + '"]');
        if (out) out.textContent = bad ? NDASH : fmt(weights[n], SOFTMAX_DECIMALS);
        if (bar) bar.style.width = bad ? '0%' : (weights[n] * 100).toFixed(1) + '%';
      });
      var said = read.map(function (r, i) { return r.problem ? name(i) + ' ' + r.problem + ', so it is left out.' : null; }).filter(Boolean);
      if (!valid.length) said.push('Type at least one number to see the weights.');
      status.textContent = said.join(' ');
      // the page's numbers are about the scores it opened with (each input's own value attribute)
      followOpening(fig, inputs.some(function (inp) { return inp.value !== inp.defaultValue; }), resetScores);
    }
    function resetScores() {
      inputs.forEach(function (inp) { inp.value = inp.defaultValue; });
      update();
    }
    // the arrow keys step a score, as a number box's would
    fig.addEventListener('keydown', function (ev) {
      if (!ev.target.matches('input[data-score]') || (ev.key !== 'ArrowUp' && ev.key !== 'ArrowDown')) return;
      var r = readScore(ev.target.value);
      if (r.problem) return;
      ev.preventDefault();
      var next = Math.round((r.value + (ev.key === 'ArrowUp' ? SCORE_STEP : -SCORE_STEP)) * 1e9) / 1e9;
      ev.target.value = String(next);
      update();
    });
    fig.addEventListener('input', function (ev) { if (ev.target.matches('input[data-score]')) update(); });
    fig.addEventListener('change', function (ev) { if (ev.target.matches('input[data-score]')) update(); });
    return { el: fig, id: fig.id, update: update };
  }
