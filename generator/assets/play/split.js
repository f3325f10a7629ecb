  // ------------------------------------------------------------------ why the head looks there

  // The score split (forward.js, Model.scoreSplit) of the shown head on the reader's sentence:
  // for the focus token (the query) and a key (where the head looks most, or the reader's pick),
  // each part's share as a signed bar, largest first, adding up to the score, as the chapters'
  // score-split figure draws it (render/score_split.py).
  function splitWords(part, token) {
    if (part === 'token') return 'token ' + token;
    if (part === 'position') return 'position of ' + token;
    if (part.indexOf('MLP') === 0) return "output of layer " + part.slice(3) + "'s MLP";
    if (part.charAt(0) === 'L') { var lh = part.slice(1).split('H'); return 'output of layer ' + lh[0] + ', head ' + lh[1]; }
    return 'biases';
  }

  // {layer, head, query, key, side, ms, score, rows: [{name, words, value}]} for one cell
  function splitCellRows(model, ids, tokens, layer, head, query, key, side) {
    var t0 = performance.now();
    var s = model.scoreSplit(ids, layer, head, { query: query, key: key }); // one cell: the stream's parts are kept per sentence
    var ms = performance.now() - t0, T = ids.length, TT = T * T, cell = query * T + key, rows = [];
    var qt = label(tokens[query]), kt = label(tokens[key]);
    if (side === 'table' && s.table) {
      var three = ['token', 'position', 'biases'];
      three.forEach(function (a, i) {
        three.forEach(function (b, j) {
          rows.push({ name: a + '.' + b, words: splitWords(a, qt) + ' (query) with ' + splitWords(b, kt) + ' (key)', value: s.table[(i * 3 + j) * TT + cell] });
        });
      });
    } else {
      var arr = side === 'query' ? s.query : s.key, tk = side === 'query' ? qt : kt;
      s.parts.forEach(function (p, i) { rows.push({ name: p, words: splitWords(p, tk), value: arr[i * TT + cell] }); });
    }
    rows.sort(function (a, b) { return b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
    return { layer: layer, head: head, query: query, key: key, side: side, ms: ms, score: s.score[cell], rows: rows, split: s, ids: ids };
  }

  function drawSplitBox(box, got, tokens, weightsRow, onPick) {
    while (box.firstChild) box.removeChild(box.firstChild);
    var T = got.query + 1, controls = make('div', 'course-split-controls');
    function picker(labelText, options, value, name) {
      var wrap = make('label', 'course-split-picker', labelText + ' '), sel = make('select');
      sel.id = 'play-split-' + name;
      options.forEach(function (o) { var op = make('option', null, o[1]); op.value = String(o[0]); sel.appendChild(op); });
      sel.value = String(value);
      sel.addEventListener('change', function () { onPick(name, sel.value); });
      wrap.appendChild(sel);
      controls.appendChild(wrap);
    }
    var keys = [];
    for (var j = 0; j < T; j++) keys.push([j, label(tokens[j]) + ' (#' + j + ', weight ' + window.course.fmt(weightsRow[j], 2) + ')']);
    picker('Key', keys, got.key, 'key');
    var sides = [['key', "the key's parts"], ['query', "the query's parts"]];
    if (got.split.table) sides.push(['table', 'both, two by two']);
    picker('Split', sides, got.side, 'side');
    box.appendChild(controls);
    var signed = window.course.signed2, minus = function (x) { return window.course.fmt(x, 2).replace('-', '\u2212'); };
    box.appendChild(make('p', 'course-summary', 'In layer ' + (got.layer + 1) + ', head ' + (got.head + 1) + ', the score of ' +
      label(tokens[got.query]) + ' for ' + label(tokens[got.key]) + ' is ' + minus(got.score) + '; the parts below add up to it. The largest is ' +
      got.rows[0].words + ', ' + signed(got.rows[0].value) + '.'));
    var wrap = make('div', 'course-table-wrap'), table = make('table', 'course-table course-causal-bars course-split-bars');
    table.appendChild(make('caption', null, 'The score of ' + label(tokens[got.query]) + ' for ' + label(tokens[got.key]) +
      ' split into its parts, largest first: they add up to ' + minus(got.score) + '.'));
    var head = make('thead'), hr = make('tr');
    ['Part', 'Share', ''].forEach(function (h) { var th = make('th', h ? null : 'course-visually-hidden', h || 'Bar'); th.setAttribute('scope', 'col'); hr.appendChild(th); });
    head.appendChild(hr);
    table.appendChild(head);
    var body = make('tbody'), scale = Math.max.apply(null, got.rows.map(function (r) { return Math.abs(r.value); }).concat([1e-9]));
    got.rows.forEach(function (r) {
      var tr = make('tr'), th = make('th', null, r.words), td = make('td', null, signed(r.value)), bc = make('td', 'course-bar-cell');
      tr.setAttribute('data-part', r.name);
      tr.setAttribute('data-value', String(r.value));
      th.setAttribute('scope', 'row');
      var bar = make('span', 'course-dla-bar' + (r.value < 0 ? ' course-dla-neg' : ''));
      bar.style.width = (Math.round(1000 * Math.abs(r.value) / scale) / 10) + '%';
      bar.setAttribute('aria-hidden', 'true');
      bc.appendChild(bar);
      tr.appendChild(th); tr.appendChild(td); tr.appendChild(bc);
      body.appendChild(tr);
    });
    var tot = make('tr', 'course-total'), tth = make('th', null, 'Score (the sum)'), ttd = make('td', null, minus(got.score));
    tth.setAttribute('scope', 'row');
    ttd.setAttribute('data-score', String(got.score));
    tot.appendChild(tth); tot.appendChild(ttd); tot.appendChild(make('td'));
    body.appendChild(tot);
    table.appendChild(body);
    wrap.appendChild(table);
    box.appendChild(wrap);
  }
