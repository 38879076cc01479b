// The session-recap projection (docs/recap.md sections 1-4).
import { Float, JsonError } from './json.mjs';
import { harnHash, jcsHash } from './canonical.mjs';
import { keyPath, loadSchema } from '../js_common/schema.mjs';
import { Finding, check, validateDocType } from './validate.mjs';
import { redactText, redactValue } from './redact.mjs';

const RECAP = 'session-recap-v1.schema.json';
const EVENT = 'session-event.schema.json';
const QUERY_FIELDS = ['sessionId', 'runId', 'turnId', 'fromEventId', 'limit'];
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Float);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function aliases() {
  return loadSchema(RECAP).$defs.RecapQuery['x-inputAliases'];
}

// Normalises a query in either spelling; throws Finding. Returns {canon, present}.
export function readQuery(raw, base = '$') {
  if (!isObj(raw)) throw new Finding('wrong_type', base, 'the query must be an object');
  const al = aliases();
  const canon = Object.create(null);
  const spelled = {};
  for (const k of Object.keys(raw)) {
    const target = has(al, k) ? al[k] : k;
    if (has(canon, target)) throw new Finding('alias_conflict', `${base}.${k}`, `both spellings of ${target}`);
    canon[target] = raw[k];
    spelled[target] = k;
  }
  const f = validateDocType(RECAP, 'RecapQuery', canon, base);
  if (f) {
    // report the path as the caller spelled it
    for (const [c, s] of Object.entries(spelled)) {
      if (f.path === `${base}.${c}` || f.path.startsWith(`${base}.${c}.`)) f.path = f.path.replace(`${base}.${c}`, `${base}.${s}`);
    }
    throw f;
  }
  return canon;
}

export function queryEcho(canon) {
  const q = {};
  for (const k of QUERY_FIELDS) q[k] = has(canon, k) ? canon[k] : null;
  return q;
}

export function clampLimit(limit) {
  if (limit === null || limit === undefined) return 4096;
  const n = BigInt(limit);
  if (n < 1n) return 1;
  if (n > 32768n) return 32768;
  return Number(n);
}

function newSegment(key) {
  return { iteration: key, started: false, ended: false, sourceEventIds: [], assistantText: [], tools: [], plans: [], progress: [] };
}

// Unicode White_Space, the set Rust's str::trim removes (docs/recap.md 4.1 and 4.3).
const WHITE_SPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);
// Harn's semantic_string: trimmed, and absent when nothing is left (docs/recap.md 4.1).
// A loop, not a regex: `\s+$` backtracks quadratically on long inner runs.
// Every White_Space character is in the BMP, so UTF-16 units can be tested alone.
export const semantic = (s) => {
  if (typeof s !== 'string') return s;
  let a = 0;
  let b = s.length;
  while (a < b && WHITE_SPACE.has(s.charCodeAt(a))) a++;
  while (b > a && WHITE_SPACE.has(s.charCodeAt(b - 1))) b--;
  return a === b ? null : s.slice(a, b);
};
const isBlank = (s) => semantic(s) === null;
// The members read through semantic_string, per kind (docs/recap.md 4.1); every
// other text is read verbatim.
const TRIMMED = {
  message: ['text', 'role', 'visibility'],
  loop_checkpoint: ['checkpoint'],
  tool_call: ['callId', 'toolName'],
  tool_result: ['callId', 'toolName'],
  terminal: ['kind', 'owner', 'finalStatus', 'stopReason', 'reason'],
};
function readPayload(kind, payload) {
  const members = TRIMMED[kind];
  if (!members) return payload;
  const out = { ...payload };
  for (const k of members) out[k] = semantic(payload[k]);
  return out;
}

const nn = (v) => v !== null && v !== undefined;

// The first integer RFC 8785 cannot hold (outside +-(2^53 - 1)), depth first, with its
// JSON path: such an event has no record hash and is refused (docs/journal.md,
// "The stored bytes"; docs/hashing.md section 1 for the path).
function unsafeIntegerPath(v, p) {
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v))) return p;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = unsafeIntegerPath(v[i], `${p}[${i}]`);
      if (r) return r;
    }
  } else if (v !== null && typeof v === 'object' && !(v instanceof Float)) {
    for (const k of Object.keys(v)) {
      const r = unsafeIntegerPath(v[k], keyPath(p, k));
      if (r) return r;
    }
  }
  return null;
}

export function project(rawEvents, rawQuery, policy, conditions = {}) {
  if (!Array.isArray(rawEvents)) throw new Finding('wrong_type', '$.events');
  const canon = readQuery(rawQuery, '$.query');
  const events = [];
  const recordHashes = new Map();
  let prev = null;
  for (let i = 0; i < rawEvents.length; i++) {
    const f = validateDocType(EVENT, 'SessionEvent', rawEvents[i], `$.events[${i}]`);
    if (f) throw f;
    const id = rawEvents[i].id;
    if (prev !== null && !(id > prev)) throw new Finding('events_not_increasing', `$.events[${i}].id`, 'event ids must increase');
    prev = id;
    // Numbers are projected as the event holds them (an integral float stays a float),
    // while the record hash is always of the RFC 8785 form (docs/journal.md, "The stored bytes").
    const ev = rawEvents[i];
    let hash;
    try {
      hash = jcsHash(ev);
    } catch (e) {
      const at = e instanceof JsonError && e.code === 'canonical_unsafe_integer' ? unsafeIntegerPath(ev, `$.events[${i}]`) : null;
      if (at) throw new Finding('canonical_unsafe_integer', at, 'an integer beyond 2^53 - 1 has no RFC 8785 form');
      throw e;
    }
    recordHashes.set(ev, hash);
    events.push(ev);
  }
  const query = queryEcho(canon);
  const unavailable = conditionsAnswer(conditions, false);
  if (unavailable) return unavailable;
  const damagedIds = conditions.damagedEventIds ?? [];
  const damaged = new Set(damagedIds);
  const session = events.filter((e) => e.sessionId === query.sessionId);
  if (session.length === 0) return { state: 'unavailable', reason: 'session_missing' };
  const limit = clampLimit(query.limit);
  // docs/recap.md section 2: the journal reads as Harn's store does, from event 1 when
  // the query names no start, and pending is the session's last id minus the last read.
  const from = query.fromEventId === null ? 1 : query.fromEventId;
  const startIdx = session.findIndex((e) => e.id >= from);
  const read = startIdx < 0 ? [] : session.slice(startIdx, startIdx + limit);
  if (read.some((e) => damaged.has(Number(e.id)))) return { state: 'unavailable', reason: 'projection_failed' };
  const lastEventId = read.length ? read[read.length - 1].id : null;
  const beyond = lastEventId === null ? 0 : session[session.length - 1].id - lastEventId;
  const nextEventId = lastEventId !== null && beyond > 0 ? lastEventId + 1 : null;
  const facts = read.map((e) => ({ id: e.id, runId: e.runId, turnId: e.turnId, kind: e.kind, p: readPayload(e.kind, e.payload), recordHash: recordHashes.get(e), stored: false }));
  return projectRead(facts, query, { lastEventId, nextEventId, pending: beyond }, policy);
}

// Runtime conditions a case may present (docs/protocol.md, recap.project): their values
// checked after the events and the query, then applied in this order: journal,
// admission, then the read. Returns an unavailable envelope or null.
export function conditionsAnswer(conditions, stored) {
  const journal = conditions.journal ?? 'available';
  if (journal !== 'available' && journal !== 'unavailable') throw new Finding('not_allowed_value', '$.journal');
  const admission = conditions.admission ?? 'open';
  if (admission !== 'open' && admission !== 'refused') throw new Finding('not_allowed_value', '$.admission');
  // RecapProjectInput's damagedEventIds: an array of integer literals from 1 to 2^53 - 1.
  const damagedIds = conditions.damagedEventIds ?? [];
  if (!Array.isArray(damagedIds)) throw new Finding('wrong_type', '$.damagedEventIds');
  damagedIds.forEach((id, i) => {
    const at = `$.damagedEventIds[${i}]`;
    if (id instanceof Float) throw new Finding(Number.isInteger(id.value) ? 'integer_literal_required' : 'wrong_type', at);
    if (typeof id === 'bigint') throw new Finding(id < 1n ? 'minimum' : 'unsafe_integer', at);
    if (typeof id !== 'number') throw new Finding('wrong_type', at);
    if (id < 1) throw new Finding('minimum', at);
  });
  // A store read has no damaged rows to present (docs/recap.md section 11).
  if (stored && damagedIds.length) throw new Finding('invalid_case', '$.damagedEventIds', 'damagedEventIds does not apply to storedEvents');
  if (journal === 'unavailable') return { state: 'unavailable', reason: 'journal_unavailable' };
  if (admission === 'refused') return { state: 'unavailable', reason: 'admission_terminal' };
  return null;
}

// One bounded read, already read into facts, to the envelope (docs/recap.md sections 2-4).
// Each fact: {id, runId, turnId, kind (the journal's recap kind), p (its members as
// docs/recap.md 4.3 names them), recordHash, stored}.
export function projectRead(read, query, { lastEventId, nextEventId, pending: beyond }, policy) {
  const memo = new Map();
  const rt = (s) => {
    if (typeof s !== 'string') return s;
    if (!memo.has(s)) memo.set(s, redactText(s, policy));
    return memo.get(s);
  };
  const rv = (v) => redactValue(v, policy, rt);

  let matched = 0;
  let unassigned = 0;
  const turns = [];
  const turnIndex = new Map();
  const RECAP_KINDS = new Set(['message', 'loop_checkpoint', 'tool_call', 'tool_result', 'plan', 'progress', 'terminal']);

  for (const e of read) {
    if (!RECAP_KINDS.has(e.kind)) continue;
    if (e.runId === null || e.turnId === null) { unassigned++; continue; }
    if (query.runId !== null && e.runId !== query.runId) continue;
    if (query.turnId !== null && e.turnId !== query.turnId) continue;
    const key = JSON.stringify([e.runId, e.turnId]);
    let turn = turnIndex.get(key);
    if (!turn) {
      turn = { runId: e.runId, turnId: e.turnId, prompts: [], segments: [], current: null, terminal: null, sourceEventIds: [] };
      turnIndex.set(key, turn);
      turns.push(turn);
    }
    turn.sourceEventIds.push(e.id);
    const seg = (k) => {
      let s = turn.segments.find((x) => x.iteration === k);
      if (!s) { s = newSegment(k); turn.segments.push(s); }
      return s;
    };
    const currentSegment = () => {
      if (turn.current !== null) return seg(turn.current);
      unassigned++;
      return seg(null);
    };
    const mark = (s) => { s.sourceEventIds.push(e.id); matched++; };
    const findExchange = (callId) => {
      for (const s of turn.segments) {
        const x = s.tools.find((t) => t.toolCallId === callId);
        if (x) return { s, x };
      }
      return null;
    };
    const merge = (obs, s) => {
      const found = findExchange(obs.toolCallId);
      if (!found) {
        for (const k of ['toolName', 'input', 'output', 'verification']) if (obs[k] === undefined) obs[k] = null;
        s.tools.push(obs);
        return s;
      }
      const x = found.x;
      // A journal member is had when not null; a stored one when its pointer exists at all
      // (a JSON null included), so undefined is "absent" there (docs/recap.md section 11).
      for (const k of ['toolName', 'input', 'output', 'verification']) if (e.stored ? obs[k] !== undefined : nn(obs[k])) x[k] = obs[k];
      if (obs.callObserved) x.callObserved = true;
      if (obs.resultObserved) { x.resultObserved = true; x.state = obs.state; }
      x.sourceEventIds.push(e.id);
      return found.s;
    };
    const p = e.p;
    switch (e.kind) {
      case 'loop_checkpoint': {
        if (p.iteration === null) { unassigned++; break; }
        const s = seg(p.iteration);
        s.sourceEventIds.push(e.id);
        if (p.checkpoint === 'iteration_start') { s.started = true; turn.current = p.iteration; matched++; }
        else if (p.checkpoint === 'iteration_end') { s.ended = true; if (turn.current === p.iteration) turn.current = null; matched++; }
        else unassigned++;
        break;
      }
      case 'message': {
        if (p.text === null) break;
        if (p.role === 'user' && (p.visibility === null || p.visibility === 'public')) {
          turn.prompts.push({ text: rt(p.text), sourceEventId: e.id });
          matched++;
        } else if (p.role === 'assistant' && p.visibility === 'public') {
          const s = currentSegment();
          s.assistantText.push({ text: rt(p.text), sourceEventId: e.id });
          mark(s);
        }
        break;
      }
      case 'tool_call': {
        const s = currentSegment();
        if (p.callId === null) { unassigned++; break; }
        merge({ toolCallId: p.callId, toolName: p.toolName, state: 'open', callObserved: true, resultObserved: false, input: p.input === undefined ? undefined : rv(p.input), output: e.stored ? undefined : null, verification: e.stored ? undefined : null, sourceEventIds: [e.id] }, s);
        mark(s);
        break;
      }
      case 'tool_result': {
        if (p.callId === null) { unassigned++; break; }
        const found = findExchange(p.callId);
        const s = found ? found.s : currentSegment();
        const v = p.verification;
        const shown = v && v.schema === 'harn.agent_tool_postcondition.v1' && v.status === 'passed'
          ? { schema: v.schema, status: 'passed', verifiedPaths: v.verifiedPaths.map(rt), sourceEventId: e.id } : null;
        // A stored verification that is not shown is absent: it keeps an earlier one.
        const verification = e.stored && shown === null ? undefined : shown;
        merge({ toolCallId: p.callId, toolName: p.toolName, state: p.isError ? 'failed' : 'completed', callObserved: false, resultObserved: true, input: e.stored ? undefined : null, output: p.output === undefined ? undefined : rv(p.output), verification, sourceEventIds: [e.id] }, s);
        mark(s);
        break;
      }
      case 'plan': {
        // A stored plan document that does not read takes no segment (docs/recap.md section 11).
        if (p === null) { unassigned++; break; }
        const s = currentSegment();
        s.plans.push({
          documentId: p.documentId, revisionId: p.revisionId, title: rt(p.title), summary: rt(p.summary),
          steps: p.steps.map((st) => ({ id: st.id, content: rt(st.content), status: st.status })),
          event: p.event === null ? null : { kind: p.event.kind, eventId: p.event.eventId, inputRevisionId: p.event.kind === 'created' ? null : p.event.inputRevisionId },
          sourceEventId: e.id,
        });
        mark(s);
        break;
      }
      case 'progress': {
        const bad = p.refused || p.entries.some((en) => isBlank(en.content) || !['pending', 'in_progress', 'completed'].includes(en.status) || !(en.priority === null || ['high', 'medium', 'low'].includes(en.priority)));
        if (bad || (p.message === null && p.entries.length === 0)) { unassigned++; break; }
        const s = currentSegment();
        s.progress.push({ message: rt(p.message), entries: p.entries.map((en) => ({ content: rt(en.content), status: en.status, priority: en.priority })), replace: p.replace === null ? true : p.replace, sourceEventId: e.id });
        mark(s);
        break;
      }
      case 'terminal': {
        turn.terminal = {
          state: nn(p.kind) && nn(p.owner) ? 'complete' : 'incomplete',
          finalStatus: rt(p.finalStatus), stopReason: rt(p.stopReason), kind: rt(p.kind), owner: rt(p.owner), reason: rt(p.reason),
          sourceEventId: e.id,
        };
        matched++;
        break;
      }
      default:
        break;
    }
  }

  const outTurns = turns.map((t) => {
    let anyIncomplete = false;
    const iterations = t.segments.map((s) => {
      const state = s.iteration === null ? 'unassigned' : s.started && s.ended ? 'complete' : 'incomplete';
      if (state !== 'complete') anyIncomplete = true;
      for (const x of s.tools) {
        if (!x.callObserved || !x.resultObserved) { x.state = 'incomplete'; anyIncomplete = true; }
      }
      return { iteration: s.iteration, state, sourceEventIds: s.sourceEventIds, assistantText: s.assistantText, tools: s.tools, plans: s.plans, progress: s.progress };
    });
    let state;
    if ((t.terminal && t.terminal.state === 'incomplete') || anyIncomplete) state = 'incomplete';
    else if (t.terminal) state = 'complete';
    else if (iterations.length === 0) state = 'open';
    else state = 'incomplete';
    return { runId: t.runId, turnId: t.turnId, state, prompts: t.prompts, iterations, terminal: t.terminal, sourceEventIds: t.sourceEventIds };
  });

  const source = {
    firstEventId: read.length ? read[0].id : null,
    lastEventId,
    events: read.map((e) => ({ eventId: e.id, recordHash: e.recordHash })),
  };
  const cursor = { lastEventId, nextEventId };
  const coverage = { scanned: read.length, matched, pending: beyond, unassigned, truncated: nextEventId !== null };
  const contentHash = harnHash(source);
  const projectionHash = harnHash({ schema_version: 1, session_id: query.sessionId, query, cursor, coverage, content_hash: contentHash, turns: outTurns });
  const snapshot = { schemaVersion: 1, sessionId: query.sessionId, query, cursor, coverage, source, contentHash, projectionHash, turns: outTurns, extensions: {} };
  const envelope = { state: 'available', snapshot };
  const f = validateDocType(RECAP, 'RecapEnvelope', envelope, '$');
  if (f) return { state: 'unavailable', reason: 'projection_failed' };
  return envelope;
}

export { check };
