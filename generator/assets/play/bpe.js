  // ------------------------------------------------------------------ byte-level BPE

  // The tiny model's tokenizer.json, in plain JavaScript: <|endoftext|> cut out first (an added
  // token, matched in the raw text), then GPT-2's pre-tokenizer regex, each piece's UTF-8 bytes as
  // GPT-2's printable byte characters, then the merges by rank. `\s` is spelt out as Unicode's
  // White_Space, as the Rust `tokenizers` reads it (JavaScript's \s adds U+FEFF and lacks U+0085).
  var WS = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
  var PRETOKEN = new RegExp(
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + WS + "\\p{L}\\p{N}]+|[" + WS + "]+(?![^" + WS + "])|[" + WS + "]+",
    'gu');

  // GPT-2's bytes_to_unicode: printable bytes stand for themselves, the rest from U+0100 on.
  var BYTE_CHAR = (function () {
    var out = new Array(256), n = 0;
    for (var b = 0; b < 256; b++) {
      var printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      out[b] = String.fromCharCode(printable ? b : 256 + n++);
    }
    return out;
  })();
  var CHAR_BYTE = {};
  BYTE_CHAR.forEach(function (c, b) { CHAR_BYTE[c] = b; });

  var utf8 = new TextEncoder();
  var lossy = new TextDecoder('utf-8'); // invalid bytes become U+FFFD, as tokenizers' decoder does

  function Tokenizer(doc) {
    var self = this;
    this.eot = doc.eot;
    this.vocab = doc.vocab; // id -> byte-level string
    this.ids = new Map();
    doc.vocab.forEach(function (s, i) { self.ids.set(s, i); });
    this.ranks = new Map();
    doc.merges.forEach(function (m, r) { self.ranks.set(m, r); });
    this.eotId = this.ids.get(doc.eot);
    this.cache = new Map();
  }

  // One pre-token's byte characters, merged: the lowest-ranked pair first, every occurrence of
  // it left to right (the result of tokenizers' priority queue, leftmost first on a tie).
  Tokenizer.prototype.word = function (chars) {
    var hit = this.cache.get(chars);
    if (hit) return hit;
    var parts = chars.split(''); // byte characters are all below U+0200: one code unit each
    var ranks = this.ranks;
    while (parts.length > 1) {
      var best = Infinity, at = -1;
      for (var i = 0; i + 1 < parts.length; i++) {
        var r = ranks.get(parts[i] + ' ' + parts[i + 1]);
        if (r !== undefined && r < best) { best = r; at = i; }
      }
      if (at < 0) break;
      var a = parts[at], b = parts[at + 1], merged = [];
      for (var j = 0; j < parts.length;) {
        if (j + 1 < parts.length && parts[j] === a && parts[j + 1] === b) { merged.push(a + b); j += 2; } else merged.push(parts[j++]);
      }
      parts = merged;
    }
    var self = this;
    var ids = parts.map(function (p) { return self.ids.get(p); });
    if (this.cache.size < 50000) this.cache.set(chars, ids);
    return ids;
  };

  // The ids of `text`, without the leading <|endoftext|> the traces add.
  Tokenizer.prototype.encode = function (text) {
    var out = [], self = this;
    String(text).split(this.eot).forEach(function (piece, n) {
      if (n) out.push(self.eotId);
      var m, re = new RegExp(PRETOKEN.source, 'gu');
      while ((m = re.exec(piece)) !== null) {
        var bytes = utf8.encode(m[0]), chars = '';
        for (var i = 0; i < bytes.length; i++) chars += BYTE_CHAR[bytes[i]];
        var ids = self.word(chars);
        for (var k = 0; k < ids.length; k++) out.push(ids[k]);
      }
    });
    return out;
  };

  // A token's text as tokenizers' decode([id]) gives it (a cut UTF-8 sequence: U+FFFD).
  Tokenizer.prototype.text = function (id) {
    var s = this.vocab[id];
    if (s === this.eot) return s;
    var bytes = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) bytes[i] = CHAR_BYTE[s.charAt(i)];
    return lossy.decode(bytes);
  };
