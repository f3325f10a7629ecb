// Runs the playground's tokenizer (and, with --trace, its forward pass) under node, on the
// strings in argv[4] (a JSON list): the answers as JSON on stdout. tests/test_play_tokens.py
// runs it once for every string, so the test is one process, not one per string.
'use strict';
const fs = require('fs');
const vm = require('vm');
const [modelJs, playJs, inputs] = process.argv.slice(2, 5);
const mode = process.argv[5] || 'ids';
globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(modelJs, 'utf8'), { filename: modelJs });
vm.runInThisContext(fs.readFileSync(playJs, 'utf8'), { filename: playJs });
const doc = globalThis.coursePlayModel;
const tok = new globalThis.coursePlay.Tokenizer(doc);
const texts = JSON.parse(fs.readFileSync(inputs, 'utf8'));
if (mode === 'split') {
  // every head's split of every cell, the cells on and below the diagonal row by row (splits.json's order)
  const model = new globalThis.coursePlay.Model(doc);
  const cells = (a, P, T) => { const out = []; for (let p = 0; p < P; p++) { const row = [];
    for (let q = 0; q < T; q++) for (let k = 0; k <= q; k++) row.push(a[p * T * T + q * T + k]); out.push(row); } return out; };
  process.stdout.write(JSON.stringify(texts.map((t) => {
    const ids = [tok.eotId].concat(tok.encode(t));
    const heads = [];
    for (let l = 0; l < model.nLayer; l++) for (let h = 0; h < model.nHead; h++) {
      const s = model.scoreSplit(ids, l, h), T = ids.length, P = s.parts.length;
      heads.push({ layer: l + 1, head: h + 1, parts: s.parts, score: cells(s.score, 1, T)[0], key: cells(s.key, P, T),
        query: cells(s.query, P, T), table: s.table ? cells(s.table, 9, T) : null });
    }
    return { ids, heads };
  })));
} else if (mode === 'ids') {
  process.stdout.write(JSON.stringify(texts.map((t) => tok.encode(t))));
} else {
  const model = new globalThis.coursePlay.Model(doc);
  process.stdout.write(JSON.stringify(texts.map((t) => {
    const ids = [tok.eotId].concat(tok.encode(t));
    const r = model.run(ids);
    return { ids, texts: ids.map((i) => tok.text(i)), predictions: r.predictions,
      weights: r.layers.map((l) => l.heads.map((h) => Array.from(h.weights))) };
  })));
}
