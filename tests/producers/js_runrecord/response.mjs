// runrecord.provider_call_response: the tool-call parse, loop state and redaction of one
// model response (docs/runrecord.md sections 3 and 5.2).
import { Float, parse as parseJson } from '../js/json.mjs';
import { loadPolicy, redactText } from '../js/redact.mjs';
import { has, isObj } from '../js_common/schema.mjs';
import { jsonEqual } from './schema.mjs';

const POLICY = loadPolicy();
const MAX_SAFE = 9007199254740991;
const utf8 = (s) => Buffer.byteLength(s, 'utf8');

// Python's str.strip() whitespace (the reference is Python; the docs say "trimmed").
const WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const TRIM_RE = new RegExp(`^[${WS}]+|[${WS}]+$`, 'g');
export const trim = (s) => s.replace(TRIM_RE, '');

// Strict JSON: no duplicate keys, no lone surrogates.
function hasLone(v) {
  if (typeof v === 'string') return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v);
  if (Array.isArray(v)) return v.some(hasLone);
  if (isObj(v)) return Object.keys(v).some((k) => hasLone(k) || hasLone(v[k]));
  return false;
}
function strict(text) {
  try {
    const v = parseJson(text);
    if (hasLone(v)) return { ok: false };
    return { ok: true, value: v };
  } catch {
    return { ok: false };
  }
}

// ---------- 3.1 provider-native calls
function normalizeNative(call) {
  let id, name, args;
  if (isObj(call.function)) { id = call.id; name = call.function.name; args = call.function.arguments; }
  else if (call.type === 'tool_use') { id = call.id; name = call.name; args = call.input; }
  else if (isObj(call.functionCall)) { id = call.functionCall.id; name = call.functionCall.name; args = call.functionCall.args; }
  else if (call.type === 'function_call') { id = call.call_id; name = call.name; args = call.arguments; }
  else { id = call.id; name = call.name; args = call.arguments; }
  return normalize(id, name, args);
}
function normalize(id, name, args) {
  if (typeof name !== 'string' || name === '') return null;
  if (args === undefined || args === null || args === '') args = Object.create(null);
  else if (typeof args === 'string') {
    const r = strict(args);
    if (!r.ok) return null;
    args = r.value;
  }
  if (!isObj(args)) return null;
  if (id === undefined || id === null || id === '') id = null;
  else if (typeof id !== 'string') return null;
  return { id, name, arguments: args };
}

// ---------- 3.3 loop state
const LINE_RE = /\n/;
function lines(text) {
  // [start offset, line text] for every line
  const out = [];
  let pos = 0;
  for (const l of text.split(LINE_RE)) { out.push([pos, l]); pos += l.length + 1; }
  return out;
}

const NUM_RE = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
function loopValue(v) {
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v === 'null' || v === 'nil') return null;
  const m = NUM_RE.exec(v);
  if (m) {
    if (m[2] === undefined && m[3] === undefined) {
      const n = Number(v);
      if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
      return v;
    }
    const f = Number(v);
    if (!Number.isFinite(f)) return v;
    return new Float(f);
  }
  return v;
}

// Returns {state, blocks: [[startOffset, endOffset]...] of complete blocks, pairs: [[key, rawValue]]}.
function loopState(text) {
  const ls = lines(text);
  let open = null; // index into ls
  let last = null;
  const blocks = [];
  for (let i = 0; i < ls.length; i++) {
    const t = trim(ls[i][1]);
    if (t === '## LOOP_STATE') open = i;
    else if (t === '## END_LOOP_STATE') {
      if (open !== null) {
        last = [open, i];
        blocks.push([ls[open][0], ls[i][0] + ls[i][1].length]);
        open = null;
      }
    }
  }
  if (last === null) return { state: null, blocks, pairs: [] };
  const state = Object.create(null);
  const pairs = [];
  for (let i = last[0] + 1; i < last[1]; i++) {
    const raw = ls[i][1];
    if (trim(raw) === '') continue;
    const c = raw.indexOf(':');
    if (c < 0) continue;
    const k = trim(raw.slice(0, c));
    if (k === '') continue;
    const v = trim(raw.slice(c + 1));
    if (has(state, k)) delete state[k];
    state[k] = loopValue(v);
    pairs.push([k, v]);
  }
  return { state, blocks, pairs };
}

// ---------- 3.1 text calls
function matchingBrace(text, start) {
  // text[start] === '{'; returns the index of the matching '}' or -1
  let depth = 0, inStr = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') { depth--; if (depth === 0) return c === '}' ? i : -1; }
  }
  return -1;
}

function textCalls(text, blocks) {
  const inBlock = (pos) => blocks.some(([a, b]) => pos >= a && pos < b);
  const found = [];
  const tags = []; // spans of closed <tool_call> elements: no legacy line inside them
  // the text tool protocol
  const OPEN = '<tool_call>', CLOSE = '</tool_call>';
  let p = 0;
  for (;;) {
    const a = text.indexOf(OPEN, p);
    if (a < 0) break;
    const b = text.indexOf(CLOSE, a + OPEN.length);
    if (b < 0) break; // unclosed: left out
    p = b + CLOSE.length;
    tags.push([a, p]);
    if (inBlock(a)) continue;
    const r = strict(text.slice(a + OPEN.length, b)); // JSON whitespace only around the body
    if (!r.ok || !isObj(r.value)) continue;
    const o = r.value;
    if (Object.keys(o).some((k) => !['id', 'name', 'arguments'].includes(k))) continue;
    if (has(o, 'id') && o.id !== null && typeof o.id !== 'string') continue;
    if (typeof o.name !== 'string' || o.name === '') continue;
    let args = has(o, 'arguments') ? o.arguments : Object.create(null);
    if (!isObj(args)) continue;
    found.push([a, { id: has(o, 'id') && o.id !== '' ? o.id : null, name: o.name, arguments: args }]);
  }
  // the legacy form, on a line of its own
  const LEG = /^[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)\(\{/;
  let skipUntil = -1;
  for (const [off, line] of lines(text)) {
    if (off < skipUntil) continue;
    const m = LEG.exec(line);
    if (!m) continue;
    if (inBlock(off) || tags.some(([x, y]) => off >= x && off < y)) continue;
    const braceAt = off + m[0].length - 1;
    const end = matchingBrace(text, braceAt);
    if (end < 0) continue;
    const after = /^\)[ \t]*(?:\r)?(?:\n|$)/.exec(text.slice(end + 1));
    if (!after) continue;
    const r = strict(text.slice(braceAt, end + 1));
    if (!r.ok || !isObj(r.value)) continue;
    found.push([off, { id: null, name: m[1], arguments: r.value }]);
    skipUntil = end + 1;
  }
  found.sort((x, y) => x[0] - y[0]);
  return found.map((x) => x[1]);
}

// ---------- 3.5 redaction
const SENS = POLICY.keys.isSensitive;
const escJson = (s) => JSON.stringify(s).slice(1, -1);

// Only secrets of eight characters or more are scrubbed from the other views, whether
// found by a detection or replaced whole (observed: a 7-character password under a
// sensitive key stays in the text).
function addSecret(secrets, s, ph) {
  if (secrets && [...s].length >= 8) secrets.push([s, ph]);
}

// One pass of the catalog, recording detections (matched text and placeholder).
function detect(text, secrets) {
  if (text === '') return text;
  if (utf8(text) > POLICY.window.bytes) return redactText(text, POLICY);
  // the standalone-URL step first, as redact_text does
  let cur = redactText(text, { ...POLICY, patterns: [] });
  for (const { name, re } of POLICY.patterns) {
    re.lastIndex = 0;
    cur = cur.replace(re, (m) => {
      const ph = POLICY.placeholder.replace('{name}', name).replace('{len}', String(utf8(m)));
      if (!m.includes('<redacted:')) addSecret(secrets, m, ph);
      return ph;
    });
  }
  return cur;
}

// The pattern of the first detection in a text (the fail-closed placeholder's NAME).
function firstName(text) {
  let best = null;
  for (const { name, re } of POLICY.patterns) {
    re.lastIndex = 0;
    const m = re.exec(text);
    if (m && (best === null || m.index < best[0])) best = [m.index, name];
  }
  return best === null ? '' : best[1];
}

const failClosed = (view, value) => `<redacted:${firstName(view)}:${utf8(value)}>`;

function stringsIn(v) {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(stringsIn);
  if (isObj(v)) return Object.keys(v).flatMap((k) => stringsIn(v[k]));
  return [];
}

// A string value, then as its member reads in JSON text: {"KEY": "VALUE"}, KEY already
// redacted. A detection that reaches across the JSON syntax replaces the whole value
// (docs/runrecord.md 3.5 step 2).
function redactTree(v, secrets, key) {
  if (typeof v === 'string') {
    const own = detect(v, secrets);
    if (key === undefined) return own;
    const view = '{' + JSON.stringify(key) + ': ' + JSON.stringify(own) + '}';
    const r = detect(view, secrets);
    if (r === view) return own;
    try {
      const member = JSON.parse(r);
      if (isObj(member) && typeof member[key] === 'string' && Object.keys(member).length === 1) {
        return member[key];
      }
    } catch (e) { /* fail closed */ }
    return failClosed(view, own);
  }
  if (Array.isArray(v)) return v.map((x) => redactTree(x, secrets));
  if (isObj(v)) {
    const out = Object.create(null);
    for (const k of Object.keys(v)) {
      const rk = detect(k, secrets);
      // A sensitive key's value of any type is replaced whole, and every string it held
      // is a secret (docs/runrecord.md 3.5 step 1; the reference once walked non-strings).
      if (SENS(rk)) {
        for (const s of stringsIn(v[k])) addSecret(secrets, s, POLICY.keys.placeholder);
        out[rk] = POLICY.keys.placeholder;
      } else out[rk] = redactTree(v[k], secrets, rk);
    }
    return out;
  }
  return v;
}

// Each pair as its raw line `key: value`: a detection touching the key replaces the whole
// value; values are decoded after redaction (docs/runrecord.md 3.5 step 2).
function redactLoop(state, pairs, secrets) {
  if (state === null) return null;
  const raw = Object.create(null);
  for (const [k, v] of pairs) raw[k] = v;
  const out = Object.create(null);
  for (const k of Object.keys(state)) {
    const rk = detect(k, secrets);
    let value = raw[k];
    const line = `${k}: ${value}`;
    const r = detect(line, secrets);
    if (r !== line) {
      value = r.startsWith(`${k}:`) ? trim(r.slice(k.length + 1)) : failClosed(line, value);
    }
    if (SENS(rk)) {
      addSecret(secrets, value, POLICY.keys.placeholder);
      out[rk] = POLICY.keys.placeholder;
      continue;
    }
    const redacted = detect(value, secrets);
    out[rk] = redacted === raw[k] ? state[k] : loopValue(redacted);
  }
  return out;
}

function scrub(v, secrets) {
  if (typeof v === 'string') {
    let s = v, changed = false;
    for (const [sec, ph] of secrets) {
      for (const form of [sec, escJson(sec)]) {
        if (form !== '' && s.includes(form)) { s = s.split(form).join(ph); changed = true; }
      }
    }
    return changed ? detect(s) : s;
  }
  if (Array.isArray(v)) return v.map((x) => scrub(x, secrets));
  if (isObj(v)) {
    const out = Object.create(null);
    for (const k of Object.keys(v)) out[scrub(k, secrets)] = scrub(v[k], secrets);
    return out;
  }
  return v;
}

function storable(v) {
  if (typeof v === 'bigint') return false;
  if (Array.isArray(v)) return v.every(storable);
  if (isObj(v)) return Object.keys(v).every((k) => storable(v[k]));
  return true;
}

export function providerCallResponse(resp, executionId) {
  const text = resp.text;
  const native = has(resp, 'tool_calls') ? resp.tool_calls : [];
  const ls = loopState(text);
  const parsed = [];
  for (const c of native) { const n = normalizeNative(c); if (n) parsed.push(n); }
  parsed.push(...textCalls(text, ls.blocks));

  const secrets = [];
  let rText = detect(text, secrets);
  let rCalls = redactTree(native, secrets);
  let rParsed = redactTree(parsed, secrets);
  let rLoop = redactLoop(ls.state, ls.pairs, secrets);
  if (secrets.length) {
    secrets.sort((a, b) => b[0].length - a[0].length);
    rText = scrub(rText, secrets);
    rCalls = scrub(rCalls, secrets);
    rParsed = scrub(rParsed, secrets);
    rLoop = scrub(rLoop, secrets);
  }
  rParsed = rParsed.filter((c) => utf8(c.name) <= 256 && (c.id === null || utf8(c.id) <= 256) && storable(c.arguments));

  const out = {
    call_id: resp.call_id,
    iteration: resp.iteration,
    span_id: has(resp, 'span_id') ? resp.span_id : null,
    execution_id: executionId,
    text: rText,
    tool_calls: rCalls,
  };
  if (rParsed.length > 0 && jsonEqual(rParsed, rCalls)) out.parsed_tool_calls_ref = 'tool_calls';
  else out.parsed_tool_calls = rParsed;
  out.loop_state = rLoop;
  return out;
}
