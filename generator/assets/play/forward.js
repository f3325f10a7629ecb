  // ------------------------------------------------------------------ the forward pass

  // GPT-2's architecture at the tiny model's 4 layers x 4 heads x 128: pre-layer-norm blocks,
  // causal attention, GELU-new MLP, the unembedding tied to the token embedding. The weights are
  // float32 (play-model.js, generator/render/play_model.py); every sum here is a double.
  // All of it is one function that uses nothing from outside itself, so that runner.js can start
  // a Web Worker from its own source text (Function.prototype.toString) and run it there too.
  function forwardPass() {
    // The base64 text as float32 numbers: viewed in place where the machine is little-endian (all
    // machines a browser runs on today), else read number by number.
    var LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
    function decodeWeights(b64) {
      var bin = atob(b64), n = bin.length, bytes = new Uint8Array(n);
      for (var i = 0; i < n; i++) bytes[i] = bin.charCodeAt(i);
      if (LITTLE) return new Float32Array(bytes.buffer, 0, n >> 2);
      var dv = new DataView(bytes.buffer), out = new Float32Array(n >> 2);
      for (var j = 0; j < out.length; j++) out[j] = dv.getFloat32(4 * j, true);
      return out;
    }

    // A Conv1D weight (nIn, nOut) as (nOut, nIn) doubles: each output is then a dot product over
    // one contiguous row, summed in the same order as x @ W (so the numbers are the same).
    function transposed(wt, nIn, nOut) {
      var out = new Float64Array(nIn * nOut);
      for (var i = 0; i < nIn; i++) {
        for (var o = 0; o < nOut; o++) out[o * nIn + i] = wt[i * nOut + o];
      }
      return out;
    }

    function Model(doc) {
      var c = doc.config;
      this.nLayer = c.n_layer; this.nHead = c.n_head; this.width = c.n_embd;
      this.nCtx = c.n_positions; this.nVocab = c.vocab_size; this.eps = c.layer_norm_epsilon;
      this.headDim = this.width / this.nHead;
      this.headMeans = doc.headMeans; // (layer, head, headDim): mean-ablation's reference (ablation.js)
      this.meanReference = doc.meanReference; // what the means were taken over, as the traces record it
      // doc.flat: the weights already decoded (runner.js hands the worker a copy of this model's)
      var flat = doc.flat || decodeWeights(doc.weights), w = {};
      this.config = c; this.tensors = doc.tensors; this.flat = flat;
      this.noBias = new Float64Array(this.nVocab); // the unembedding's (unembed)
      doc.tensors.forEach(function (t) {
        var size = t.shape.reduce(function (a, b) { return a * b; }, 1);
        w[t.name] = flat.subarray(t.offset, t.offset + size);
      });
      this.w = w;
      var W = this.width;
      // the four linear layers of each block, transposed once here (about 8 ms for all 16)
      this.lin = [];
      for (var l = 0; l < this.nLayer; l++) {
        var p = 'h.' + l + '.';
        this.lin.push({
          attn: transposed(w[p + 'attn.c_attn.weight'], W, 3 * W), proj: transposed(w[p + 'attn.c_proj.weight'], W, W),
          fc: transposed(w[p + 'mlp.c_fc.weight'], W, 4 * W), mlp: transposed(w[p + 'mlp.c_proj.weight'], 4 * W, W)
        });
      }
      // scratch for one run at the longest context, reused by every run: nothing of it is returned
      var T = this.nCtx;
      this.buf = {
        x: new Float64Array(T * W), h: new Float64Array(T * W), qkv: new Float64Array(T * 3 * W), // (token, width), (token, 3 width)
        concat: new Float64Array(T * W), proj: new Float64Array(T * W), m: new Float64Array(T * 4 * W) // (token, width), (token, 4 width)
      };
    }

    function layerNorm(x, T, W, g, b, eps, y) { // (token, width) -> y (token, width)
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

    // y (token, nOut) = x (token, nIn) @ W + bias, with wT the transposed weight (nOut, nIn). Four
    // tokens by two outputs at a time: each weight is read once per four tokens and each input once
    // per two outputs, the eight sums stay in registers (about 1.7x the speed of one output at a
    // time). Each sum still starts at the bias and adds x[i] * w[i] for i upwards: the same numbers.
    function linear(x, T, nIn, wT, bias, nOut, y) {
      var t0 = 0;
      for (; t0 + 4 <= T; t0 += 4) {
        var a0 = t0 * nIn, a1 = a0 + nIn, a2 = a1 + nIn, a3 = a2 + nIn, y0 = t0 * nOut, y1 = y0 + nOut, y2 = y1 + nOut, y3 = y2 + nOut;
        var o = 0;
        for (; o + 2 <= nOut; o += 2) {
          var wo = o * nIn, wp = wo + nIn, bo = bias[o], bp = bias[o + 1];
          var s0 = bo, s1 = bo, s2 = bo, s3 = bo, r0 = bp, r1 = bp, r2 = bp, r3 = bp;
          for (var i = 0; i < nIn; i++) {
            var wv = wT[wo + i], wu = wT[wp + i], x0 = x[a0 + i], x1 = x[a1 + i], x2 = x[a2 + i], x3 = x[a3 + i];
            s0 += x0 * wv; s1 += x1 * wv; s2 += x2 * wv; s3 += x3 * wv;
            r0 += x0 * wu; r1 += x1 * wu; r2 += x2 * wu; r3 += x3 * wu;
          }
          y[y0 + o] = s0; y[y1 + o] = s1; y[y2 + o] = s2; y[y3 + o] = s3;
          y[y0 + o + 1] = r0; y[y1 + o + 1] = r1; y[y2 + o + 1] = r2; y[y3 + o + 1] = r3;
        }
        for (; o < nOut; o++) {
          var wq = o * nIn, bq = bias[o], q0 = bq, q1 = bq, q2 = bq, q3 = bq;
          for (var i1 = 0; i1 < nIn; i1++) {
            var wz = wT[wq + i1];
            q0 += x[a0 + i1] * wz; q1 += x[a1 + i1] * wz; q2 += x[a2 + i1] * wz; q3 += x[a3 + i1] * wz;
          }
          y[y0 + o] = q0; y[y1 + o] = q1; y[y2 + o] = q2; y[y3 + o] = q3;
        }
      }
      for (; t0 < T; t0++) {
        var a = t0 * nIn, yt = t0 * nOut;
        for (var o2 = 0; o2 < nOut; o2++) {
          var w2 = o2 * nIn, s = bias[o2];
          for (var i2 = 0; i2 < nIn; i2++) s += x[a + i2] * wT[w2 + i2];
          y[yt + o2] = s;
        }
      }
      return y;
    }

    var GELU_C = Math.sqrt(2 / Math.PI);
    function geluNew(x, n) {
      for (var i = 0; i < n; i++) {
        var v = x[i];
        x[i] = 0.5 * v * (1 + Math.tanh(GELU_C * (v + 0.044715 * v * v * v)));
      }
      return x;
    }

    // One head's numbers, flat and row-major: q, k, v, out (token, headDim); scores, scaledMasked,
    // weights (query, key), scaledMasked -Infinity and weights 0 above the diagonal. Each is a view
    // into one new buffer per run (a shown result keeps its numbers while the next run computes).
    // opts.predictions: false leaves the guesses out; opts.attended(l, result): called as soon as
    // layer l's heads are filled in (the worker sends the shown head on from there, runner.js)
    Model.prototype.run = function (ids, opts) {
      var T = ids.length, H = this.nHead, d = this.headDim;
      var x = this.embed(ids, this.buf.x), concat = this.buf.concat;
      // final: the last layer norm's output, from which predict() reads the guesses (later, if asked)
      var result = this.views(new Float64Array(this.nLayer * H * this.perHead(T)), new Float64Array(T * this.width), T);
      for (var l = 0; l < this.nLayer; l++) {
        this.attend(l, x, T, result.layers[l].heads, concat);
        if (opts && opts.attended) opts.attended(l, result);
        this.finish(l, x, T, concat);
      }
      this.final(x, T, result.final);
      if (!opts || opts.predictions !== false) result.predictions = this.predict(result.final, T);
      return result;
    };
    Model.prototype.perHead = function (T) { return 4 * T * this.headDim + 3 * T * T; }; // q, k, v, out; scores, scaledMasked, weights
    // A run's result over its two buffers, store (layer, head, perHead) and final (token, width):
    // run() fills them, and runner.js rebuilds a worker's result from the two buffers it sends.
    Model.prototype.views = function (store, final, T) {
      var H = this.nHead, d = this.headDim, per = this.perHead(T), layers = [];
      for (var l = 0; l < this.nLayer; l++) {
        var heads = [];
        for (var hd = 0; hd < H; hd++) heads.push(headViews(store, (l * H + hd) * per, T, d));
        layers.push({ heads: heads });
      }
      return { n: T, headDim: d, layers: layers, final: final, store: store };
    };

    function headViews(store, base, T, d) {
      var Td = T * d, TT = T * T, sb = base + 4 * Td;
      return {
        q: store.subarray(base, base + Td), k: store.subarray(base + Td, base + 2 * Td),
        v: store.subarray(base + 2 * Td, base + 3 * Td), out: store.subarray(base + 3 * Td, base + 4 * Td),
        scores: store.subarray(sb, sb + TT), scaledMasked: store.subarray(sb + TT, sb + 2 * TT), weights: store.subarray(sb + 2 * TT, sb + 3 * TT)
      };
    }

    // x (token, width) = token embedding + position embedding
    Model.prototype.embed = function (ids, x) {
      var T = ids.length, W = this.width, wte = this.w['wte.weight'], wpe = this.w['wpe.weight'];
      for (var t = 0; t < T; t++) {
        var eo = ids[t] * W, po = t * W;
        for (var i = 0; i < W; i++) x[po + i] = wte[eo + i] + wpe[po + i];
      }
      return x;
    };
    Model.prototype.final = function (x, T, y) {
      return layerNorm(x, T, this.width, this.w['ln_f.weight'], this.w['ln_f.bias'], this.eps, y);
    };

    // Block l's attention on the stream x (token, width): each head's numbers into heads[h]
    // (headViews' fields), their outputs side by side into concat (token, width): c_proj's input.
    Model.prototype.attend = function (l, x, T, heads, concat) {
      var W = this.width, H = this.nHead, d = this.headDim, w = this.w, b = this.buf, p = 'h.' + l + '.';
      var hbuf = b.h, qkv = b.qkv, scale = 1 / Math.sqrt(d), W3 = 3 * W;
      layerNorm(x, T, W, w[p + 'ln_1.weight'], w[p + 'ln_1.bias'], this.eps, hbuf);
      linear(hbuf, T, W, this.lin[l].attn, w[p + 'attn.c_attn.bias'], W3, qkv); // (token, 3 width)
      for (var hd = 0; hd < H; hd++) {
        var g = heads[hd], q = g.q, k = g.k, v = g.v, out = g.out, scores = g.scores, scaled = g.scaledMasked, wts = g.weights;
        for (var t2 = 0; t2 < T; t2++) {
          var src = t2 * W3 + hd * d, dst = t2 * d;
          for (var j = 0; j < d; j++) {
            q[dst + j] = qkv[src + j]; k[dst + j] = qkv[src + W + j]; v[dst + j] = qkv[src + 2 * W + j];
          }
        }
        for (var a = 0; a < T; a++) {
          var max = -Infinity, qa = a * d, ra = a * T, c = 0;
          // q . k for four keys at a time (each sum over j upwards, as one at a time), every key
          // (the trace keeps the raw scores above the diagonal too)
          for (; c + 4 <= T; c += 4) {
            var k0 = c * d, k1 = k0 + d, k2 = k1 + d, k3 = k2 + d, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (var j1 = 0; j1 < d; j1++) {
              var qj = q[qa + j1];
              s0 += qj * k[k0 + j1]; s1 += qj * k[k1 + j1]; s2 += qj * k[k2 + j1]; s3 += qj * k[k3 + j1];
            }
            scores[ra + c] = s0; scores[ra + c + 1] = s1; scores[ra + c + 2] = s2; scores[ra + c + 3] = s3;
          }
          for (; c < T; c++) {
            var s = 0, kc = c * d;
            for (var j2 = 0; j2 < d; j2++) s += q[qa + j2] * k[kc + j2];
            scores[ra + c] = s;
          }
          for (var c1 = 0; c1 < T; c1++) {
            if (c1 > a) { scaled[ra + c1] = -Infinity; wts[ra + c1] = 0; continue; }
            var sc = scores[ra + c1] * scale;
            scaled[ra + c1] = sc;
            if (sc > max) max = sc;
          }
          var sum = 0;
          for (var c2 = 0; c2 <= a; c2++) { var e = Math.exp(scaled[ra + c2] - max); wts[ra + c2] = e; sum += e; }
          for (var c3 = 0; c3 <= a; c3++) wts[ra + c3] = wts[ra + c3] / sum;
          // out = sum over keys of weight x value, four of its numbers at a time in registers, each
          // summed over the keys upwards from 0 (a reused buffer, ablation's, holds an older row)
          var j0 = 0;
          for (; j0 + 4 <= d; j0 += 4) {
            var o0 = 0, o1 = 0, o2 = 0, o3 = 0;
            for (var c4 = 0; c4 <= a; c4++) {
              var wt = wts[ra + c4], vc = c4 * d + j0;
              o0 += wt * v[vc]; o1 += wt * v[vc + 1]; o2 += wt * v[vc + 2]; o3 += wt * v[vc + 3];
            }
            out[qa + j0] = o0; out[qa + j0 + 1] = o1; out[qa + j0 + 2] = o2; out[qa + j0 + 3] = o3;
          }
          for (; j0 < d; j0++) {
            var oj = 0;
            for (var c5 = 0; c5 <= a; c5++) oj += wts[ra + c5] * v[c5 * d + j0];
            out[qa + j0] = oj;
          }
          var co = a * W + hd * d;
          for (var j4 = 0; j4 < d; j4++) concat[co + j4] = out[qa + j4];
        }
      }
    };

    // The rest of block l, on x in place: x += concat @ W_O + bias, then x += MLP(layer norm of x).
    Model.prototype.finish = function (l, x, T, concat) {
      var W = this.width, w = this.w, b = this.buf, p = 'h.' + l + '.', lin = this.lin[l];
      var hbuf = b.h, proj = b.proj, m = b.m, TW = T * W;
      linear(concat, T, W, lin.proj, w[p + 'attn.c_proj.bias'], W, proj);
      for (var i4 = 0; i4 < TW; i4++) x[i4] += proj[i4];
      layerNorm(x, T, W, w[p + 'ln_2.weight'], w[p + 'ln_2.bias'], this.eps, hbuf);
      geluNew(linear(hbuf, T, W, lin.fc, w[p + 'mlp.c_fc.bias'], 4 * W, m), T * 4 * W); // (token, 4 width)
      linear(m, T, 4 * W, lin.mlp, w[p + 'mlp.c_proj.bias'], W, proj);
      for (var i5 = 0; i5 < TW; i5++) x[i5] += proj[i5];
    };

    // The top 5 next tokens after each position from `from` up to `to` (all when not given):
    // logits against the tied embedding (linear(), each summed from i = 0 up as x @ E.T is), softmax.
    // The logits (token, vocab) of n rows of ln_f's output: the tied embedding E (vocab, width) is
    // already a transposed weight for linear(), with no bias.
    Model.prototype.unembed = function (hf, n) {
      return linear(hf, n, this.width, this.w['wte.weight'], this.noBias, this.nVocab, new Float64Array(n * this.nVocab));
    };
    Model.prototype.predict = function (hf, T, from, to) {
      var W = this.width, V = this.nVocab, top = [];
      from = from || 0;
      to = to == null ? T : Math.min(to, T);
      var n = Math.max(0, to - from);
      var logits = this.unembed(hf.subarray(from * W, (from + n) * W), n); // (position - from, vocab)
      for (var t2 = 0; t2 < to - from; t2++) {
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

    // Why a head looks where it looks (generator/model/score_parts.py, the tracer's split): the
    // stream entering block `layer` as a sum of parts (token, position, each earlier head's output
    // through its rows of W_O, each earlier MLP's output, the biases), ln_1's scale frozen at the
    // real stream's, so head `head`'s query and key are sums of one piece per part and every scaled
    // score splits exactly. Returns {parts (names), score (query, key), key (part, query, key): the
    // key's parts against the whole query, query (part, query, key): the roles swapped, and for
    // layer 0 table (3, 3, query, key)}, flat Float64Arrays, zero above the diagonal.
    // The sentence's stream parts, one forward pass, kept for the last ids asked (a new head or
    // cell of the same sentence reuses them): tok, pos (token, width); heads[l][h] and mlps[l]
    // (token, width); streams[l] the stream entering block l; bias[l] the attention output biases
    // of the blocks before l (token, width).
    Model.prototype.streamParts = function (ids) {
      var key = ids.join(',');
      if (this.splitCache && this.splitCache.key === key) return this.splitCache;
      var T = ids.length, W = this.width, H = this.nHead, d = this.headDim, w = this.w, TW = T * W;
      var x = this.embed(ids, new Float64Array(TW)), wte = w['wte.weight'], wpe = w['wpe.weight'];
      var tok = new Float64Array(TW), pos = new Float64Array(TW); // (token, width) each
      for (var t = 0; t < T; t++) {
        for (var i = 0; i < W; i++) { tok[t * W + i] = wte[ids[t] * W + i]; pos[t * W + i] = wpe[t * W + i]; }
      }
      var heads = [], mlps = [], streams = [], biases = [new Float64Array(TW)], concat = new Float64Array(TW);
      var store = this.views(new Float64Array(H * this.perHead(T)), new Float64Array(0), T).layers[0].heads;
      for (var l = 0; l < this.nLayer; l++) {
        streams.push(x.slice(0, TW));
        this.attend(l, x, T, store, concat);
        var wo = w['h.' + l + '.attn.c_proj.weight'], bo = w['h.' + l + '.attn.c_proj.bias'], layerHeads = [];
        for (var hd = 0; hd < H; hd++) { // head hd's output through its rows of W_O: (token, width)
          var part = new Float64Array(TW);
          for (var t1 = 0; t1 < T; t1++) {
            for (var j = 0; j < d; j++) {
              var z = concat[t1 * W + hd * d + j], row = (hd * d + j) * W, at = t1 * W;
              for (var o = 0; o < W; o++) part[at + o] += z * wo[row + o];
            }
          }
          layerHeads.push(part);
        }
        heads.push(layerHeads);
        var nb = biases[l].slice(0, TW);
        for (var t2 = 0; t2 < TW; t2++) nb[t2] += bo[t2 % W];
        biases.push(nb);
        this.finish(l, x, T, concat); // leaves the MLP's output (token, width) in buf.proj
        mlps.push(this.buf.proj.slice(0, TW));
      }
      this.splitCache = { key: key, tok: tok, pos: pos, heads: heads, mlps: mlps, streams: streams, biases: biases };
      return this.splitCache;
    };

    // Given `cell` ({query, key}), only that cell is split (the playground's one pick: the pieces of
    // two tokens, not every token's); the arrays keep their shapes, zero elsewhere.
    Model.prototype.scoreSplit = function (ids, layer, head, cell) {
      var T = ids.length, W = this.width, H = this.nHead, d = this.headDim, w = this.w;
      var sp = this.streamParts(ids), x = sp.streams[layer], names = ['token', 'position'], heads = [], mlps = [];
      for (var l = 0; l < layer; l++) {
        for (var hd = 0; hd < H; hd++) { heads.push(sp.heads[l][hd]); names.push('L' + (l + 1) + 'H' + (hd + 1)); }
        mlps.push(sp.mlps[l]);
      }
      var tok = sp.tok, pos = sp.pos, bias = sp.biases[layer];
      for (var l2 = 0; l2 < layer; l2++) names.push('MLP' + (l2 + 1));
      names.push('biases');
      var parts = [tok, pos].concat(heads, mlps, [bias]), P = parts.length;
      // ln_1 frozen: each part centred, divided by the real stream's σ, times the gain; the biases
      // part also takes ln_1's bias. Then each part through head `head`'s columns of c_attn.
      var p = 'h.' + layer + '.', g = w[p + 'ln_1.weight'], lb = w[p + 'ln_1.bias'], caT = this.lin[layer].attn, cb = w[p + 'attn.c_attn.bias'];
      var sigma = new Float64Array(T);
      for (var t3 = 0; t3 < T; t3++) {
        var mu = 0, v = 0;
        for (var i3 = 0; i3 < W; i3++) mu += x[t3 * W + i3];
        mu /= W;
        for (var i4 = 0; i4 < W; i4++) { var dv = x[t3 * W + i4] - mu; v += dv * dv; }
        sigma[t3] = Math.sqrt(v / W + this.eps);
      }
      var qp = new Float64Array(P * T * d), kp = new Float64Array(P * T * d), normed = new Float64Array(W); // (part, token, headDim)
      var wanted = [];
      for (var tw = 0; tw < T; tw++) if (!cell || tw === cell.query || tw === cell.key) wanted.push(tw);
      for (var pi = 0; pi < P; pi++) {
        for (var wi = 0; wi < wanted.length; wi++) {
          var t4 = wanted[wi];
          var src = parts[pi], at4 = t4 * W, m = 0;
          for (var i5 = 0; i5 < W; i5++) m += src[at4 + i5];
          m /= W;
          for (var i6 = 0; i6 < W; i6++) normed[i6] = (src[at4 + i6] - m) / sigma[t4] * g[i6] + (pi === P - 1 ? lb[i6] : 0);
          var base = (pi * T + t4) * d;
          for (var j3 = 0; j3 < d; j3++) {
            var cq = head * d + j3, ck = W + head * d + j3, sq = pi === P - 1 ? cb[cq] : 0, sk = pi === P - 1 ? cb[ck] : 0;
            var rq = cq * W, rk = ck * W; // rows of the transposed c_attn: contiguous over the inputs
            for (var i7 = 0; i7 < W; i7++) { var nv = normed[i7]; sq += nv * caT[rq + i7]; sk += nv * caT[rk + i7]; }
            qp[base + j3] = sq; kp[base + j3] = sk;
          }
        }
      }
      var qw = new Float64Array(T * d), kw = new Float64Array(T * d), scale = 1 / Math.sqrt(d);
      for (var pj = 0; pj < P; pj++) {
        for (var wj = 0; wj < wanted.length; wj++) {
          for (var n = wanted[wj] * d, nEnd = n + d; n < nEnd; n++) { qw[n] += qp[pj * T * d + n]; kw[n] += kp[pj * T * d + n]; }
        }
      }
      function dot(a, ao, b, bo2) { var s = 0; for (var jj = 0; jj < d; jj++) s += a[ao + jj] * b[bo2 + jj]; return s * scale; }
      var TT = T * T, score = new Float64Array(TT), key = new Float64Array(P * TT), query = new Float64Array(P * TT);
      var table = layer === 0 ? new Float64Array(9 * TT) : null;
      for (var qi = 0; qi < T; qi++) {
        for (var kj = 0; kj <= qi; kj++) {
          if (cell && (qi !== cell.query || kj !== cell.key)) continue;
          var c = qi * T + kj;
          score[c] = dot(qw, qi * d, kw, kj * d);
          for (var pk = 0; pk < P; pk++) {
            key[pk * TT + c] = dot(qw, qi * d, kp, (pk * T + kj) * d);
            query[pk * TT + c] = dot(qp, (pk * T + qi) * d, kw, kj * d);
            if (table) for (var pb = 0; pb < P; pb++) table[(pk * 3 + pb) * TT + c] = dot(qp, (pk * T + qi) * d, kp, (pb * T + kj) * d);
          }
        }
      }
      return { parts: names, n: T, score: score, key: key, query: query, table: table };
    };

    return { Model: Model, headViews: headViews };
  }
  var forward = forwardPass(), Model = forward.Model, headViews = forward.headViews;
