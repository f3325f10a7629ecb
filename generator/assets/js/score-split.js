  // ------------------------------------------------------------------ score-split

  // One head's score for one cell split into the parts that made it (render/score_split.py).
  // The figure ships the head's every cell; the reader picks the query, the key and the side,
  // and the bars, the sum and the row are written again from those numbers, as the renderer does.

  function minus2(x) { return fmt2(x).replace('-', '\u2212'); }

  function splitPartWords(part, token) { // as score_split.part_words
    if (part === 'token') return 'token ' + token;
    if (part === 'position') return 'position of ' + token;
    if (part.indexOf('MLP') === 0) return "output of layer " + part.slice(3) + "'s MLP";
    if (part.charAt(0) === 'L') {
      var lh = part.slice(1).split('H');
      return 'output of layer ' + lh[0] + ', head ' + lh[1];
    }
    return 'biases';
  }

  function splitCell(q, k) { return q * (q + 1) / 2 + k; }

  // The bars of one cell: {name, words, value}, largest first, ties by name (score_split.bars).
  function splitBars(data, side, q, k) {
    var c = splitCell(q, k);
    var qt = data.tokens[q], kt = data.tokens[k];
    var rows = [];
    if (side === 'table') {
      var three = ['token', 'position', 'biases'];
      three.forEach(function (a, i) {
        three.forEach(function (b, j) {
          rows.push({ name: a + '.' + b, words: splitPartWords(a, qt) + ' (query) with ' + splitPartWords(b, kt) + ' (key)',
                      value: data.table[i][j][c] });
        });
      });
    } else {
      var split = side === 'key' ? data.key_split : data.query_split;
      var token = side === 'key' ? kt : qt;
      data.parts.forEach(function (p, i) { rows.push({ name: p, words: splitPartWords(p, token), value: split[i][c] }); });
    }
    rows.sort(function (a, b) { return b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
    return rows;
  }

  function initScoreSplit(fig, data) {
    var bars = fig.querySelector('.course-split-bars tbody');
    var rowBody = fig.querySelector('.course-split-row tbody');
    var summary = fig.querySelector('.course-summary');
    var barsCaption = fig.querySelector('.course-split-bars caption');
    var rowCaption = fig.querySelector('.course-split-row caption');
    if (!bars || !rowBody || !data.tokens) return null;
    var state = { q: data.query, k: data.key, side: data.side };
    var opened = { q: state.q, k: state.k, side: state.side }; // the cell the page's numbers are about
    var controls = el('div', 'course-split-controls');
    function picker(label, options, value, onChange) {
      var wrap = el('label', 'course-split-picker', label + ' ');
      var sel = el('select');
      sel.setAttribute('autocomplete', 'off'); // Back must not put another cell's value in it than the figure shows
      wrap.appendChild(sel);
      sel.addEventListener('change', function () { onChange(sel.value); });
      controls.appendChild(wrap);
      return { sel: sel, fill: function (opts, v) {
        clear(sel);
        opts.forEach(function (o) { var op = el('option', null, o[1]); op.value = String(o[0]); sel.appendChild(op); });
        sel.value = String(v);
      } };
    }
    function tokenOptions(upTo) {
      var out = [];
      for (var i = 0; i <= upTo; i++) out.push([i, data.tokens[i] + ' (#' + i + ')']);
      return out;
    }
    var qPick = picker('Query', [], state.q, function (v) {
      state.q = Number(v);
      if (state.k > state.q) state.k = state.q;
      redrawSplit();
    });
    var kPick = picker('Key', [], state.k, function (v) { state.k = Number(v); redrawSplit(); });
    var sides = [['key', "the key's parts"], ['query', "the query's parts"]];
    if (data.table) sides.push(['table', 'both, two by two']);
    var sPick = picker('Split', [], state.side, function (v) { state.side = v; redrawSplit(); });
    var anchor = fig.querySelector('.course-split');
    fig.insertBefore(controls, anchor);

    function redrawSplit() {
      qPick.fill(tokenOptions(data.tokens.length - 1), state.q);
      kPick.fill(tokenOptions(state.q), state.k);
      sPick.fill(sides, state.side);
      var rows = splitBars(data, state.side, state.q, state.k);
      var scale = Math.max.apply(null, rows.map(function (r) { return Math.abs(r.value); }).concat([1e-9]));
      var score = data.score[splitCell(state.q, state.k)];
      clear(bars);
      rows.forEach(function (r) {
        var tr = el('tr');
        tr.setAttribute('data-part', r.name);
        tr.setAttribute('data-value', String(r.value));
        tr.appendChild(el('th', null, r.words)).setAttribute('scope', 'row');
        var td = el('td', null, signed2(r.value));
        td.setAttribute('style', signedStyle(r.value, scale));
        tr.appendChild(td);
        var barCell = el('td', 'course-bar-cell');
        var bar = el('span', 'course-dla-bar' + (r.value < 0 ? ' course-dla-neg' : ''));
        bar.style.width = roundHalfEven(1000 * Math.abs(r.value) / scale) / 10 + '%';
        bar.setAttribute('aria-hidden', 'true');
        barCell.appendChild(bar);
        tr.appendChild(barCell);
        bars.appendChild(tr);
      });
      var total = el('tr', 'course-total');
      total.appendChild(el('th', null, 'Score (the sum)')).setAttribute('scope', 'row');
      var sum = el('td', null, minus2(score));
      sum.setAttribute('data-score', String(score));
      total.appendChild(sum);
      total.appendChild(el('td'));
      bars.appendChild(total);
      clear(rowBody);
      for (var j = 0; j <= state.q; j++) {
        var tr2 = el('tr');
        if (j === state.k) { tr2.className = 'course-split-chosen'; tr2.setAttribute('aria-current', 'true'); }
        tr2.appendChild(el('th', null, data.tokens[j])).setAttribute('scope', 'row');
        tr2.appendChild(el('td', null, minus2(data.score[splitCell(state.q, j)])));
        tr2.appendChild(el('td', null, fmt2(data.weights[state.q][j])));
        rowBody.appendChild(tr2);
      }
      var whose = state.side === 'key' ? "the key's" : state.side === 'query' ? "the query's" : "the query's and the key's";
      var head = 'layer ' + data.layer + ', head ' + data.head;
      var qt = data.tokens[state.q], kt = data.tokens[state.k];
      summary.textContent = 'In ' + head + ', the score of ' + qt + ' for ' + kt + ' is ' + minus2(score) + '; ' + whose +
        ' parts' + (state.side === 'table' ? ', two by two,' : '') + ' add up to it. The largest is ' + rows[0].words + ', ' +
        signed2(rows[0].value) + '.';
      // the tables' names follow the cell too (score_split.html writes the first ones)
      if (barsCaption) barsCaption.textContent = 'The score of ' + qt + ' for ' + kt + ' in ' + head + ', split into ' + whose +
        ' parts, largest first: they add up to ' + minus2(score) + '.';
      if (rowCaption) rowCaption.textContent = 'The row this explains: ' + qt + "'s score and weight on each token up to itself in " +
        head + '; the chosen key is marked.';
      followOpening(fig, state.q !== opened.q || state.k !== opened.k || state.side !== opened.side, resetSplit);
    }
    function resetSplit() {
      state.q = opened.q; state.k = opened.k; state.side = opened.side;
      redrawSplit();
    }
    redrawSplit();
    return null;
  }
