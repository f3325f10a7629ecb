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
if (mode === 'ids') {
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
