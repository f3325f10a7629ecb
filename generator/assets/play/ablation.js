  // ------------------------------------------------------------------ ablation

  // generator/model/causal.py's ablation, in the page: each head's output (its block of c_proj's
  // input) replaced at every position by zeros or by its mean over the reference texts
  // (play-model.js's headMeans, generator/render/play_model.py), and what that does at one
  // position to the logit and log-probability of the followed tokens and to the next-token
  // distribution (KL divergence). Only tokens 0..pos are run (later ones cannot change position
  // pos), and each ablated run starts at its own layer from the clean stream entering it.
  // The computing half is one function that uses nothing outside itself but the Model and
  // headViews it is given, so that runner.js can run it in the worker too. Returns the modes.
  function ablationPass(Model, headViews) {
    function upTo(n) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a; }
    var ABLATIONS = ['zero', 'mean'];

    // The logits and log-probabilities after the stream x's row `pos` (ln_f, the tied unembedding).
    Model.prototype.logProbsAt = function (x, pos) {
      var W = this.width, V = this.nVocab;
      var h = this.final(x.subarray(pos * W, (pos + 1) * W), 1, new Float64Array(W)); // (width,)
      var logits = this.unembed(h, 1), max = -Infinity, sum = 0; // (vocab,)
      for (var id = 0; id < V; id++) if (logits[id] > max) max = logits[id];
      for (var j = 0; j < V; j++) sum += Math.exp(logits[j] - max);
      var lse = max + Math.log(sum), logp = new Float64Array(V); // (vocab,)
      for (var k = 0; k < V; k++) logp[k] = logits[k] - lse;
      return { logits: logits, logp: logp };
    };

    // A job, one ablated run per next() (false once all are done): result holds, per mode, layer
    // and head, dLogit and dLogprob (one per followed token) and kl, as a trace's causal block.
    Model.prototype.ablation = function (ids, pos, follow) {
      var self = this, T = pos + 1, W = this.width, H = this.nHead, d = this.headDim, L = this.nLayer;
      var means = this.headMeans, sub = ids.slice(0, T), scratch = [];
      for (var h0 = 0; h0 < H; h0++) scratch.push(headViews(new Float64Array(4 * T * d + 3 * T * T), 0, T, d));
      var x = this.embed(sub, new Float64Array(T * W)), concat = new Float64Array(T * W); // (token, width)
      var streams = [], concats = [];
      for (var l = 0; l < L; l++) {
        streams.push(x.slice());
        this.attend(l, x, T, scratch, concat);
        concats.push(concat.slice());
        this.finish(l, x, T, concat);
      }
      var clean = this.logProbsAt(x, pos), V = this.nVocab, pClean = new Float64Array(V); // (vocab,)
      for (var v = 0; v < V; v++) pClean[v] = Math.exp(clean.logp[v]);
      function grid(fill) { return ABLATIONS.map(function () { return upTo(L).map(function () { return upTo(H).map(fill); }); }); }
      var res = {
        pos: pos, follow: follow.slice(), modes: ABLATIONS.slice(),
        cleanLogit: follow.map(function (id) { return clean.logits[id]; }),
        cleanLogprob: follow.map(function (id) { return clean.logp[id]; }),
        dLogit: grid(function () { return null; }), dLogprob: grid(function () { return null; }), kl: grid(function () { return null; })
      };
      var jobs = [];
      ABLATIONS.forEach(function (mode, m) { for (var l2 = 0; l2 < L; l2++) for (var h2 = 0; h2 < H; h2++) jobs.push([m, l2, h2]); });
      var done = 0;
      return {
        result: res,
        next: function () {
          if (done >= jobs.length) return false;
          var m = jobs[done][0], la = jobs[done][1], ha = jobs[done][2];
          done++;
          var xa = streams[la].slice(), ca = concats[la].slice(), mean = ABLATIONS[m] === 'mean' ? means[la][ha] : null;
          for (var t = 0; t < T; t++) {
            var o = t * W + ha * d;
            for (var j = 0; j < d; j++) ca[o + j] = mean ? mean[j] : 0;
          }
          self.finish(la, xa, T, ca);
          for (var lb = la + 1; lb < L; lb++) { self.attend(lb, xa, T, scratch, ca); self.finish(lb, xa, T, ca); }
          var ab = self.logProbsAt(xa, pos), kl = 0;
          for (var k = 0; k < V; k++) kl += pClean[k] * (clean.logp[k] - ab.logp[k]);
          res.dLogit[m][la][ha] = follow.map(function (id) { return ab.logits[id] - clean.logits[id]; });
          res.dLogprob[m][la][ha] = follow.map(function (id) { return ab.logp[id] - clean.logp[id]; });
          res.kl[m][la][ha] = Math.max(0, kl);
          return done < jobs.length;
        }
      };
    };

    return ABLATIONS;
  }
  var ABLATIONS = ablationPass(Model, headViews);

  // ------------------------------------------------------------------ the ablation figure

  // Drawn from render/templates/ablation.html itself: the build renders it with slots (⟦name⟧)
  // where this page's numbers go (ABLATION_TEMPLATE, generator/render/ablation.py's
  // live_template), and here each slot becomes text (never HTML), each cell its number and colour.
  // The colours are causal_data.signed_style's, the numbers format.diff2's as course.js writes them
  // (window.course.signed2; test_play holds the page's figure to a frozen one cell by cell).
  var SLOT = /\u27e6([a-z.-]+)\u27e7/g;

  function luminance(c) {
    var ch = c.map(function (v) { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  }
  function contrastRatio(a, b) { // as format.contrast_ratio (WCAG 2)
    var la = luminance(a), lb = luminance(b), hi = Math.max(la, lb), lo = Math.min(la, lb);
    return (hi + 0.05) / (lo + 0.05);
  }
  // as causal_data.signed_style: blue for positive, orange for negative, a tint below solidFrom;
  // its constants are SIGNED_RULE, written in from causal_data.signed_rule() by the build
  function signedStyle(x, scale) {
    var R = SIGNED_RULE, t = scale <= 0 ? 0 : Math.min(1, Math.abs(x) / scale);
    var end = x >= 0 ? R.positive : R.negative;
    if (t < R.solidFrom) return 'background:rgba(' + end.join(',') + ',' + window.course.fmt(R.tintBase + R.tintSlope * t, 2) + ')';
    var rgb = end.map(function (e) { return window.course.roundHalfEven(255 + (e - 255) * t); }); // Python's round()
    var black = contrastRatio(rgb, [0, 0, 0]) >= contrastRatio(rgb, [255, 255, 255]);
    var hex = '#' + rgb.map(function (c) { return (c < 16 ? '0' : '') + c.toString(16); }).join('');
    return 'background:' + hex + ';color:' + (black ? '#000' : '#fff');
  }

  // as causal_data.ranked_heads: [layer, head, effect], the largest change as shown first, ties by layer, then head
  function rankedHeads(eff) {
    var cells = [], fmt2 = function (x) { return window.course.fmt(x, 2); };
    eff.forEach(function (row, l) { row.forEach(function (e, h) { cells.push([l, h, e]); }); });
    return cells.sort(function (a, b) { return Math.abs(Number(fmt2(b[2]))) - Math.abs(Number(fmt2(a[2]))) || a[0] - b[0] || a[1] - b[1]; });
  }

  // (layer, head) effects of one mode: the measure's change, as ablation_effects reads a trace
  function effectsOf(res, m, cols) {
    return res.dLogit[m].map(function (row, l) {
      return row.map(function (dl, h) { return cols.length === 2 ? dl[cols[0]] - dl[cols[1]] : res.dLogprob[m][l][h][cols[0]]; });
    });
  }

  // The ablation figure for res (Model.ablation's result) with one or two of its followed tokens
  // as targets (their indices `cols`): a logit difference for two, a log-probability for one.
  // tokens: the sentence's (pageTokens); targets: the target tokens (pageTokens).
  function ablationFigure(res, cols, tokens, targets) {
    var box = document.createElement('div');
    box.innerHTML = ABLATION_TEMPLATE; // the build's own markup: no reader's text is in it
    var fig = box.firstElementChild, fmt2 = function (x) { return window.course.fmt(x, 2); }, signed2 = window.course.signed2;
    var slots = { token: label(tokens[res.pos]), 'token-spoken': spokenOf(tokens[res.pos]), pos: String(res.pos) };
    var two = cols.length === 2, clean = two ? res.cleanLogit[cols[0]] - res.cleanLogit[cols[1]] : res.cleanLogprob[cols[0]];
    slots.measure = two ? 'logit(' + targets[0].display + ') \u2212 logit(' + targets[1].display + ')' : 'log P(' + targets[0].display + ')';
    slots.clean = two ? signed2(clean) : fmt2(clean).replace('-', '\u2212'); // a log-probability, with a true minus
    var tables = fig.querySelectorAll('table.course-causal-grid');
    ABLATIONS.forEach(function (mode, m) {
      var eff = effectsOf(res, m, cols), flat = [].concat.apply([], eff);
      var scale = Math.max(Math.abs(Math.max.apply(null, flat)), Math.abs(Math.min.apply(null, flat)), 1e-9);
      var cells = rankedHeads(eff);
      slots['top.' + mode] = 'layer ' + (cells[0][0] + 1) + ', head ' + (cells[0][1] + 1);
      slots['effect.' + mode] = signed2(cells[0][2]);
      var rows = tables[m].tBodies[0].rows;
      eff.forEach(function (row, l) {
        row.forEach(function (e, h) {
          var td = rows[l].cells[h + 1];
          td.setAttribute('style', signedStyle(e, scale));
          fillSlots(td, { cell: signed2(e) });
        });
      });
    });
    fillSlots(fig, slots);
    return fig;
  }

  // Every slot in the text and the attributes under `node`, as text.
  function fillSlots(node, values) {
    function put(s) { return s.replace(SLOT, function (all, k) { return Object.prototype.hasOwnProperty.call(values, k) ? values[k] : all; }); }
    var walker = document.createTreeWalker(node, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT), n = node;
    for (; n; n = walker.nextNode()) {
      if (n.nodeType === 3) { if (n.data.indexOf('\u27e6') >= 0) n.data = put(n.data); continue; }
      for (var i = 0; i < n.attributes.length; i++) {
        var a = n.attributes[i];
        if (a.value.indexOf('\u27e6') >= 0) a.value = put(a.value);
      }
    }
  }
