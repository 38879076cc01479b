// A small JSON Schema (draft 2020-12 subset) validator for our schemas, with the
// x- keywords of docs/x-keywords.md that the recap and event contracts use.
import { Float } from './json.mjs';
import { isNum, isObj, jsonEqualBy, keyPath, loadSchema, typeOk } from '../js_common/schema.mjs';

export class Finding extends Error {
  constructor(code, jpath, message) {
    super(message ?? `${code} at ${jpath}`);
    this.code = code;
    this.path = jpath;
  }
}

const numVal = (v) => (v instanceof Float ? v.value : v);

// Two numbers by value, a bigint equal to the number of the same value.
// eslint-disable-next-line eqeqeq
export const jsonEqual = jsonEqualBy((a, b) => numVal(a) == numVal(b));

function pointer(root, ptr) {
  if (ptr === '' || ptr === '/') return { found: true, value: root };
  let cur = root;
  for (const raw of ptr.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      const i = Number(k);
      if (!(i < cur.length)) return { found: false };
      cur = cur[i];
    } else if (isObj(cur) && Object.prototype.hasOwnProperty.call(cur, k)) cur = cur[k];
    else return { found: false };
  }
  return { found: true, value: cur };
}

const regexCache = new Map();
function re(p) {
  if (!regexCache.has(p)) regexCache.set(p, new RegExp(p, 'u'));
  return regexCache.get(p);
}

function resolve(ref, file) {
  const [f, frag] = ref.split('#');
  const target = f ? f : file;
  let node = loadSchema(target);
  if (frag) node = pointer(node, frag).value;
  return { node, file: target };
}

// Returns the first finding (depth first) or null.
export function check(schema, v, jpath, file) {
  if (schema === true || schema === undefined) return null;
  if (schema === false) return new Finding('not', jpath);
  if (schema.$ref) {
    const { node, file: f } = resolve(schema.$ref, file);
    const r = check(node, v, jpath, f);
    if (r) return r;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeOk(t, v))) {
      if (types.includes('integer') && v instanceof Float) return new Finding('integer_literal_required', jpath);
      return new Finding('wrong_type', jpath);
    }
    if (types.includes('integer') && v instanceof Float && !types.includes('number')) return new Finding('integer_literal_required', jpath);
  }
  if (schema.const !== undefined && !jsonEqual(schema.const, v)) return new Finding('not_allowed_value', jpath);
  if (schema.enum && !schema.enum.some((e) => jsonEqual(e, v))) return new Finding('not_allowed_value', jpath);
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && [...v].length < schema.minLength) return new Finding('min_length', jpath);
    if (schema.maxLength !== undefined && [...v].length > schema.maxLength) return new Finding('max_length', jpath);
    if (schema['x-maxUtf8Bytes'] !== undefined && Buffer.byteLength(v, 'utf8') > schema['x-maxUtf8Bytes']) return new Finding('max_utf8_bytes', jpath);
    if (schema.pattern !== undefined && !re(schema.pattern).test(v)) return new Finding('pattern', jpath);
  }
  if (isNum(v)) {
    if (schema['x-jsSafeInteger']) {
      if (v instanceof Float) return new Finding('integer_literal_required', jpath);
      if (typeof v === 'bigint') return new Finding('unsafe_integer', jpath);
    }
    const x = numVal(v);
    if (schema.minimum !== undefined && x < schema.minimum) return new Finding('minimum', jpath);
    if (schema.maximum !== undefined && x > schema.maximum) return new Finding('maximum', jpath);
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) return new Finding('min_items', jpath);
    if (schema.items !== undefined) {
      for (let i = 0; i < v.length; i++) {
        const r = check(schema.items, v[i], `${jpath}[${i}]`, file);
        if (r) return r;
      }
    }
    if (schema.contains !== undefined && !v.some((x) => !check(schema.contains, x, jpath, file))) return new Finding('contains', jpath);
  }
  if (isObj(v)) {
    for (const r of schema.required ?? []) {
      if (!Object.prototype.hasOwnProperty.call(v, r)) return new Finding('required', keyPath(jpath, r));
    }
    const props = schema.properties ?? {};
    for (const k of Object.keys(v)) {
      if (Object.prototype.hasOwnProperty.call(props, k)) {
        const r = check(props[k], v[k], keyPath(jpath, k), file);
        if (r) return r;
      } else if (schema.additionalProperties === false) {
        return new Finding('unknown_field', keyPath(jpath, k));
      } else if (isObj(schema.additionalProperties)) {
        const r = check(schema.additionalProperties, v[k], keyPath(jpath, k), file);
        if (r) return r;
      }
    }
    for (const [a, b] of schema['x-sameValue'] ?? []) {
      const x = pointer(v, a), y = pointer(v, b);
      if (x.found && y.found && !strictSame(x.value, y.value)) return new Finding('same_value', jpath + a.replace(/\//g, '.'));
    }
    const pr = schema['x-preferReference'];
    if (pr) {
      const inl = v[pr.inline], tgt = v[pr.target];
      if (Array.isArray(inl) && inl.length > 0 && Array.isArray(tgt) && jsonEqual(inl, tgt)) return new Finding('prefer_reference', keyPath(jpath, pr.inline));
    }
    for (const rule of schema['x-eachSameValue'] ?? []) {
      const eq = pointer(v, rule.equals), items = pointer(v, rule.items);
      if (eq.found && typeof eq.value === 'string' && items.found && Array.isArray(items.value)) {
        for (let i = 0; i < items.value.length; i++) {
          const m = pointer(items.value[i], rule.member);
          if (m.found && m.value !== eq.value) return new Finding('same_value', `${jpath}[${i}]`);
        }
      }
    }
  }
  if (schema.allOf) {
    for (const s of schema.allOf) {
      const r = check(s, v, jpath, file);
      if (r) return r;
    }
  }
  if (schema.anyOf) {
    let first = null;
    let ok = false;
    for (const s of schema.anyOf) {
      const r = check(s, v, jpath, file);
      if (!r) { ok = true; break; }
      first = first ?? r;
    }
    if (!ok) return pickBranchFinding(schema.anyOf, v, jpath, file) ?? first;
  }
  if (schema.oneOf) {
    const disc = schema.discriminator?.propertyName;
    if (disc && isObj(v)) {
      const branch = schema.oneOf.find((s) => {
        const { node } = s.$ref ? resolve(s.$ref, file) : { node: s };
        const c = node.properties?.[disc]?.const;
        return c !== undefined && jsonEqual(c, v[disc]);
      });
      if (!branch) return new Finding(Object.prototype.hasOwnProperty.call(v, disc) ? 'not_allowed_value' : 'required', keyPath(jpath, disc));
      const r = check(branch, v, jpath, file);
      if (r) return r;
    } else {
      const ok = schema.oneOf.filter((s) => !check(s, v, jpath, file)).length;
      if (ok > 1) return new Finding('ambiguous_variant', jpath);
      if (ok === 0) {
        // `oneOf [X, null]`: the finding inside X names the member at fault, as for anyOf;
        // codes must be of the protocol's vocabulary (docs/protocol.md, "Rejection codes").
        const others = schema.oneOf.filter((s) => s.type !== 'null');
        if (others.length === 1 && v !== null) return check(others[0], v, jpath, file);
        return new Finding('no_matching_variant', jpath);
      }
    }
  }
  if (schema.not && !check(schema.not, v, jpath, file)) return new Finding('not', jpath);
  if (schema.if) {
    if (!check(schema.if, v, jpath, file)) {
      if (schema.then) { const r = check(schema.then, v, jpath, file); if (r) return r; }
    } else if (schema.else) { const r = check(schema.else, v, jpath, file); if (r) return r; }
  }
  return null;
}

function strictSame(a, b) {
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b;
  return jsonEqual(a, b);
}

// For `anyOf [X, null]` report the finding inside X rather than a bare type error.
function pickBranchFinding(branches, v, jpath, file) {
  if (v === null) return null;
  for (const s of branches) {
    if (s.type === 'null') continue;
    return check(s, v, jpath, file);
  }
  return null;
}

export function validateDocType(file, defName, v, jpath = '$') {
  const schema = loadSchema(file);
  return check(schema.$defs[defName], v, jpath, file);
}

