// A JSON Schema (draft 2020-12 subset) validator that collects every finding and returns
// the document as typed bindings would re-encode it (an integral float at an `integer`
// member becomes an integer, an integer at a `number` member a float).
// Keywords: $ref, type, const, enum, minLength, maxLength, pattern, minimum, maximum,
// minItems, maxItems, contains, required, properties, additionalProperties, items,
// anyOf/oneOf (+ discriminator), not, if/then/else, and the x- keywords of
// docs/x-keywords.md used by the run-record and session-event contracts:
// x-maxUtf8Bytes, x-jsSafeInteger, x-sameValue, x-eachSameValue, x-preferReference,
// x-spanTree. An unsafe integer inside an open value (no typed schema) is
// `canonical_unsafe_integer` at it (docs/protocol.md, "Rejected or errored").
import { keysOf } from '../js/json.mjs';
import { checkLeading, has, isNum, isObj, jsonEqualBy, keyPath, lengthFindings, loadSchema, numberFindings, numVal } from '../js_common/schema.mjs';

// JSON value equality: numbers by value (1 == 1.0), a bigint only equal to a bigint.
export const jsonEqual = jsonEqualBy((a, b) => {
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    try { return BigInt(numVal(a)) === BigInt(numVal(b)) && typeof a === typeof b; } catch { return false; }
  }
  return numVal(a) === numVal(b);
});

const unesc = (r) => r.replace(/~1/g, '/').replace(/~0/g, '~');
export function pointer(root, ptr) {
  if (ptr === '') return { found: true, value: root };
  let cur = root;
  for (const raw of ptr.split('/').slice(1)) {
    const k = unesc(raw);
    if (isObj(cur) && has(cur, k)) cur = cur[k];
    else if (Array.isArray(cur) && /^\d+$/.test(k) && Number(k) < cur.length) cur = cur[Number(k)];
    else return { found: false };
  }
  return { found: true, value: cur };
}
const ptrPath = (base, ptr) => ptr.split('/').slice(1).map(unesc).reduce((p, k) => keyPath(p, k), base);

function resolve(ref, file) {
  const [f, frag] = ref.split('#');
  const target = f ? f : file;
  let node = loadSchema(target);
  if (frag) for (const k of frag.split('/').slice(1)) node = node[unesc(k)];
  return { node, file: target };
}

// Open values are not judged by the schema; the RFC 8785 form of the whole document is
// (firstUnsafe). The reference reports the first unsafe integer in document order only.
function scanOpen() {}
export function firstUnsafe(v, jpath) {
  if (typeof v === 'bigint') return jpath;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) { const r = firstUnsafe(v[i], `${jpath}[${i}]`); if (r) return r; }
  } else if (isObj(v)) {
    for (const k of keysOf(v)) { const r = firstUnsafe(v[k], keyPath(jpath, k)); if (r) return r; }
  }
  return null;
}

const regexCache = new Map();
const re = (p) => { if (!regexCache.has(p)) regexCache.set(p, new RegExp(p, 'u')); return regexCache.get(p); };

// docs/protocol.md, document.roundtrip with "historical": true: a span's legacy
// parent_id is read as parent_span_id (x-historicalAliases); both given is alias_conflict
// at the historical name.
export const options = { historical: false };

const isOpen = (s) => s === true || (isObj(s) && Object.keys(s).every((k) => k === 'description' || k === 'title'));

// check(schema, v, jpath, file, out): pushes findings {code, path} into out and returns
// the decoded value.
export function check(schema, v, jpath, file, out) {
  if (schema === undefined || isOpen(schema)) { scanOpen(v, jpath, out); return v; }
  if (schema === false) { out.push({ code: 'not', path: jpath }); return v; }
  const leading = checkLeading(schema, v, jpath, file, out, { check, resolve, jsonEqual });
  v = leading.value;
  if (leading.done) return v;
  if (typeof v === 'string') {
    if (schema.pattern !== undefined && !re(schema.pattern).test(v)) out.push({ code: 'pattern', path: jpath });
  }
  if (isNum(v)) numberFindings(schema, v, jpath, out);
  if (Array.isArray(v)) {
    lengthFindings(schema, v, jpath, out);
    if (schema.items !== undefined) v = v.map((x, i) => check(schema.items, x, `${jpath}[${i}]`, file, out));
    if (schema.contains !== undefined && !v.some((x) => { const t = []; check(schema.contains, x, jpath, file, t); return t.length === 0; })) out.push({ code: 'contains', path: jpath });
  }
  if (isObj(v) && options.historical && schema['x-historicalAliases']) {
    for (const [old, cur] of Object.entries(schema['x-historicalAliases'])) {
      if (!has(v, old)) continue;
      if (has(v, cur)) { out.push({ code: 'alias_conflict', path: keyPath(jpath, old) }); return v; }
      const renamed = Object.create(null);
      for (const k of keysOf(v)) renamed[k === old ? cur : k] = v[k];
      v = renamed;
    }
  }
  if (isObj(v) && (schema.properties || schema.required || schema.additionalProperties !== undefined)) {
    const props = schema.properties ?? {};
    const res = Object.create(null);
    for (const r of schema.required ?? []) if (!has(v, r)) out.push({ code: 'required', path: keyPath(jpath, r) });
    for (const k of Object.keys(v)) {
      if (has(props, k)) res[k] = check(props[k], v[k], keyPath(jpath, k), file, out);
      else if (schema.additionalProperties === false) out.push({ code: 'unknown_field', path: keyPath(jpath, k) });
      else if (isObj(schema.additionalProperties) && !isOpen(schema.additionalProperties)) res[k] = check(schema.additionalProperties, v[k], keyPath(jpath, k), file, out);
      else { scanOpen(v[k], keyPath(jpath, k), out); res[k] = v[k]; }
    }
    v = res;
    crossField(schema, v, jpath, out);
  }
  if (schema.anyOf || schema.oneOf) {
    const branches = schema.anyOf ?? schema.oneOf;
    const disc = schema.discriminator?.propertyName;
    if (disc) {
      if (!isObj(v)) { out.push({ code: 'wrong_type', path: jpath }); return v; }
      const branch = branches.find((s) => {
        const { node } = s.$ref ? resolve(s.$ref, file) : { node: s };
        const c = node.properties?.[disc]?.const;
        return c !== undefined && jsonEqual(c, v[disc]);
      });
      if (!branch) {
        out.push({ code: has(v, disc) ? 'not_allowed_value' : 'required', path: keyPath(jpath, disc) });
        return v;
      }
      return check(branch, v, jpath, file, out);
    }
    for (const s of branches) {
      const tmp = [];
      const r = check(s, v, jpath, file, tmp);
      if (tmp.length === 0) return r;
    }
    const nonNull = branches.filter((s) => s.type !== 'null');
    if (nonNull.length === 1 && v !== null) return check(nonNull[0], v, jpath, file, out);
    out.push({ code: 'no_matching_variant', path: jpath });
    return v;
  }
  if (schema.not) {
    const t = [];
    check(schema.not, v, jpath, file, t);
    if (t.length === 0) out.push({ code: 'not', path: jpath });
  }
  if (schema.if) {
    const t = [];
    check(schema.if, v, jpath, file, t);
    if (t.length === 0) { if (schema.then) check(schema.then, v, jpath, file, out); }
    else if (schema.else) check(schema.else, v, jpath, file, out);
  }
  return v;
}

function crossField(schema, v, jpath, out) {
  for (const [a, b] of schema['x-sameValue'] ?? []) {
    const x = pointer(v, a), y = pointer(v, b);
    if (x.found && y.found && !jsonEqual(x.value, y.value)) out.push({ code: 'same_value', path: ptrPath(jpath, b) });
  }
  for (const rule of schema['x-eachSameValue'] ?? []) {
    const eq = pointer(v, rule.equals), items = pointer(v, rule.items);
    if (eq.found && typeof eq.value === 'string' && items.found && Array.isArray(items.value)) {
      items.value.forEach((it, i) => {
        const m = pointer(it, rule.member);
        if (m.found && !jsonEqual(m.value, eq.value)) out.push({ code: 'same_value', path: ptrPath(`${ptrPath(jpath, rule.items)}[${i}]`, rule.member) });
      });
    }
  }
  const pr = schema['x-preferReference'];
  if (pr) {
    const inl = pointer(v, pr.inline), tgt = pointer(v, pr.target);
    if (inl.found && Array.isArray(inl.value) && inl.value.length > 0 && tgt.found && jsonEqual(inl.value, tgt.value)) out.push({ code: 'prefer_reference', path: ptrPath(jpath, pr.inline) });
  }
  const st = schema['x-spanTree'];
  if (st) {
    const sp = pointer(v, st.spans);
    if (sp.found && Array.isArray(sp.value)) spanTree(sp.value, ptrPath(jpath, st.spans), out);
  }
}

// docs/runrecord.md section 2: duplicates, then cycles (once per cycle, at the span where
// a walk from the earliest span leading into it first comes back).
export function spanTree(spans, base, out) {
  const byId = new Map();
  const live = [];
  spans.forEach((s, i) => {
    if (!isObj(s) || !isNum(s.span_id)) return;
    const id = String(numVal(s.span_id));
    if (byId.has(id)) { out.push({ code: 'span_id_duplicate', path: `${base}[${i}].span_id` }); return; }
    byId.set(id, i);
    live.push(i);
  });
  const state = new Map(); // index -> 1 visiting (walk number), 2 done
  let walk = 0;
  for (const start of live) {
    if (state.has(start)) continue;
    walk++;
    const onPath = new Map();
    let cur = start;
    const pathIdx = [];
    for (;;) {
      if (state.has(cur)) {
        if (onPath.has(cur)) {
          // came back to cur: the cycle closes at the span whose parent link leads back
          out.push({ code: 'span_cycle', path: `${base}[${cur}].parent_span_id` });
        }
        break;
      }
      state.set(cur, walk);
      onPath.set(cur, true);
      pathIdx.push(cur);
      const p = spans[cur].parent_span_id;
      if (p === null || p === undefined || !isNum(p)) break;
      const nxt = byId.get(String(numVal(p)));
      if (nxt === undefined) break;
      cur = nxt;
    }
  }
}

export function validateDef(file, defName, v, jpath, out) {
  return check(loadSchema(file).$defs[defName], v, jpath, file, out);
}
