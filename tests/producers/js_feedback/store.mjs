// An in-memory session-feedback store (docs/feedback.md): start, checkpoint, observe.
// Every call is given the server clock (`at_unix_ms` of the feedback.run step).
import { isObj } from '../js_common/schema.mjs';
import { MAX_SAFE, jsonEqual, validateDef } from './schema.mjs';

const FUTURE_MS = 300000; // docs/feedback.md rule 5
const MAX_AGE_MS = 900000; // ReportMeta, x-staleness maxAgeMs
const CONTRACT_VERSION = 1; // decision 11: every report is written under contract 1
const LIMIT_CODES = new Set(['max_utf8_bytes', 'max_items']); // decision 5

const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function identifierOk(v) {
  if (typeof v !== 'string') return false;
  return validateDef('Identifier', v).findings.length === 0;
}

function rejection(request, code, path, message) {
  const rid = isObj(request) && identifierOk(request.request_id) ? request.request_id : null;
  return { request_id: rid, code, path, message };
}

export class FeedbackStore {
  constructor() {
    this.seq = 0; // store-wide checkpoint sequence (decision 14)
    this.sessions = new Map();
  }

  // Rule 1 and the parse of a request: null when valid, else the rejection.
  parse(defName, request) {
    const { findings } = validateDef(defName, request, '$');
    if (findings.length === 0) return null;
    const first = findings[0];
    const code = LIMIT_CODES.has(first.code) ? 'limit_exceeded' : 'invalid_request';
    const more = findings.length > 1 ? ` (and ${findings.length - 1} more)` : '';
    return rejection(request, code, first.path, `${first.code} at ${first.path}${more}`);
  }

  // Rule 3: a replay of a request_id already used in the session.
  replay(session, op, request) {
    const prior = session.byRequestId.get(request.request_id);
    if (!prior) return null;
    if (prior.op === op && jsonEqual(prior.request, request)) return { ...prior.receipt, replayed: true };
    return rejection(request, 'request_conflict', '$.request_id', 'request_id already used with another body');
  }

  accept(session, op, request, now, version) {
    this.seq += 1;
    const checkpointId = `ckpt-${this.seq}`;
    const receipt = {
      request_id: request.request_id,
      session_id: request.session_id,
      checkpoint_id: checkpointId,
      session_version: version,
      reported_at_unix_ms: now,
      replayed: false,
    };
    const meta = { checkpointId, reportedAt: now, seq: this.seq };
    session.version = version;
    session.byRequestId.set(request.request_id, { op, request, receipt });
    session.receipts.push(receipt);
    if (own(request, 'client_info')) session.client = { value: request.client_info, meta };
    if (own(request, 'progress')) session.progress = { value: request.progress, meta };
    if (own(request, 'usage')) {
      const u = request.usage;
      session.usage = { value: u, meta };
      const key = JSON.stringify([u.source, u.counter_id]);
      const hi = session.counters.get(key) ?? {};
      for (const f of ['input_tokens', 'output_tokens', 'cached_input_tokens']) {
        if (own(u, f)) hi[f] = hi[f] === undefined ? u[f] : Math.max(hi[f], u[f]);
      }
      session.counters.set(key, hi);
    }
    return receipt;
  }

  start(request, now) {
    const bad = this.parse('SessionStartRequest', request);
    if (bad) return bad;
    const session = this.sessions.get(request.session_id);
    if (session) {
      const r = this.replay(session, 'session.start', request);
      if (r) return r;
      return rejection(request, 'session_version_conflict', '$.session_id', 'the session already exists');
    }
    const fresh = { version: 0, byRequestId: new Map(), receipts: [], client: null, progress: null, usage: null, counters: new Map() };
    this.sessions.set(request.session_id, fresh);
    return this.accept(fresh, 'session.start', request, now, 0);
  }

  checkpoint(request, now) {
    const bad = this.parse('SessionCheckpointRequest', request);
    if (bad) return bad;
    const session = this.sessions.get(request.session_id);
    if (!session) return rejection(request, 'session_missing', '$.session_id', 'no such session');
    const r = this.replay(session, 'session.checkpoint', request);
    if (r) return r;
    if (request.session_version !== session.version) {
      return rejection(request, 'session_version_conflict', '$.session_version', `the session is at version ${session.version}`);
    }
    if (own(request, 'usage')) {
      const u = request.usage;
      if (u.observed_at_unix_ms > now + FUTURE_MS) {
        return rejection(request, 'usage_future_timestamp', '$.usage.observed_at_unix_ms', 'more than five minutes ahead of the server clock');
      }
      const latest = session.usage?.value;
      if (latest) {
        if (u.observed_at_unix_ms < latest.observed_at_unix_ms) {
          return rejection(request, 'usage_older_observation', '$.usage.observed_at_unix_ms', 'older than the latest accepted observation');
        }
        if (u.observed_at_unix_ms === latest.observed_at_unix_ms && !jsonEqual(u, latest)) {
          return rejection(request, 'usage_conflicting_sample', '$.usage', 'another sample at the same time');
        }
      }
      const hi = session.counters.get(JSON.stringify([u.source, u.counter_id]));
      if (hi) {
        for (const f of ['input_tokens', 'output_tokens', 'cached_input_tokens']) {
          if (own(u, f) && hi[f] !== undefined && u[f] < hi[f]) {
            return rejection(request, 'usage_counter_decreased', `$.usage.${f}`, `${f} decreased`);
          }
        }
      }
    }
    return this.accept(session, 'session.checkpoint', request, now, session.version + 1);
  }

  observe(sessionId, canReadRaw, readerVersion, now) {
    const session = this.sessions.get(sessionId);
    const raw = canReadRaw
      ? { state: 'available', receipts: session ? session.receipts.map((r) => ({ ...r })) : [] }
      : { state: 'missing', reason: 'permission_restricted' };
    if (!session) {
      const m = { state: 'missing', reason: 'no_session' };
      return { observed_at_unix_ms: now, session_id: sessionId, client: { ...m }, model: { ...m }, progress: { ...m }, usage: { ...m }, raw_receipts: raw };
    }
    const reportMeta = (meta, source, measuredAt) => {
      const match = CONTRACT_VERSION === readerVersion;
      const age = Math.max(0, now - measuredAt);
      const reasons = [];
      if (!match) reasons.push('contract_mismatch');
      if (age > MAX_AGE_MS) reasons.push('age_exceeded');
      return {
        checkpoint_id: meta.checkpointId,
        reported_at_unix_ms: meta.reportedAt,
        provenance: { declared_by: 'client', source },
        contract_version: CONTRACT_VERSION,
        contract_match: match,
        age_ms: Math.min(age, MAX_SAFE),
        stale: reasons.length > 0,
        stale_reasons: reasons,
      };
    };
    const caps = session.client?.value.capabilities ?? {};
    const missing = (cap) => {
      const c = caps[cap];
      const reason = c === 'unsupported' ? 'client_collection_unsupported' : c === 'supported' ? 'not_reported_by_client' : 'client_capability_unknown';
      return { state: 'missing', reason };
    };
    const client = session.client
      ? { state: 'reported', report: reportMeta(session.client.meta, null, session.client.meta.reportedAt), value: session.client.value }
      : { state: 'missing', reason: 'client_capability_unknown' };
    const model = session.client && own(session.client.value, 'model')
      ? { state: 'reported', report: reportMeta(session.client.meta, session.client.value.model.source, session.client.meta.reportedAt), value: session.client.value.model }
      : missing('model');
    const progress = session.progress
      ? { state: 'reported', report: reportMeta(session.progress.meta, null, session.progress.meta.reportedAt), value: session.progress.value }
      : missing('progress');
    const usage = session.usage
      ? { state: 'reported', report: reportMeta(session.usage.meta, session.usage.value.source, session.usage.value.observed_at_unix_ms), value: session.usage.value }
      : missing('usage');
    return { observed_at_unix_ms: now, session_id: sessionId, client, model, progress, usage, raw_receipts: raw };
  }
}
