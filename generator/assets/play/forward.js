  // ------------------------------------------------------------------ the forward pass

  // GPT-2's architecture at the tiny model's 4 layers x 4 heads x 128: pre-layer-norm blocks,
  // causal attention, GELU-new MLP, the unembedding tied to the token embedding. The weights are
  // float32 (play-model.js, generator/render/play_model.py); every sum here is a double.
  function decodeWeights(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var dv = new DataView(bytes.buffer), n = bytes.length >> 2, out = new Float32Array(n);
    for (var j = 0; j < n; j++) out[j] = dv.getFloat32(4 * j, true); // little-endian on any machine
    return out;
  }

  function Model(doc) {
    var c = doc.config;
    this.nLayer = c.n_layer; this.nHead = c.n_head; this.width = c.n_embd;
    this.nCtx = c.n_positions; this.nVocab = c.vocab_size; this.eps = c.layer_norm_epsilon;
    this.headDim = this.width / this.nHead;
    var flat = decodeWeights(doc.weights), w = {};
    doc.tensors.forEach(function (t) {
      var size = t.shape.reduce(function (a, b) { return a * b; }, 1);
      w[t.name] = flat.subarray(t.offset, t.offset + size);
    });
    this.w = w;
  }

  function layerNorm(x, T, W, g, b, eps) { // (token, width) -> (token, width)
    var y = new Float64Array(T * W);
    for (var t = 0; t < T; t++) {
      var o = t * W, mu = 0, v = 0;
      for (var i = 0; i < W; i++) mu += x[o + i];
      mu /= W;
      for (var i2 = 0; i2 < W; i2++) { var d = x[o + i2] - mu; v += d * d; }
      var inv = 1 / Math.sqrt(v / W + eps);
      for (var i3 = 0; i3 < W; i3++) y[o + i3] = (x[o + i3] - mu) * inv * g[i3] + b[i3];
    }
    return y;
  }

  // x (token, nIn) times a Conv1D weight (nIn, nOut) plus bias: (token, nOut). Four tokens at a
  // time, so each weight row is read once per four tokens, not once per token.
  function linear(x, T, nIn, wt, bias, nOut) {
    var y = new Float64Array(T * nOut);
    for (var t = 0; t < T; t++) y.set(bias, t * nOut);
    for (var t0 = 0; t0 < T; t0 += 4) {
      var n = Math.min(4, T - t0);
      var y0 = t0 * nOut, y1 = y0 + nOut, y2 = y1 + nOut, y3 = y2 + nOut;
      for (var i = 0; i < nIn; i++) {
        var wo = i * nOut, x0 = x[t0 * nIn + i];
        var x1 = n > 1 ? x[(t0 + 1) * nIn + i] : 0, x2 = n > 2 ? x[(t0 + 2) * nIn + i] : 0, x3 = n > 3 ? x[(t0 + 3) * nIn + i] : 0;
        if (n === 4) {
          for (var o = 0; o < nOut; o++) {
            var wv = wt[wo + o];
            y[y0 + o] += x0 * wv; y[y1 + o] += x1 * wv; y[y2 + o] += x2 * wv; y[y3 + o] += x3 * wv;
          }
        } else {
          for (var o2 = 0; o2 < nOut; o2++) {
            var wv2 = wt[wo + o2];
            y[y0 + o2] += x0 * wv2;
            if (n > 1) y[y1 + o2] += x1 * wv2;
            if (n > 2) y[y2 + o2] += x2 * wv2;
          }
        }
      }
    }
    return y;
  }

  var GELU_C = Math.sqrt(2 / Math.PI);
  function geluNew(x) {
    for (var i = 0; i < x.length; i++) {
      var v = x[i];
      x[i] = 0.5 * v * (1 + Math.tanh(GELU_C * (v + 0.044715 * v * v * v)));
    }
    return x;
  }

  // One head's numbers, flat and row-major: q, k, v, out (token, headDim); scores, scaledMasked,
  // weights (query, key), scaledMasked -Infinity and weights 0 above the diagonal.
  Model.prototype.run = function (ids, opts) {
    var T = ids.length, W = this.width, H = this.nHead, d = this.headDim, w = this.w;
    var x = new Float64Array(T * W);
    for (var t = 0; t < T; t++) {
      for (var i = 0; i < W; i++) x[t * W + i] = w['wte.weight'][ids[t] * W + i] + w['wpe.weight'][t * W + i];
    }
    var layers = [], scale = 1 / Math.sqrt(d);
    for (var l = 0; l < this.nLayer; l++) {
      var p = 'h.' + l + '.';
      var h = layerNorm(x, T, W, w[p + 'ln_1.weight'], w[p + 'ln_1.bias'], this.eps);
      var qkv = linear(h, T, W, w[p + 'attn.c_attn.weight'], w[p + 'attn.c_attn.bias'], 3 * W); // (token, 3 width)
      var concat = new Float64Array(T * W); // (token, width): every head's out side by side
      var heads = [];
      for (var hd = 0; hd < H; hd++) {
        var q = new Float64Array(T * d), k = new Float64Array(T * d), v = new Float64Array(T * d);
        for (var t2 = 0; t2 < T; t2++) {
          for (var j = 0; j < d; j++) {
            q[t2 * d + j] = qkv[t2 * 3 * W + hd * d + j];
            k[t2 * d + j] = qkv[t2 * 3 * W + W + hd * d + j];
            v[t2 * d + j] = qkv[t2 * 3 * W + 2 * W + hd * d + j];
          }
        }
        var scores = new Float64Array(T * T), scaled = new Float64Array(T * T), wts = new Float64Array(T * T);
        var out = new Float64Array(T * d);
        for (var a = 0; a < T; a++) {
          var max = -Infinity;
          for (var b = 0; b < T; b++) {
            var s = 0;
            for (var j2 = 0; j2 < d; j2++) s += q[a * d + j2] * k[b * d + j2];
            scores[a * T + b] = s;
            scaled[a * T + b] = b > a ? -Infinity : s * scale;
            if (b <= a && s * scale > max) max = s * scale;
          }
          var sum = 0;
          for (var b2 = 0; b2 <= a; b2++) { var e = Math.exp(scaled[a * T + b2] - max); wts[a * T + b2] = e; sum += e; }
          for (var b3 = 0; b3 <= a; b3++) {
            var wt = wts[a * T + b3] / sum;
            wts[a * T + b3] = wt;
            for (var j3 = 0; j3 < d; j3++) out[a * d + j3] += wt * v[b3 * d + j3];
          }
          for (var j4 = 0; j4 < d; j4++) concat[a * W + hd * d + j4] = out[a * d + j4];
        }
        heads.push({ q: q, k: k, v: v, scores: scores, scaledMasked: scaled, weights: wts, out: out });
      }
      layers.push({ heads: heads });
      var proj = linear(concat, T, W, w[p + 'attn.c_proj.weight'], w[p + 'attn.c_proj.bias'], W);
      for (var i4 = 0; i4 < x.length; i4++) x[i4] += proj[i4];
      var h2 = layerNorm(x, T, W, w[p + 'ln_2.weight'], w[p + 'ln_2.bias'], this.eps);
      var m = geluNew(linear(h2, T, W, w[p + 'mlp.c_fc.weight'], w[p + 'mlp.c_fc.bias'], 4 * W)); // (token, 4 width)
      var mo = linear(m, T, 4 * W, w[p + 'mlp.c_proj.weight'], w[p + 'mlp.c_proj.bias'], W);
      for (var i5 = 0; i5 < x.length; i5++) x[i5] += mo[i5];
    }
    // final: the last layer norm's output, from which predict() reads the guesses (later, if asked)
    var result = { n: T, headDim: d, layers: layers, final: layerNorm(x, T, W, w['ln_f.weight'], w['ln_f.bias'], this.eps) };
    if (!opts || opts.predictions !== false) result.predictions = this.predict(result.final, T);
    return result;
  };

  // The top 5 next tokens after every position: logits against the tied embedding, softmax.
  // The embedding (2 MB) is read once, every position's logit of a token from its one row.
  Model.prototype.predict = function (hf, T) {
    var W = this.width, V = this.nVocab, E = this.w['wte.weight'], top = [];
    var logits = new Float64Array(T * V);
    for (var id = 0; id < V; id++) {
      var eo = id * W;
      for (var t = 0; t < T; t++) {
        var s = 0, ho = t * W;
        for (var i = 0; i < W; i++) s += hf[ho + i] * E[eo + i];
        logits[t * V + id] = s;
      }
    }
    for (var t2 = 0; t2 < T; t2++) {
      var row = logits.subarray(t2 * V, (t2 + 1) * V), max = -Infinity, sum = 0, best = [];
      for (var j = 0; j < V; j++) if (row[j] > max) max = row[j];
      for (var id2 = 0; id2 < V; id2++) {
        sum += Math.exp(row[id2] - max);
        if (best.length < 5 || row[id2] > row[best[best.length - 1]]) {
          best.push(id2);
          best.sort(function (a, b) { return row[b] - row[a] || a - b; });
          if (best.length > 5) best.pop();
        }
      }
      top.push(best.map(function (id3) { return { id: id3, prob: Math.exp(row[id3] - max) / sum }; }));
    }
    return top;
  };
