// Harn's default redaction policy (docs/redaction.md part 1), data from
// schemas/redaction-policy.default.json; patterns translated from Rust regex to JS.
import fs from 'node:fs';
import { Float } from './json.mjs';
import { loadSchema } from '../js_common/schema.mjs';

const WS_CHARS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_RE = new RegExp(`[${WS_CHARS}]`, 'u');
// \b's word characters are Unicode 14.0.0's (docs/redaction.md, "The pattern dialect"),
// read from docs/vectors/unicode-word-14.json: Node's own \p{Alphabetic} follows a newer
// Unicode and would count the letters assigned since.
const WORD_RANGES = JSON.parse(
  fs.readFileSync(new URL('../../../docs/vectors/unicode-word-14.json', import.meta.url), 'utf8'),
).ranges;
const codePoint = (n) => `\\u{${n.toString(16)}}`;
const WORD_CHARS = WORD_RANGES.map(([first, last]) =>
  first === last ? codePoint(first) : `${codePoint(first)}-${codePoint(last)}`).join('');
const WORD = `[${WORD_CHARS}]`;
const WB = `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`;
const NWB = `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`;

// Translate the Rust-regex subset our policy uses into an equivalent JS RegExp.
export function translate(pattern) {
  let flags = 'gu';
  let p = pattern;
  const lead = /^\(\?([is]+)\)/.exec(p);
  if (lead) {
    for (const f of lead[1]) flags += f;
    p = p.slice(lead[0].length);
  }
  if (/\(\?[a-zA-Z-]*[:)]/.test(p.replace(/\(\?:/g, ''))) throw new Error(`unsupported inline flags in ${pattern}`);
  const dotAll = flags.includes('s');
  let out = '';
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const e = p[i + 1];
      i++;
      if (e === 'b' && !inClass) out += WB;
      else if (e === 'B' && !inClass) out += NWB;
      else if (e === 's') out += inClass ? WS_CHARS : `[${WS_CHARS}]`;
      else if (e === 'S') out += `[^${WS_CHARS}]`;
      else if (e === 'd') out += inClass ? '\\p{Nd}' : '\\p{Nd}';
      else if (e === 'w') out += inClass ? WORD_CHARS : WORD;
      else if (e === 'A') out += '^';
      else if (e === 'z') out += '$';
      else out += '\\' + e;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (p[i + 1] === '^') { out += '^'; i++; }
      if (p[i + 1] === ']') { out += '\\]'; i++; }
      continue;
    }
    if (c === '.' && !dotAll) { out += '[^\\n]'; continue; }
    if (c === '(' && p.startsWith('(?P<', i)) { out += '(?<'; i += 3; continue; }
    out += c;
  }
  return new RegExp(out, flags);
}

function compactName(name, ignore) {
  let s = '';
  for (const ch of name) {
    const lower = ch >= 'A' && ch <= 'Z' ? ch.toLowerCase() : ch;
    if (!ignore.includes(lower)) s += lower;
  }
  return s;
}

function nameRule(rule) {
  const ignore = rule.ignore ?? '_-';
  const exact = new Set(rule.exact ?? []);
  const suffixes = rule.suffixes ?? [];
  return (name) => {
    const c = compactName(name, ignore);
    return exact.has(c) || suffixes.some((s) => c.endsWith(s));
  };
}

export function loadPolicy(raw = loadSchema('redaction-policy.default.json')) {
  return {
    placeholder: raw.placeholder,
    window: raw.window,
    urls: raw.urls && raw.urls.enabled !== false ? { placeholder: raw.urls.placeholder, isSensitive: nameRule(raw.urls.params) } : null,
    keys: raw.sensitive_keys ? { placeholder: raw.sensitive_keys.placeholder, isSensitive: nameRule(raw.sensitive_keys) } : null,
    patterns: raw.patterns.filter((x) => x.enabled !== false).map((x) => ({ name: x.name, re: translate(x.pattern) })),
  };
}

const utf8Len = (s) => Buffer.byteLength(s, 'utf8');

function trimWs(s) {
  const chars = [...s];
  let a = 0, b = chars.length;
  while (a < b && WS_RE.test(chars[a])) a++;
  while (b > a && WS_RE.test(chars[b - 1])) b--;
  return chars.slice(a, b).join('');
}

function urlStep(text, policy) {
  if (!policy.urls) return text;
  if (!(text.startsWith('http://') || text.startsWith('https://'))) return text;
  const trimmed = trimWs(text);
  if (WS_RE.test(trimmed)) return text;
  let url;
  try {
    url = new URL(trimmed);
  } catch {
    return text;
  }
  let removed = false;
  if (url.username !== '' || url.password !== '') {
    url.username = '';
    url.password = '';
    removed = true;
  }
  const q = url.search.startsWith('?') ? url.search.slice(1) : '';
  const params = new URLSearchParams(q);
  const pairs = [...params];
  let any = false;
  for (const pair of pairs) {
    if (policy.urls.isSensitive(pair[0])) {
      pair[1] = policy.urls.placeholder;
      any = true;
    }
  }
  if (any) removed = true;
  if (removed && pairs.length > 0) {
    url.search = new URLSearchParams(pairs).toString();
  }
  const out = url.href;
  return out !== trimmed ? out : text;
}

function placeholderFor(policy, name, matched) {
  return policy.placeholder.replace('{name}', name).replace('{len}', String(utf8Len(matched)));
}

function onePass(text, policy) {
  let cur = text;
  for (const { name, re } of policy.patterns) {
    re.lastIndex = 0;
    cur = cur.replace(re, (m) => placeholderFor(policy, name, m));
  }
  return cur;
}

// Windowed scan for texts over the window size (docs/redaction.md step 4).
function windowed(text, policy) {
  const buf = Buffer.from(text, 'utf8');
  const n = buf.length;
  const size = policy.window.bytes;
  const step = size - policy.window.overlap_bytes;
  const isBoundary = (b) => b >= n || (buf[b] & 0xc0) !== 0x80;
  const windows = [];
  for (let k = 0; ; k++) {
    let s = k * step;
    while (s > 0 && !isBoundary(s)) s--;
    let e = Math.min(k * step + size, n);
    while (e < n && !isBoundary(e)) e++;
    windows.push([s, e]);
    if (e >= n) break;
  }
  const kept = [];
  const overlaps = (a, b) => kept.some(([x, y]) => a < y && x < b);
  for (const { name, re } of policy.patterns) {
    for (const [ws, we] of windows) {
      const wtext = buf.subarray(ws, we).toString('utf8');
      re.lastIndex = 0;
      let m;
      while ((m = re.exec(wtext)) !== null) {
        const a = ws + utf8Len(wtext.slice(0, m.index));
        const b = a + utf8Len(m[0]);
        if ((a === ws && ws !== 0) || (b === we && we !== n)) continue;
        if (overlaps(a, b)) continue;
        kept.push([a, b, placeholderFor(policy, name, m[0])]);
      }
    }
  }
  kept.sort((x, y) => x[0] - y[0]);
  const parts = [];
  let pos = 0;
  for (const [a, b, rep] of kept) {
    parts.push(buf.subarray(pos, a).toString('utf8'), rep);
    pos = b;
  }
  parts.push(buf.subarray(pos).toString('utf8'));
  return parts.join('');
}

export function redactText(text, policy) {
  const afterUrl = urlStep(text, policy);
  if (afterUrl === '') return afterUrl;
  if (utf8Len(afterUrl) <= policy.window.bytes) return onePass(afterUrl, policy);
  return windowed(afterUrl, policy);
}

export function redactValue(v, policy, memo) {
  if (typeof v === 'string') return memo ? memo(v) : redactText(v, policy);
  if (Array.isArray(v)) return v.map((x) => redactValue(x, policy, memo));
  if (v !== null && typeof v === 'object' && !(v instanceof Float)) {
    const out = Object.create(null);
    for (const k of Object.keys(v)) {
      if (policy.keys && policy.keys.isSensitive(k)) out[k] = policy.keys.placeholder;
      else out[k] = redactValue(v[k], policy, memo);
    }
    return out;
  }
  return v;
}
