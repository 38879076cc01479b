#!/usr/bin/env node
// A session-feedback producer speaking the producer protocol (docs/protocol.md) on stdio.
import { Float } from '../js/json.mjs';
import { Rejected, Skipped, roundtripInputFindings, serve } from '../js_common/protocol.mjs';
import { has as own, isObj, keyPath } from '../js_common/schema.mjs';
import { DOC_TYPES, MAX_SAFE, validateDef } from './schema.mjs';
import { FeedbackStore } from './store.mjs';

const IMPLEMENTATION = { name: 'acme-feedback-js', version: '0.1.0', language: 'javascript' };

// Document types of the other v1 contracts (docs/protocol.md, "Contracts"): never sent to
// a producer that declares only session-feedback; answered `skipped` if they come.
const OTHER_CONTRACTS = /^(session-health|session-recap|run-record|session-event|health-observation)\./;

// --- document.roundtrip ----------------------------------------------------------
function roundtrip(input) {
  if (!isObj(input)) throw new Rejected([{ code: 'wrong_type', path: '$' }]);
  const fs = roundtripInputFindings(input, (doctype) => {
    if (own(DOC_TYPES, doctype)) return true;
    if (OTHER_CONTRACTS.test(doctype)) throw new Skipped(`${doctype}: session-feedback document types only`);
    return false;
  });
  if (fs.length) throw new Rejected(fs);
  const { findings, value } = validateDef(DOC_TYPES[input.doctype], input.document, '$.document');
  if (findings.length) throw new Rejected(findings);
  return value;
}

// --- feedback.run --------------------------------------------------------------
const STEP_MEMBERS = {
  start: ['at_unix_ms', 'call', 'request'],
  checkpoint: ['at_unix_ms', 'call', 'request'],
  observe: ['at_unix_ms', 'call', 'session_id', 'can_read_raw_receipts', 'reader_contract_version'],
};
const REQUIRED = {
  start: ['at_unix_ms', 'call', 'request'],
  checkpoint: ['at_unix_ms', 'call', 'request'],
  observe: ['at_unix_ms', 'call', 'session_id', 'can_read_raw_receipts'],
};

// The integer rules of docs/protocol.md, "Case inputs": the findings of an unsigned
// safe integer. As the reference answers (docs/protocol.md, "Where the path points"), a number written
// with a fraction or exponent gets its type finding and its range finding both.
function unsignedSafeIntegerCodes(v) {
  if (typeof v === 'bigint') return [v < 0n && v >= -BigInt(MAX_SAFE) ? 'minimum' : 'unsafe_integer'];
  if (v instanceof Float) {
    const codes = [Number.isInteger(v.value) ? 'integer_literal_required' : 'wrong_type'];
    if (v.value < 0) codes.push('minimum');
    if (v.value > MAX_SAFE) codes.push('maximum');
    return codes;
  }
  if (typeof v !== 'number') return ['wrong_type'];
  if (v < 0) return ['minimum'];
  return [];
}

// Stage 1, the step's shape (every finding of every step). Observed from the reference
// (docs/protocol.md, `feedback.run`): a step whose `call` is missing or not one of the
// three calls (whatever its JSON type) is judged on its `call` alone.
function checkStepShape(step, p, fs) {
  if (!isObj(step)) { fs.push({ code: 'wrong_type', path: p }); return; }
  if (!own(step, 'call')) { fs.push({ code: 'required', path: `${p}.call` }); return; }
  if (typeof step.call !== 'string' || !own(STEP_MEMBERS, step.call)) { fs.push({ code: 'not_allowed_value', path: `${p}.call` }); return; }
  const call = step.call;
  for (const k of Object.keys(step)) if (!STEP_MEMBERS[call].includes(k)) fs.push({ code: 'unknown_field', path: keyPath(p, k) });
  for (const k of REQUIRED[call]) if (!own(step, k)) fs.push({ code: 'required', path: keyPath(p, k) });
  if (own(step, 'at_unix_ms')) for (const c of unsignedSafeIntegerCodes(step.at_unix_ms)) fs.push({ code: c, path: `${p}.at_unix_ms` });
  if (call === 'observe') {
    if (own(step, 'session_id') && typeof step.session_id !== 'string') fs.push({ code: 'wrong_type', path: `${p}.session_id` });
    if (own(step, 'can_read_raw_receipts') && typeof step.can_read_raw_receipts !== 'boolean') {
      fs.push({ code: 'wrong_type', path: `${p}.can_read_raw_receipts` });
    }
  }
}

function feedbackRun(input) {
  const fs = [];
  if (!isObj(input)) throw new Rejected([{ code: 'wrong_type', path: '$' }]);
  for (const k of Object.keys(input)) if (k !== 'steps') fs.push({ code: 'unknown_field', path: keyPath('$', k) });
  if (!own(input, 'steps')) fs.push({ code: 'required', path: '$.steps' });
  else if (!Array.isArray(input.steps)) fs.push({ code: 'wrong_type', path: '$.steps' });
  else input.steps.forEach((s, i) => checkStepShape(s, `$.steps[${i}]`, fs));
  if (fs.length) throw new Rejected(fs);
  // Stage 2, once every step has its shape: the first reader_contract_version that is
  // not an unsigned safe integer; stage 3: the first observe session_id the store
  // refuses. One finding each, as the reference answers (docs/protocol.md, `feedback.run`).
  input.steps.forEach((s, i) => {
    if (own(s, 'reader_contract_version') && unsignedSafeIntegerCodes(s.reader_contract_version).length) {
      throw new Rejected([{ code: 'invalid_step', path: `$.steps[${i}].reader_contract_version` }]);
    }
  });
  input.steps.forEach((s, i) => {
    if (s.call === 'observe' && validateDef('Identifier', s.session_id).findings.length) {
      throw new Rejected([{ code: 'invalid_request', path: `$.steps[${i}].session_id` }]);
    }
  });

  const store = new FeedbackStore();
  const responses = input.steps.map((s) => {
    const now = s.at_unix_ms;
    if (s.call === 'start') return store.start(s.request, now);
    if (s.call === 'checkpoint') return store.checkpoint(s.request, now);
    return store.observe(s.session_id, s.can_read_raw_receipts, own(s, 'reader_contract_version') ? s.reader_contract_version : 1, now);
  });
  return { responses };
}

// --- the protocol loop -------------------------------------------------------------
const OPERATIONS = { 'feedback.run': feedbackRun, 'document.roundtrip': roundtrip };

serve({ implementation: IMPLEMENTATION, contracts: ['session-feedback'], operations: OPERATIONS });
