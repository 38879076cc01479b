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

// The findings of a number against x-jsSafeInteger (a bigint is an unsafe integer),
// minimum and maximum; a bigint compared exactly.
export function numberFindings(schema, v, jpath, out) {
  if (schema['x-jsSafeInteger'] && typeof v === 'bigint') {
    out.push({ code: 'unsafe_integer', path: jpath });
    return;
  }
  const lt = (a, b) => (typeof a === 'bigint' ? a < BigInt(b) : numVal(a) < b);
  const gt = (a, b) => (typeof a === 'bigint' ? a > BigInt(b) : numVal(a) > b);
  if (schema.minimum !== undefined && lt(v, schema.minimum)) out.push({ code: 'minimum', path: jpath });
  if (schema.maximum !== undefined && gt(v, schema.maximum)) out.push({ code: 'maximum', path: jpath });
}

// The findings of an array against minItems and maxItems.
export function lengthFindings(schema, v, jpath, out) {
  if (schema.minItems !== undefined && v.length < schema.minItems) out.push({ code: 'min_items', path: jpath });
  if (schema.maxItems !== undefined && v.length > schema.maxItems) out.push({ code: 'max_items', path: jpath });
}

// The keywords the collecting validators (js_health, js_runrecord) read alike, in order:
// $ref (its findings end the check), type (the value decoded as the typed bindings would:
// an integral float at an integer member an integer, unless x-jsSafeInteger asks for an
// integer literal; an integer at a number member a float), const and enum (by the
// producer's `jsonEqual`), and a string's minLength, maxLength (code points) and
// x-maxUtf8Bytes. Returns { value, done }: `done` when a finding ends the check.
export function checkLeading(schema, v, jpath, file, out, { check, resolve, jsonEqual }) {
  if (schema.$ref) {
    const { node, file: f } = resolve(schema.$ref, file);
    const before = out.length;
    v = check(node, v, jpath, f, out);
    if (out.length > before) return { value: v, done: true };
  }
  const stop = (code) => { out.push({ code, path: jpath }); return { value: v, done: true }; };
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeOk(t, v))) return stop('wrong_type');
    if (types.includes('integer') && !types.includes('number') && v instanceof Float) {
      if (schema['x-jsSafeInteger']) return stop('integer_literal_required');
      v = v.value === 0 ? 0 : v.value; // accepted as an integer, written as one
    }
    // A `number` member holds a double: an integer literal is written back as a float
    // (observed from the reference: a value of 1 comes back 1.0).
    if (types.includes('number') && !types.includes('integer') && (typeof v === 'number' || typeof v === 'bigint')) v = new Float(Number(v));
  }
  if (schema.const !== undefined && !jsonEqual(schema.const, v)) return stop('not_allowed_value');
  if (schema.enum && !schema.enum.some((e) => jsonEqual(e, v))) return stop('not_allowed_value');
  if (typeof v === 'string') {
    const len = [...v].length;
    if (schema.minLength !== undefined && len < schema.minLength) out.push({ code: 'min_length', path: jpath });
    if (schema.maxLength !== undefined && len > schema.maxLength) out.push({ code: 'max_length', path: jpath });
    if (schema['x-maxUtf8Bytes'] !== undefined && Buffer.byteLength(v, 'utf8') > schema['x-maxUtf8Bytes']) out.push({ code: 'max_utf8_bytes', path: jpath });
  }
  return { value: v, done: false };
}
