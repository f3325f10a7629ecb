/* course.js: progressive enhancement of the course's figures (see CONTRACT.md).
 *
 * Plain ES2017, no build step, no dependencies except the global `Plotly` (plotly-cartesian.min.js, loaded
 * before this file). Works from file://: no fetch(); heavy trace parts load by injecting
 * <script src="data-parts">. Every token is data: it reaches the DOM through textContent only,
 * and Plotly (which reads <br>, <b> ... in strings) gets it escaped with &lt; &gt; &amp;.
 *
 * Globals: traces, trace, softmax(array), courseReady(), course (setState, figures, paintedAt).
 * Optional, set before this file loads: window.courseConfig = {idleParts: false} stops the
 * on-idle load of heavy parts (they still load on courseReady() or when a "Code" tab opens).
 *
 * One classic script (not an ES module: modules do not load from file://, and the one-file
 * chapters inline scripts as text), in sections, each opening with its named numbers:
 *   constants and helpers        number format (as Python's), cell colours (colorscale.js), tokens
 *   traces and heavy parts       the console's `traces`, parts loaded by <script>, schema-3 decoding
 *   "Show as a table"            the disclosure that keeps a plotted figure's table one click away
 *   one attention panel          AttentionView: table, summary, top-3; Plotly (HEATMAP); small multiples (MINIS)
 *   attention / compare figure   AttentionFigure: pickers, state, "All heads", the compare diff
 *   URL hash                     #fig-1:layer=3,head=3,token=6 (HASH_WRITE_DELAY)
 *   stepper, softmax widget, scoreboard, training curve (TRAINING, CHART_COLOURS)
 *   first paint, lazy plots      course:painted, which plot is drawn when (LAZY)
 *   content tabs, scroll boxes   print labels, Code tabs load parts; keyboard stops for wide boxes
 *   init                         figures found and enhanced, the theme followed
 * Sections appended after init (chapters 1 and 2) run in their own closure.
 */
(function () {
  'use strict';

  // ------------------------------------------------------------------ constants and helpers

  // The colour scale and the text-colour threshold come from colorscale.js, generated from
  // render/format.py, so the tables Python writes and the cells drawn here can never disagree.
  var CIVIDIS = (function generated(cs) {
    var ok = Array.isArray(cs) && cs.length >= 2 && cs.every(function (s, i) {
      return Array.isArray(s) && Math.abs(s[0] - i / (cs.length - 1)) < 1e-6 && /^#[0-9a-f]{6}$/i.test(s[1]);
    });
    if (!ok) throw new Error('course.js: load assets/generated/colorscale.js first (window.COURSE_COLORSCALE)');
    return cs.map(function (s) { return s[1].toLowerCase(); });
  })(window.COURSE_COLORSCALE);
  var LAST = CIVIDIS.length - 1;
  var CIVIDIS_RGB = CIVIDIS.map(function (h) {
    return [1, 3, 5].map(function (i) { return parseInt(h.slice(i, i + 2), 16); });
  });
  var COLORSCALE = CIVIDIS.map(function (c, i) { return [i / LAST, c]; });
  var DARK_TEXT_FROM = window.COURSE_TEXT_DARK_FROM; // cividis passes WCAG luminance 0.179 here
  var FOCUS_COLOUR = '#e4007c';
  var MASKED_BG = '#e6e6e6';
  var NDASH = '\u2013';

  var config = window.courseConfig || {};
  var reducedMotion = !!(window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches);

  function roundHalfEven(x) {
    var f = Math.floor(x);
    var diff = x - f;
    if (diff > 0.5) return f + 1;
    if (diff < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

  // Python's f"{x:.{d}f}": round half to even on the exact binary value (0.125 -> "0.12").
  function fmt(x, d) {
    if (typeof x !== 'number' || !isFinite(x)) return NDASH;
    var neg = x < 0;
    var a = Math.abs(x);
    var s = a.toFixed(d);
    var exact = a.toFixed(d + 25);
    var cut = exact.length - 25;
    var tail = exact.slice(cut);
    if (/^50*$/.test(tail)) {
      var trunc = exact.slice(0, cut);
      if (trunc.charAt(trunc.length - 1) === '.') trunc = trunc.slice(0, -1);
      if ((trunc.charCodeAt(trunc.length - 1) - 48) % 2 === 0) s = trunc;
    }
    return (neg ? '-' : '') + s;
  }
  function fmt2(x) { return fmt(x, 2); }

  function signed2(d) { // as format.diff2: a true minus, 0.00 where it rounds to zero
    var s = fmt2(d);
    if (s === '0.00' || s === '-0.00') return '0.00';
    return d > 0 ? '+' + s : s.replace('-', '\u2212');
  }
  function shownDiff(a, b) { // as format.shown_diff: b - a of the two numbers as shown
    return signed2(Number(fmt2(b)) - Number(fmt2(a)));
  }

  function cellColour(w) {
    var v = Math.min(1, Math.max(0, w));
    var p = v * LAST;
    var i = Math.min(Math.floor(p), LAST - 1);
    var f = p - i;
    var a = CIVIDIS_RGB[i], b = CIVIDIS_RGB[i + 1];
    var c = [0, 1, 2].map(function (j) { return roundHalfEven(a[j] + (b[j] - a[j]) * f); });
    return { background: 'rgb(' + c.join(', ') + ')', color: v >= DARK_TEXT_FROM ? '#000' : '#fff' };
  }

  function plotEsc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  // Each page mkdocs-material's instant navigation brings in (its document$, a replaying
  // observable, so a subscriber also hears of the page it is on). Material's bundle is deferred
  // (overrides/main.html), so it usually runs after this file: then subscribe once it has.
  function onMaterialPage(fn) {
    var subscribe = function () {
      var d = window.document$;
      if (d && typeof d.subscribe === 'function') d.subscribe(fn);
      return !!d;
    };
    if (!subscribe() && document.readyState === 'loading') document.addEventListener('DOMContentLoaded', subscribe, { once: true });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function softmax(arr) {
    var xs = Array.prototype.map.call(arr, Number);
    var max = -Infinity;
    xs.forEach(function (x) { if (x > max) max = x; });
    if (max === -Infinity) return xs.map(function () { return NaN; });
    var ex = xs.map(function (x) { return x === -Infinity ? 0 : Math.exp(x - max); });
    var sum = ex.reduce(function (s, e) { return s + e; }, 0);
    return ex.map(function (e) { return e / sum; });
  }

  // A token whose text repeats in its sentence has `pos` (page_tokens, render/format.py): its
  // label carries the position as a subscript (·red₃), and what is said for it the position.
  // Python's token_label and token_spoken write the same (tests/test_token_labels.py).
  function tokDisplay(t) {
    var s;
    if (t.display != null) s = String(t.display);
    else {
      s = String(t.text || '');
      if (s.charAt(0) === ' ') s = '\u00b7' + s.slice(1);
      s = s.replace(/\n/g, '\u21b5').replace(/\t/g, '\u21e5');
    }
    if (t.pos == null) return s;
    return s + String(t.pos).replace(/[0-9]/g, function (d) { return String.fromCharCode(0x2080 + Number(d)); });
  }
  function tokSpoken(t) {
    var s = String(t.text || '');
    if (s === '<|endoftext|>') return 'end of text, position 0';
    if (t.spoken != null) s = String(t.spoken);
    else if (s.charAt(0) === ' ') s = s.length > 1 ? 'space ' + s.slice(1) : 'space';
    else if (s === '\n') s = 'newline';
    return t.pos == null ? s : s + ', position ' + t.pos;
  }
  // Long tokens would squash the plot: its tick labels keep the first characters (the table and
  // the hover text keep the whole token). Cut by code point, before escaping.
  function shorten(s, max) {
    var chars = Array.from(s);
    return chars.length > max ? chars.slice(0, max - 1).join('') + '\u2026' : s;
  }

  function tokSpan(t) {
    var s = el('span', 'course-tok', tokDisplay(t));
    s.setAttribute('aria-label', tokSpoken(t));
    return s;
  }

  // The (at most three) keys a query looks at most: weight descending, ties by position.
  function ranked(row, i) {
    var idx = [];
    for (var j = 0; j <= i && j < row.length; j++) idx.push(j);
    idx.sort(function (a, b) { return (row[b] - row[a]) || (a - b); });
    var top = idx.slice(0, 3);
    return top.filter(function (j, n) { return n === 0 || fmt2(row[j]) !== '0.00'; });
  }

  // Fill `node` with: prefix, token i, middle, "tok 0.66, tok 0.12", "."
  function fillSentence(node, prefix, tokens, row, i, middle) {
    clear(node);
    if (prefix) node.appendChild(document.createTextNode(prefix));
    node.appendChild(tokSpan(tokens[i]));
    node.appendChild(document.createTextNode(middle));
    ranked(row, i).forEach(function (j, n) {
      if (n) node.appendChild(document.createTextNode(', '));
      node.appendChild(tokSpan(tokens[j]));
      node.appendChild(document.createTextNode(' ' + fmt2(row[j])));
    });
    node.appendChild(document.createTextNode('.'));
  }

  function plainSentence(tokens, row, i) {
    return tokDisplay(tokens[i]) + ' looks most at ' + ranked(row, i).map(function (j) {
      return tokDisplay(tokens[j]) + ' ' + fmt2(row[j]);
    }).join(', ');
  }

  function readJSON(node) {
    if (!node) return null;
    try { return JSON.parse(node.textContent); } catch (e) {
      console.warn('course.js: unreadable course-data JSON', e);
      return null;
    }
  }

  function ownData(fig) {
    for (var c = fig.firstElementChild; c; c = c.nextElementSibling) {
      if (c.matches('script.course-data')) return readJSON(c);
    }
    return null;
  }

  function intAttr(node, name, dflt) {
    var v = parseInt(node.getAttribute(name), 10);
    return isFinite(v) ? v : dflt;
  }

  // fn, called at most once a frame however often the returned function is (scroll, resize).
  function oncePerFrame(fn) {
    var pending = false;
    return function () {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; fn(); });
    };
  }

  // Material's palette writes data-md-color-scheme on every page load, most often the value it
  // already has: only a real change of scheme calls fn (a redraw is a Plotly.react per plot).
  function onSchemeChange(fn) {
    if (!window.MutationObserver || !document.body) return;
    var body = document.body, scheme = body.getAttribute('data-md-color-scheme');
    new MutationObserver(function () {
      var now = body.getAttribute('data-md-color-scheme');
      if (now === scheme) return;
      scheme = now;
      fn();
    }).observe(body, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
  }

  function afterPaint() {
    return new Promise(function (resolve) {
      requestAnimationFrame(function () {
        var ch = new MessageChannel();
        ch.port1.onmessage = function () { resolve(); };
        ch.port2.postMessage(0);
      });
    });
  }

  function mark(name) {
    if (window.performance && performance.mark) performance.mark(name);
  }

  function hasPlotly() { return typeof window.Plotly !== 'undefined' && window.Plotly.react; }

  var PLOT_CONFIG = {
    displayModeBar: false, responsive: true, scrollZoom: false, doubleClick: false,
    showTips: false, showLink: false, staticPlot: false
  };

  // ------------------------------------------------------------------ traces and heavy parts

  var traces = [];
  var scriptLoads = {}; // absolute src -> Promise

  // data.weights is (layer, head, query, key) with only the shown head's grid in the page (the
  // others null); the heavy part fills the rest in, into these same arrays (mergePart).
  function makeTrace(data, partsSrc) {
    var w = data.weights || [];
    var t = {
      key: data.key, model: data.model, text: data.text, tokens: data.tokens || [],
      meta: data.meta || {},
      layers: w.map(function (layer) {
        return { heads: layer.map(function (head) { return { weights: head }; }) };
      })
    };
    Object.defineProperty(t, '_parts', { value: partsSrc || null, writable: true });
    Object.defineProperty(t, '_loaded', { value: null, writable: true });
    Object.defineProperty(t, '_weights', { value: w });
    return t;
  }

  function hasHead(weights, l, h) { return Array.isArray((weights[l] || [])[h]); }

  function injectScript(src) {
    var abs = new URL(src, document.baseURI).href;
    if (!scriptLoads[abs]) {
      scriptLoads[abs] = new Promise(function (resolve, reject) {
        var s = document.createElement('script');
        s.src = abs;
        s.async = true;
        s.onload = function () { resolve(); };
        s.onerror = function () { reject(new Error('course.js: could not load ' + src)); };
        document.head.appendChild(s);
      });
    }
    return scriptLoads[abs];
  }

  // A part holds the trace file's encoded arrays (schema 3, traces/README.md "Encoded arrays"; a
  // quarter of the plain size) and the page weights (publish.heavy_part_js). Decoded here as the
  // store's loader does, to the same doubles: int16 x scale rounded to the scale's decimals as numpy
  // rounds (x * 10^d, to the nearest integer with ties to even, / 10^d), scaledMasked = scores times
  // meta.scaledMaskedFactor (Python's headDim ** -0.5) rounded to one decimal more (masked above
  // the diagonal), attnConcat = every head's out side by side.
  var SCALE_DIGITS = 2; // significant digits of an encoded array's scale (store_codec.py)

  function scaleDecimals(scale) { return Math.max(0, (SCALE_DIGITS - 1) - Math.floor(Math.log10(scale))); }

  function npRound(x, dec) {
    var p = 1;
    for (var i = 0; i < dec; i++) p *= 10; // as numpy computes 10 ** dec
    var y = x * p, f = Math.floor(y), rest = y - f;
    var r = rest > 0.5 || (rest === 0.5 && f % 2 !== 0) ? f + 1 : f;
    return (r === 0 && y < 0 ? -0 : r) / p;
  }

  function decodeArray(o) {
    var bytes = atob(o.int16);
    var rows = o.shape[0], cols = o.shape[1], dec = scaleDecimals(o.scale);
    var at = function (n) {
      var v = (bytes.charCodeAt(2 * n) | (bytes.charCodeAt(2 * n + 1) << 8)) << 16 >> 16; // little-endian int16
      return npRound(v * o.scale, dec);
    };
    var m = [];
    for (var i = 0, n = 0; i < rows; i++) {
      var row = [];
      for (var j = 0; j < cols; j++) row.push(o.tril && j > i ? 0 : at(n++));
      m.push(row);
    }
    return m;
  }

  function decodeTraceFile(doc) {
    var factor = doc.meta.scaledMaskedFactor || 1 / Math.sqrt(doc.meta.headDim);
    return {
      layers: doc.layers.map(function (layer) {
        var heads = layer.heads.map(function (h) {
          var scores = decodeArray(h.scores);
          var dec = scaleDecimals(h.scores.scale) + 1;
          var out = {
            q: decodeArray(h.q), k: decodeArray(h.k), v: decodeArray(h.v), scores: scores, out: decodeArray(h.out),
            scaledMasked: scores.map(function (row, i) {
              return row.map(function (x, j) { return j > i ? null : npRound(x * factor, dec); });
            })
          };
          if (h.weights) out.weights = decodeArray(h.weights);
          return out;
        });
        var concat = heads[0].out.map(function (_, i) {
          return [].concat.apply([], heads.map(function (h) { return h.out[i]; }));
        });
        return { heads: heads, attnConcat: concat };
      })
    };
  }

  function mergePart(t, part) {
    if (part.schemaVersion != null) part = decodeTraceFile(part);
    (part.layers || []).forEach(function (pl, l) {
      var tl = t.layers[l];
      if (!tl) return;
      (pl.heads || []).forEach(function (ph, h) {
        var th = tl.heads[h];
        if (!th) return;
        Object.keys(ph).forEach(function (name) {
          var v = ph[name];
          if (name === 'weights') { // into the page's arrays too, which the views draw from
            if (!t._weights[l]) t._weights[l] = [];
            if (!hasHead(t._weights, l, h)) t._weights[l][h] = v;
            th.weights = t._weights[l][h];
            return;
          }
          if (name === 'scaledMasked') {
            v = v.map(function (row) {
              return row.map(function (x) { return x === null ? -Infinity : x; });
            });
          }
          th[name] = v;
        });
      });
      if (pl.attnConcat) tl.attnConcat = pl.attnConcat;
    });
  }

  function loadTrace(t) {
    if (t._loaded) return t._loaded;
    var parts = window.courseTraceParts || {};
    var ready = parts[t.key] ? Promise.resolve() : (t._parts ? injectScript(t._parts) : null);
    if (!ready) {
      t._loaded = Promise.resolve(t);
      return t._loaded;
    }
    t._loaded = ready.then(function () {
      var part = (window.courseTraceParts || {})[t.key];
      if (!part) throw new Error('course.js: ' + t._parts + ' did not define courseTraceParts["' + t.key + '"]');
      mergePart(t, part);
      return t;
    });
    return t._loaded;
  }

  function courseReady() {
    return Promise.all(traces.map(loadTrace)).then(function () { return traces; });
  }

  // ------------------------------------------------------------------ "Show as a table"

  // With a plot on screen, the coloured table that carries the same numbers (the no-JavaScript
  // and print view) is one click away instead of a second copy below it: a disclosure button
  // (aria-expanded, aria-controls) just before the table's box (in a grid's view, at the start
  // of the foot under the heatmap), and the box gets hidden. Print
  // (course.css) shows the table whatever the button says.
  var TABLE_SHOW = 'Show as a table';
  var TABLE_HIDE = 'Hide the table';

  function uniqueId(base) {
    var id = base, k = 2;
    while (document.getElementById(id)) id = base + '-' + k++;
    return id;
  }

  function tableToggle(table, idBase) {
    var box = table && table.closest('.course-table-wrap');
    if (!box || box.__courseToggle) return box ? box.__courseToggle : null;
    if (!box.id) box.id = uniqueId((idBase || 'course') + '-table');
    var button = el('button', 'course-table-toggle');
    button.type = 'button';
    button.setAttribute('aria-controls', box.id);
    var toggle = {
      button: button,
      box: box,
      set: function (open) {
        box.hidden = !open;
        box.classList.toggle('course-table-closed', !open);
        box.classList.toggle('course-table-open', open);
        button.setAttribute('aria-expanded', open ? 'true' : 'false');
        button.textContent = open ? TABLE_HIDE : TABLE_SHOW;
      }
    };
    button.addEventListener('click', function () {
      toggle.set(button.getAttribute('aria-expanded') !== 'true'); // the scroll-box observer sees the new size
    });
    // a grid's view has a foot under its heatmap: the button leads it, on the note's line
    var foot = box.parentNode.querySelector(':scope > .course-view-foot');
    if (foot) foot.insertBefore(button, foot.firstChild);
    else box.parentNode.insertBefore(button, box);
    toggle.set(false);
    box.__courseToggle = toggle;
    return toggle;
  }

  // ------------------------------------------------------------------ one attention panel

  function AttentionView(root, data, fig) {
    this.root = root;
    this.fig = fig;
    this.data = data;
    this.tokens = data.tokens || [];
    this.n = this.tokens.length;
    this.weights = data.weights || [];
    this.summary = root.querySelector('.course-summary');
    this.plotHost = root.querySelector('.course-plot');
    this.table = root.querySelector('table.course-table');
    this.top3 = root.querySelector('.course-top3 ol');
    this.heads = root.querySelector('.course-heads');
    this.plotted = null; // Promise once Plotly.newPlot ran
    this.plotDiv = null;
    this.cache = {};
    this.minis = null;
    this.state = null;
    this.geom = null;
    this.prepareTable();
    // course.css keeps about the plot's height free and its table hidden, from the first frame,
    // unless the view is static: nothing to draw here, so the table is the figure
    var view = root.querySelector('.course-view'); // the one that holds plotHost
    if (this.plotHost && this.n && hasPlotly()) this.tableToggle = tableToggle(this.table, fig.id);
    else if (view) view.classList.add('course-view-static');
    var self = this;
    afterFirstPaint(function () { self.holdSummary(); }); // drawn or not, its summary changes with the pickers
  }

  // The plot's height, kept free before it is drawn (no jump when it is). Read and write in two
  // passes over every view (reserveSpace in init), so the page is laid out once, not per figure.
  AttentionView.prototype.measure = function () {
    if (this.tableToggle && !this.plotted) this.geom = this.geometry(this.plotHost.clientWidth);
  };
  AttentionView.prototype.reserve = function () {
    if (this.geom && !this.plotted) this.plotHost.style.minHeight = this.geom.height + 'px';
  };

  AttentionView.prototype.prepareTable = function () {
    var self = this;
    this.rows = [];
    this.cells = [];
    this.rowButtons = [];
    if (!this.table) return;
    var trs = this.table.querySelectorAll('tbody tr');
    Array.prototype.forEach.call(trs, function (tr, q) {
      var qi = q;
      var cells = [];
      Array.prototype.forEach.call(tr.querySelectorAll('td[data-k]'), function (td) {
        cells[parseInt(td.getAttribute('data-k'), 10)] = td;
        var dq = parseInt(td.getAttribute('data-q'), 10);
        if (isFinite(dq)) qi = dq;
      });
      self.rows[qi] = tr;
      self.cells[qi] = cells;
      var th = tr.querySelector('th[scope="row"]');
      if (th && !th.querySelector('button.course-rowpick')) {
        var b = el('button', 'course-rowpick');
        b.type = 'button';
        while (th.firstChild) b.appendChild(th.firstChild);
        th.appendChild(b);
        b.setAttribute('aria-pressed', 'false');
        b.title = 'Show where this token looks';
        self.rowButtons[qi] = b;
      }
      tr.setAttribute('data-q', String(qi));
    });
    this.table.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr[data-q]');
      if (!tr || !self.table.contains(tr)) return;
      self.fig.setState({ token: self.figureToken(parseInt(tr.getAttribute('data-q'), 10)) }, { user: true });
    });
  };

  AttentionView.prototype.row = function (s) {
    var head = (this.weights[s.layer] || [])[s.head] || [];
    return head[s.token] || [];
  };

  AttentionView.prototype.clampToken = function (t) {
    return Math.max(0, Math.min(t, this.n - 1));
  };

  // The figure's token is a position of its first sentence; a compare figure's second panel
  // shows the token that stands for it (fromFigure, compare.py's Alignment.to2), and a row
  // picked there picks the first sentence's partner (toFigure).
  AttentionView.prototype.ownToken = function (t) {
    return this.clampToken(this.fromFigure ? this.fromFigure[t] : t);
  };
  AttentionView.prototype.figureToken = function (q) {
    return this.toFigure && this.toFigure[q] != null ? this.toFigure[q] : q;
  };

  // A state change in three steps, so that the page is laid out once per change: take the
  // state, redraw the plot (Plotly measures the page: do it before any other DOM write), then
  // write the summary, table, top-3 and small multiples.
  AttentionView.prototype.render = function (state) {
    var prev = this.take(state);
    var drawn = this.redrawPlot();
    this.renderDom(prev);
    return drawn;
  };

  AttentionView.prototype.take = function (state) {
    var prev = this.state;
    this.state = { layer: state.layer, head: state.head, token: this.ownToken(state.token) };
    return prev;
  };

  AttentionView.prototype.renderDom = function (prev) {
    var s = this.state;
    var grid = (this.weights[s.layer] || [])[s.head] || [];
    var headChanged = !prev || prev.layer !== s.layer || prev.head !== s.head;
    if (this.summary) {
      fillSentence(this.summary, 'In layer ' + (s.layer + 1) + ', head ' + (s.head + 1) + ', ',
        this.tokens, grid[s.token] || [], s.token, ' looks most at ');
    }
    if (headChanged) {
      this.renderCells(grid);
      this.renderTop3(grid);
    }
    if (!prev || prev.token !== s.token) this.renderFocus(s.token);
    if (this.minis) this.updateMinis();
  };

  AttentionView.prototype.renderCells = function (grid) {
    for (var q = 0; q < this.cells.length; q++) {
      var cells = this.cells[q];
      if (!cells) continue;
      for (var k = 0; k < cells.length; k++) {
        var td = cells[k];
        if (!td || k > q) continue; // masked cells stay "hidden"
        var w = (grid[q] || [])[k];
        var c = cellColour(w);
        td.textContent = fmt2(w);
        td.style.background = c.background;
        td.style.color = c.color;
      }
    }
  };

  AttentionView.prototype.renderTop3 = function (grid) {
    if (!this.top3) return;
    var items = this.top3.querySelectorAll('li');
    for (var i = 0; i < this.n; i++) {
      var li = items[i];
      if (!li) { li = el('li'); this.top3.appendChild(li); }
      fillSentence(li, '', this.tokens, grid[i] || [], i, ' looks at ');
    }
  };

  AttentionView.prototype.renderFocus = function (token) {
    var self = this;
    this.rows.forEach(function (tr, q) {
      if (!tr) return;
      var on = q === token;
      tr.classList.toggle('course-focus', on);
      var b = self.rowButtons[q];
      if (b) b.setAttribute('aria-pressed', on ? 'true' : 'false');
    });
  };

  // ---- Plotly

  // Heatmap layout, in CSS pixels. Cells share the width the box gives; a cell narrower than
  // cellMin makes the plot wider than its box (it then scrolls inside it, never the page). Rows
  // are as tall as a cell is wide, within rowMin..rowMax (a line of text needs less height than
  // four digits need width). Numbers are drawn in the cells only where four characters fit at
  // cellFont (legible); otherwise the value is in the hover text (a tap on a touch screen) and in
  // the table. The left and top margins are the tick labels' room, measured here in the page's
  // font (labelRoom), not left to Plotly's automatic margins: those measure the drawn labels and
  // draw the plot again, 30-45 ms of the first paint.
  var HEATMAP = {
    cellMax: 32, cellMin: 12, rowMin: 14, rowMax: 26, // cellMax: also course.css, "the view"
    cellFont: 11, tickFont: 12, smallTickFont: 10,
    textChars: 4, charWidth: 0.62, textPad: 4, textMinRow: 16,
    marginMin: 60, marginRight: 20, marginBottom: 10,
    // around the longest label: the axis title (14 px), its standoff (6) and Plotly's padding,
    // measured against Plotly's automatic margins (34.4 px left, 38.0 px top), rounded up
    labelRoomLeft: 35, labelRoomTop: 39, tickAngle: 50,
    labelPadRight: 4, // past the last columns' labels, when they reach beyond the grid (labelOverhang)
    // room for the colour bar (its pad, the bar, its numbers, its title) right of the grid, or
    // under it below narrowBelow: what Plotly would push the margins to, so it never draws twice
    colourbarRoom: 84, colourbarThickness: 12,
    narrowBelow: 560, narrowBottom: 66,
    fewColourTicksBelow: 220, // a colour bar under a grid narrower than this has 3 numbers, not 5 (Plotly would turn them)
    tickChars: 14, narrowTickChars: 10,
    rotatedBelow: 18, strideBelow: 11, // x labels turn upright below 18 px, every other one below 11
    heightMin: 220, defaultWidth: 700
  };
  var CB_TICKVALS = [0, 0.25, 0.5, 0.75, 1];
  var CB_TICKTEXT = ['0', '0.25', '0.5', '0.75', '1'];
  var CB_FEW_TICKVALS = [0, 0.5, 1];
  var CB_FEW_TICKTEXT = ['0', '0.5', '1'];

  // The width of each of `texts` at `size` px in the font of `node` (a canvas measures without a
  // layout; without one, a generous guess per character).
  var measureCanvas = null;
  function textWidths(texts, size, node) {
    if (!measureCanvas) measureCanvas = document.createElement('canvas').getContext('2d');
    if (!measureCanvas) return texts.map(function (t) { return Array.from(t).length * 0.7 * size; });
    var cs = getComputedStyle(node);
    measureCanvas.font = (cs.fontStyle || 'normal') + ' ' + (cs.fontWeight || '400') + ' ' + size + 'px ' + cs.fontFamily;
    return texts.map(function (t) { return measureCanvas.measureText(t).width; });
  }

  // The margins the tick labels need: left for the rows' labels, top for the columns' labels
  // (slanted, or upright on small cells), each with its axis title. widths: every label's width.
  function labelRoom(widths, upright) {
    var H = HEATMAP;
    var size = upright ? H.smallTickFont : H.tickFont;
    var w = Math.max.apply(null, [0].concat(widths || []));
    var a = H.tickAngle * Math.PI / 180;
    var high = upright ? w : w * Math.sin(a) + size * Math.cos(a);
    return { left: Math.max(H.marginMin, Math.ceil(w + H.labelRoomLeft)),
             top: Math.max(H.marginMin, Math.ceil(high + H.labelRoomTop)) };
  }

  // How far the columns' labels reach right of the grid: each starts at its column's centre and
  // runs up and to the right (slanted) or straight up (upright, one line of text wide), so a long
  // label near the last column sticks out into the right margin.
  function labelOverhang(widths, upright, cell) {
    var H = HEATMAP;
    var size = upright ? H.smallTickFont : H.tickFont;
    var a = H.tickAngle * Math.PI / 180;
    var n = (widths || []).length, most = 0;
    for (var i = 0; i < n; i++) {
      var reach = upright ? size : widths[i] * Math.cos(a) + size * Math.sin(a);
      most = Math.max(most, reach - (n - 1 - i + 0.5) * cell);
    }
    return most;
  }

  // Everything about the layout that depends on the width of the box the plot is drawn in.
  // widths(narrow, size): every tick label's width at that font size, the narrow labels or the
  // wide ones (labelRoom); without it, no labels.
  // textN: a compare figure's longer sentence. Its panels show cell numbers only if every panel
  // can (equal panels: the one with more tokens has the smaller cells), so that a reader comparing
  // them never reads numbers in one and none in the other.
  function heatmapGeometry(n, width, widths, textN) {
    var H = HEATMAP;
    var w = width > 0 ? width : H.defaultWidth;
    if (!widths) widths = function () { return []; };
    var wide = labelRoom(widths(false, H.tickFont), false);
    // a phone, unless the box is as wide as the grid at its largest cell (course.css "the view")
    var narrow = w < H.narrowBelow && w < wide.left + H.colourbarRoom + n * H.cellMax;
    var right = narrow ? H.marginRight : H.colourbarRoom;
    var room = narrow ? labelRoom(widths(true, H.tickFont), false) : wide;
    // count: the tokens sharing the width, n unless said (textN below)
    var cellFor = function (left, r, count) { return Math.max(H.cellMin, Math.min(H.cellMax, (w - left - r) / Math.max(count || n, 1))); };
    var rowFor = function (c) { return Math.max(H.rowMin, Math.min(H.rowMax, c)); };
    var upright = cellFor(room.left, right) < H.rotatedBelow;
    if (upright) room = labelRoom(widths(narrow, H.smallTickFont), true); // smaller labels: the cells only grow
    var cell = cellFor(room.left, right);
    // room on the right for the last columns' labels (a wider margin makes the cells, and so the
    // room each label has, smaller: a few rounds settle it). Every label counts, also those a
    // stride leaves out: the reach can only be smaller then.
    var shown = widths(narrow, upright ? H.smallTickFont : H.tickFont);
    for (var round = 0; round < 4; round++) {
      var need = Math.ceil(labelOverhang(shown, upright, cell) + H.labelPadRight);
      if (need <= right) break;
      right = need;
      cell = cellFor(room.left, right);
    }
    var stride = cell < H.strideBelow ? 2 : 1;
    var row = rowFor(cell);
    var cellText = H.textChars * H.charWidth * H.cellFont + H.textPad;
    var bottom = narrow ? H.narrowBottom : H.marginBottom;
    var minWidth = Math.ceil(room.left + right + n * H.cellMin);
    var textCell = textN > n ? cellFor(room.left, right, textN) : cell;
    var showText = textCell >= cellText && rowFor(textCell) >= H.textMinRow;
    return {
      width: width > 0 ? Math.max(Math.floor(width), minWidth) : undefined,
      narrow: narrow,
      cell: cell,
      showText: showText,
      upright: upright,
      stride: stride,
      minWidth: minWidth,
      row: row,
      left: room.left, top: room.top, right: right, bottom: bottom,
      height: Math.max(H.heightMin, Math.round(row * n) + room.top + bottom),
      key: [narrow, showText, upright, stride, Math.round(row), room.left, room.top, right].join()
    };
  }

  // What stays the same for every head: the tick positions and labels (as Plotly reads them, and
  // as text, for measuring), wide and narrow.
  AttentionView.prototype.labels = function () {
    if (this.constant) return this.constant;
    var idx = [];
    for (var i = 0; i < this.n; i++) idx.push(i);
    var tokens = this.tokens;
    var plain = function (max) { return tokens.map(function (t) { return shorten(tokDisplay(t), max); }); };
    var wide = plain(HEATMAP.tickChars), narrow = plain(HEATMAP.narrowTickChars);
    this.constant = { idx: idx, plain: wide, narrowPlain: narrow,
      ticks: wide.map(plotEsc), narrowTicks: narrow.map(plotEsc), widths: {} };
    return this.constant;
  };

  AttentionView.prototype.geometry = function (width) {
    var c = this.labels(), root = this.root;
    var widths = function (narrow, size) {
      var key = (narrow ? 'n' : 'w') + size;
      if (!(key in c.widths)) c.widths[key] = textWidths(narrow ? c.narrowPlain : c.plain, size, root);
      return c.widths[key];
    };
    return heatmapGeometry(this.n, width, widths, this.fig.maxTokens);
  };

  AttentionView.prototype.headData = function (l, h) {
    var key = l + ':' + h;
    if (this.cache[key]) return this.cache[key];
    var grid = (this.weights[l] || [])[h] || [];
    var n = this.n;
    var disp = this.tokens.map(function (t) { return plotEsc(tokDisplay(t)); });
    var z = [], text = [], hover = [];
    for (var q = 0; q < n; q++) {
      var zr = [], tr = [], hr = [];
      for (var k = 0; k < n; k++) {
        if (k > q) {
          zr.push(null); tr.push('');
          hr.push(disp[q] + ' cannot look ahead at ' + disp[k]);
        } else {
          var w = (grid[q] || [])[k];
          zr.push(w); tr.push(fmt2(w));
          hr.push(disp[q] + ' \u2192 ' + disp[k] + ': ' + fmt2(w));
        }
      }
      z.push(zr); text.push(tr); hover.push(hr);
    }
    this.cache[key] = { z: z, text: text, hover: hover };
    return this.cache[key];
  };

  // A new figure object for Plotly.react on each change, built around arrays that stay the same
  // objects (react compares arrays by reference): a token change then only moves the focus
  // rectangle, and a head change only swaps z, text and hover text (cached per head).
  AttentionView.prototype.figureSpec = function () {
    var s = this.state;
    var n = this.n;
    var d = this.headData(s.layer, s.head);
    var g = this.geom || this.geometry(0);
    var c = this.labels();
    var ticks = g.narrow ? c.narrowTicks : c.ticks;
    var xVals = g.stride > 1 ? c.idx.filter(function (i) { return i % g.stride === 0; }) : c.idx;
    var xText = g.stride > 1 ? xVals.map(function (i) { return ticks[i]; }) : ticks;
    var tickFont = { size: g.upright ? HEATMAP.smallTickFont : HEATMAP.tickFont };
    var few = g.narrow && g.cell * n < HEATMAP.fewColourTicksBelow; // a short bar: 0, 0.5, 1, never turned
    var colourbar = g.narrow
      ? { orientation: 'h', x: 0.5, xanchor: 'center', y: -0.02, yanchor: 'top', len: 1, thickness: HEATMAP.colourbarThickness,
          title: { text: 'weight', side: 'right' }, tickangle: 0,
          tickvals: few ? CB_FEW_TICKVALS : CB_TICKVALS, ticktext: few ? CB_FEW_TICKTEXT : CB_TICKTEXT }
      : { title: { text: 'weight', side: 'right' }, thickness: HEATMAP.colourbarThickness, len: 0.9, x: 1,
          tickvals: CB_TICKVALS, ticktext: CB_TICKTEXT };
    var trace = {
      type: 'heatmap', x: c.idx, y: c.idx, z: d.z, text: d.text, hovertext: d.hover,
      texttemplate: g.showText ? '%{text}' : '', textfont: { size: HEATMAP.cellFont },
      hovertemplate: '%{hovertext}<extra></extra>', hoverongaps: true,
      zmin: 0, zmax: 1, zauto: false, colorscale: COLORSCALE, xgap: 1, ygap: 1,
      colorbar: colourbar
    };
    var layout = {
      width: g.width,
      height: g.height + (this.heightFix || 0),
      margin: { l: g.left, r: g.right, t: g.top, b: g.bottom },
      xaxis: { tickmode: 'array', tickvals: xVals, ticktext: xText, side: 'top', tickangle: g.upright ? -90 : -50,
        tickfont: tickFont, range: [-0.5, n - 0.5], fixedrange: true, showgrid: false, zeroline: false,
        title: { text: 'looks at (key)', standoff: 6 }, automargin: false },
      yaxis: { tickmode: 'array', tickvals: c.idx, ticktext: ticks, autorange: 'reversed', tickfont: tickFont,
        fixedrange: true, showgrid: false, zeroline: false,
        title: { text: 'token (query)', standoff: 6 }, automargin: false },
      shapes: [{ type: 'rect', xref: 'x', yref: 'y', x0: -0.5, x1: n - 0.5,
        y0: s.token - 0.5, y1: s.token + 0.5, line: { color: FOCUS_COLOUR, width: 3 },
        fillcolor: 'rgba(0,0,0,0)' }],
      plot_bgcolor: this.maskedBg || MASKED_BG, paper_bgcolor: 'rgba(0,0,0,0)',
      font: { family: 'inherit', color: this.fontColour || '#222' },
      hoverlabel: { namelength: -1 }, dragmode: false, uirevision: 'fixed'
    };
    return { data: [trace], layout: layout };
  };

  // Colours that follow the page's theme (mkdocs-material light / slate).
  AttentionView.prototype.readTheme = function () {
    var cs = getComputedStyle(this.root);
    this.fontColour = cs.color;
    this.maskedBg = (cs.getPropertyValue('--course-masked-bg') || '').trim() || MASKED_BG;
  };

  AttentionView.prototype.ensurePlot = function () {
    var self = this;
    if (this.plotted) return this.plotted;
    if (!this.plotHost || !hasPlotly() || !this.n || !this.state) return Promise.resolve(false);
    this.readTheme();
    this.geom = this.geometry(this.plotHost.clientWidth);
    var inner = el('div', 'course-plot-inner');
    inner.style.minWidth = this.geom.minWidth + 'px';
    clear(this.plotHost);
    this.plotHost.appendChild(inner);
    this.plotDiv = inner;
    var spec = this.figureSpec();
    mark('course:newplot-start');
    this.plotted = Promise.resolve(window.Plotly.newPlot(inner, spec.data, spec.layout, PLOT_CONFIG))
      .then(function () {
        mark('course:newplot-end');
        self.plotReady = true;
        self.plotHost.style.minHeight = '';
        self.watchWidth();
        self.listen();
        return afterPaint();
      }).then(function () {
        painted(self.fig.id);
        self.fitRows(); // after the first paint: rarely needed, never waited for
        return true;
      }, function (err) {
        console.warn('course.js: Plotly failed', err);
        if (self.tableToggle) self.tableToggle.set(true); // the table is the figure, then
        return false;
      });
    return this.plotted;
  };

  // A new width (a phone turned, a sidebar closed): redraw at that width, once per frame, with
  // what the new cell size allows (cell text, upright labels, where the colour bar goes). The
  // plot's width is set here, not left to Plotly's own resizing, so both change together.
  AttentionView.prototype.watchWidth = function () {
    var self = this;
    if (!window.ResizeObserver || this.widthObserver) return;
    this.widthObserver = new ResizeObserver(oncePerFrame(function () {
      var width = self.plotHost.clientWidth;
      if (!width) return;
      self.sizeMinis();
      var g = self.geometry(width);
      if (self.geom && g.width === self.geom.width) return;
      if (!self.geom || g.key !== self.geom.key) self.heightFix = 0;
      var turned = !self.geom || g.narrow !== self.geom.narrow;
      self.geom = g;
      self.plotDiv.style.minWidth = g.minWidth + 'px';
      if (turned) self.replot(); else self.react();
    }));
    this.widthObserver.observe(this.plotHost);
  };

  // The summary above the grid takes one more line for a token with longer neighbours (a phone):
  // it keeps the tallest height it has had at this width, so the grid under it moves down once
  // at most, never back and forth as the reader steps through the tokens.
  AttentionView.prototype.holdSummary = function () {
    var summary = this.summary;
    if (!window.ResizeObserver || !summary || this.summaryObserver) return;
    var width = 0, tallest = 0;
    this.summaryObserver = new ResizeObserver(function () {
      var w = summary.clientWidth;
      if (w !== width) { // a new width: the lines break anew, start again from the natural height
        width = w;
        tallest = 0;
        summary.style.minHeight = '';
      }
      var h = summary.getBoundingClientRect().height;
      if (h > tallest + 0.5) {
        tallest = h;
        summary.style.minHeight = h + 'px';
      }
    });
    this.summaryObserver.observe(summary);
  };

  // A click on a row picks that token.
  AttentionView.prototype.listen = function () {
    var self = this;
    this.plotDiv.on('plotly_click', function (ev) {
      var pt = ev && ev.points && ev.points[0];
      if (!pt) return;
      var q = Math.round(Number(pt.y));
      if (isFinite(q)) self.fig.setState({ token: self.figureToken(q) }, { user: true });
    });
  };

  // Drawn again from scratch: Plotly.react keeps the margins a vertical colour bar pushed when
  // the bar turns horizontal (a phone), so a change of side replots.
  AttentionView.prototype.replot = function () {
    var self = this;
    var spec = this.figureSpec();
    return Promise.resolve(window.Plotly.newPlot(this.plotDiv, spec.data, spec.layout, PLOT_CONFIG))
      .then(function () { self.listen(); return self.fitRows(); });
  };

  AttentionView.prototype.react = function () {
    var self = this;
    var spec = this.figureSpec();
    return Promise.resolve(window.Plotly.react(this.plotDiv, spec.data, spec.layout, PLOT_CONFIG))
      .then(function () { return self.fitRows(); });
  };

  // A safety net: the margins are course.js's own (labelRoom), so only a margin Plotly pushed
  // after all (its colour bar) could leave the rows lower than the geometry's row; then the
  // plot grows by the difference, so labels never overlap.
  AttentionView.prototype.fitRows = function () {
    var full = this.plotDiv && this.plotDiv._fullLayout;
    if (!full || !full._size || !this.geom || !this.n) return undefined;
    var missing = Math.ceil((this.geom.row - full._size.h / this.n) * this.n);
    if (missing <= 0) return undefined;
    this.heightFix = (this.heightFix || 0) + missing;
    return Promise.resolve(window.Plotly.relayout(this.plotDiv, { height: full.height + missing }));
  };

  // Synchronous when the plot is there; after the first draw when it is being drawn; nothing
  // when it is not drawn yet (it is drawn later from the current state).
  AttentionView.prototype.redrawPlot = function () {
    var self = this;
    if (this.plotReady) return this.react();
    if (this.plotted) {
      return this.plotted.then(function (ok) { if (ok) return self.react(); });
    }
    return Promise.resolve();
  };

  // ---- small multiples

  // Small grids, in CSS pixels: a cell of CELL_MIN..CELL_MAX, so that a layer's heads fit on one
  // row beside (or, below STACK_BELOW, under) the layer's label. Where two layers fit side by side
  // (labels above) with cells of at least pairCellMin, they do: half the height.
  var MINIS = { cellMin: 2, cellMax: 5, labelWidth: 72, perHead: 16, stackBelow: 480, pairCellMin: 4, pairGap: 16,
                revealMargin: 120 };  // px of the big grid on screen after a click on a small one, else it scrolls there

  function miniLabel(l, h) { return 'L' + (l + 1) + ' H' + (h + 1); }

  AttentionView.prototype.sizeMinis = function () {
    if (!this.heads || this.heads.hidden || !this.minis) return;
    var width = this.heads.clientWidth;
    if (!width) return;
    var nHead = (this.weights[0] || []).length || 1;
    var n = Math.max(this.n, 1);
    var pairCell = Math.floor(((width - MINIS.pairGap) / 2 - nHead * MINIS.perHead) / (nHead * n));
    var paired = this.weights.length > 1 && pairCell >= MINIS.pairCellMin;
    var stacked = paired || width < MINIS.stackBelow;
    var room = width - (stacked ? 0 : MINIS.labelWidth) - nHead * MINIS.perHead;
    var cell = Math.max(MINIS.cellMin, Math.min(MINIS.cellMax, paired ? pairCell : Math.floor(room / (nHead * n))));
    this.heads.classList.toggle('course-heads-stacked', stacked);
    this.heads.classList.toggle('course-heads-paired', paired);
    this.heads.style.setProperty('--course-mini-heads', String(nHead));
    this.heads.style.setProperty('--course-mini-cell', cell + 'px');
  };

  AttentionView.prototype.revealPlot = function () {
    var host = this.plotHost;
    if (!host || host.getBoundingClientRect().top < window.innerHeight - MINIS.revealMargin) return;
    host.scrollIntoView({ block: 'nearest', behavior: reducedMotion ? 'auto' : 'smooth' });
  };

  AttentionView.prototype.buildMinis = function () {
    var self = this;
    if (this.minis || !this.heads) return;
    var n = this.n;
    var frag = document.createDocumentFragment();
    this.minis = [];
    var intro = el('p', 'course-heads-intro',
      'Every head on this sentence, the row of the token in focus outlined. Choose a head to open it in the grid below. Arrow keys move between heads.');
    frag.appendChild(intro);
    this.weights.forEach(function (layer, l) {
      var rowBox = el('div', 'course-heads-layer');
      rowBox.setAttribute('role', 'group');
      rowBox.setAttribute('aria-label', 'Layer ' + (l + 1));
      rowBox.appendChild(el('span', 'course-heads-layer-label', 'Layer ' + (l + 1)));
      layer.forEach(function (grid, h) {
        grid = grid || [];
        var b = el('button', 'course-mini');
        b.type = 'button';
        b.setAttribute('data-layer', String(l));
        b.setAttribute('data-head', String(h));
        b.tabIndex = -1;
        var g = el('span', 'course-mini-grid');
        g.setAttribute('aria-hidden', 'true');
        g.style.gridTemplateColumns = 'repeat(' + n + ', var(--course-mini-cell, 5px))';
        for (var q = 0; q < n; q++) {
          for (var k = 0; k < n; k++) {
            var c = el('i');
            if (k <= q) c.style.background = cellColour((grid[q] || [])[k]).background;
            else c.className = 'm';
            g.appendChild(c);
          }
        }
        g.appendChild(el('span', 'course-mini-row')); // the focus row's outline (course.css)
        b.appendChild(g);
        b.appendChild(el('span', 'course-mini-label', miniLabel(l, h)));
        rowBox.appendChild(b);
        self.minis.push(b);
      });
      frag.appendChild(rowBox);
    });
    this.heads.appendChild(frag);
    this.heads.addEventListener('click', function (ev) {
      var b = ev.target.closest('button.course-mini');
      if (!b) return;
      var done = self.fig.setState({ layer: +b.getAttribute('data-layer'), head: +b.getAttribute('data-head') },
        { user: true });
      // chosen with a pointer on a short screen, where the grid that changed is below the fold:
      // bring its top into view (keys keep the reader among the small grids)
      if (ev.detail > 0) done.then(function () { self.revealPlot(); });
    });
    this.heads.addEventListener('keydown', function (ev) {
      var b = ev.target.closest('button.course-mini');
      if (!b) return;
      var l = +b.getAttribute('data-layer'), h = +b.getAttribute('data-head');
      var nL = self.weights.length, nH = (self.weights[0] || []).length;
      var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
      var m = moves[ev.key];
      if (ev.key === 'Home') m = [-l, -h];
      if (ev.key === 'End') m = [nL - 1 - l, nH - 1 - h];
      if (!m) return;
      ev.preventDefault();
      var nl = Math.max(0, Math.min(nL - 1, l + m[0])), nh = Math.max(0, Math.min(nH - 1, h + m[1]));
      var target = self.minis[nl * nH + nh];
      if (target) {
        self.minis.forEach(function (x) { x.tabIndex = -1; });
        target.tabIndex = 0;
        target.focus();
      }
    });
    this.updateMinis();
  };

  AttentionView.prototype.updateMinis = function () {
    var s = this.state;
    var self = this;
    if (!s) return;
    var hasFocusInside = this.heads && this.heads.contains(document.activeElement);
    this.heads.style.setProperty('--course-mini-row', String(s.token));
    this.minis.forEach(function (b) {
      var l = +b.getAttribute('data-layer'), h = +b.getAttribute('data-head');
      var grid = (self.weights[l] || [])[h] || [];
      // The name starts with the visible label ("L2 H3"), so a speech-input user can say what
      // they see (WCAG 2.5.3, axe label-content-name-mismatch); the words follow.
      b.setAttribute('aria-label', miniLabel(l, h) + ' (layer ' + (l + 1) + ', head ' + (h + 1) + '): ' +
        plainSentence(self.tokens, grid[s.token] || [], s.token));
      var current = l === s.layer && h === s.head;
      b.setAttribute('aria-pressed', current ? 'true' : 'false');
      if (!hasFocusInside) b.tabIndex = current ? 0 : -1;
    });
  };

  // ------------------------------------------------------------------ attention / compare figure

  var figures = [];
  var figuresById = {};

  function AttentionFigure(fig, kind) {
    var self = this;
    this.el = fig;
    this.id = fig.id;
    this.kind = kind;
    this.inHash = false;
    var data = ownData(fig) || {};
    this.views = [];
    if (kind === 'compare') {
      var panels = fig.querySelectorAll('.course-panel');
      var datas = data.panels || data.sentences || [];
      var align = data.align || null; // compare.py's Alignment: the same token in both sentences
      Array.prototype.forEach.call(panels, function (p, i) {
        var d = datas[i] || readJSON(p.querySelector('script.course-data'));
        if (!d) return;
        var v = new AttentionView(p, d, self);
        if (i === 1 && align) { v.fromFigure = align.to2; v.toFigure = align.to1; }
        v.trace = makeTrace(d, p.getAttribute('data-parts') || fig.getAttribute('data-parts'));
        self.views.push(v);
        traces.push(v.trace);
      });
      this.diff = fig.querySelector('.course-diff table');
      this.pairs = align && align.pairs;
    } else {
      var v1 = new AttentionView(fig, data, this);
      v1.trace = makeTrace(data, fig.getAttribute('data-parts'));
      this.views.push(v1);
      traces.push(v1.trace);
    }
    var v0 = this.views[0];
    this.nLayer = v0 ? v0.weights.length : 0;
    this.nHead = v0 && v0.weights[0] ? v0.weights[0].length : 0;
    // the figure's token is one of the first sentence's (compare: the second follows its partner)
    this.maxTokens = Math.max.apply(null, this.views.map(function (v) { return v.n; }).concat([0]));
    this.nToken = v0 ? v0.n : 0;
    this.state = this.clamp({
      layer: intAttr(fig, 'data-layer', 0), head: intAttr(fig, 'data-head', 0),
      token: intAttr(fig, 'data-token', this.nToken - 1)
    });
    this.selects = {};
    Array.prototype.forEach.call(fig.querySelectorAll('select[data-control]'), function (sel) {
      var which = sel.getAttribute('data-control');
      self.selects[which] = sel;
      sel.addEventListener('change', function () {
        var st = {};
        st[which] = parseInt(sel.value, 10);
        self.setState(st, { user: true });
      });
    });
    this.headsButton = fig.querySelector('button[data-action="heads"]');
    if (this.headsButton) {
      this.headsButton.addEventListener('click', function () {
        self.toggleHeads(self.headsButton.getAttribute('aria-expanded') !== 'true', { user: true });
      });
    }
    // The HTML already shows this state (figures.py writes the same text): only the row buttons
    // learn which row is pressed. Nothing else is written before the first paint.
    this.views.forEach(function (v) { v.take(self.state); v.renderFocus(v.state.token); });
    this.syncControls();
    if (fig.getAttribute('data-show-heads') === 'true') this.wantHeads = true;
  }

  AttentionFigure.prototype.clamp = function (s) {
    function c(v, n) { return Math.max(0, Math.min(isFinite(v) ? v : 0, Math.max(0, n - 1))); }
    return { layer: c(s.layer, this.nLayer), head: c(s.head, this.nHead), token: c(s.token, this.nToken) };
  };

  AttentionFigure.prototype.syncControls = function () {
    var s = this.state;
    var sel = this.selects;
    ['layer', 'head', 'token'].forEach(function (k) {
      if (sel[k] && sel[k].value !== String(s[k])) sel[k].value = String(s[k]);
    });
  };

  // The small multiples open just below the pickers, where the reader is looking; opened by the
  // reader, focus moves to the head shown in the big grid (arrow keys move on from there).
  // Runs `then` once every view has the weights of `heads` ((layer, head) pairs; all when null):
  // at once when the page holds them, else after the heavy parts load (failed loads included: the
  // figure then shows what it has).
  AttentionFigure.prototype.withWeights = function (heads, then) {
    var missing = this.views.filter(function (v) {
      return v.trace && (heads ? heads.some(function (lh) { return !hasHead(v.weights, lh[0], lh[1]); })
        : v.weights.some(function (layer) { return layer.some(function (g) { return !Array.isArray(g); }); }));
    });
    if (!missing.length) return then();
    var go = function () { return then(); };
    return Promise.all(missing.map(function (v) { return loadTrace(v.trace); })).then(go, go);
  };

  AttentionFigure.prototype.toggleHeads = function (open, opts) {
    var self = this;
    if (open) return this.withWeights(null, function () { return self.showHeads(true, opts); });
    return this.showHeads(false, opts);
  };

  AttentionFigure.prototype.showHeads = function (open, opts) {
    var btn = this.headsButton;
    var target = null;
    this.views.forEach(function (v) {
      if (!v.heads) return;
      if (open) v.buildMinis();
      v.heads.hidden = !open;
      if (open) v.sizeMinis();
      if (open && !target && v.minis) {
        target = v.minis.filter(function (b) { return b.getAttribute('aria-pressed') === 'true'; })[0] || v.minis[0];
      }
    });
    if (btn) btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open && target && opts && opts.user) {
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: 'nearest', behavior: reducedMotion ? 'auto' : 'smooth' });
    }
    return this;
  };

  AttentionFigure.prototype.setState = function (partial, opts) {
    var self = this;
    var want = this.clamp({
      layer: partial.layer != null ? partial.layer : this.state.layer,
      head: partial.head != null ? partial.head : this.state.head, token: 0
    });
    return this.withWeights([[want.layer, want.head]], function () { return self.applyState(partial, opts); });
  };

  AttentionFigure.prototype.applyState = function (partial, opts) {
    var self = this;
    opts = opts || {};
    var next = {
      layer: partial.layer != null ? partial.layer : this.state.layer,
      head: partial.head != null ? partial.head : this.state.head,
      token: partial.token != null ? partial.token : this.state.token
    };
    this.state = this.clamp(next);
    var prevs = this.views.map(function (v) { return v.take(self.state); });
    var done = Promise.all(this.views.map(function (v) { return v.redrawPlot(); }));
    this.views.forEach(function (v, i) { v.renderDom(prevs[i]); });
    this.syncControls();
    this.renderDiff();
    if (opts.user || opts.fromHash) {
      this.inHash = true;
      if (!opts.fromHash) writeHashSoon();
    }
    return done.then(function () {
      self.el.dispatchEvent(new CustomEvent('course:statechange', { detail: self.state }));
      return self.state;
    });
  };

  AttentionFigure.prototype.renderDiff = function () {
    if (!this.diff || this.views.length < 2) return;
    var tbody = this.diff.tBodies[0] || this.diff.appendChild(document.createElement('tbody'));
    var a = this.views[0], b = this.views[1];
    var s = this.state;
    var ia = a.ownToken(s.token), ib = b.ownToken(s.token);
    var ra = a.row({ layer: s.layer, head: s.head, token: ia });
    var rb = b.row({ layer: s.layer, head: s.head, token: ib });
    // as compare.py's diff_rows: partners on one row, "4 / 5" where they sit at different places
    var frag = document.createDocumentFragment();
    (this.pairs || []).forEach(function (pair) {
      var i = pair[0], j = pair[1];
      var hasA = i != null && i <= ia, hasB = j != null && j <= ib;
      if (!hasA && !hasB) return;
      var tr = el('tr');
      tr.appendChild(el('td', null, i === j ? String(i) : (i == null ? NDASH : i) + ' / ' + (j == null ? NDASH : j)));
      [[hasA, a, ra, i], [hasB, b, rb, j]].forEach(function (side) {
        var tdTok = el('td');
        if (side[0]) tdTok.appendChild(tokSpan(side[1].tokens[side[3]])); else tdTok.textContent = NDASH;
        tr.appendChild(tdTok);
        tr.appendChild(el('td', null, side[0] ? fmt2(side[2][side[3]]) : NDASH));
      });
      tr.appendChild(el('td', null, hasA && hasB ? shownDiff(ra[i], rb[j]) : NDASH));
      frag.appendChild(tr);
    });
    clear(tbody);
    tbody.appendChild(frag);
  };

  AttentionFigure.prototype.plot = function () {
    var self = this;
    return Promise.all(this.views.map(function (v) { return v.ensurePlot(); })).then(function () {
      if (self.wantHeads) {
        self.wantHeads = false;
        self.toggleHeads(true);
      }
    });
  };

  // ------------------------------------------------------------------ URL hash

  function parseHash(hash) {
    var out = [];
    var h = String(hash || '').replace(/^#/, '');
    try { h = decodeURIComponent(h); } catch (e) { /* keep raw */ }
    h.split(';').forEach(function (part) {
      var m = /^\s*(fig-\d+):(.*)$/.exec(part);
      if (!m) return;
      var st = {};
      m[2].split(',').forEach(function (kv) {
        var p = kv.split('=');
        var k = (p[0] || '').trim();
        var v = parseInt(p[1], 10);
        if ((k === 'layer' || k === 'head' || k === 'token') && isFinite(v)) st[k] = v - 1;
      });
      out.push({ id: m[1], state: st });
    });
    return out;
  }

  // replaceState is a synchronous round trip to the browser: once per burst of changes.
  var HASH_WRITE_DELAY = 120; // ms after the last change
  var hashTimer = null;
  function writeHashSoon() {
    if (hashTimer) clearTimeout(hashTimer);
    hashTimer = setTimeout(function () { hashTimer = null; writeHash(); }, HASH_WRITE_DELAY);
  }
  window.addEventListener('pagehide', function () {
    if (hashTimer) { clearTimeout(hashTimer); hashTimer = null; writeHash(); }
  });

  function writeHash() {
    var parts = figures.filter(function (f) { return f.inHash && f.state; }).map(function (f) {
      var s = f.state;
      return f.id + ':layer=' + (s.layer + 1) + ',head=' + (s.head + 1) + ',token=' + (s.token + 1);
    });
    if (!parts.length) return;
    var url = location.href.replace(/#.*$/, '') + '#' + parts.join(';');
    try { history.replaceState(history.state, '', url); } catch (e) { /* some file:// setups */ }
  }

  function applyHash(scroll) {
    var entries = parseHash(location.hash);
    var first = null;
    entries.forEach(function (e) {
      var f = figuresById[e.id];
      if (!f || !f.setState) return;
      f.setState(e.state, { fromHash: true });
      if (!first) first = f;
    });
    if (first && scroll) {
      first.el.scrollIntoView({ block: 'start', behavior: reducedMotion ? 'auto' : 'smooth' });
      if (first.plot) first.plot();
    }
    return entries.length;
  }

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
    function show(i, announce) {
      k = Math.max(0, Math.min(total - 1, i));
      Array.prototype.forEach.call(steps, function (li, j) { li.classList.toggle('is-current', j === k); });
      status.textContent = 'Step ' + (k + 1) + ' of ' + total;
      back.setAttribute('aria-disabled', k === 0 ? 'true' : 'false');
      next.setAttribute('aria-disabled', k === total - 1 ? 'true' : 'false');
      if (announce) fig.dispatchEvent(new CustomEvent('course:statechange', { detail: { step: k } }));
    }
    back.addEventListener('click', function () { show(k - 1, true); });
    next.addEventListener('click', function () { show(k + 1, true); });
    fig.addEventListener('keydown', function (ev) {
      if (ev.target.closest('input, select, textarea')) return;
      if (ev.key === 'ArrowLeft') { ev.preventDefault(); show(k - 1, true); }
      if (ev.key === 'ArrowRight') { ev.preventDefault(); show(k + 1, true); }
    });
    fig.classList.add('course-stepping');
    show(0, false);
    return { el: fig, id: fig.id, show: show };
  }

  // ------------------------------------------------------------------ softmax widget

  var SOFTMAX_DECIMALS = 3; // as figures.py's f"{w:.3f}"

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

  // ------------------------------------------------------------------ scoreboard

  function initScoreboard(fig) {
    Array.prototype.forEach.call(fig.querySelectorAll('table.course-sortable'), function (table) {
      var buttons = table.querySelectorAll('thead button[data-sort]');
      Array.prototype.forEach.call(buttons, function (btn) {
        btn.addEventListener('click', function () {
          var th = btn.closest('th');
          var col = th.cellIndex;
          var key = btn.getAttribute('data-sort');
          var cur = th.getAttribute('aria-sort');
          var dir;
          if (cur === 'ascending') dir = 'descending';
          else if (cur === 'descending') dir = 'ascending';
          else dir = key === 'score' ? 'descending' : 'ascending';
          var tbody = table.tBodies[0];
          var rows = Array.prototype.map.call(tbody.rows, function (r, i) {
            var cell = r.cells[col];
            var raw = cell ? (cell.getAttribute('data-value') != null ? cell.getAttribute('data-value') : cell.textContent) : '';
            var num = parseFloat(String(raw).replace('\u2212', '-'));
            return { r: r, i: +(r.getAttribute('data-order') || i), num: num, str: String(raw).trim() };
          });
          rows.forEach(function (o) { if (o.r.getAttribute('data-order') == null) o.r.setAttribute('data-order', String(o.i)); });
          var sign = dir === 'ascending' ? 1 : -1;
          rows.sort(function (a, b) {
            var c;
            if (!isNaN(a.num) && !isNaN(b.num)) c = a.num - b.num;
            else c = a.str.localeCompare(b.str, undefined, { numeric: true });
            return sign * c || a.i - b.i;
          });
          var frag = document.createDocumentFragment();
          rows.forEach(function (o) { frag.appendChild(o.r); });
          tbody.appendChild(frag);
          Array.prototype.forEach.call(table.querySelectorAll('thead th'), function (h) {
            if (h === th) h.setAttribute('aria-sort', dir);
            else if (h.querySelector('button[data-sort]')) h.setAttribute('aria-sort', 'none');
          });
        });
      });
    });
    return { el: fig, id: fig.id };
  }

  // ------------------------------------------------------------------ training curve

  // Chart sizes in CSS pixels, and the colours a chart takes from course.css (light and slate
  // palettes: every line and marker at least 3:1 against the page, gridlines faint).
  var TRAINING = {
    lossHeight: 270, headsHeight: 290,
    margin: { l: 60, r: 20, t: 20, b: 50 },
    legend: { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom' }, // above the plot, never over it
    batchLine: 1, validationLine: 2, validationMarker: 6, kindLine: 2, kindMarker: 5, chanceLine: 1.5,
    chanceDash: 8, chanceGap: 4, // px: a dash and a gap of a chance line that several kinds share
    tickRoom: 75,                // px of plot width per step label: both charts share their steps
    tickSteps: [1, 2, 2.5, 3, 5]  // × a power of ten: the step between labels
  };
  // The steps both charts label, 0 to the last step: the finest round spacing that fits `room`
  // labels, one that ends on the last step (9,000, the step the text names) where one does.
  function stepTicks(last, room) {
    var fits = [];
    for (var p = 1; p <= last * 10; p *= 10) {
      TRAINING.tickSteps.forEach(function (m) { if (last / (m * p) <= room) fits.push(m * p); });
    }
    fits.sort(function (a, b) { return a - b; });
    var even = fits.filter(function (d) { return Math.abs(last / d - Math.round(last / d)) < 1e-9; });
    return even.length && even[0] <= 2 * fits[0] ? even[0] : fits[0] || last;
  }
  var CHART_COLOURS = { // fallbacks when course.css did not load
    '--course-line-soft': '#6f7d92', '--course-line-strong': '#00224e', '--course-gridline': 'rgba(0, 0, 0, 0.12)'
  };
  var KIND_COLOURS = { 'previous-token': '#0077bb', 'duplicate-token': '#aa3377', induction: '#cc3311', sink: '#117733' };

  function cssColour(node, name, fallback) {
    var v = (getComputedStyle(node).getPropertyValue(name) || '').trim();
    return v || fallback;
  }

  function TrainingFigure(fig) {
    var self = this;
    this.el = fig;
    this.id = fig.id;
    this.data = ownData(fig) || {};
    this.host = fig.querySelector('.course-plot');
    this.headsHost = fig.querySelector('.course-heads-plot');
    this.done = null;
    this.toggles = [];
    if (!hasPlotly()) return;
    [[this.host, TRAINING.lossHeight], [this.headsHost, TRAINING.headsHeight]].forEach(function (p) {
      if (p[0]) p[0].style.minHeight = p[1] + 'px';
    });
    Array.prototype.forEach.call(fig.querySelectorAll('.course-table-wrap > table'), function (t) {
      var toggle = tableToggle(t, fig.id);
      if (toggle) self.toggles.push(toggle);
    });
  }
  TrainingFigure.prototype.colour = function (name) { return cssColour(this.el, name, CHART_COLOURS[name]); };
  // One colour per score kind, from course.css (--course-kind-<kind>, light and slate).
  TrainingFigure.prototype.kindColour = function (kind) {
    return cssColour(this.el, '--course-kind-' + kind, KIND_COLOURS[kind] || CHART_COLOURS['--course-line-soft']);
  };
  TrainingFigure.prototype.layout = function (height, yTitle, yRange) {
    var grid = this.colour('--course-gridline');
    var axis = function (title) {
      return { title: { text: title }, fixedrange: true, gridcolor: grid, zerolinecolor: grid, linecolor: grid };
    };
    var xaxis = axis('optimiser step');
    var last = this.lastStep();
    if (last > 0) {
      var room = Math.max(2, Math.floor(((this.el.clientWidth || 600) - TRAINING.margin.l - TRAINING.margin.r) / TRAINING.tickRoom));
      xaxis.range = [0, last];
      xaxis.tickmode = 'linear';
      xaxis.tick0 = 0;
      xaxis.dtick = stepTicks(last, room);
      xaxis.tickformat = ',';
    }
    var layout = {
      height: height, margin: TRAINING.margin,
      xaxis: xaxis, yaxis: axis(yTitle),
      legend: TRAINING.legend, dragmode: false,
      paper_bgcolor: 'rgba(0,0,0,0)', plot_bgcolor: 'rgba(0,0,0,0)',
      font: { family: 'inherit', color: getComputedStyle(this.el).color || '#222' }
    };
    if (yRange) layout.yaxis.range = yRange;
    return layout;
  };
  // The loss chart's points: training batches and validation ({step, loss} each).
  TrainingFigure.prototype.lossPoints = function () {
    var d = this.data || {};
    return { steps: d.steps || d.train || [], validation: d.validation || d.val || [] };
  };
  // The last step of the log: both charts end there.
  TrainingFigure.prototype.lastStep = function () {
    var loss = this.lossPoints();
    var steps = loss.steps.concat(loss.validation).map(function (p) { return p.step; })
      .concat(((this.data || {}).heads || {}).steps || []);
    return steps.length ? Math.max.apply(null, steps) : 0;
  };
  // Kinds whose chance levels are equal share one dashed line, its dashes taking their colours in
  // turn: kind i of k draws every k-th dash, from the i-th on (so none hides another).
  function chanceDashes(series) {
    var byLevel = {}, dash = {};
    series.forEach(function (s) {
      if (s.chance == null) return;
      var key = s.chance.toFixed(4);
      (byLevel[key] = byLevel[key] || []).push(s.kind);
    });
    Object.keys(byLevel).forEach(function (key) {
      var kinds = byLevel[key], k = kinds.length, d = TRAINING.chanceDash, g = TRAINING.chanceGap;
      kinds.forEach(function (kind, i) {  // before it: i dashes and gaps of the others; after it: the rest
        dash[kind] = k === 1 ? 'dash' : (i ? '0px,' + i * (d + g) + 'px,' : '') + d + 'px,' + (g + (k - 1 - i) * (d + g)) + 'px';
      });
    });
    return dash;
  }

  // The best head of each kind against step (solid), with its chance level (dashed, same colour).
  TrainingFigure.prototype.headsFigure = function () {
    var h = this.data.heads, self = this, data = [];
    if (!h || !h.steps || !h.steps.length) return null;
    var first = h.steps[0], last = h.steps[h.steps.length - 1];
    var dashes = chanceDashes(h.series || []);
    (h.series || []).forEach(function (s) {
      var colour = self.kindColour(s.kind);
      data.push({ type: 'scatter', mode: 'lines+markers', name: s.label, legendgroup: s.kind, x: h.steps, y: s.scores,
        customdata: s.heads, line: { color: colour, width: TRAINING.kindLine }, marker: { size: TRAINING.kindMarker, color: colour },
        hovertemplate: 'step %{x}: %{y:.2f} (%{customdata})<extra>' + s.label + '</extra>' });
      if (s.chance != null) {
        data.push({ type: 'scatter', mode: 'lines', name: 'chance: ' + s.label, legendgroup: s.kind, showlegend: false,
          x: [first, last], y: [s.chance, s.chance], line: { color: colour, width: TRAINING.chanceLine, dash: dashes[s.kind] },
          hovertemplate: 'chance %{y:.2f}<extra>' + s.label + '</extra>' });
      }
    });
    return { data: data, layout: this.layout(TRAINING.headsHeight, 'best head\'s score (dashed: chance)', [0, 1.02]) };
  };
  TrainingFigure.prototype.lossFigure = function () {
    var loss = this.lossPoints(), steps = loss.steps, val = loss.validation;
    if (!(steps.length || val.length)) return null;
    var x = function (p) { return p.step; };
    var y = function (p) { return p.loss; };
    var data = [];
    if (steps.length) {
      data.push({ type: 'scatter', mode: 'lines', name: 'training batches', x: steps.map(x), y: steps.map(y),
        line: { color: this.colour('--course-line-soft'), width: TRAINING.batchLine },
        hovertemplate: 'step %{x}: %{y:.3f}<extra>training</extra>' });
    }
    if (val.length) {
      var strong = this.colour('--course-line-strong');
      data.push({ type: 'scatter', mode: 'lines+markers', name: 'validation', x: val.map(x), y: val.map(y),
        line: { color: strong, width: TRAINING.validationLine }, marker: { size: TRAINING.validationMarker, color: strong },
        hovertemplate: 'step %{x}: %{y:.3f}<extra>validation</extra>' });
    }
    return { data: data, layout: this.layout(TRAINING.lossHeight, 'loss (nats per token)') };
  };
  function newChart(host, spec) {
    var inner = el('div', 'course-plot-inner');
    clear(host);
    host.appendChild(inner);
    return Promise.resolve(window.Plotly.newPlot(inner, spec.data, spec.layout, PLOT_CONFIG)).then(
      function () { host.style.minHeight = ''; return true; },
      function (e) { console.warn('course.js: Plotly failed', e); return false; });
  }
  TrainingFigure.prototype.plotHeads = function () {
    var spec = this.headsHost && this.headsFigure();
    return spec ? newChart(this.headsHost, spec) : Promise.resolve(true); // nothing to draw, nothing missing
  };
  // After a theme switch: both charts again, in the palette's colours.
  TrainingFigure.prototype.retheme = function () {
    var loss = this.host && this.host.firstChild && this.lossFigure();
    if (loss) window.Plotly.react(this.host.firstChild, loss.data, loss.layout, PLOT_CONFIG);
    var heads = this.headsHost && this.headsHost.firstChild && this.headsFigure();
    if (heads) window.Plotly.react(this.headsHost.firstChild, heads.data, heads.layout, PLOT_CONFIG);
  };
  TrainingFigure.prototype.plot = function () {
    if (this.done) return this.done;
    var self = this;
    var spec = this.host && hasPlotly() && this.lossFigure();
    if (!spec) {
      this.done = Promise.resolve(false);
      return this.done;
    }
    this.done = newChart(this.host, spec).then(function (ok) {
      return self.plotHeads().then(function (headsOk) {
        if (!ok || !headsOk) self.toggles.forEach(function (t) { t.set(true); }); // a chart is missing: its table is the figure
        return ok;
      });
    });
    return this.done;
  };

  // ------------------------------------------------------------------ first paint, lazy plots

  // Times in ms, distances in CSS px.
  var LAZY = {
    partsIdleTimeout: 3000, partsFallbackDelay: 300, // heavy parts: on idle after the first paint
    plotIdleTimeout: 2000, plotFallbackDelay: 50,    // the other displayed plots, one per idle period
    nearScreen: 100,                                 // "visible now" reaches this far past the viewport
    observeMargin: '300px 0px'                       // a hidden plot is drawn this close to the screen
  };

  var paintedAt = null;
  function painted(id) {
    if (paintedAt !== null) return;
    paintedAt = performance.now();
    api.paintedAt = paintedAt;
    document.dispatchEvent(new CustomEvent('course:painted', { detail: { id: id, t: paintedAt } }));
    scheduleIdleParts();
  }

  function scheduleIdleParts() {
    if (config.idleParts === false) return;
    var go = function () { courseReady().catch(function (e) { console.warn(e.message || e); }); };
    if (window.requestIdleCallback) window.requestIdleCallback(go, { timeout: LAZY.partsIdleTimeout });
    else setTimeout(go, LAZY.partsFallbackDelay);
  }

  function visibleNow(node) {
    if (!node.getClientRects().length) return false;
    var r = node.getBoundingClientRect();
    return r.bottom > -LAZY.nearScreen && r.top < (window.innerHeight || 800) + LAZY.nearScreen;
  }

  function nextTask() {
    return new Promise(function (resolve) { setTimeout(resolve, 0); });
  }

  function whenIdle(fn) {
    if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: LAZY.plotIdleTimeout });
    else setTimeout(fn, LAZY.plotFallbackDelay);
  }

  // The first visible figure is drawn at once; the other visible ones one after another once it
  // has painted; then, one per idle period, the rest of the displayed ones (so a reader who
  // scrolls finds them drawn). Figures that are not displayed (a closed <details>, a hidden tab)
  // are drawn when they come into view, at their real size.
  function schedulePlots(plottable) {
    var now = [], later = [];
    plottable.forEach(function (f) { (visibleNow(f.el) ? now : later).push(f); });
    var chain = Promise.resolve();
    function queue(f) {
      chain = chain.then(function () { return f.plot(); });
      return chain;
    }
    now.forEach(function (f, i) {
      if (i) chain = chain.then(nextTask);
      queue(f);
    });
    if (!later.length) return;
    if ('IntersectionObserver' in window) {
      var io = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (!e.isIntersecting) return;
          io.unobserve(e.target);
          var f = figuresById[e.target.id] || e.target.__course;
          if (f && f.plot) queue(f);
        });
      }, { rootMargin: LAZY.observeMargin });
      later.forEach(function (f) { io.observe(f.el); });
    }
    var rest = later.slice();
    function step() {
      var f;
      while ((f = rest.shift()) && !f.el.getClientRects().length) { /* hidden: drawn when shown */ }
      if (f) queue(f).then(function () { if (rest.length) whenIdle(step); });
    }
    chain.then(function () { whenIdle(step); });
  }

  // ------------------------------------------------------------------ content tabs

  function tabLabel(input) {
    if (!input || !input.id) return '';
    var set = input.closest('.tabbed-set');
    var label = set && set.querySelector('label[for="' + input.id + '"]');
    return label ? label.textContent.trim() : '';
  }

  function isCodeTab(input) { return /^code\b/i.test(tabLabel(input)); }

  function initTabs() {
    // Label each panel, so that print (all panels one after another) says which is which.
    Array.prototype.forEach.call(document.querySelectorAll('.tabbed-set'), function (set) {
      if (set.__courseTabs) return;
      set.__courseTabs = true;
      var inputs = set.querySelectorAll(':scope > input[type="radio"]');
      var blocks = set.querySelectorAll(':scope > .tabbed-content > .tabbed-block');
      Array.prototype.forEach.call(blocks, function (b, i) {
        var t = tabLabel(inputs[i]);
        if (t && !b.hasAttribute('data-course-tab')) b.setAttribute('data-course-tab', t);
      });
      Array.prototype.forEach.call(inputs, function (inp) {
        if (inp.checked && isCodeTab(inp)) courseReady().catch(function () {});
      });
    });
  }

  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (t && t.matches && t.matches('.tabbed-set > input[type="radio"]') && t.checked && isCodeTab(t)) {
      courseReady().catch(function (e) { console.warn(e.message || e); });
    }
  });

  // ------------------------------------------------------------------ scroll boxes: reachable by keyboard

  // A box that scrolls sideways (a wide table, the comparison, a long formula, mkdocs-material's
  // table wrapper) must be reachable with the keyboard, or a keyboard user cannot scroll it (axe
  // scrollable-region-focusable, WCAG 2.1.1). While it overflows and holds nothing focusable, it
  // becomes a named tab stop (tabindex 0, role region); when it fits again, it stops being one.
  // A box whose HTML already sets tabindex (the scoreboard's) is left as it is.
  var SCROLL_BOXES = '.course-table-wrap, .course-diff, .course-math, .course-fig .course-scroll, .md-typeset__scrollwrap';
  var FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
  var scrollObserver = null;

  // Regions need distinct names (axe landmark-unique): the caption, else "Table: " and the
  // header cells, else a number.
  function scrollBoxName(box) {
    var squash = function (t) { return (t || '').replace(/\s+/g, ' ').trim(); };
    var cap = box.querySelector('caption');
    var text = cap ? squash(cap.textContent) : '';
    var ths = box.querySelectorAll('thead th');
    if (!text && ths.length) {
      text = 'Table: ' + Array.prototype.map.call(ths, function (th) { return squash(th.textContent); })
        .filter(Boolean).join(', ');
      if (text.length > 80) text = text.slice(0, 79) + '\u2026';
    }
    if (!text) text = box.querySelector('math') ? 'Formula' : box.querySelector('table') ? 'Table' : 'Scrollable content';
    var name = text + ' (scrolls sideways)';
    var taken = {};
    Array.prototype.forEach.call(document.querySelectorAll('[data-course-scroll][aria-label]'), function (b) {
      if (b !== box) taken[b.getAttribute('aria-label')] = true;
    });
    for (var k = 2; taken[name]; k++) name = text + ' ' + k + ' (scrolls sideways)';
    return name;
  }

  // A box that scrolls sideways fades out at the side (or sides) where more of it lies:
  // data-course-more is "right", "left" or "left right" (course.css draws the fade), kept in step
  // with the box's scroll position. A table's caption sits above the fade (--course-more-keep:
  // the height above its first row), so it never fades.
  // How far a box's content runs past its width (0 for a box that is not shown).
  function sidewaysRoom(box) {
    return box.clientWidth > 0 ? box.scrollWidth - box.clientWidth : 0;
  }

  function syncScrollEdges(box) {
    var room = sidewaysRoom(box);
    var more = [];
    if (room > 1) {
      if (box.scrollLeft > 1) more.push('left');
      if (box.scrollLeft < room - 1) more.push('right');
    }
    var value = more.join(' ');
    if (!value) {
      if (box.hasAttribute('data-course-more')) {
        box.removeAttribute('data-course-more');
        box.style.removeProperty('--course-more-keep');
      }
      return;
    }
    var table = box.querySelector('table');  // measured each time: a new width rewraps the caption
    var first = table && table.caption && (table.tHead || table.rows[0]);
    var keep = (first ? Math.max(0, Math.round(first.getBoundingClientRect().top - box.getBoundingClientRect().top)) : 0) + 'px';
    if (box.style.getPropertyValue('--course-more-keep') !== keep) box.style.setProperty('--course-more-keep', keep);
    if (box.getAttribute('data-course-more') !== value) box.setAttribute('data-course-more', value);
    if (!box.__courseEdges) {
      box.__courseEdges = true;
      box.addEventListener('scroll', oncePerFrame(function () { syncScrollEdges(box); }), { passive: true });
    }
  }

  function syncScrollBox(box) {
    syncScrollEdges(box);
    if (box.hasAttribute('tabindex') && !box.hasAttribute('data-course-scroll')) return; // the HTML's own
    var overflows = sidewaysRoom(box) > 1;
    var needs = overflows && !box.querySelector(FOCUSABLE);
    if (needs && !box.hasAttribute('data-course-scroll')) {
      box.setAttribute('data-course-scroll', '');
      box.tabIndex = 0;
      if (!box.hasAttribute('role')) { box.setAttribute('role', 'region'); box.setAttribute('data-course-scroll', 'role'); }
      if (!box.hasAttribute('aria-label')) box.setAttribute('aria-label', scrollBoxName(box));
    } else if (!needs && box.hasAttribute('data-course-scroll')) {
      if (box.getAttribute('data-course-scroll') === 'role') box.removeAttribute('role');
      box.removeAttribute('tabindex');
      box.removeAttribute('aria-label');
      box.removeAttribute('data-course-scroll');
    }
  }

  function initScrollBoxes() {
    var boxes = document.querySelectorAll(SCROLL_BOXES);
    if (!window.__courseScrollResize) {
      // A box in a block that the browser skips while it is off screen (course.css,
      // content-visibility) gets no ResizeObserver entry when the window changes width, so every
      // box is checked again on resize too.
      window.__courseScrollResize = true;
      window.addEventListener('resize', oncePerFrame(function () {
        Array.prototype.forEach.call(document.querySelectorAll(SCROLL_BOXES), function (box) {
          if (box.__courseScroll) syncScrollBox(box);
        });
      }));
    }
    if (window.ResizeObserver && !scrollObserver) {
      scrollObserver = new ResizeObserver(function (entries) {
        entries.forEach(function (e) {
          var box = e.target.__courseScroll ? e.target : e.target.parentElement;
          if (box && box.__courseScroll) syncScrollBox(box);
        });
      });
    }
    Array.prototype.forEach.call(boxes, function (box) {
      if (box.__courseScroll) return;
      box.__courseScroll = true;
      syncScrollBox(box);
      if (scrollObserver) {
        scrollObserver.observe(box);
        var inner = box.firstElementChild; // the table or formula growing inside a box of fixed width
        if (inner) scrollObserver.observe(inner);
      }
    });
  }

  // ------------------------------------------------------------------ init

  var api = {
    figures: figures,
    paintedAt: null,
    setState: function (id, state) {
      var f = figuresById[id];
      if (!f || !f.setState) return Promise.reject(new Error('course.js: no attention figure ' + id));
      return f.setState(state, { user: true });
    },
    fmt: fmt,
    cellColour: cellColour,
    tableToggle: tableToggle,  // for the chapters 1-2 section's plotted figures
    onSchemeChange: onSchemeChange,  // and their redraw in the other palette
    onMaterialPage: onMaterialPage,  // and its instant-navigation hook
    COLORSCALE: COLORSCALE
  };

  function init() {
    mark('course:init');
    if (figures.length && !figures[0].el.isConnected) { // a new page (instant navigation)
      figures.length = 0;
      traces.length = 0;
      figuresById = {};
      paintedAt = null;
    }
    var found = document.querySelectorAll('figure.course-fig');
    var plottable = [];
    var fresh = false;
    Array.prototype.forEach.call(found, function (fig) {
      if (fig.__course || !parsedWhole(fig)) return;
      if (fig.getAttribute('data-pending') === 'true' || fig.classList.contains('course-pending')) {
        markStatic(fig);
        return;
      }
      var kind = fig.getAttribute('data-kind');
      var f = null;
      try {
        if (kind === 'attention' || kind === 'compare') f = new AttentionFigure(fig, kind);
        else if (kind === 'stepper') f = initStepper(fig);
        else if (kind === 'softmax') f = initSoftmax(fig);
        else if (kind === 'scoreboard') f = initScoreboard(fig);
        else if (kind === 'training') f = new TrainingFigure(fig);
      } catch (e) {
        console.warn('course.js: could not enhance #' + fig.id, e);
      }
      fig.__course = f || true;
      if (!f) {
        markStatic(fig);
        return;
      }
      fresh = true;
      figures.push(f);
      if (fig.id) figuresById[fig.id] = f;
      if (f.plot) plottable.push(f);
    });
    window.traces = traces;
    window.trace = traces[0];
    var heatmaps = plottable.some(function (f) { return f instanceof AttentionFigure; });
    // Scroll boxes measure every box on the page: after the first heatmap is on screen.
    if (heatmaps) afterFirstPaint(initScrollBoxes);
    else initScrollBoxes();
    if (!fresh) return;
    document.documentElement.classList.add('course-js');
    // Space is kept for the plots on screen now, and for the rest after the first paint: a plot
    // in a block that is not rendered yet (course.css, content-visibility) costs a layout of
    // that block to measure, about 2 ms each.
    // A link to a figure (#fig-3:...) scrolls there at once: then every plot keeps its exact
    // space first, or those above the figure would move the page when they are measured.
    var fromHash = parseHash(location.hash);
    var onScreen = fromHash.length ? plottable : plottable.filter(function (f) { return visibleNow(f.el); });
    reserveSpace(onScreen);
    var offScreen = plottable.filter(function (f) { return onScreen.indexOf(f) < 0; });
    if (offScreen.length) afterFirstPaint(function () { reserveSpace(offScreen); });
    if (fromHash.length) {
      applyHash(false);
      var first = figuresById[fromHash[0].id];
      if (first) first.el.scrollIntoView({ block: 'start' });
    }
    schedulePlots(plottable);
    initTabs();
    if (!heatmaps) scheduleIdleParts();
  }

  // While the page is still being parsed, a figure is whole once the parser has gone past it:
  // it, or a box around it, has a next sibling (the rest of it is set up at DOMContentLoaded).
  function parsedWhole(node) {
    if (document.readyState !== 'loading') return true;
    for (; node && node !== document.body; node = node.parentNode) {
      if (node.nextSibling) return true;
    }
    return false;
  }

  // A figure course.js could not set up keeps its tables (course.css shows a static view's).
  function markStatic(fig) {
    Array.prototype.forEach.call(fig.querySelectorAll('.course-view'), function (v) {
      v.classList.add('course-view-static');
      var box = v.querySelector(':scope > .course-table-wrap');
      if (box && box.__courseToggle) box.__courseToggle.set(true);
    });
  }

  function afterFirstPaint(fn) {
    if (paintedAt !== null) fn();
    else document.addEventListener('course:painted', function () { fn(); }, { once: true });
  }

  function reserveSpace(plottable) {
    var views = [];
    plottable.forEach(function (f) { views = views.concat(f.views || []); });
    views.forEach(function (v) { v.measure(); }); // reads only: one layout
    views.forEach(function (v) { v.reserve(); }); // writes only
  }

  window.addEventListener('hashchange', function () { applyHash(true); });

  // mkdocs-material's palette toggle switches data-md-color-scheme: recolour text and masked cells.
  function watchTheme() {
    onSchemeChange(function () {
      figures.forEach(function (f) {
        (f.views || []).forEach(function (v) {
          if (!v.plotted) return;
          v.readTheme();
          v.redrawPlot();
        });
        if (f instanceof TrainingFigure && f.done) {
          f.done.then(function (ok) { if (ok) f.retheme(); });
        }
      });
    });
  }

  window.softmax = softmax;
  window.courseReady = courseReady;
  window.course = api;
  window.traces = traces;
  window.trace = undefined;

  // This file runs right after the page's first heatmap (the course extension marks the place,
  // overrides/main.html puts the scripts there; elsewhere they follow the article): the figures
  // parsed so far start at once, so the first heatmap is drawn while the rest of the page is
  // still being parsed, and the others at DOMContentLoaded. A link to a figure (#fig-3:...)
  // waits for the whole page, since the figure it names may not be parsed yet.
  if (document.readyState === 'loading') {
    if (!parseHash(location.hash).length) init();
    document.addEventListener('DOMContentLoaded', function () { init(); watchTheme(); });
  } else {
    init();
    watchTheme();
  }
  // mkdocs-material's instant navigation swaps pages without a reload.
  onMaterialPage(function () { init(); });
})();

/* ==================================================================== chapters 1 and 2
 * tokens, merges, embedding, layernorm, neighbours, map (CONTRACT.md, "Chapters 1 and 2").
 * Their own init: course.js above leaves figures of these kinds alone. Every number was
 * computed when the course was built; this only shows, hides and plots what the page holds.
 * Globals: tokens (the tokens figure's current sentence), embedding (the embedding figure's data).
 */
(function () {
  'use strict';

  var PLOT = { displayModeBar: false, responsive: true, scrollZoom: false, doubleClick: false, showTips: false };
  var escapeForPlotly = function (s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); };
  var dataOf = function (fig) {
    var node = fig.querySelector(':scope > script.course-data');
    try { return node ? JSON.parse(node.textContent) : null; } catch (e) { return null; }
  };
  var canPlot = function () { return typeof window.Plotly !== 'undefined' && window.Plotly.newPlot; };
  var textColour = function (fig) { return getComputedStyle(fig).color || '#222'; };
  // colours from course.css, so light and dark mode each get their own
  var cssColour = function (fig, name, fallback) { return (getComputedStyle(fig).getPropertyValue(name) || '').trim() || fallback; };
  var baseLayout = function (fig, extra) {
    var layout = { paper_bgcolor: 'rgba(0,0,0,0)', plot_bgcolor: 'rgba(0,0,0,0)', dragmode: false,
      font: { family: 'inherit', color: textColour(fig) }, margin: { l: 70, r: 20, t: 10, b: 50 } };
    Object.keys(extra).forEach(function (k) { layout[k] = extra[k]; });
    // quiet gridlines in both palettes (Plotly's own are white on slate); a visible zero line
    ['xaxis', 'yaxis'].forEach(function (axis) {
      if (!layout[axis]) return;
      layout[axis].gridcolor = cssColour(fig, '--course-gridline', 'rgba(0, 0, 0, 0.12)');
      layout[axis].zerolinecolor = cssColour(fig, '--course-line-soft', 'gray');
    });
    return layout;
  };
  var plotInto = function (fig, traces, layout) {
    var host = fig.querySelector('.course-plot');
    if (!host || !canPlot()) return null;
    return Promise.resolve(window.Plotly.react(host, traces, layout, PLOT)).catch(function (e) {
      console.warn('course.js: Plotly failed in #' + fig.id, e);
    });
  };

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

  // ---- embedding: the heatmap of token rows, position rows or their sum
  function initEmbedding(fig, data) {
    window.embedding = data;
    var controls = fig.querySelector('.course-controls');
    var select = fig.querySelector('select[data-control="part"]');
    var labels = data.tokens.map(function (t) { return escapeForPlotly(t.display); });
    // one colour scale for all three parts, so a colour means the same number after a switch
    var reach = Math.max.apply(null, Object.keys(data.parts).map(function (p) {
      return Math.max.apply(null, data.parts[p].map(function (row) { return Math.max.apply(null, row.map(Math.abs)); }));
    }));
    // position rows belong to places in the sentence, not to the tokens that sit there
    var places = labels.map(function (_, i) { return 'position ' + i; });
    function draw() {
      var part = select ? select.value : 'sum';
      var z = data.parts[part];
      var names = part === 'position' ? places : labels;
      var dims = z[0].map(function (_, j) { return j + 1; });
      return plotInto(fig, [{
        type: 'heatmap', z: z, x: dims, y: labels.map(function (_, i) { return i; }), colorscale: 'RdBu', reversescale: true,
        zmin: -reach, zmax: reach,
        customdata: z.map(function (row, i) { return row.map(function () { return names[i]; }); }),
        hovertemplate: '%{customdata}, dimension %{x}: %{z:.3f}<extra></extra>', colorbar: { thickness: 12 }
      }], baseLayout(fig, {
        height: 80 + 26 * labels.length,
        xaxis: { title: { text: 'dimension' }, fixedrange: true },
        yaxis: { autorange: 'reversed', tickmode: 'array', tickvals: labels.map(function (_, i) { return i; }), ticktext: names, fixedrange: true,
          automargin: true }  // room for the longest token (<|endoftext|>)
      }));
    }
    if (controls) controls.hidden = false;
    if (select) select.addEventListener('change', draw);
    // the heatmap holds every number, so its table (the first 8 of each) is one click away, as in chapter 3
    if (canPlot() && window.course && window.course.tableToggle) window.course.tableToggle(fig.querySelector('table.course-embedding'), fig.id);
    return draw;
  }

  // ---- layernorm: the three stages of one vector, number by number

  function initLayerNorm(fig, data) {
    return function () {
      var colours = [cssColour(fig, '--course-line-soft', 'gray'), cssColour(fig, '--course-line-strong', 'navy'), cssColour(fig, '--course-kind-induction', 'firebrick')];
      return plotInto(fig, data.vectors.map(function (v, i) {
        return { type: 'scatter', mode: 'markers', name: data.names[i], x: v.map(function (_, j) { return j + 1; }), y: v,
          marker: { size: 5, color: colours[i] }, hovertemplate: 'dimension %{x}: %{y:.3f}<extra>' + escapeForPlotly(data.names[i]) + '</extra>' };
      }), baseLayout(fig, { height: 320, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' },  // above the plot, never over it
        xaxis: { title: { text: 'dimension' }, fixedrange: true }, yaxis: { title: { text: 'value' }, fixedrange: true } }));
    };
  }

  // ---- map: common tokens as grey dots, the lesson's words marked and named
  // One unit is as long across as up, so distances on the map are the distances the table's
  // "closest on the map" measures, and the first direction's wider spread shows as width.
  var MAP = { margin: { l: 70, r: 20, t: 10, b: 50 }, narrowMargin: { l: 52, r: 6, t: 10, b: 46 }, narrow: 480,
    minHeight: 260, maxHeight: 560, pad: 0.06,
    labelPx: 6, labelHeight: 14, dotPx: 6, clearPx: 13 };  // px per character: a little over the 12 px font's average
  var LABEL_SPOTS = [['top center', 0, -1], ['bottom center', 0, 1], ['middle right', 1, 0], ['middle left', -1, 0],
    ['top right', 1, -1], ['top left', -1, -1], ['bottom right', 1, 1], ['bottom left', -1, 1]];

  function span(values) {
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values), pad = MAP.pad * (hi - lo || 1);
    return [lo - pad, hi + pad];
  }

  // Each marked word's label goes to the first spot around its dot that overlaps no label placed
  // before it and keeps clear of every other marked dot (clearPx, so that no label reads as
  // another dot's; pixels, from the map's scale). A label with no free spot
  // (a narrow screen) is left off: its word is still in the hover and in the table below.
  function labelSpots(marks, toPx, size) {
    var boxes = marks.map(function (t) { var p = toPx(t); return { l: p.x - MAP.clearPx, r: p.x + MAP.clearPx, t: p.y - MAP.clearPx, b: p.y + MAP.clearPx }; });
    var hits = function (a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; };
    return marks.map(function (t, i) {
      var p = toPx(t), w = MAP.labelPx * String(t.display).length, h = MAP.labelHeight, best = null;
      LABEL_SPOTS.some(function (spot) {
        var cx = p.x + spot[1] * (MAP.dotPx + w / 2), cy = p.y + spot[2] * (MAP.dotPx + h / 2);
        var box = { l: cx - w / 2, r: cx + w / 2, t: cy - h / 2, b: cy + h / 2 };
        var outside = box.l < 0 || box.t < 0 || box.r > size.width || box.b > size.height ? 1 : 0;
        var clashes = outside + boxes.filter(function (b, j) { return j !== i && hits(box, b); }).length;
        if (!best || clashes < best.clashes) best = { spot: spot[0], box: box, clashes: clashes };
        return clashes === 0;
      });
      if (best.clashes === 0) boxes.push(best.box);
      return { spot: best.spot, shown: best.clashes === 0 };
    });
  }

  // Says under the map which marked words have no label there (a line course.js owns).
  function noteUnlabelled(fig, host, marks, text) {
    var note = fig.querySelector('.course-map-unlabelled');
    if (!note) {
      note = document.createElement('p');
      note.className = 'course-note course-map-unlabelled';
      host.insertAdjacentElement('afterend', note);
    }
    var left = marks.filter(function (_, i) { return !text[i]; }).map(function (t) { return t.display; });
    note.hidden = !left.length;
    note.textContent = left.length ? 'Left unlabelled to keep the labels apart: ' + left.join(', ') + '. Point at a red dot, or read the table.' : '';
  }

  function initMap(fig, data) {
    return function () {
      var points = data.tokens.concat(data.marks);
      var xr = span(points.map(function (t) { return t.x; })), yr = span(points.map(function (t) { return t.y; }));
      var host = fig.querySelector('.course-plot');
      var boxWidth = (host && host.clientWidth) || 640;
      var margin = boxWidth < MAP.narrow ? MAP.narrowMargin : MAP.margin;  // a phone: every pixel to the points
      var plotWidth = Math.max(120, boxWidth - margin.l - margin.r);
      var height = Math.round(Math.min(MAP.maxHeight, Math.max(MAP.minHeight,
        margin.t + margin.b + plotWidth * (yr[1] - yr[0]) / (xr[1] - xr[0]))));
      var plotHeight = height - margin.t - margin.b;
      // label spots for a scale in px per unit (the same across and up)
      var labelsAt = function (unit) {
        var spots = labelSpots(data.marks, function (t) { return { x: (t.x - xr[0]) * unit, y: (yr[1] - t.y) * unit }; },
          { width: (xr[1] - xr[0]) * unit, height: (yr[1] - yr[0]) * unit });
        return { text: data.marks.map(function (t, i) { return spots[i].shown ? escapeForPlotly(t.display) : ''; }),
          textposition: spots.map(function (s) { return s.spot; }) };
      };
      var unit = Math.min(plotWidth / (xr[1] - xr[0]), plotHeight / (yr[1] - yr[0]));  // before Plotly makes room for the legend
      var labels = labelsAt(unit);
      var grey = { type: 'scatter', mode: 'markers', name: 'common tokens', x: data.tokens.map(function (t) { return t.x; }),
        y: data.tokens.map(function (t) { return t.y; }), text: data.tokens.map(function (t) { return escapeForPlotly(t.display); }),
        marker: { size: 5, color: cssColour(fig, '--course-line-soft', 'gray') }, hovertemplate: '%{text}<extra></extra>' };
      var marked = { type: 'scatter', mode: 'markers+text', name: 'marked words', x: data.marks.map(function (t) { return t.x; }),
        y: data.marks.map(function (t) { return t.y; }), hovertext: data.marks.map(function (t) { return escapeForPlotly(t.display); }),
        text: labels.text, textposition: labels.textposition, cliponaxis: false,
        textfont: { shadow: 'auto' },  // a halo in the page's colour: a label over grey dots stays legible
        marker: { size: 9, color: cssColour(fig, '--course-kind-induction', 'firebrick') }, hovertemplate: '%{hovertext}<extra>marked</extra>' };
      var pct = function (x) { return Math.round(100 * x) + '%'; };
      var drawn = plotInto(fig, [grey, marked], baseLayout(fig, { height: height, margin: margin, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' },
        xaxis: { title: { text: 'first direction (' + pct(data.explained[0]) + ' of the spread)' }, fixedrange: true, zeroline: false, range: xr, constrain: 'domain' },
        yaxis: { title: { text: 'second direction (' + pct(data.explained[1]) + ')' }, fixedrange: true, zeroline: false, range: yr,
          scaleanchor: 'x', scaleratio: 1, constrain: 'domain' } }));
      // the legend took some height: place the labels again on the scale Plotly drew
      return drawn && drawn.then(function () {
        var axis = host._fullLayout && host._fullLayout.xaxis;
        if (!axis) return;  // Plotly failed (plotInto has said so)
        var drawnUnit = axis._length / (xr[1] - xr[0]);
        if (Math.abs(drawnUnit - unit) >= 0.5) labels = labelsAt(drawnUnit);
        noteUnlabelled(fig, host, data.marks, labels.text);
        return window.Plotly.restyle(host, { text: [labels.text], textposition: [labels.textposition] }, [1]);
      });
    };
  }

  var KINDS = { tokens: initTokens, merges: initMerges, embedding: initEmbedding, layernorm: initLayerNorm, map: initMap, neighbours: null };

  var redraw = [];  // the plots of the page shown now, redrawn when the theme changes
  var RESIZE_DELAY = 150;  // ms of quiet after the last resize event before the map is redrawn
  var watching = false;

  function init() {
    if (redraw.length && !document.body.contains(redraw[0].fig)) redraw = [];  // instant navigation: a new page
    Array.prototype.forEach.call(document.querySelectorAll('figure.course-fig'), function (fig) {
      var kind = fig.getAttribute('data-kind');
      if (!(kind in KINDS) || fig.__course12 || fig.getAttribute('data-pending') === 'true') return;
      fig.__course12 = true;
      document.documentElement.classList.add('course-js');
      if (!KINDS[kind]) return;
      try {
        var draw = KINDS[kind](fig, dataOf(fig) || {});
        if (typeof draw === 'function') { draw(); redraw.push({ fig: fig, draw: draw, width: fig.clientWidth }); }
      } catch (e) {
        console.warn('course.js: could not enhance #' + fig.id, e);
      }
    });
    if (!watching && document.body) {
      watching = true;
      if (window.course && window.course.onSchemeChange) {  // dark mode: the new text colour
        window.course.onSchemeChange(function () { redraw.forEach(function (r) { r.draw(); }); });
      }
      // a new width (a phone turned): the map's height and its label spots follow it
      var resizing = null;
      window.addEventListener('resize', function () {
        clearTimeout(resizing);
        resizing = setTimeout(function () {
          redraw.forEach(function (r) {
            var width = r.fig.clientWidth;
            if (r.fig.getAttribute('data-kind') === 'map' && width && width !== r.width) { r.width = width; r.draw(); }
          });
        }, RESIZE_DELAY);
      });
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
  if (window.course && window.course.onMaterialPage) window.course.onMaterialPage(init);
})();
