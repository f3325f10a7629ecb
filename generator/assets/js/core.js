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
  // toFixed rounds the exact value too, half up: only a value within a hair of a tie needs the
  // exact digits (33,000 weights took 56 ms in the exact way). Below 1e6 the product's error is
  // under 1e-9 of a unit, far inside the hair.
  function fmt(x, d) {
    if (typeof x !== 'number' || !isFinite(x)) return NDASH;
    var neg = x < 0 || (x === 0 && 1 / x < 0); // -0.0 too, as Python writes it
    var a = Math.abs(x);
    var s = a.toFixed(d);
    var m = a * Math.pow(10, d);
    if (m < 1e6 && Math.abs(m - Math.floor(m) - 0.5) > 1e-6) return (neg ? '-' : '') + s;
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

  function luminance(c) { // WCAG 2's relative luminance of an sRGB colour [r, g, b]
    function ch(v) { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }
    return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2]);
  }
  function contrastRatio(a, b) { // as format.contrast_ratio (WCAG 2)
    var la = luminance(a), lb = luminance(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }
  // as causal_data.signed_style: blue for positive, orange for negative, a tint below solidFrom;
  // its constants are window.COURSE_SIGNED_RULE, written into colorscale.js from format.signed_rule()
  function signedStyle(x, scale) {
    var R = window.COURSE_SIGNED_RULE, t = scale <= 0 ? 0 : Math.min(1, Math.abs(x) / scale);
    var end = x >= 0 ? R.positive : R.negative;
    if (t < R.solidFrom) return 'background:rgba(' + end.join(',') + ',' + fmt(R.tintBase + R.tintSlope * t, 2) + ')';
    var rgb = end.map(function (e) { return roundHalfEven(255 + (e - 255) * t); }); // Python's round()
    var black = contrastRatio(rgb, [0, 0, 0]) >= contrastRatio(rgb, [255, 255, 255]);
    var hex = '#' + rgb.map(function (c) { return (c < 16 ? '0' : '') + c.toString(16); }).join('');
    return 'background:' + hex + ';color:' + (black ? '#000' : '#fff');
  }

  function signed2(d) { // as format.diff2: a true minus, 0.00 where it rounds to zero
    var s = fmt2(d);
    if (s === '0.00' || s === '-0.00') return '0.00';
    return d > 0 ? '+' + s : s.replace('-', '\u2212');
  }
  function shownDiff(a, b) { // as format.shown_diff: b - a of the two numbers as shown
    return signed2(Number(fmt2(b)) - Number(fmt2(a)));
  }

  // A weight's colour as [r, g, b], 0-255 (the small multiples' pixels), and as CSS with its text colour.
  function cellRGB(w) {
    var v = Math.min(1, Math.max(0, w || 0));
    var p = v * LAST;
    var i = Math.min(Math.floor(p), LAST - 1);
    var f = p - i;
    var a = CIVIDIS_RGB[i], b = CIVIDIS_RGB[i + 1];
    return [0, 1, 2].map(function (j) { return roundHalfEven(a[j] + (b[j] - a[j]) * f); });
  }
  function cellColour(w) {
    var v = Math.min(1, Math.max(0, w));
    return { background: 'rgb(' + cellRGB(w).join(', ') + ')', color: v >= DARK_TEXT_FROM ? '#000' : '#fff' };
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

  var SVG_NS = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs, cls) {
    var node = document.createElementNS(SVG_NS, tag);
    if (cls) node.setAttribute('class', cls);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

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
    if (t.text === '<|endoftext|>') s = '\u2039eot\u203a'; // ‹eot›: render/format.py's EOT_LABEL
    else if (t.display != null) s = String(t.display);
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
    if (s === '<|endoftext|>') s = 'end of text'; // said as what it is; a guess of it has no position
    else if (t.spoken != null) s = String(t.spoken);
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
    if (t.text === '<|endoftext|>') s.title = t.text; // ‹eot› names itself in full on hover
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

  // Colours from course.css, read when drawing, so the light and the slate palette each get their own.
  function cssColour(node, name, fallback) {
    var v = (getComputedStyle(node).getPropertyValue(name) || '').trim();
    return v || fallback;
  }
  function textColour(node) { return getComputedStyle(node).color || '#222'; }

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

  // Every plot's config: no mode bar, no zoom (a page scrolls, a plot does not move).
  var PLOT_CONFIG = {
    displayModeBar: false, responsive: true, scrollZoom: false, doubleClick: false,
    showTips: false, showLink: false, staticPlot: false
  };
