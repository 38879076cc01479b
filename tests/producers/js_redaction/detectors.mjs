// A detector policy (docs/redaction.md part 3, "The algorithm, step by step"):
// markers, pieces, regex and key_entropy hits, placeholders, re-reading, the
// escape and chain views, merge, replace. The extended policy is read at run
// time from schemas/redaction-policy.extended.json.
//
// Positions are UTF-16 indices internally; every rule that counts characters
// (min_length, the 128-character value rule, entropy) counts code points. The
// views only ever remove ASCII characters, so a surrogate pair is never split.
import { Float } from '../js/json.mjs';
import { loadSchema } from '../js_common/schema.mjs';
import { translate } from '../js/redact.mjs';

// Unicode White_Space (docs/redaction.md, "The pattern dialect").
const WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_ONE = new RegExp(`^[${WS}]$`, 'u');
const isWs = (ch) => WS_ONE.test(ch);

const escRe = (s) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, (c) => '\\' + c);

// A dialect pattern with its leading flag group kept in front of an anchored body.
// translate() answers a global RegExp; these set their own flags (no 'g' for test()).
function withFlags(pattern, flags) {
  const re = translate(pattern);
  return new RegExp(re.source, [...new Set(re.flags.replace('g', '') + flags)].sort().join(''));
}
function anchored(pattern) {
  const lead = /^\(\?[is]+\)/.exec(pattern);
  const flags = lead ? lead[0] : '';
  return withFlags(`${flags}^(?:${pattern.slice(flags.length)})$`, '');
}
const caseless = (p) => (/^\(\?s?is?\)/.test(p) ? p : p.startsWith('(?s)') ? '(?is)' + p.slice(4) : '(?i)' + p);

export function loadDetectorPolicy(raw = loadSchema('redaction-policy.extended.json')) {
  const marker = raw.marker ?? '[REDACTED:<kind>]';
  const ids = raw.detectors.map((d) => d.id);
  const markerFor = (kind) => marker.replace('<kind>', kind);
  // Longer marker first, so that at one position the longer kind wins.
  const markers = ids.map(markerFor).sort((a, b) => b.length - a.length);
  const detectors = [];
  raw.detectors.forEach((d, order) => {
    if (d.enabled === false) return;
    if (d.type === 'regex') {
      const p = d.ignore_case ? caseless(d.pattern) : d.pattern;
      const groups = Array.isArray(d.group) ? d.group : [d.group ?? 0];
      detectors.push({ id: d.id, order, type: 'regex', re: withFlags(p, 'gd'), groups });
    } else if (d.type === 'key_entropy') {
      detectors.push({
        id: d.id,
        order,
        type: 'key_entropy',
        keyRe: withFlags(caseless(d.key_pattern), ''),
        minLength: num(d.min_length ?? 16),
        charsets: d.charsets,
      });
    } else throw new Error(`unknown detector type ${d.type}`);
  });
  return {
    markerFor,
    markerRe: markers.length ? new RegExp(markers.map(escRe).join('|'), 'gu') : null,
    placeholders: (raw.placeholders ?? []).map(anchored),
    detectors,
  };
}

// ---- secrets: charsets and Shannon entropy ---------------------------------

const CHARSETS = {
  hex: /^[0-9a-fA-F]*$/u,
  base64: /^[A-Za-z0-9+/=\-_]*$/u,
  printable: /^[\u0021-\u007e]*$/u,
  any: /^[\s\S]*$/u,
};

function entropy(chars) {
  const counts = new Map();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  const L = chars.length;
  let h = 0;
  for (const n of counts.values()) {
    const p = n / L;
    h -= p * Math.log2(p);
  }
  return h;
}

// The policy file is read with the exact reader: 3.0 is a Float wrapper.
const num = (x) => (x instanceof Float ? x.value : Number(x));

function isSecret(value, det) {
  const chars = [...value];
  if (chars.length < det.minLength) return false;
  for (const { charset, min_entropy: min } of det.charsets) {
    if (CHARSETS[charset].test(value)) return entropy(chars) >= num(min);
  }
  return false;
}

// ---- the text rule: key: value / key=value ----------------------------------

const KEYCH = /[A-Za-z0-9_.\-]/;
const KEYFIRST = /[A-Za-z_]/;
const UNQUOTED_STOP = new Set(['"', "'", '\\', ',', ';', '&', '<', '>', '(', ')', '{', '}', '[', ']', '`']);

// Tries a pair whose key starts at i; returns {keyStart, keyEnd, valStart, valEnd, quoted} or null.
function pairAt(P, i) {
  if (i > 0 && KEYCH.test(P[i - 1])) return null;
  if (!KEYFIRST.test(P[i] ?? '')) return null;
  let j = i;
  while (j < P.length && KEYCH.test(P[j])) j++;
  if (j - i > 64) return null;
  const keyEnd = j;
  if (P[j] === '\\') j++;
  if (P[j] === '"' || P[j] === "'") j++;
  while (P[j] === ' ' || P[j] === '\t') j++;
  if (P.startsWith(':=', j) || P.startsWith('=>', j)) j += 2;
  else if (P[j] === ':' && P[j + 1] !== ':') j += 1;
  else if (P[j] === '=' && P[j + 1] !== '=') j += 1;
  else return null;
  while (P[j] === ' ' || P[j] === '\t') j++;
  // A quoted value.
  let q = j;
  if (P[q] === '\\') q++;
  if (P[q] === '"' || P[q] === "'") {
    const vs = q + 1;
    let k = vs;
    for (;;) {
      const c = P[k];
      if (c === undefined || c === '"' || c === "'" || c === '\r' || c === '\n') break;
      if (c === '\\' && (P[k + 1] === '"' || P[k + 1] === "'")) break;
      k++;
    }
    if (k > vs) return { keyStart: i, keyEnd, valStart: vs, valEnd: k, quoted: true };
  }
  // An unquoted value.
  let k = j;
  while (k < P.length) {
    const cp = String.fromCodePoint(P.codePointAt(k));
    if (isWs(cp) || UNQUOTED_STOP.has(cp)) break;
    k += cp.length;
  }
  if (k > j) return { keyStart: i, keyEnd, valStart: j, valEnd: k, quoted: false };
  return null;
}

function* pairs(P) {
  let pos = 0;
  while (pos < P.length) {
    let found = null;
    for (let i = pos; i < P.length; i++) {
      found = pairAt(P, i);
      if (found) break;
    }
    if (!found) return;
    yield found;
    const v = P.slice(found.valStart, found.valEnd);
    if (found.quoted || ([...v].length <= 128 && /[:=]/.test(v))) pos = found.valStart;
    else pos = found.valEnd;
  }
}

// ---- detections -------------------------------------------------------------

// Sort by start, then longer first, then detector order; overlapping ones extend the first.
function merge(hits) {
  hits.sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start) || a.order - b.order);
  const out = [];
  for (const h of hits) {
    const last = out[out.length - 1];
    if (last && h.start < last.end) last.end = Math.max(last.end, h.end);
    else out.push({ ...h });
  }
  return out;
}

function hitsOf(P, key, policy) {
  const hits = [];
  for (const det of policy.detectors) {
    if (det.type === 'regex') {
      const re = det.re;
      re.lastIndex = 0;
      let m;
      while ((m = re.exec(P)) !== null) {
        for (const g of det.groups) {
          const span = m.indices[g];
          if (span) {
            if (span[1] > span[0]) hits.push({ start: span[0], end: span[1], kind: det.id, order: det.order });
            break;
          }
        }
        if (m[0] === '') re.lastIndex++;
      }
    } else {
      for (const pr of pairs(P)) {
        if (det.keyRe.test(P.slice(pr.keyStart, pr.keyEnd)) && isSecret(P.slice(pr.valStart, pr.valEnd), det)) {
          hits.push({ start: pr.valStart, end: pr.valEnd, kind: det.id, order: det.order });
        }
      }
      if (key != null && det.keyRe.test(key) && isSecret(P, det)) hits.push({ start: 0, end: P.length, kind: det.id, order: det.order });
    }
  }
  return hits.filter((h) => !policy.placeholders.some((re) => re.test(P.slice(h.start, h.end))));
}

// The stretches of T between its markers.
function piecesOf(T, policy) {
  const out = [];
  let pos = 0;
  if (policy.markerRe) {
    policy.markerRe.lastIndex = 0;
    let m;
    while ((m = policy.markerRe.exec(T)) !== null) {
      if (m.index > pos) out.push([pos, m.index]);
      pos = m.index + m[0].length;
    }
  }
  if (T.length > pos) out.push([pos, T.length]);
  return out;
}

// D(T, key): markers, pieces, hits, re-reading until a pass finds nothing.
function detect(T, key, policy) {
  const all = [];
  let queue = piecesOf(T, policy);
  while (queue.length) {
    const next = [];
    for (const [a, b] of queue) {
      const P = T.slice(a, b);
      const dets = merge(hitsOf(P, key, policy));
      if (!dets.length) continue;
      let pos = 0;
      for (const d of dets) {
        all.push({ start: a + d.start, end: a + d.end, kind: d.kind, order: d.order });
        if (d.start > pos) next.push([a + pos, a + d.start]);
        pos = d.end;
      }
      if (P.length > pos) next.push([a + pos, b]);
    }
    queue = next;
  }
  return all.sort((x, y) => x.start - y.start);
}

// ---- views ------------------------------------------------------------------

// Indices (UTF-16) of the characters the escape view leaves out.
function escapeRuns(T) {
  const out = [];
  const re = /\\{2,}(?=["'])/g;
  let m;
  while ((m = re.exec(T)) !== null) for (let i = m.index; i < m.index + m[0].length - 1; i++) out.push(i);
  return out;
}

const LINK = new RegExp(`[:=][ \\t]+([A-Za-z_][A-Za-z0-9_.\\-]{0,63}[ \\t]*(?::(?![:/])|=(?![=>]))[ \\t]*)(?=[^${WS}])`, 'gdu');

function chainLinks(T) {
  const out = [];
  LINK.lastIndex = 0;
  let m;
  while ((m = LINK.exec(T)) !== null) {
    const [s, e] = m.indices[1];
    for (let i = s; i < e; i++) out.push(i);
    LINK.lastIndex = s;
  }
  return out;
}

function view(T, leaveOut) {
  const drop = new Set(leaveOut);
  let text = '';
  const map = [];
  for (let i = 0; i < T.length; i++) {
    if (drop.has(i)) continue;
    text += T[i];
    map.push(i);
  }
  return { text, map };
}

export function detections(T, key, policy) {
  const all = detect(T, key, policy);
  const esc = escapeRuns(T);
  const links = chainLinks(T);
  const views = [];
  if (esc.length) views.push(view(T, esc));
  if (links.length) views.push(view(T, esc.concat(links)));
  for (const { text, map } of views) {
    for (const d of detect(text, key, policy)) all.push({ start: map[d.start], end: map[d.end - 1] + 1, kind: d.kind, order: d.order });
  }
  return merge(all);
}

export function redactText(T, policy, key = null) {
  const dets = detections(T, key, policy);
  let out = '';
  let pos = 0;
  for (const d of dets) {
    out += T.slice(pos, d.start) + policy.markerFor(d.kind);
    pos = d.end;
  }
  return out + T.slice(pos);
}

export function redactValue(v, policy, key = null) {
  if (typeof v === 'string') return redactText(v, policy, key);
  if (Array.isArray(v)) return v.map((x) => redactValue(x, policy, null));
  if (v !== null && typeof v === 'object' && !(v instanceof Float)) {
    const out = Object.create(null);
    for (const k of Object.keys(v)) out[k] = redactValue(v[k], policy, k);
    return out;
  }
  return v;
}
