// RFC 8785 (record hashes) and Harn canonical JSON (recap hashes): docs/hashing.md.
import { createHash } from 'node:crypto';
import { Float, JsonError, harnFloat, quote } from './json.mjs';

const MAX_SAFE = 9007199254740991;
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;

function cmpUtf16(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpCodePoint(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i);
    const cb = b.codePointAt(i);
    if (ca !== cb) return ca - cb;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length;
}

function jcsNumber(x) {
  if (!Number.isFinite(x)) throw new JsonError('canonical_non_finite', 'non-finite');
  if (x === 0) return '0';
  return String(x);
}

// The two forms write literals, strings, arrays and objects alike; each has its own
// numbers and its own member order.
function writer(number, memberOrder) {
  const write = (v) => {
    if (v === null) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'string') return quote(v);
    if (typeof v === 'number' || typeof v === 'bigint' || v instanceof Float) return number(v);
    if (Array.isArray(v)) return '[' + v.map(write).join(',') + ']';
    return '{' + memberOrder(v).map((k) => quote(k) + ':' + write(v[k])).join(',') + '}';
  };
  return write;
}

export const jcs = writer((v) => {
  if (v instanceof Float) return jcsNumber(v.value);
  if (typeof v === 'bigint' || (Number.isInteger(v) && Math.abs(v) > MAX_SAFE)) throw new JsonError('canonical_unsafe_integer', 'unsafe integer');
  return jcsNumber(v);
}, (v) => Object.keys(v).sort(cmpUtf16));

export const harn = writer((v) => {
  if (v instanceof Float) return harnFloat(v.value);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return harnFloat(v);
    return Object.is(v, -0) ? '0' : String(v);
  }
  if (v >= I64_MIN && v <= U64_MAX) return v.toString();
  const d = Number(v);
  if (!Number.isFinite(d)) throw new JsonError('canonical_number_out_of_range', 'out of range');
  return harnFloat(d);
}, (v) => Object.keys(v).filter((k) => v[k] !== undefined).sort(cmpCodePoint));

export function sha(text) {
  return 'sha256:' + createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

export const jcsHash = (v) => sha(jcs(v));
export const harnHash = (v) => sha(harn(v));
