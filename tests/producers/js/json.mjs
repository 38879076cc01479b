// Exact JSON reading and writing for the producer protocol. Each object read also records
// its member order under KEYS: JavaScript lists integer-like keys first, whatever order
// the text gave them in.
export const KEYS = Symbol('keys');
export const keysOf = (o) => o[KEYS] ?? Object.keys(o);
// Integers keep every digit (Number when safe, BigInt otherwise); numbers with a
// fraction or exponent become Float wrappers so that 1.0 and 1 stay distinct.

export class Float {
  constructor(value) {
    this.value = value;
  }
}

export class JsonError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const NUM_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

export function parse(text) {
  let i = 0;
  const n = text.length;
  function ws() {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  }
  function fail(msg) {
    throw new JsonError('json_syntax', `${msg} at offset ${i}`);
  }
  function str() {
    // text[i] === '"'
    i++;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail('control character in string');
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const h = text.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) fail('bad unicode escape');
            out += String.fromCharCode(parseInt(h, 16));
            i += 4;
            break;
          }
          default: fail('bad escape');
        }
        start = i;
      } else i++;
    }
  }
  function value(depth) {
    if (depth > 10000) fail('too deep');
    ws();
    if (i >= n) fail('unexpected end');
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = Object.create(null);
      const order = [];
      Object.defineProperty(obj, KEYS, { value: order, enumerable: false });
      ws();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected key');
        const k = str();
        if (Object.prototype.hasOwnProperty.call(obj, k)) throw new JsonError('json_duplicate_key', `duplicate key ${JSON.stringify(k)}`);
        ws();
        if (text[i] !== ':') fail('expected :');
        i++;
        obj[k] = value(depth + 1);
        order.push(k);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return obj; }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(text);
    if (!m || m[0] === '-' ) fail('unexpected character');
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const asNum = Number(m[0]);
      if (Number.isSafeInteger(asNum)) return asNum === 0 ? 0 : asNum;
      return BigInt(m[0]);
    }
    const f = Number(m[0]);
    if (!Number.isFinite(f)) throw new JsonError('json_non_finite_number', 'number out of range');
    return new Float(f);
  }
  const v = value(0);
  ws();
  if (i !== n) fail('trailing data');
  return v;
}

// Shortest round-trip digits and exponent p, value = 0.d1d2...dn x 10^p.
export function shortestDigits(x) {
  const s = Math.abs(x).toExponential();
  const [mant, exp] = s.split('e');
  const digits = mant.replace('.', '').replace(/0+$/, '') || '0';
  return { digits, p: parseInt(exp, 10) + 1 };
}

// serde_json (zmij) float notation, as docs/hashing.md section 6 rule 5.
export function harnFloat(x) {
  if (!Number.isFinite(x)) throw new JsonError('canonical_non_finite', 'non-finite number');
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const { digits, p } = shortestDigits(x);
  const k = digits.length;
  if (k <= p && p <= 16) return sign + digits + '0'.repeat(p - k) + '.0';
  if (0 < p && p <= 16) return sign + digits.slice(0, p) + '.' + digits.slice(p);
  if (-5 < p && p <= 0) return sign + '0.' + '0'.repeat(-p) + digits;
  const e = p - 1;
  return sign + digits[0] + (k > 1 ? '.' + digits.slice(1) : '') + 'e' + (e > 0 ? '+' : '-') + Math.abs(e);
}

const ESCAPES = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

// serde_json / RFC 8785 string form (identical): only " \ and controls escaped.
// A lone surrogate is an error unless allowLone (then written as \\uXXXX).
export function quote(s, allowLone = false) {
  let out = '"';
  let start = 0;
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    let rep = null;
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      rep = ESCAPES[s[j]] ?? '\\u' + c.toString(16).padStart(4, '0');
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const hi = c <= 0xdbff;
      const next = s.charCodeAt(j + 1);
      if (hi && next >= 0xdc00 && next <= 0xdfff) { j++; continue; }
      if (!allowLone) throw new JsonError('canonical_lone_surrogate', 'lone surrogate');
      rep = '\\u' + c.toString(16).padStart(4, '0');
    }
    if (rep !== null) {
      out += s.slice(start, j) + rep;
      start = j + 1;
    }
  }
  return out + s.slice(start) + '"';
}

// Wire writer for protocol output: integers exact, floats in serde form.
export function stringify(v) {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return quote(v, true);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return harnFloat(v);
    return Object.is(v, -0) ? '0' : String(v);
  }
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Float) return harnFloat(v.value);
  if (Array.isArray(v)) return '[' + v.map(stringify).join(',') + ']';
  const parts = [];
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue;
    parts.push(quote(k, true) + ':' + stringify(v[k]));
  }
  return '{' + parts.join(',') + '}';
}
