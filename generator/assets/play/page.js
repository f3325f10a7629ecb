  // ------------------------------------------------------------------ the playground page

  // play.html: the reader's sentence, tokenized and run here, drawn by course.js's own attention
  // figure (its pickers, "All heads", top three, table). The figure's markup is written as
  // render/templates/attention.html and _grid.html write it (tests/browser/test_play.py holds the
  // two to the same structure), then course.enhance() sets it up as it does a frozen one.
  var EOT_SHOWN = '<|endoftext|>';
  var MAX_CHARS = 2000;     // read at most this much of a paste (256 tokens rarely need 1,500)
  var TYPING_DELAY = 150;   // ms: an edit this soon after the last one waits for this much quiet
  var QUICK_RUN = 150;      // ms: the first edit after a pause runs at once while a run takes less (one
                            // that is done within the typing delay holds no later keystroke back)
  var ANNOUNCE_AFTER = 1000; // ms of quiet typing before a screen reader hears the new status (once, not a keystroke)
  var TABLE_NOW = 16;       // tokens: a longer sentence's table rows are written after its figures (at 32
                            // tokens, 1,024 hidden cells: 4-5 ms of the figure's task),
  var TABLE_ROWS = 32;      // this many a task (8,192 cells at 256 tokens): typing is read between them
  var FIG_ID = 'fig-1';
  var BAD_LINK = 'This link\u2019s sentence could not be read: below is the page\u2019s own example. Type your own.';
  var CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g; // every control character but tab and newline
  var LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/;

  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  // As render/format.py: display (a leading space as ·, newline ↵, tab ⇥), spoken, and `pos` on
  // a token whose shown text repeats (page_tokens, label_tokens).
  function pageTokens(tok, ids) {
    var toks = ids.map(function (id) {
      var text = tok.text(id), display = text;
      if (display.charAt(0) === ' ') display = '\u00b7' + display.slice(1);
      display = display.replace(/\n/g, '\u21b5').replace(/\t/g, '\u21e5');
      var spoken = text;
      if (text.charAt(0) === ' ') spoken = text.length > 1 ? 'space ' + text.slice(1) : 'space';
      else if (text === '\n') spoken = 'newline';
      return { id: id, text: text, display: display, spoken: spoken };
    });
    var counts = {};
    toks.forEach(function (t) { counts[t.display] = (counts[t.display] || 0) + 1; });
    toks.forEach(function (t, i) { if (counts[t.display] > 1) t.pos = i; });
    return toks;
  }
  // A token as every page writes it, shown and said: course.js's own rules (tokDisplay,
  // tokSpoken, tokSpan), which Python's token_label and token_spoken match.
  function label(t) { return window.course.tokDisplay(t); }
  function spokenOf(t) { return window.course.tokSpoken(t); }
  function tokSpan(t) { return window.course.tokSpan(t); }

  function nested(a, rows, cols) {
    var m = [];
    for (var i = 0; i < rows; i++) m.push(Array.prototype.slice.call(a, i * cols, (i + 1) * cols));
    return m;
  }

  // The page's own trace: the fields a trace file has, as nested arrays (window.playTrace).
  function pageTrace(text, ids, tokens, run) {
    var T = run.n, d = run.headDim;
    return {
      model: 'tiny', text: text, tokens: tokens,
      layers: run.layers.map(function (layer) {
        return { heads: layer.heads.map(function (h) {
          return {
            q: nested(h.q, T, d), k: nested(h.k, T, d), v: nested(h.v, T, d), out: nested(h.out, T, d),
            scores: nested(h.scores, T, T), weights: nested(h.weights, T, T),
            scaledMasked: nested(h.scaledMasked, T, T).map(function (row, i) {
              return row.map(function (x, j) { return j > i ? null : x; });
            })
          };
        }) };
      }),
      predictions: run.predictions
    };
  }

  // attention.html: summary, controls, the small multiples' box, the view (_grid.html), the
  // provenance line, the figure's data. Cells, summary and top three are written by course.js.
  function figureMarkup(data, st, nLayer, nHead) {
    var n = data.tokens.length;
    var fig = make('figure', 'course-fig');
    fig.id = FIG_ID;
    [['data-kind', 'attention'], ['data-model', 'tiny'], ['data-layer', st.layer], ['data-head', st.head],
      ['data-token', st.token], ['data-show-heads', 'false']].forEach(function (a) { fig.setAttribute(a[0], String(a[1])); });
    // The summary is live only once the reader works this figure (a picker, a grid, a button):
    // a new sentence's figure is announced once by the page's status, not at every keystroke.
    var summary = make('p', 'course-summary');
    summary.setAttribute('aria-live', 'off');
    var listen = function () { summary.setAttribute('aria-live', 'polite'); };
    fig.addEventListener('focusin', listen, { once: true });
    fig.addEventListener('pointerdown', listen, { once: true });
    fig.appendChild(summary);
    var controls = make('div', 'course-controls');
    var pickers = [
      ['token', 'Token', data.tokens.map(function (t, j) { return j + ': ' + label(t); }), st.token],
      ['layer', 'Layer', range(nLayer).map(function (j) { return 'Layer ' + (j + 1); }), st.layer],
      ['head', 'Head', range(nHead).map(function (j) { return 'Head ' + (j + 1); }), st.head]
    ];
    pickers.forEach(function (p) {
      var span = make('span', 'course-control'), lab = make('label', null, p[1]), sel = make('select');
      lab.setAttribute('for', FIG_ID + '-' + p[0]);
      sel.id = FIG_ID + '-' + p[0];
      sel.setAttribute('data-control', p[0]);
      p[2].forEach(function (text, j) {
        var o = make('option', null, text);
        o.value = String(j);
        if (j === p[3]) o.selected = true;
        sel.appendChild(o);
      });
      span.appendChild(lab);
      span.appendChild(sel);
      controls.appendChild(span);
    });
    var btn = make('button', null, 'All heads');
    btn.type = 'button';
    btn.setAttribute('data-action', 'heads');
    btn.setAttribute('aria-expanded', 'false');
    btn.setAttribute('aria-controls', FIG_ID + '-heads');
    controls.appendChild(btn);
    fig.appendChild(controls);
    var heads = make('div', 'course-heads');
    heads.id = FIG_ID + '-heads';
    heads.hidden = true;
    fig.appendChild(heads);
    var view = make('div', 'course-view' + (n <= 8 ? ' course-view-side' : n <= 16 ? ' course-view-side-wide' : ''));
    view.style.setProperty('--course-n', String(n));
    var plot = make('div', 'course-plot');
    plot.setAttribute('aria-hidden', 'true');
    view.appendChild(plot);
    var foot = make('div', 'course-view-foot');
    foot.appendChild(make('p', 'course-note', '0.00 means less than 0.005. Hidden cells are later tokens that this token cannot see.'));
    view.appendChild(foot);
    var wrap = make('div', 'course-table-wrap'), table = make('table', 'course-table');
    table.appendChild(make('caption', null, 'Attention weights: each row is a token, each column a token it can look at. Rows sum to 1.'));
    var thead = make('thead'), hr = make('tr'), corner = make('th');
    corner.setAttribute('scope', 'col');
    corner.appendChild(make('span', 'course-visually-hidden', 'Token that looks'));
    hr.appendChild(corner);
    data.tokens.forEach(function (t) { var th = make('th'); th.setAttribute('scope', 'col'); th.appendChild(tokSpan(t)); hr.appendChild(th); });
    thead.appendChild(hr);
    table.appendChild(thead);
    var tbody = make('tbody');
    if (n <= TABLE_NOW) tableRows(tbody, data.tokens, st.token);
    table.appendChild(tbody);
    wrap.appendChild(table);
    view.appendChild(wrap);
    var top3 = make('div', 'course-top3'), ol = make('ol');
    ol.setAttribute('start', '0'); // as _grid.html: tokens count from 0, as the token menu
    data.tokens.forEach(function () { ol.appendChild(make('li')); });
    top3.appendChild(ol);
    view.appendChild(top3);
    fig.appendChild(view);
    var cap = make('figcaption', 'course-prov');
    cap.appendChild(make('span', 'course-prov-model', 'Our tiny model (4 layers \u00d7 4 heads), computed in this page from its float32 weights.'));
    fig.appendChild(cap);
    var json = make('script', 'course-data');
    json.type = 'application/json';
    json.textContent = JSON.stringify(data);
    fig.appendChild(json);
    return fig;
  }

  // The table's rows (n x n cells: 65,536 at 256 tokens), as _grid.html writes them. A longer
  // sentence's table is hidden until the reader opens it: its rows are written after the heatmap
  // and the guesses are drawn (controller.js, fillTable), or at once when the reader opens it.
  // Rows from..to - 1 (all when not given).
  function tableRows(tbody, tokens, focus, from, to) {
    var n = tokens.length, frag = document.createDocumentFragment();
    tokens.slice(from || 0, to == null ? n : to).forEach(function (t, i) {
      var q = i + (from || 0);
      var tr = make('tr');
      if (q === focus) tr.className = 'course-focus';
      var th = make('th');
      th.setAttribute('scope', 'row');
      th.appendChild(tokSpan(t));
      tr.appendChild(th);
      for (var k = 0; k < n; k++) {
        var td = make('td', k > q ? 'course-masked' : null, k > q ? 'hidden' : null);
        td.setAttribute('data-q', String(q));
        td.setAttribute('data-k', String(k));
        tr.appendChild(td);
      }
      frag.appendChild(tr);
    });
    tbody.appendChild(frag);
  }

  function range(n) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a; }

  // #s=<the sentence as base64url UTF-8>&layer=2&head=3&token=4&ablation=4,262,1 (layer and head
  // from 1, the token from 0: as the pickers and the chapters count; the ablation grid's position,
  // from 0, then its one or two target token ids).
  function encodeSentence(text) {
    var bytes = utf8.encode(text), bin = '';
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function decodeSentence(s) {
    var bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); // a leading U+FEFF is the reader's
  }
  function readHash(hash) {
    var out = {};
    String(hash || '').replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('='), k = kv.slice(0, i), v = kv.slice(i + 1);
      if (i < 0) return;
      if (k === 's') out.s = v;
      // layer and head count from 1, as their menus; token from 0, as its menu and the chapters' addresses
      else if (k === 'layer' || k === 'head' || k === 'token') { var x = parseInt(v, 10); if (isFinite(x)) out[k] = k === 'token' ? x : x - 1; }
      else if (k === 'ablation') {
        var n = v.split(',');
        if (n.length >= 2 && n.length <= 3 && n.every(function (d) { return /^\d{1,6}$/.test(d); })) {
          out.ablation = { token: Number(n[0]), targets: n.slice(1).map(Number) };
        }
      }
    });
    return out;
  }
