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
  var SCALE_DIGITS = 2; // significant digits of an encoded array's scale (generator/store/codec.py)

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
