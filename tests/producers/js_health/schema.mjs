// A JSON Schema (draft 2020-12 subset) validator that collects every finding and,
// for a valid document, returns it as the typed bindings would re-encode it.
// Keywords: $ref, type, const, enum, minLength, maxLength, minimum, maximum,
// required, properties, additionalProperties, items, anyOf, oneOf (+ discriminator),
// format date-time, and the x- keywords of docs/x-keywords.md used by the health
// contracts: x-maxUtf8Bytes, x-jsSafeInteger, x-sameValue, x-ratio, x-notGreaterThan.
import { checkLeading, has, isNum, isObj, jsonEqualBy, keyPath, lengthFindings, loadSchema, numberFindings, numVal } from '../js_common/schema.mjs';

// JSON value equality: numbers by value (1 == 1.0, a bigint equal to the number of its value).
export const jsonEqual = jsonEqualBy((a, b) => {
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    try { return BigInt(numVal(a)) === BigInt(numVal(b)); } catch { return false; }
  }
  return numVal(a) === numVal(b);
});

function pointer(root, ptr) {
  if (ptr === '') return { found: true, value: root, path: '' };
  let cur = root;
  const keys = [];
  for (const raw of ptr.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (isObj(cur) && has(cur, k)) cur = cur[k];
    else return { found: false };
    keys.push(k);
  }
  return { found: true, value: cur, keys };
}
const ptrPath = (base, ptr) => ptr.split('/').slice(1).map((r) => r.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((p, k) => keyPath(p, k), base);

function resolve(ref, file) {
  const [f, frag] = ref.split('#');
  const target = f ? f : file;
  let node = loadSchema(target);
  if (frag) for (const k of frag.split('/').slice(1)) node = node[k];
  return { node, file: target };
}

// RFC 3339 date-time (JSON Schema's `format: date-time`).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
function isDateTime(s) {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60) return false;
  if (se === 60) {
    // A leap second only at 23:59:60 UTC (observed from the reference).
    let off = 0;
    if (m[9] !== undefined) off = (m[8][0] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
    const utc = (((h * 60 + mi - off) % 1440) + 1440) % 1440;
    if (utc !== 23 * 60 + 59) return false;
  }
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const dim = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  if (d > dim) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

// check(schema, v, jpath, file, out): pushes findings {code, path} into out, returns
// the decoded value (integral floats at integer members become integers).
export function check(schema, v, jpath, file, out) {
  if (schema === true || schema === undefined) return v;
  const leading = checkLeading(schema, v, jpath, file, out, { check, resolve, jsonEqual });
  v = leading.value;
  if (leading.done) return v;
  if (typeof v === 'string' && schema.format === 'date-time' && !isDateTime(v)) out.push({ code: 'format', path: jpath });
  if (isNum(v)) numberFindings(schema, v, jpath, out);
  if (Array.isArray(v)) {
    lengthFindings(schema, v, jpath, out);
    if (schema.items !== undefined) v = v.map((x, i) => check(schema.items, x, `${jpath}[${i}]`, file, out));
  }
  if (isObj(v) && (schema.properties || schema.required || schema.additionalProperties !== undefined)) {
    const props = schema.properties ?? {};
    const res = {};
    for (const r of schema.required ?? []) if (!has(v, r)) out.push({ code: 'required', path: keyPath(jpath, r) });
    for (const k of Object.keys(v)) {
      if (has(props, k)) res[k] = check(props[k], v[k], keyPath(jpath, k), file, out);
      else if (schema.additionalProperties === false) out.push({ code: 'unknown_field', path: keyPath(jpath, k) });
      else if (isObj(schema.additionalProperties)) res[k] = check(schema.additionalProperties, v[k], keyPath(jpath, k), file, out);
      else res[k] = v[k];
    }
    v = Object.assign(Object.create(null), res);
    // The x- rules are judged beside the members' own findings (observed from the reference).
    crossField(schema, v, jpath, out);
  }
  if (schema.anyOf || schema.oneOf) {
    const branches = schema.anyOf ?? schema.oneOf;
    const disc = schema.discriminator?.propertyName;
    if (disc && isObj(v)) {
      const branch = branches.find((s) => {
        const { node } = s.$ref ? resolve(s.$ref, file) : { node: s };
        const c = node.properties?.[disc]?.const;
        return c !== undefined && jsonEqual(c, v[disc]);
      });
      if (!branch) {
        if (!has(v, disc)) out.push({ code: 'required', path: keyPath(jpath, disc) });
        else out.push({ code: 'not_allowed_value', path: keyPath(jpath, disc) });
        return v;
      }
      return check(branch, v, jpath, file, out);
    }
    if (disc && !isObj(v)) { out.push({ code: 'wrong_type', path: jpath }); return v; }
    // anyOf [X, null]: the findings inside X name the member at fault.
    const ok = [];
    for (const s of branches) {
      const tmp = [];
      const r = check(s, v, jpath, file, tmp);
      if (tmp.length === 0) ok.push(r);
    }
    if (ok.length > 0) return ok[0];
    const nonNull = branches.filter((s) => s.type !== 'null');
    if (nonNull.length === 1 && v !== null) return check(nonNull[0], v, jpath, file, out);
    out.push({ code: 'no_matching_variant', path: jpath });
  }
  return v;
}

// The cross-field x- keywords, on an object whose members are otherwise valid.
function crossField(schema, v, jpath, out) {
  for (const [a, b] of schema['x-sameValue'] ?? []) {
    const x = pointer(v, a), y = pointer(v, b);
    if (x.found && y.found && !jsonEqual(x.value, y.value)) out.push({ code: 'same_value', path: ptrPath(jpath, b) });
  }
  const ng = schema['x-notGreaterThan'];
  if (ng) {
    for (const [small, large] of Object.entries(ng)) {
      const s = v[small], l = v[large];
      if (isNum(s) && isNum(l) && numVal(s) > numVal(l)) out.push({ code: 'not_greater_than', path: keyPath(jpath, small) });
    }
  }
  const r = schema['x-ratio'];
  if (r) {
    const val = pointer(v, r.value), num = pointer(v, r.numerator), den = pointer(v, r.denominator);
    const when = r.whenUndefined ?? 'null';
    const vPath = ptrPath(jpath, r.value);
    if (val.found && val.value !== null && !isNum(val.value)) return;
    if (num.found && den.found && isNum(num.value) && isNum(den.value)) {
      const d = numVal(den.value), n = numVal(num.value);
      if (d > 0) {
        if (!val.found || val.value === null) out.push({ code: 'ratio_missing', path: vPath });
        else if (isNum(val.value)) {
          const want = n / d, got = numVal(val.value);
          // relative tolerance 1e-9 (docs/x-keywords.md) and, observed from the reference,
          // an absolute tolerance of 1e-12 (0 / 1 accepts a value of 1e-12, not 2e-12).
          if (!(Math.abs(got - want) <= Math.max(1e-9 * Math.max(Math.abs(want), Math.abs(got)), 1e-12))) out.push({ code: 'ratio_mismatch', path: vPath });
        }
        return;
      }
      if (when === 'refused') { out.push({ code: 'ratio_undefined', path: ptrPath(jpath, r.denominator) }); return; }
    }
    if (when === 'null' && val.found && val.value !== null) out.push({ code: 'ratio_must_be_null', path: vPath });
    if (when === 'absent' && val.found) out.push({ code: 'ratio_must_be_absent', path: vPath });
  }
}

// Validate v as a document type (CONTRACT.KIND) of a schema file.
export function validateDef(file, defName, v, jpath, out) {
  const schema = loadSchema(file);
  return check(schema.$defs[defName], v, jpath, file, out);
}
