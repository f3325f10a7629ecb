  // ------------------------------------------------------------------ traces and their per-head parts

  var traces = [];
  var scriptLoads = {}; // absolute src -> Promise

  // data.weights is (layer, head, query, key) with only the shown head's grid in the page (the
  // others null). `partsSrc` is the trace's part folder (data-parts): `<layer>-<head>.js`, one
  // head's arrays and grid, loaded when that head is first shown (loadHead), and `weights.js`,
  // every head's grid, loaded by "All heads" (loadWeights); both fill these same arrays in.
  // t.load() loads every head (the Code views, the console; courseReady() does it for all).
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
    Object.defineProperty(t, '_heads', { value: {} }); // "l-h" -> Promise
    Object.defineProperty(t, '_weightsLoad', { value: null, writable: true });
    Object.defineProperty(t, '_weights', { value: w });
    Object.defineProperty(t, 'load', { value: function () { return loadTrace(t); } });
    Object.defineProperty(t, 'loadHead', { value: function (l, h) { return loadHead(t, l, h); } });
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
  // quarter of the plain size) and the page weights (render/assets.py head_parts). Decoded here as the
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

  // One head of a trace file (or of a head's part): its fields decoded, scaledMasked from scores.
  function decodeHead(h, factor) {
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
  }

  function decodeTraceFile(doc) {
    var factor = doc.meta.scaledMaskedFactor || 1 / Math.sqrt(doc.meta.headDim);
    return {
      layers: doc.layers.map(function (layer) {
        return { heads: layer.heads.map(function (h) { return decodeHead(h, factor); }) };
      })
    };
  }

  // A head's fields into the trace: its grid into the page's arrays too, which the views draw
  // from; a layer's attnConcat (every head's out side by side) once each of its heads has out.
  function setHead(t, l, h, fields) {
    var tl = t.layers[l], th = tl && tl.heads[h];
    if (!th) return;
    Object.keys(fields).forEach(function (name) {
      var v = fields[name];
      if (name === 'weights') {
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
    if (!tl.attnConcat && tl.heads.every(function (x) { return x.out; })) {
      tl.attnConcat = tl.heads[0].out.map(function (_, i) {
        return [].concat.apply([], tl.heads.map(function (x) { return x.out[i]; }));
      });
    }
  }

  // A whole trace's part (courseTraceParts["<key>"]: a page's of an older build).
  function mergePart(t, part) {
    if (part.schemaVersion != null) part = decodeTraceFile(part);
    (part.layers || []).forEach(function (pl, l) {
      if (pl.attnConcat && t.layers[l]) t.layers[l].attnConcat = pl.attnConcat;
      (pl.heads || []).forEach(function (ph, h) { setHead(t, l, h, ph); });
    });
  }

  function partsHeld() { return window.courseTraceParts || {}; }

  // courseTraceParts["<key>/<name>"]: at once when the page holds it (a one-file chapter), else
  // from `<data-parts>/<name>.js`, a classic script (so file:// works too). null without a folder.
  function partReady(t, name) {
    var id = t.key + '/' + name;
    if (partsHeld()[id]) return Promise.resolve(partsHeld()[id]);
    if (!t._parts) return Promise.resolve(null);
    var src = t._parts + '/' + name + '.js';
    return injectScript(src).then(function () {
      var part = partsHeld()[id];
      if (!part) throw new Error('course.js: ' + src + ' did not define courseTraceParts["' + id + '"]');
      return part;
    });
  }

  // One head's part (layer and head from 0): its q, k, v, scores, scaledMasked, out and grid.
  function loadHead(t, l, h) {
    var id = l + '-' + h;
    if (t._heads[id]) return t._heads[id];
    if (t._loaded || partsHeld()[t.key]) return (t._heads[id] = loadTrace(t));
    t._heads[id] = partReady(t, id).then(function (part) {
      if (!part) return t;
      var fields = part.fields || {};
      if (part.schemaVersion != null) fields = decodeHead(fields, part.meta.scaledMaskedFactor);
      setHead(t, part.layer, part.head, fields);
      return t;
    });
    return t._heads[id];
  }

  // Every head's grid (weights.js), for "All heads": a few kB a head, without its arrays.
  function loadWeights(t) {
    if (t._weightsLoad) return t._weightsLoad;
    if (t._loaded || partsHeld()[t.key]) return (t._weightsLoad = loadTrace(t));
    t._weightsLoad = partReady(t, 'weights').then(function (part) {
      if (!part) return t;
      (part.weights || []).forEach(function (layer, l) {
        layer.forEach(function (g, h) {
          if (!hasHead(t._weights, l, h)) setHead(t, l, h, { weights: part.schemaVersion != null ? decodeArray(g) : g });
        });
      });
      return t;
    });
    return t._weightsLoad;
  }

  // Every head of the trace (t.load()).
  function loadTrace(t) {
    if (t._loaded) return t._loaded;
    var whole = partsHeld()[t.key];
    if (whole) {
      mergePart(t, whole);
      t._loaded = Promise.resolve(t);
      return t._loaded;
    }
    var all = [];
    t.layers.forEach(function (layer, l) {
      layer.heads.forEach(function (_, h) { all.push(loadHead(t, l, h)); });
    });
    t._loaded = Promise.all(all).then(function () { return t; });
    return t._loaded;
  }

  function courseReady() {
    return Promise.all(traces.map(loadTrace)).then(function () { return traces; });
  }
