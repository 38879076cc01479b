// Harn's stored events (session-event.stored) read as Harn's recap reads its store:
// docs/recap.md section 11 (the bounded read, the recap kinds, the JSON pointers,
// absent versus null) and docs/journal.md "As Harn stores it" (the shapes).
import { Float } from './json.mjs';
import { Finding, validateDocType } from './validate.mjs';
import { clampLimit, conditionsAnswer, projectRead, queryEcho, readQuery, semantic } from './recap.mjs';

const EVENT = 'session-event.schema.json';
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Float);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const big = (n) => BigInt(n);
// Ids leave as the protocol's integers: a Number when safe, else a BigInt.
const num = (b) => (b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b);

// RFC 6901 into a value: {found, value}.
function at(root, ptr) {
  let cur = root;
  for (const raw of ptr.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(k) || Number(k) >= cur.length) return { found: false };
      cur = cur[Number(k)];
    } else if (isObj(cur) && has(cur, k)) cur = cur[k];
    else return { found: false };
  }
  return { found: true, value: cur };
}
// "String": the first pointer holding a string that is not blank once trimmed, trimmed.
function str(payload, ...ptrs) {
  for (const p of ptrs) {
    const r = at(payload, p);
    if (r.found && typeof r.value === 'string') {
      const t = semantic(r.value); // docs/recap.md 4.1: trimmed, blank as absent
      if (t !== null) return t;
    }
  }
  return null;
}
// "Value": the first pointer that exists at all (a JSON null included); undefined is absent.
function val(payload, ...ptrs) {
  for (const p of ptrs) {
    const r = at(payload, p);
    if (r.found) return r.value;
  }
  return undefined;
}
const get = (payload, ptr) => at(payload, ptr).value;

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
// The checkpoint iteration: an i64 as it is; another number truncated toward zero and
// held to the i64 range (Rust's saturating cast); anything else absent.
function iteration(v) {
  let b;
  if (typeof v === 'number' || typeof v === 'bigint') b = big(v);
  else if (v instanceof Float) {
    const x = v.value;
    if (Number.isNaN(x)) return null;
    b = Number.isFinite(x) ? big(Math.trunc(x)) : x > 0 ? I64_MAX : I64_MIN;
  } else return null;
  if (b < I64_MIN) b = I64_MIN;
  if (b > I64_MAX) b = I64_MAX;
  const n = num(b);
  return typeof n === 'number' ? n + 0 : n; // + 0 turns -0 into 0
}

const PLAN_STATUSES = ['pending', 'in_progress', 'completed', 'blocked', 'cancelled'];
// The members of a plan document the recap reads, or null when one lacks its type.
function readPlanDocument(d) {
  if (!isObj(d)) return null;
  const plan = get(d, '/current_revision/plan');
  const [documentId, revisionId, title, summary, steps] = [get(d, '/document_id'), get(d, '/current_revision/revision_id'), get(plan, '/title'), get(plan, '/summary'), get(plan, '/steps')];
  if (![documentId, revisionId, title, summary].every((x) => typeof x === 'string') || !Array.isArray(steps)) return null;
  const out = [];
  for (const st of steps) {
    if (!isObj(st) || typeof st.id !== 'string' || typeof st.content !== 'string' || !PLAN_STATUSES.includes(st.status)) return null;
    out.push({ id: st.id, content: st.content, status: st.status });
  }
  return { documentId, revisionId, title, summary, steps: out };
}
const samePlan = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function readPlan(payload) {
  const doc = readPlanDocument(get(payload, '/transcript_event/metadata/plan_document'));
  if (doc === null) return null;
  const evAt = at(payload, '/transcript_event/metadata/plan_document_event');
  let event = null;
  if (evAt.found) {
    const pe = evAt.value;
    if (!isObj(pe) || !['created', 'updated'].includes(pe.kind) || typeof pe.event_id !== 'string') return null;
    if (pe.kind === 'updated' && typeof pe.input_revision_id !== 'string') return null;
    const again = readPlanDocument(pe.document);
    if (again === null || !samePlan(again, doc)) return null;
    event = { kind: pe.kind, eventId: pe.event_id, inputRevisionId: pe.kind === 'created' ? null : pe.input_revision_id };
  }
  return { ...doc, event };
}

function readProgress(payload) {
  const m = get(payload, '/transcript_event/metadata');
  const meta = isObj(m) ? m : {};
  const message = typeof meta.message === 'string' ? meta.message : null;
  const raw = Array.isArray(meta.entries) ? meta.entries : [];
  let refused = false;
  const entries = raw.map((en) => {
    // An entry the runtime's reader cannot hold refuses the report, like a blank one.
    if (!isObj(en) || typeof en.content !== 'string' || typeof en.status !== 'string') { refused = true; return null; }
    const priority = has(en, 'priority') ? en.priority : null;
    if (priority !== null && typeof priority !== 'string') { refused = true; return null; }
    return { content: en.content, status: en.status, priority };
  });
  return { message, entries: refused ? [] : entries, replace: typeof meta.replace === 'boolean' ? meta.replace : null, refused };
}

function readVerification(payload) {
  const v = get(payload, '/raw_message/_harn/data/verification');
  if (!isObj(v) || typeof v.schema !== 'string' || typeof v.status !== 'string') return null;
  if (!Array.isArray(v.verified_paths) || !v.verified_paths.every((x) => typeof x === 'string')) return null;
  return { schema: v.schema, status: v.status, verifiedPaths: v.verified_paths };
}

function callId(ev) {
  if (typeof ev.headers.tool_call_id === 'string') return ev.headers.tool_call_id;
  const m = str(ev.payload, '/transcript_event/metadata/tool_call_id');
  if (m !== null) return m;
  const raw = get(ev.payload, '/raw_message/_harn/tool_call_id');
  return typeof raw === 'string' ? raw : null;
}

const TOOL_NAME = ['/transcript_event/metadata/tool_name', '/raw_message/name', '/raw_message/tool_calls/0/name'];
const TOOL_INPUT = ['/transcript_event/metadata/input', '/raw_message/input', '/raw_message/tool_calls/0/arguments', '/transcript_event/metadata/raw_input'];
const TOOL_OUTPUT = ['/transcript_event/metadata/output', '/raw_message/content', '/transcript_event/text'];

// The stored kind as the journal's recap kind, or null for a kind only listed in source.
function recapKind(kind) {
  if (kind.kind !== 'custom') return ['message', 'tool_call', 'tool_result', 'plan'].includes(kind.kind) ? kind.kind : null;
  return { loop_checkpoint: 'loop_checkpoint', progress_reported: 'progress', agent_run_terminal: 'terminal' }[kind.type] ?? null;
}

function readFacts(kind, ev) {
  const pl = ev.payload;
  const name = () => { const n = str(pl, ...TOOL_NAME); return n === null ? undefined : n; };
  switch (kind) {
    case 'message':
      return { role: str(pl, '/transcript_event/role', '/raw_message/role'), visibility: str(pl, '/transcript_event/visibility'), text: str(pl, '/transcript_event/text', '/raw_message/content') };
    case 'loop_checkpoint':
      return { checkpoint: str(pl, '/transcript_event/metadata/kind'), iteration: iteration(get(pl, '/transcript_event/metadata/iteration')) };
    case 'tool_call':
      return { callId: callId(ev), toolName: name(), input: val(pl, ...TOOL_INPUT) };
    case 'tool_result':
      return {
        callId: callId(ev), toolName: name(), output: val(pl, ...TOOL_OUTPUT), verification: readVerification(pl),
        isError: get(pl, '/transcript_event/metadata/is_error') === true || get(pl, '/raw_message/is_error') === true,
      };
    case 'plan':
      return readPlan(pl);
    case 'progress':
      return readProgress(pl);
    case 'terminal': {
      const t = '/transcript_event/metadata';
      return { finalStatus: str(pl, `${t}/final_status`), stopReason: str(pl, `${t}/stop_reason`), kind: str(pl, `${t}/terminal/kind`), owner: str(pl, `${t}/terminal/owner`), reason: str(pl, `${t}/terminal/reason`) };
    }
    default:
      return null;
  }
}

export class Findings extends Error {
  constructor(list) {
    super(list[0].message);
    this.findings = list;
  }
}

export function projectStored(raw, rawQuery, policy, conditions = {}) {
  const findings = [];
  let canon = null;
  try {
    canon = readQuery(rawQuery, '$.query');
  } catch (f) {
    if (!(f instanceof Finding)) throw f;
    findings.push(f);
  }
  if (!Array.isArray(raw)) findings.push(new Finding('wrong_type', '$.storedEvents', 'storedEvents must be an array'));
  const events = Array.isArray(raw) ? raw : [];
  const lastOf = new Map();
  events.forEach((ev, i) => {
    const f = validateDocType(EVENT, 'StoredEvent', ev, `$.storedEvents[${i}]`);
    if (f) { findings.push(f); return; }
    // Ids increase within a session; sessions number their events each from 1.
    const id = big(ev.event_id);
    const prev = lastOf.get(ev.session_id);
    // Each against the previous valid event of its session, as the reference judges it.
    if (prev !== undefined && id <= prev) findings.push(new Finding('events_not_increasing', `$.storedEvents[${i}].event_id`, 'event ids must increase within a session'));
    lastOf.set(ev.session_id, id);
  });
  if (findings.length) throw new Findings(findings);

  const query = queryEcho(canon);
  const unavailable = conditionsAnswer(conditions, true);
  if (unavailable) return unavailable;
  const session = events.filter((e) => e.session_id === query.sessionId);
  if (session.length === 0) return { state: 'unavailable', reason: 'session_missing' };
  const from = query.fromEventId === null ? 1n : big(query.fromEventId);
  const read = session.filter((e) => big(e.event_id) >= from).slice(0, clampLimit(query.limit));
  const last = read.length ? big(read[read.length - 1].event_id) : null;
  const tail = big(session[session.length - 1].event_id);
  const pending = last === null ? 0n : tail - last > 0n ? tail - last : 0n;
  const facts = read.map((e) => {
    const kind = recapKind(e.kind);
    return {
      id: e.event_id,
      runId: typeof e.headers.run_id === 'string' ? e.headers.run_id : null,
      turnId: typeof e.headers.turn_id === 'string' ? e.headers.turn_id : null,
      kind: kind ?? 'other',
      p: kind ? readFacts(kind, e) : null,
      recordHash: e.record_hash.startsWith('redacted:') ? e.record_hash.slice('redacted:'.length) : e.record_hash,
      stored: true,
    };
  });
  return projectRead(facts, query, {
    lastEventId: last === null ? null : num(last),
    nextEventId: pending > 0n ? num(last + 1n) : null,
    pending: num(pending),
  }, policy);
}
