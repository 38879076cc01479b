// runrecord.project: the run record of a run spec and the session's events
// (docs/runrecord.md sections 1, 2 and 5.1).
import { Rejected } from '../js_common/protocol.mjs';
import { has, isNum, isObj, keyPath, loadSchema } from '../js_common/schema.mjs';
import { check, firstUnsafe, spanTree, validateDef } from './schema.mjs';

const RR = 'run-record.schema.json';
const EV = 'session-event.schema.json';
const HARN_ID = /^hxe-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DEFAULT_REASON = {
  session: 'session-only projection: no VM execution owner is recorded for this session',
  workflow: 'the VM execution that owned this record was not recorded',
};
const INVALID_GAP = { component: 'execution_identity', code: 'projection_invalid', message: 'The persisted run contained invalid Harn execution evidence.' };

// Every finding of a refused case, each (code, path) once (docs/protocol.md, "The answer").
export class Reject extends Rejected {
  constructor(findings) {
    super(findings, { dedupe: true });
  }
}

const RUN_MEMBERS = ['kind', 'status', 'session_id', 'execution_id', 'id', 'spans', 'flight_recording', 'gaps', 'execution_gap_reason'];

function runShape(run, out) {
  for (const k of Object.keys(run)) if (!RUN_MEMBERS.includes(k)) out.push({ code: 'unknown_field', path: keyPath('$.run', k) });
  for (const k of ['kind', 'status', 'id', 'execution_gap_reason']) if (has(run, k) && typeof run[k] !== 'string') out.push({ code: 'wrong_type', path: `$.run.${k}` });
  for (const k of ['session_id', 'execution_id']) if (has(run, k) && run[k] !== null && typeof run[k] !== 'string') out.push({ code: 'wrong_type', path: `$.run.${k}` });
  if (has(run, 'spans') && !Array.isArray(run.spans)) out.push({ code: 'wrong_type', path: '$.run.spans' });
  if (has(run, 'flight_recording') && !isObj(run.flight_recording)) out.push({ code: 'wrong_type', path: '$.run.flight_recording' });
  if (has(run, 'gaps')) {
    if (!Array.isArray(run.gaps)) out.push({ code: 'wrong_type', path: '$.run.gaps' });
    else run.gaps.forEach((g, i) => {
      const p = `$.run.gaps[${i}]`;
      if (!isObj(g)) { out.push({ code: 'wrong_type', path: p }); return; }
      for (const k of Object.keys(g)) if (!['component', 'code', 'message'].includes(k)) out.push({ code: 'unknown_field', path: keyPath(p, k) });
      for (const k of ['component', 'code', 'message']) {
        if (!has(g, k)) out.push({ code: 'required', path: `${p}.${k}` });
        else if (typeof g[k] !== 'string') out.push({ code: 'wrong_type', path: `${p}.${k}` });
      }
    });
  }
}

// A record path mapped back to the run member it comes from (docs/runrecord.md 5.1).
function mapPath(p, run) {
  const kind = run.kind;
  const ev = '$.evidence';
  if (p.startsWith(`${ev}.trace_spans`)) return '$.run.spans' + p.slice(`${ev}.trace_spans`.length);
  for (const k of ['execution_id', 'gaps', 'flight_recording']) {
    const pre = `${ev}.${k}`;
    if (p === pre || p.startsWith(pre + '.') || p.startsWith(pre + '[')) return '$.run.' + k + p.slice(pre.length);
  }
  // the record id names $.run.id only when the run gives it (observed from the reference)
  if (p === '$.id') return kind === 'run' || !has(run, 'id') ? '$.run' : '$.run.id';
  for (const k of ['kind', 'status', 'session_id']) if (p === `$.${k}`) return `$.run.${k}`;
  return '$.run';
}

export function project(input) {
  const out = [];
  for (const k of Object.keys(input)) if (k !== 'run' && k !== 'events') out.push({ code: 'unknown_field', path: keyPath('$', k) });
  let run = null;
  if (!has(input, 'run')) out.push({ code: 'required', path: '$.run' });
  else if (!isObj(input.run)) out.push({ code: 'wrong_type', path: '$.run' });
  else { run = input.run; runShape(run, out); }
  let events = [];
  if (has(input, 'events')) {
    if (!Array.isArray(input.events)) out.push({ code: 'wrong_type', path: '$.events' });
    else {
      events = input.events.map((e, i) => {
        const f = [];
        const d = validateDef(EV, 'SessionEvent', e, `$.events[${i}]`, f);
        out.push(...f);
        // an event's record hash is of its RFC 8785 form: the first unsafe integer refuses it
        const u = f.length === 0 ? firstUnsafe(e, `$.events[${i}]`) : null;
        if (u) out.push({ code: 'canonical_unsafe_integer', path: u });
        return d;
      });
      let prev = null;
      events.forEach((e, i) => {
        if (!isObj(e) || !isNum(e.id) || typeof e.id === 'bigint') return;
        const id = Number(e.id.valueOf?.() ?? e.id);
        if (prev !== null && !(id > prev)) out.push({ code: 'events_not_increasing', path: `$.events[${i}].id` });
        prev = id;
      });
    }
  }
  if (out.length) throw new Reject(out);

  // Contradictions (1.1, 1.3, 1.2): invalid_run at $.run.
  const invalid = () => new Reject([{ code: 'invalid_run', path: '$.run' }]);
  if (!has(run, 'kind') || !has(run, 'status')) throw invalid();
  // a kind outside the three is a contradictory spec too (observed from the reference)
  if (!['run', 'workflow', 'session'].includes(run.kind)) throw invalid();
  const kind = run.kind;
  const sessionId = has(run, 'session_id') ? run.session_id : null;
  const execId = has(run, 'execution_id') ? run.execution_id : null;
  const gaps = has(run, 'gaps') ? run.gaps : [];
  if (kind === 'run' && (execId === null || (has(run, 'id') && run.id !== execId))) throw invalid();
  if (kind === 'workflow' && (!has(run, 'id') || run.id === '')) throw invalid();
  if (kind === 'session' && sessionId === null) throw invalid();
  const identityGap = gaps.some((g) => g.component === 'execution_identity');
  if (execId !== null && (has(run, 'execution_gap_reason') || identityGap)) throw invalid();
  // a reason for a gap the spec already lists (observed from the reference)
  if (execId === null && has(run, 'execution_gap_reason') && identityGap) throw invalid();
  // a flight recording without one of its required members (observed from the reference)
  if (has(run, 'flight_recording') && ['execution_id', 'content_hash', 'byte_length', 'retained_events'].some((k) => !has(run.flight_recording, k))) throw invalid();
  if (sessionId === null ? events.length > 0 : events.some((e) => e.sessionId !== sessionId)) throw invalid();

  const id = kind === 'run' ? execId : kind === 'workflow' ? run.id : has(run, 'id') ? run.id : sessionId;

  // Never relabelled.
  if (execId !== null) {
    const taken = new Set();
    if (sessionId !== null) taken.add(sessionId);
    for (const e of events) { taken.add(e.sessionId); if (e.runId !== null) taken.add(e.runId); }
    if (kind !== 'run') taken.add(id);
    if (taken.has(execId)) throw new Reject([{ code: 'execution_id_relabelled', path: '$.run.execution_id' }]);
  }

  // Spans, each a run-record.span.
  const spanFindings = [];
  let spans = (has(run, 'spans') ? run.spans : []).map((s, i) => validateDef(RR, 'Span', s, `$.run.spans[${i}]`, spanFindings));
  if (spanFindings.length) throw new Reject(spanFindings);
  // A span keeps every member of run-record.span it was given (links, events and cost_usd
  // included: Harn's RunTraceSpanRecord writes them), in the order of the type.
  const SPAN_OUT = ['trace_id', 'span_id', 'parent_span_id', 'kind', 'name', 'start_ms', 'duration_ms', 'ttft_ms', 'metadata', 'links', 'events', 'cost_usd'];
  spans = spans.map((sp) => { const o = {}; for (const k of SPAN_OUT) if (has(sp, k)) o[k] = sp[k]; return o; });

  let evidenceId = execId;
  let flight = null;
  let gapList = gaps.map((g) => ({ component: g.component, code: g.code, message: g.message }));
  if (execId !== null && !HARN_ID.test(execId)) {
    evidenceId = null;
    spans = spans.map((s) => {
      if (!has(s.metadata, 'harn.execution.id')) return s;
      const md = Object.assign(Object.create(null), s.metadata);
      delete md['harn.execution.id'];
      return { ...s, metadata: md };
    });
    if (!gapList.some((g) => g.component === INVALID_GAP.component && g.code === INVALID_GAP.code)) gapList.push({ ...INVALID_GAP });
  } else {
    if (has(run, 'flight_recording')) {
      const f = run.flight_recording;
      flight = {
        schema_version: 1,
        execution_id: f.execution_id,
        format: 'harn.flight.v1+json',
        path: has(f, 'path') ? f.path : null,
        content_hash: f.content_hash,
        byte_length: f.byte_length,
        retained_events: f.retained_events,
        dropped_events: has(f, 'dropped_events') ? f.dropped_events : 0,
        value_policy: 'omitted',
      };
      // other members (even schema_version, format, value_policy) are ignored, as the reference does
    }
    if (execId === null && !gapList.some((g) => g.component === 'execution_identity')) {
      gapList.unshift({ component: 'execution_identity', code: 'owner_not_recorded', message: has(run, 'execution_gap_reason') ? run.execution_gap_reason : DEFAULT_REASON[kind] });
    }
    // One owner: a span naming harn.execution.id names the record's execution id.
    const mism = [];
    spans.forEach((s, i) => {
      if (has(s.metadata, 'harn.execution.id') && s.metadata['harn.execution.id'] !== execId) mism.push({ code: 'span_execution_mismatch', path: `$.run.spans[${i}].metadata['harn.execution.id']` });
    });
    if (mism.length) {
      // reported together with the span tree's findings (observed from the reference)
      const tree = [];
      spanTree(spans, '$.run.spans', tree);
      throw new Reject([...mism, ...tree]);
    }
  }

  const metadata = Object.create(null);
  if (sessionId !== null) {
    let best = null;
    for (const e of events) {
      if (e.kind === 'session_attribute' && e.payload.name === 'completion_receipt' && (best === null || Number(e.id) > Number(best.id))) best = e;
    }
    metadata.completion_receipt = best === null ? null : best.payload.value;
  }
  const record = {
    id,
    kind,
    session_id: sessionId,
    status: run.status,
    metadata,
    evidence: { schema_version: 1, execution_id: evidenceId, trace_spans: spans, flight_recording: flight, gaps: gapList },
  };
  const rf = [];
  const decoded = validateDef(RR, 'RunRecord', record, '$', rf);
  if (rf.length) {
    const mapped = rf.map((f) => ({ code: f.code, path: mapPath(f.path, run) }));
    throw new Reject(mapped);
  }
  decoded.metadata = metadata; // the receipt verbatim (numbers as given)
  return decoded;
}
