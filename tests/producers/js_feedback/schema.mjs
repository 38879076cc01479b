// A JSON Schema (draft 2020-12 subset) validator for schemas/session-feedback.schema.json
// that reports EVERY finding (docs/protocol.md, "Rejections"), with the x- keywords of
// docs/x-keywords.md that this contract uses: x-maxUtf8Bytes, x-jsSafeInteger,
// x-requireAnyOf, x-notGreaterThan, x-staleness.
// It also returns the value as the typed bindings would write it again: an integral
// float in an `integer` member without x-jsSafeInteger is written as an integer
// (docs/protocol.md, "Case inputs", document.roundtrip).
import { Float } from '../js/json.mjs';
import { sortFindings } from '../js_common/protocol.mjs';
import { has as own, isNum, isObj, jsonEqualBy, keyPath, loadSchema, numVal, typeOk } from '../js_common/schema.mjs';

export const SCHEMA = loadSchema('session-feedback.schema.json');
export const DOC_TYPES = Object.fromEntries(
  Object.entries(SCHEMA['x-documentTypes']).map(([k, ref]) => [`session-feedback.${k}`, ref.split('/').pop()]),
);

export const MAX_SAFE = 9007199254740991;

// JSON value equality: numbers by value (1 == 1.0), a bigint only equal to the same bigint.
export const jsonEqual = jsonEqualBy((a, b) => {
  if (typeof a === 'bigint' || typeof b === 'bigint') return typeof a === typeof b && a === b;
  return numVal(a) === numVal(b);
});

function deref(ref) {
  return SCHEMA.$defs[ref.split('/').pop()];
}

// Returns { findings: [{code, path}], value: the re-encoded value }.
export function validate(schema, v, jpath, out = []) {
  if (schema.$ref) return validate(deref(schema.$ref), v, jpath, out);
  if (schema.anyOf) {
    // `anyOf [X, null]`: report X's findings.
    for (const s of schema.anyOf) {
      const sub = [];
      const r = validate(s, v, jpath, sub);
      if (sub.length === 0) return r;
    }
    const nonNull = schema.anyOf.filter((s) => s.type !== 'null');
    return validate(nonNull[0], v, jpath, out);
  }
  if (schema.oneOf) {
    const disc = schema.discriminator?.propertyName;
    if (!isObj(v)) { out.push({ code: 'wrong_type', path: jpath }); return v; }
    if (!own(v, disc)) { out.push({ code: 'required', path: keyPath(jpath, disc) }); return v; }
    const branch = schema.oneOf.find((s) => jsonEqual(deref(s.$ref).properties[disc].const, v[disc]));
    if (!branch) { out.push({ code: 'not_allowed_value', path: keyPath(jpath, disc) }); return v; }
    return validate(branch, v, jpath, out);
  }
  if (schema.type !== undefined) {
    const t = schema.type;
    if (!typeOk(t, v)) {
      out.push({ code: 'wrong_type', path: jpath });
      return v;
    }
  }
  if (schema.type === 'integer') {
    if (schema['x-jsSafeInteger']) {
      if (v instanceof Float) { out.push({ code: 'integer_literal_required', path: jpath }); return v; }
      if (typeof v === 'bigint') { out.push({ code: 'unsafe_integer', path: jpath }); return v; }
    } else if (v instanceof Float) {
      v = v.value; // written again as an integer
    }
  }
  if (schema.const !== undefined && !jsonEqual(schema.const, v)) out.push({ code: 'not_allowed_value', path: jpath });
  if (schema.enum && !schema.enum.some((e) => jsonEqual(e, v))) out.push({ code: 'not_allowed_value', path: jpath });
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && [...v].length < schema.minLength) out.push({ code: 'min_length', path: jpath });
    if (schema['x-maxUtf8Bytes'] !== undefined && Buffer.byteLength(v, 'utf8') > schema['x-maxUtf8Bytes']) out.push({ code: 'max_utf8_bytes', path: jpath });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(v)) out.push({ code: 'pattern', path: jpath });
  }
  if (isNum(v) && !(typeof v === 'bigint')) {
    const x = numVal(v);
    if (schema.minimum !== undefined && x < schema.minimum) out.push({ code: 'minimum', path: jpath });
    if (schema.maximum !== undefined && x > schema.maximum) out.push({ code: 'maximum', path: jpath });
  }
  if (Array.isArray(v)) {
    if (schema.maxItems !== undefined && v.length > schema.maxItems) out.push({ code: 'max_items', path: jpath });
    if (schema.uniqueItems) {
      for (let i = 1; i < v.length; i++) {
        if (v.slice(0, i).some((x) => jsonEqual(x, v[i]))) { out.push({ code: 'unique_items', path: jpath }); break; }
      }
    }
    if (schema.items !== undefined) v = v.map((x, i) => validate(schema.items, x, `${jpath}[${i}]`, out));
  }
  if (isObj(v) && schema.type === 'object') {
    for (const r of schema.required ?? []) if (!own(v, r)) out.push({ code: 'required', path: keyPath(jpath, r) });
    const props = schema.properties ?? {};
    const copy = Object.create(null);
    for (const k of Object.keys(v)) {
      if (own(props, k)) copy[k] = validate(props[k], v[k], keyPath(jpath, k), out);
      else if (schema.additionalProperties === false) out.push({ code: 'unknown_field', path: keyPath(jpath, k) });
      else copy[k] = v[k];
    }
    for (const [k, deps] of Object.entries(schema.dependentRequired ?? {})) {
      if (own(v, k)) for (const d of deps) if (!own(v, d)) out.push({ code: 'required', path: keyPath(jpath, d) });
    }
    const any = schema['x-requireAnyOf'];
    if (any && !any.some((k) => own(v, k))) out.push({ code: 'require_any_of', path: jpath });
    for (const [small, large] of Object.entries(schema['x-notGreaterThan'] ?? {})) {
      if (own(v, small) && own(v, large) && isNum(v[small]) && isNum(v[large]) && numVal(v[small]) > numVal(v[large])) {
        out.push({ code: 'not_greater_than', path: keyPath(jpath, small) });
      }
    }
    const st = schema['x-staleness'];
    if (st) {
      const get = (p) => v[p.slice(1)];
      const match = get(st.match), age = get(st.age), stale = get(st.stale), reasons = get(st.reasons);
      if (typeof match === 'boolean' && isNum(age)) {
        const want = [];
        if (!match) want.push(st.mismatchReason);
        if (numVal(age) > st.maxAgeMs) want.push(st.ageReason);
        if (typeof stale === 'boolean' && stale !== want.length > 0) out.push({ code: 'stale_inconsistent', path: keyPath(jpath, st.stale.slice(1)) });
        if (Array.isArray(reasons)) {
          const same = reasons.length === want.length && want.every((r) => reasons.includes(r));
          if (!same) out.push({ code: 'stale_reasons_inconsistent', path: keyPath(jpath, st.reasons.slice(1)) });
        }
      }
    }
    return copy;
  }
  return v;
}

export function validateDef(defName, v, jpath = '$') {
  const findings = [];
  const value = validate(SCHEMA.$defs[defName], v, jpath, findings);
  return { findings: sortFindings(findings), value };
}
