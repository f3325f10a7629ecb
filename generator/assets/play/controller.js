  // ------------------------------------------------------------------ the page's state

  // What the reader's text becomes before the model sees it: [ids, notes]. `notes` say what was
  // changed (control characters dropped, a long paste cut, the context cut at 256 tokens); a
  // text with nothing to show gives ids null and one note that says why.
  function prepare(tok, nCtx, raw) {
    var notes = [], text = String(raw), cut = false;
    if (text.length > MAX_CHARS) {
      cut = true;
      notes.push('Only the first ' + MAX_CHARS.toLocaleString('en') + ' of your ' + text.length.toLocaleString('en') + ' characters are read.');
      text = text.slice(0, MAX_CHARS);
      if (/[\ud800-\udbff]$/.test(text)) text = text.slice(0, -1);
    }
    var controls = (text.match(CONTROL) || []).length;
    if (controls) {
      text = text.replace(CONTROL, '');
      notes.push('Left out ' + controls + ' control character' + (controls > 1 ? 's' : '') + ' (only tabs and newlines are kept).');
    }
    if (LONE.test(text)) {
      text = text.replace(/[\ud800-\udfff]/g, function (c, i, s) {
        var hi = c.charCodeAt(0) < 0xdc00;
        var pair = hi ? /[\udc00-\udfff]/.test(s.charAt(i + 1)) : /[\ud800-\udbff]/.test(s.charAt(i - 1));
        return pair ? c : '\ufffd';
      });
      notes.push('A broken character was read as \ufffd.');
    }
    // what was left out is said too: a pasted run of spaces or control characters reads as empty
    if (!text.trim()) return { ids: null, text: text, notes: notes.concat(['Type a sentence to see what the tiny model does with it.']) };
    var ids = [tok.eotId].concat(tok.encode(text));
    if (ids.every(function (id) { return id === tok.eotId; })) {
      return { ids: null, text: text, notes: notes.concat(['Your text is only ' + EOT_SHOWN + ', the token that already starts every sentence here: type some words.']) };
    }
    if (ids.length > nCtx) {
      notes.push('The tiny model reads at most ' + nCtx + ' tokens: ' + (cut ? 'the characters read make ' : 'your text has ') +
        ids.length.toLocaleString('en') + ' (with ' + EOT_SHOWN + '), so only the first ' + nCtx + ' are shown.');
      ids = ids.slice(0, nCtx);
    }
    return { ids: ids, text: text, notes: notes };
  }

  // How many of the tokens are a piece of a character, which the page can only show as \ufffd: a
  // character the tiny model has no token for is read as its bytes, each a token of its own.
  function bytePieces(tok, ids) {
    var n = 0;
    for (var i = 0; i < ids.length; i++) if (tok.text(ids[i]).indexOf('\ufffd') >= 0) n++;
    return n;
  }
  function piecesNote(n) {
    return (n === 1 ? 'One token is shown as \ufffd: it is' : n + ' tokens are shown as \ufffd: each is') +
      ' a piece of a character the tiny model has no token for (a letter with an accent, an emoji,' +
      ' a letter of another alphabet). The model reads such a character as the 2 to 4 bytes a' +
      ' computer stores it in, each byte a token of its own, and a byte alone is no letter that can be shown.';
  }

  function startPage() {
    var root = document.getElementById('course-play');
    if (!root) return;
    var input = root.querySelector('textarea');
    var status = root.querySelector('.course-play-status');
    var live = root.querySelector('.course-play-live'); // what a screen reader hears: the status, once typing pauses
    var tokBox = root.querySelector('.course-play-tokens');
    var figBox = root.querySelector('.course-play-figure');
    var predBox = root.querySelector('.course-play-predictions');
    var scoreBox = root.querySelector('.course-play-scores');
    var abBox = root.querySelector('.course-play-ablation');
    var splitBox = root.querySelector('.course-play-split');
    var splitWant = { key: null, side: 'key' }; // the reader's key (null: where the head looks most) and side
    var tok = null, model = null, runner = null, timer = null, shown = null, want = readHash(location.hash);
    // kept: the last figure while the box is empty (the next sentence opens on its state and
    // views); linkNote: why a link's sentence is not the one shown, until the reader types
    var kept = null, linkNote = null;
    var last = null; // the sentence shown now: {text, ids, tokens, run}
    var api = root.coursePlay = { runs: 0, dropped: 0, lastMs: null, decodeMs: null, error: null, workerError: null };
    // the runner (runner.js) while the model runs in a worker; worker: whether it does (null before the weights load)
    Object.defineProperty(api, 'runner', { get: function () { return runner; } });
    Object.defineProperty(api, 'worker', { get: function () { return model ? runner !== null : null; } });
    // The numbers shown now as a trace file has them (nested arrays), made when asked for
    // (the tests read it; the console too: document.getElementById('course-play').coursePlay.trace).
    Object.defineProperty(api, 'trace', {
      get: function () { return last && pageTrace(last.text, last.ids, last.tokens, last.run); }
    });
    // what is shown now, from wherever it ran (the tests hold it to runs in this thread)
    api.shown = function () {
      return last && { ids: last.ids, final: Array.from(last.run.final), ablation: last.ablationResult || null, ablationAt: last.ablation || null };
    };
    api.runIds = function (ids) { return pageTrace('', ids, pageTokens(tok, ids), model.run(ids)); };
    api.scoresFor = function (ids) { return headScores(model.run(ids, { predictions: false }), ids); };
    // the ablation numbers at one position, as a trace's causal block holds them (test_play)
    api.ablationFor = function (ids, pos, follow) { var job = model.ablation(ids, pos, follow); while (job.next()) { /* all */ } return job.result; };
    api.signedStyle = signedStyle;
    // the ablation figure for these targets (one or two token ids) after token `token`
    api.showAblation = function (st) { ablate(last, st); };

    if (want.s != null) {
      try { input.value = decodeSentence(want.s); } catch (e) { linkNote = BAD_LINK; }
    }

    // The status on screen at once; the live region (role=status) once the reader has paused
    // ANNOUNCE_AFTER ms, and only when it says something new: not one announcement a keystroke.
    var announceTimer = null;
    function say(lines) {
      if (status.textContent !== lines.join('')) {
        clear(status);
        lines.forEach(function (line) { status.appendChild(make('p', null, line)); });
      }
      if (!live) return;
      if (announceTimer) clearTimeout(announceTimer);
      announceTimer = setTimeout(function () {
        announceTimer = null;
        var text = lines.join(' ');
        if (live.textContent !== text) live.textContent = text;
      }, ANNOUNCE_AFTER);
    }
    function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

    // Why the shown head looks where it looks (split.js): its score for the focus token and a key,
    // split into the parts of the stream, on the reader's sentence. api.splitMs: the split's time.
    function drawSplit() {
      var sent = last, f = sent && sent.figure;
      if (!splitBox || !sent || !f || !f.state) return;
      var st = f.state, T = sent.ids.length, q = Math.min(st.token, T - 1);
      var w = sent.run.layers[st.layer].heads[st.head].weights, row = Array.prototype.slice.call(w, q * T, q * T + q + 1);
      var key = splitWant.key != null && splitWant.key <= q ? splitWant.key : row.indexOf(Math.max.apply(null, row));
      var side = splitWant.side === 'table' && st.layer !== 0 ? 'key' : splitWant.side;
      var got = splitCellRows(model, sent.ids, sent.tokens, st.layer, st.head, q, key, side);
      api.splitMs = got.ms;
      api.split = { layer: got.layer, head: got.head, query: got.query, key: got.key, side: got.side, score: got.score,
                    parts: got.rows.map(function (r) { return [r.name, r.value]; }) };
      var focused = document.activeElement && splitBox.contains(document.activeElement) ? document.activeElement.id : null;
      drawSplitBox(splitBox, got, sent.tokens, row, function (name, value) {
        if (name === 'key') splitWant.key = Number(value); else splitWant.side = value;
        guarded(drawSplit);
      });
      if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
      root.dispatchEvent(new CustomEvent('play:split', { detail: api.split }));
    }

    // ab: the ablation grid's {token, targets}, when it is drawn (or asked for by the address)
    function writeHash(text, st, ab) {
      var h = '#s=' + encodeSentence(text) + (st ? '&layer=' + (st.layer + 1) + '&head=' + (st.head + 1) + '&token=' + st.token : '') +
        (ab && ab.targets.length ? '&ablation=' + [ab.token].concat(ab.targets).join(',') : '');
      if (location.hash === h) return;
      try { history.replaceState(history.state, '', location.href.replace(/#.*$/, '') + h); } catch (e) { /* some file:// setups */ }
    }

    // Every input bumps `gen`: a stage of an older sentence's work that has not run yet (its
    // run, its heatmap's "drawn", its guesses, its table) sees a newer gen and is dropped.
    var gen = 0;
    function update() {
      timer = null;
      var mine = gen, t0 = performance.now();
      var prep = prepare(tok, model.nCtx, input.value);
      if (!prep.ids) {
        say(prep.notes);
        clear(tokBox); clear(figBox); clear(predBox); clear(scoreBox);
        if (abBox) clear(abBox);
        if (splitBox) clear(splitBox);
        if (shown) kept = shown;
        // a link to this text says the same; a link whose text reads as nothing keeps its address
        // until the reader types (want.s: the page opened on it)
        if (!linkNote && !(want && want.s != null)) writeHash(prep.text, null, null);
        shown = null;
        last = null;
        root.setAttribute('data-state', 'empty');
        return;
      }
      var linked = want != null, st = startState(prep.ids.length);
      if (!runner) {
        var run = model.run(prep.ids, { predictions: false });
        show(prep, mine, t0, st, run.layers[st.layer].heads[st.head].weights, Promise.resolve(run));
        return;
      }
      // In the worker (runner.js): the shown head's weights come back as soon as its layer is
      // done, and its heatmap is drawn here while the later layers compute there; the rest of
      // the run follows, for the head-type scores and everything after.
      var settle, whole = new Promise(function (resolve) { settle = resolve; });
      runner.run(prep.ids, function (run) { settle(run); }, [st.layer, st.head], function (weights) {
        if (gen !== mine) { api.dropped++; return; } // edited since: the newer text has its own run coming
        guarded(function () {
          // a head the reader picked on the last figure since this edit: drawn from the whole run
          var now = !linked && shown && shown.state;
          if (!now || (now.layer === st.layer && now.head === st.head)) { show(prep, mine, t0, st, weights, whole); return; }
          var picked = { layer: now.layer, head: now.head, token: st.token };
          whole.then(function (run) {
            if (gen !== mine) { api.dropped++; return; }
            guarded(function () { show(prep, mine, t0, picked, run.layers[picked.layer].heads[picked.head].weights, whole); });
          });
        });
      });
    }

    // The figure's layer, head and token for a sentence of n tokens: a link's (once), else the
    // ones shown now, on its last token.
    function startState(n) {
      var prev = shown || kept, old = prev && prev.state;
      var st = { layer: 0, head: 0, token: n - 1 };
      if (want) ['layer', 'head', 'token'].forEach(function (k) { if (want[k] != null) st[k] = want[k]; });
      else if (old) st = { layer: old.layer, head: old.head, token: n - 1 };
      return {
        layer: Math.max(0, Math.min(st.layer, model.nLayer - 1)), head: Math.max(0, Math.min(st.head, model.nHead - 1)),
        token: Math.max(0, Math.min(st.token, n - 1))
      };
    }

    // The sentence's figures: the tokens and the heatmap from the shown head's weights (a
    // Float64Array, query by key) at once; the head-type scores when the whole run (`whole`, a
    // Promise) is there; then in idle time the guesses, 32 positions a task, then a long
    // sentence's hidden table.
    function show(prep, mine, t0, st, weights, whole) {
      var tShown = performance.now();
      var tokens = pageTokens(tok, prep.ids);
      var abWant = want ? want.ablation || null : null;
      want = null;
      var views = openViews(shown || kept); // the last figure's, opened again once this one is on screen
      drawTokens(tokens);
      var plotted = drawFigure(prep.text, tokens, weights, whole, st);
      var tFigure = performance.now();
      var fig = shown, runNo = ++api.runs;
      whole.then(function (run) {
        if (gen !== mine || fig !== shown) { api.dropped++; return; } // a newer sentence is on its way
        guarded(function () { showRun(run); });
      });
      function showRun(run) {
        var tRun = performance.now();
        drawScores(headScores(run, prep.ids));
        clear(predBox);
        predBox.appendChild(make('p', 'course-play-wait', 'Working out the guesses\u2026'));
        if (abBox) { clear(abBox); abBox.appendChild(make('p', 'course-play-wait', 'Waiting for the guesses\u2026')); }
        var notes = (linkNote ? [linkNote] : []).concat(prep.notes);
        var pieces = bytePieces(tok, prep.ids);
        say((notes.length ? notes : ['The tiny model read ' + tokens.length + ' tokens, here in your browser.'])
          .concat(pieces ? [piecesNote(pieces)] : []));
        var mineLast = last = { text: prep.text, ids: prep.ids, tokens: tokens, run: run, abWant: abWant, figure: fig };
        root.setAttribute('data-state', notes.length ? 'noted' : 'ok');
        var tEnd = performance.now();
        // on screen: the heatmap painted, and a frame after the scores
        Promise.all([plotted, window.course.afterPaint()]).then(function () {
          if (gen !== mine || last !== mineLast) return; // a newer sentence is on its way
          var tDrawn = performance.now();
          api.lastMs = tDrawn - t0;
          // the address once the figures are on screen: history.replaceState took 1-2 ms of the
          // scores' task on file:// (what was read: a pasted megabyte is not put in the address)
          if (!linkNote) writeHash(prep.text, fig && fig.state, abWant);
          // and where it went (make bench): the model up to the shown head's layer, with its
          // message back; the figure (its markup, set-up and synchronous drawing); the wait for
          // the rest of the run; the scores and the rest; the wait for paint
          api.lastStages = { model: tShown - t0, figure: tFigure - tShown, 'later layers': tRun - tFigure, rest: tEnd - tRun, paint: tDrawn - tEnd };
          root.dispatchEvent(new CustomEvent('play:drawn', { detail: { runs: runNo, ms: api.lastMs } }));
          if (fig === shown) reopen(fig, views);
          var preds = [], n = run.n;
          (function guesses(from) {
            whenIdle(function () {
              if (gen !== mine || last !== mineLast) { api.dropped++; return; }
              preds = preds.concat(model.predict(run.final, n, from, from + GUESS_CHUNK));
              if (from + GUESS_CHUNK < n) { guesses(from + GUESS_CHUNK); return; }
              run.predictions = preds;
              drawPredictions(tokens, preds);
              window.course.scrollBoxes(); // the guesses' and the scores' tables, on a phone
              root.dispatchEvent(new CustomEvent('play:guesses', { detail: { runs: runNo } }));
              whenIdle(function () { if (gen === mine && last === mineLast && fig === shown) fillTable(fig); });
              if (abBox) whenIdle(function () { if (gen === mine && last === mineLast) ablate(mineLast, mineLast.abWant); }); // a task of its own
              if (splitBox) whenIdle(function () { if (gen === mine && last === mineLast) guarded(drawSplit); }); // and the split, one more
            });
          })(0);
        });
      }
    }

    var GUESS_CHUNK = 32; // positions of top-5 guesses per task (a few ms each): typing is read between them
    function whenIdle(fn) {
      if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: 100 });
      else setTimeout(fn, 0);
    }

    // A long sentence's table (page.js, TABLE_NOW): its rows written TABLE_ROWS a task in idle
    // time, then set up by course.js's own view code and filled, TABLE_ROWS rows a task again,
    // with the head shown at each task; the rest at once when the reader opens it (`now`). A
    // newer figure stops the work.
    function fillTable(f, now) {
      var v = f && f.views[0], tbody = v && v.table && v.table.tBodies[0];
      if (!tbody || !v.table.hasAttribute('aria-busy')) return; // written and filled already, or short
      var n = v.tokens.length, next = function () { whenIdle(function () { if (f === shown) fillTable(f); }); };
      var from = tbody.rows.length;
      if (from < n) {
        tableRows(tbody, v.tokens, v.state.token, from, now ? n : Math.min(n, from + TABLE_ROWS));
        if (!now) { next(); return; }
      }
      if (f.tableFilled == null) { v.prepareTable(); v.renderFocus(v.state.token); f.tableFilled = 0; }
      var to = now ? n : Math.min(n, f.tableFilled + TABLE_ROWS);
      v.renderCells((v.weights[v.state.layer] || [])[v.state.head] || [], f.tableFilled, to);
      f.tableFilled = to;
      if (to < n) { next(); return; }
      v.table.removeAttribute('aria-busy');
    }

    // What removing each head does (ablation.js): the reader picks a position and a target next
    // token (its top 5 guesses there), against a second one (a logit difference) or none (a
    // log-probability); 32 ablated runs, in the worker (or here, one per idle task), then the
    // figure as ablation.html draws it.
    var abGen = 0;
    function ablate(sent, st) {
      if (!sent || !sent.run.predictions || !abBox) return;
      var mine = gen, myAb = ++abGen, n = sent.tokens.length;
      var pos = st && st.token != null ? Math.max(0, Math.min(st.token, n - 1)) : n - 1;
      var guesses = sent.run.predictions[pos].map(function (g) { return g.id; });
      var known = function (id, i, all) { return id != null && id >= 0 && id < model.nVocab && all.indexOf(id) === i; };
      var targets = (st && st.targets ? st.targets.slice(0, 2) : []).filter(known); // an address's ids are checked, not trusted
      if (!targets.length) targets = guesses.slice(0, 2).filter(known);
      sent.ablation = { token: pos, targets: targets };
      sent.abWant = null;
      if (sent === last && !linkNote) writeHash(sent.text, shown && shown.state, sent.ablation);
      var focused = document.activeElement && abBox.contains(document.activeElement) ? document.activeElement.id : null;
      clear(abBox);
      abBox.appendChild(ablationControls(sent, pos, guesses, targets));
      if (focused && document.getElementById(focused)) document.getElementById(focused).focus(); // the picker the reader changed
      var note = make('p', 'course-play-wait', 'Removing each head in turn\u2026');
      note.setAttribute('role', 'status');
      abBox.appendChild(note);
      var t0 = performance.now();
      function stale() { return gen !== mine || last !== sent || myAb !== abGen; }
      function draw(result) {
        api.ablationMs = performance.now() - t0;
        sent.ablationResult = result;
        var toks = pageTokens(tok, targets);
        note.parentNode.replaceChild(ablationFigure(result, targets.map(function (id, i) { return i; }), sent.tokens, toks), note);
        window.course.scrollBoxes();
        root.dispatchEvent(new CustomEvent('play:ablation', { detail: { token: pos, targets: targets } }));
      }
      if (runner) { // in the worker, all 32 runs
        runner.ablate(sent.ids, pos, targets, function (result) {
          if (stale()) { api.dropped++; return; }
          guarded(function () { draw(result); });
        });
        return;
      }
      var job = model.ablation(sent.ids, pos, targets);
      (function step() {
        whenIdle(function () {
          if (stale()) { api.dropped++; return; }
          if (job.next()) { step(); return; }
          draw(job.result);
        });
      })();
    }

    function ablationControls(sent, pos, guesses, targets) {
      var box = make('div', 'course-controls course-play-ab-controls');
      function picker(id, text, options, value, onchange) {
        var span = make('span', 'course-control'), lab = make('label', null, text), sel = make('select');
        lab.setAttribute('for', id);
        sel.id = id;
        options.forEach(function (o) {
          var opt = make('option', null, o[1]);
          opt.value = String(o[0]);
          if (o[0] === value) opt.selected = true;
          sel.appendChild(opt);
        });
        sel.addEventListener('change', function () { onchange(sel.value); });
        span.appendChild(lab);
        span.appendChild(sel);
        box.appendChild(span);
      }
      var ids = guesses.slice();
      targets.forEach(function (id) { if (ids.indexOf(id) < 0) ids.push(id); });
      function named(id) { return label(pageTokens(tok, [id])[0]); }
      picker('play-ab-token', 'After token', sent.tokens.map(function (t, j) { return [j, j + ': ' + label(t)]; }), pos,
        function (v) { ablate(sent, { token: Number(v) }); });
      picker('play-ab-target', 'Next token', ids.map(function (id) { return [id, named(id)]; }), targets[0],
        function (v) { var a = Number(v), b = targets[1] === a ? null : targets[1]; ablate(sent, { token: pos, targets: [a, b] }); });
      picker('play-ab-against', 'Against', [[-1, 'nothing: its log-probability']].concat(ids.map(function (id) { return [id, named(id)]; })),
        targets.length > 1 ? targets[1] : -1,
        function (v) { var b = Number(v); ablate(sent, { token: pos, targets: [targets[0], b < 0 || b === targets[0] ? null : b] }); });
      return box;
    }

    function drawTokens(tokens) {
      clear(tokBox);
      tokBox.appendChild(make('span', 'course-play-count', tokens.length + ' tokens: '));
      tokens.forEach(function (t) { tokBox.appendChild(tokSpan(t)); tokBox.appendChild(document.createTextNode(' ')); });
    }

    // As a frozen figure: the page's data holds only the shown head's weights, the rest wait in
    // parts (courseTraceParts), which course.js merges in when the reader picks another head
    // (its own part, "<key>/<layer>-<head>") or opens "All heads" (every head's grid, "<key>/weights"),
    // as a chapter's per-head parts. Each is made as nested arrays only when course.js asks for it
    // (1 M numbers at 256 tokens for all of them): course.js's idle loading of the shown head's
    // part after the first paint then costs nothing. The shown head's part is there at once; the
    // others are Promises of the whole run (`whole`), which course.js waits for as for a file.
    function drawFigure(text, tokens, weights, whole, st) {
      var T = tokens.length, key = 'play-' + (api.runs + 1);
      var shownGrid = nested(weights, T, T);
      var light = range(model.nLayer).map(function (l) { return range(model.nHead).map(function (h) { return l === st.layer && h === st.head ? shownGrid : null; }); });
      var parts = window.courseTraceParts = window.courseTraceParts || {};
      Object.keys(parts).forEach(function (k) { if (/^play-/.test(k)) delete parts[k]; });
      var grids = light.map(function (row) { return row.slice(); });
      function grid(run, l, h) {
        return grids[l][h] || (grids[l][h] = nested(run.layers[l].heads[h].weights, T, T));
      }
      function lazyPart(name, make) {
        var memo = null;
        Object.defineProperty(parts, key + '/' + name, { enumerable: true, configurable: true, get: function () { return memo || (memo = make()); } });
      }
      light.forEach(function (row, l) {
        row.forEach(function (_, h) {
          lazyPart(l + '-' + h, function () {
            if (l === st.layer && h === st.head) return { layer: l, head: h, fields: { weights: shownGrid } };
            return whole.then(function (run) { return { layer: l, head: h, fields: { weights: grid(run, l, h) } }; });
          });
        });
      });
      lazyPart('weights', function () {
        return whole.then(function (run) { return { weights: light.map(function (row, l) { return row.map(function (_, h) { return grid(run, l, h); }); }) }; });
      });
      var data = {
        key: key, model: 'tiny', text: text, meta: { model: 'tiny', nLayer: model.nLayer, nHead: model.nHead, headDim: model.headDim },
        tokens: tokens, weights: light
      };
      var fig = figureMarkup(data, st, model.nLayer, model.nHead);
      clear(figBox);
      figBox.appendChild(fig);
      window.course.enhance();
      var f = (window.course.figures || []).filter(function (x) { return x.el === fig; })[0];
      if (!f) return Promise.resolve(false);
      // this page writes its own hash (the sentence with the state), not course.js's #fig-1:…
      Object.defineProperty(f, 'inHash', { get: function () { return false; }, set: function () {} });
      f.views.forEach(function (v) { v.renderDom(null); });
      shown = f;
      f.firstMode = f.mode; // its own (a phone opens a long sentence in lines): only a mode the reader picked is carried
      fig.addEventListener('course:statechange', function () { writeHash(text, f.state, last && last.text === text ? last.ablation || last.abWant : null); });
      fig.addEventListener('course:statechange', function () { if (last && last.text === text && last.figure === f && splitBox && splitBox.firstChild) guarded(drawSplit); });
      // the reader opens a long sentence's table before its rows were written: written now,
      // before the toggle's own listener shows it
      var toggle = fig.querySelector('button.course-table-toggle');
      var table = fig.querySelector('table.course-table');
      if (T > TABLE_NOW && table) table.setAttribute('aria-busy', 'true'); // until fillTable has written and filled it
      if (toggle) toggle.addEventListener('click', function () { fillTable(f, true); }, true);
      // drawn now, in this task (course.js's scheduler asks the same view for the same promise):
      // it resolves once the heatmap is on screen
      return f.plot();
    }

    // "All heads", the table and the lines view, as the reader left them on a figure: a new
    // sentence's figure opens them again after its first paint (the table is filled in idle time,
    // aria-busy until then, as when it is closed)
    function openViews(f) {
      if (!f) return null;
      var v = f.views && f.views[0];
      return {
        heads: !!(f.headsButton && f.headsButton.getAttribute('aria-expanded') === 'true'),
        table: !!(v && v.tableToggle && v.tableToggle.button.getAttribute('aria-expanded') === 'true'),
        mode: f.mode !== f.firstMode ? f.mode : null
      };
    }
    function reopen(f, open) {
      var v = f.views && f.views[0];
      if (!open) return;
      if (open.mode && open.mode !== f.mode) f.setState({ view: open.mode }, {});
      if (open.heads && f.toggleHeads) f.toggleHeads(true, {});
      if (open.table && v && v.tableToggle) v.tableToggle.set(true);
    }

    var KIND_NAMES = { 'previous-token': 'Previous token', 'duplicate-token': 'Duplicate token', induction: 'Induction', sink: 'Attention sink' };
    function drawScores(hs) {
      clear(scoreBox);
      var wrap = make('div', 'course-table-wrap'), table = make('table', 'course-table course-play-scoretable');
      table.appendChild(make('caption', null, 'Each head\u2019s share of attention on each pattern, on your sentence; the last row is a head that spreads its attention evenly. A dash: your sentence has no token where the pattern applies (duplicate token and induction need a repeated token).'));
      var thead = make('thead'), hr = make('tr');
      ['Head'].concat(SCORE_KINDS.map(function (k) { return KIND_NAMES[k]; })).forEach(function (h) {
        var th = make('th', null, h); th.setAttribute('scope', 'col'); hr.appendChild(th);
      });
      thead.appendChild(hr);
      table.appendChild(thead);
      var tbody = make('tbody');
      function row(label, value) {
        var tr = make('tr'), th = make('th', null, label);
        th.setAttribute('scope', 'row');
        tr.appendChild(th);
        SCORE_KINDS.forEach(function (k) {
          var v = value(k), td = make('td', null, v == null ? '\u2013' : window.course.fmt(v, 2));
          if (v != null) { var c = window.course.cellColour(v); td.style.background = c.background; td.style.color = c.color; }
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      }
      for (var l = 0; l < model.nLayer; l++) {
        for (var h = 0; h < model.nHead; h++) {
          (function (l, h) { row('L' + (l + 1) + ' H' + (h + 1), function (k) { return hs.scores[k] && hs.scores[k][l][h]; }); })(l, h);
        }
      }
      row('Chance', function (k) { return hs.chance[k]; });
      table.appendChild(tbody);
      wrap.appendChild(table);
      scoreBox.appendChild(wrap);
    }

    function drawPredictions(tokens, preds) {
      clear(predBox);
      var wrap = make('div', 'course-table-wrap'), table = make('table', 'course-play-guesses');
      table.appendChild(make('caption', null, 'What the model guesses next after each token: its top 5, with their probabilities.'));
      var hr = make('tr');
      ['After', '1st', '2nd', '3rd', '4th', '5th'].forEach(function (h) { var th = make('th', null, h); th.setAttribute('scope', 'col'); hr.appendChild(th); });
      var thead = make('thead');
      thead.appendChild(hr);
      table.appendChild(thead);
      var tbody = make('tbody');
      tokens.forEach(function (t, i) {
        var tr = make('tr'), th = make('th');
        th.setAttribute('scope', 'row');
        th.appendChild(tokSpan(t));
        tr.appendChild(th);
        preds[i].forEach(function (g) {
          var td = make('td');
          td.appendChild(tokSpan(pageTokens(tok, [g.id])[0]));
          td.appendChild(document.createTextNode(' ' + window.course.fmt(g.prob, 2)));
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      wrap.appendChild(table);
      predBox.appendChild(wrap);
    }

    // Leading edge: the first edit after TYPING_DELAY of quiet runs at once (in the next task,
    // so the keystroke is on screen first); the rest of a burst of typing waits for
    // TYPING_DELAY of quiet and runs once, on the text as it is then. With the model in the
    // page's own thread (no worker), the leading edge is taken only while a run takes under
    // QUICK_RUN: a longer one would hold the next keystroke back. In a worker it never does, and
    // its figures are drawn only if no edit came while it ran.
    var lastInput = -Infinity;
    function schedule() {
      if (!model) return;
      gen++;
      var now = performance.now(), quiet = now - lastInput >= TYPING_DELAY;
      lastInput = now;
      if (timer) clearTimeout(timer);
      timer = setTimeout(safeUpdate, quiet && (runner || !(api.lastMs >= QUICK_RUN)) ? 0 : TYPING_DELAY);
    }
    function guarded(fn) {
      try { fn(); } catch (e) {
        api.error = String(e && e.message || e);
        say(['Something went wrong computing this sentence: ' + api.error]);
        root.setAttribute('data-state', 'error');
      }
    }
    function safeUpdate() { guarded(update); }
    // the reader's own edit: a link's layer, head, token and grid are for the link's sentence only
    input.addEventListener('input', function () { want = null; linkNote = null; schedule(); });
    window.addEventListener('hashchange', function () {
      var h = readHash(location.hash);
      if (h.s == null) return;
      var text;
      try { text = decodeSentence(h.s); } catch (e) {
        say([BAD_LINK]);
        root.setAttribute('data-state', 'noted');
        return;
      }
      if (shown && last && last.figure === shown && text === last.text) {
        shown.setState(h, {});
        // the grid drawn already (a link in it was followed: course.js's own hash, then ours) is
        // kept, and the focus on its link with it
        if (h.ablation && !sameAblation(h.ablation, last.ablation)) {
          if (last.run.predictions) ablate(last, h.ablation); else last.abWant = h.ablation;
        }
        return;
      }
      input.value = text;
      want = h;
      schedule();
    });

    function sameAblation(a, b) {
      return !!(a && b) && a.token === b.token && a.targets.length === b.targets.length &&
        a.targets.every(function (id, i) { return id === b.targets[i]; });
    }

    function loaded() {
      var doc = window.coursePlayModel;
      if (!doc) { say(['The tiny model\u2019s weights did not load (' + root.getAttribute('data-model') + ').']); return; }
      var t0 = performance.now();
      tok = new Tokenizer(doc);
      model = new Model(doc);
      api.decodeMs = performance.now() - t0;
      window.coursePlayModel = null; // the decoded copy is the one kept
      api.model = model;
      api.tokenizer = tok;
      runner = startRunner(model, function (why) {
        runner = null; // the page runs the model itself from now on, and again for what was pending
        if (timer) { clearTimeout(timer); timer = null; }
        api.workerError = why;
        gen++;
        safeUpdate();
      });
      input.disabled = false;
      safeUpdate();
    }

    // The weights (5.4 MB as float32) load after the first paint, from a classic script (file://).
    say(['Loading the tiny model\u2019s weights\u2026']);
    // once the page is parsed (the one-file download inlines course.js after this script)
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', afterPaint, { once: true });
    else afterPaint();
    function afterPaint() { requestAnimationFrame(function () {
      setTimeout(function () {
        if (window.coursePlayModel) { loaded(); return; } // the one-file download holds them inline
        var s = document.createElement('script');
        s.src = new URL(root.getAttribute('data-model'), document.baseURI).href;
        s.onload = loaded;
        s.onerror = function () { say(['The tiny model\u2019s weights did not load (' + root.getAttribute('data-model') + ').']); };
        document.head.appendChild(s);
      }, 0);
    }); }
  }
