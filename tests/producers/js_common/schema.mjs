// The JSON value helpers every JavaScript producer's schema validator here shares: reading
// a schema of schemas/, the JSON types as docs/protocol.md reads them (an integral float
// is an `integer` with its own finding, a bigint an unsafe integer), JSON paths, and JSON
// equality with each producer's own rule for comparing two numbers.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Float, parse } from '../js/json.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SCHEMA_DIR = path.resolve(here, '../../../schemas');
const cache = new Map();

export function loadSchema(file) {
  if (!cache.has(file)) cache.set(file, parse(fs.readFileSync(path.join(SCHEMA_DIR, file), 'utf8')));
  return cache.get(file);
}

export const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
export const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Float);
export const isNum = (v) => typeof v === 'number' || typeof v === 'bigint' || v instanceof Float;
export const numVal = (v) => (v instanceof Float ? v.value : typeof v === 'bigint' ? Number(v) : v);

export function typeOk(t, v) {
  switch (t) {
    case 'null': return v === null;
    case 'boolean': return typeof v === 'boolean';
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' || typeof v === 'bigint' || (v instanceof Float && Number.isInteger(v.value));
    case 'number': return isNum(v);
    case 'array': return Array.isArray(v);
    case 'object': return isObj(v);
    default: return false;
  }
}

// docs/protocol.md, "Paths": dot form for an ASCII identifier, else ['...'] with only
// the backslash and the single quote escaped.
export function keyPath(p, k) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${p}.${k}` : `${p}['${k.replace(/[\\']/g, (c) => '\\' + c)}']`;
}

// JSON value equality (true is not 1, key order ignored), two numbers compared by
// `numbersEqual`.
export function jsonEqualBy(numbersEqual) {
  const eq = (a, b) => {
    if (isNum(a) && isNum(b)) return numbersEqual(a, b);
    if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => eq(x, b[i]));
    if (isObj(a)) {
      if (!isObj(b)) return false;
      const ka = Object.keys(a), kb = Object.keys(b);
      return ka.length === kb.length && ka.every((k) => has(b, k) && eq(a[k], b[k]));
    }
    return a === b;
  };
  return eq;
}
