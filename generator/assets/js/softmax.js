  // ------------------------------------------------------------------ softmax widget

  var SOFTMAX_DECIMALS = 3; // as the renderer's f"{w:.3f}"

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
    function name(i) {
      var labels = data.labels || [];
      return labels[i] != null ? 'The score for \u201c' + labels[i] + '\u201d' : 'Score ' + (i + 1);
    }
    function update() {
      var vals = inputs.map(function (inp) {
        var raw = String(inp.value).trim();
        var v = raw === '' ? NaN : Number(raw);
        return isFinite(v) ? v : NaN;
      });
      var valid = [];
      vals.forEach(function (v, i) { if (!isNaN(v)) valid.push(i); });
      var ws = softmax(valid.map(function (i) { return vals[i]; }));
      var weights = vals.map(function () { return NaN; });
      valid.forEach(function (i, n) { weights[i] = ws[n]; });
      inputs.forEach(function (inp, n) {
        var i = inp.getAttribute('data-score');
        var bad = isNaN(vals[n]);
        if (bad) inp.setAttribute('aria-invalid', 'true'); else inp.removeAttribute('aria-invalid');
        var out = fig.querySelector('output.course-weight[data-i="' + i + '"]');
        var bar = fig.querySelector('.course-bar[data-i="' + i + '"]');
        if (out) out.textContent = bad ? NDASH : fmt(weights[n], SOFTMAX_DECIMALS);
        if (bar) bar.style.width = bad ? '0%' : (weights[n] * 100).toFixed(1) + '%';
      });
      var badNames = vals.map(function (v, i) { return isNaN(v) ? name(i) : null; }).filter(Boolean);
      if (!valid.length) status.textContent = 'Type at least one number to see the weights.';
      else if (badNames.length) {
        status.textContent = badNames.join(', ') + (badNames.length > 1 ? ' are' : ' is') +
          ' not a number, so ' + (badNames.length > 1 ? 'they are' : 'it is') + ' left out.';
      } else status.textContent = '';
    }
    fig.addEventListener('input', function (ev) { if (ev.target.matches('input[data-score]')) update(); });
    fig.addEventListener('change', function (ev) { if (ev.target.matches('input[data-score]')) update(); });
    return { el: fig, id: fig.id, update: update };
  }
