#!/usr/bin/env node
// A run-record producer speaking the producer protocol (docs/protocol.md) on stdio.
import { Skipped, allDocumentTypes, roundtripInputFindings, serve } from '../js_common/protocol.mjs';
import { has, isObj, keyPath } from '../js_common/schema.mjs';
import { firstUnsafe, options, validateDef } from './schema.mjs';
import { project, Reject } from './record.mjs';
import { providerCallResponse } from './response.mjs';

const IMPLEMENTATION = { name: 'acme-runrecord-js', version: '0.1.0', language: 'javascript' };
const RR = 'run-record.schema.json';

function runrecordProject(input) {
  if (!isObj(input)) throw new Reject([{ code: 'wrong_type', path: '$' }]);
  return project(input);
}

// Judged in stages, each only when the one before found nothing (observed from the
// reference; docs/runrecord.md 5.2 does not say): the input's own members; whether the
// response is a response (call_id, iteration and text present and of their types,
// tool_calls an array or null, execution_id a string or null); the payload's schema;
// the payload's RFC 8785 form.
function responseOp(input) {
  if (!isObj(input)) throw new Reject([{ code: 'wrong_type', path: '$' }]);
  const s0 = [];
  for (const k of Object.keys(input)) if (k !== 'response' && k !== 'execution_id') s0.push({ code: 'unknown_field', path: keyPath('$', k) });
  if (!has(input, 'response')) s0.push({ code: 'required', path: '$.response' });
  else if (!isObj(input.response)) s0.push({ code: 'wrong_type', path: '$.response' });
  if (s0.length) throw new Reject(s0);
  const r = input.response;
  const s1 = [];
  const execId = has(input, 'execution_id') ? input.execution_id : null;
  if (execId !== null && typeof execId !== 'string') s1.push({ code: 'wrong_type', path: '$.execution_id' });
  const typed = (k, ok) => {
    if (!has(r, k)) s1.push({ code: 'required', path: `$.response.${k}` });
    else if (!ok(r[k])) s1.push({ code: 'wrong_type', path: `$.response.${k}` });
  };
  typed('call_id', (v) => typeof v === 'string');
  typed('iteration', (v) => typeof v === 'number' || typeof v === 'bigint');
  typed('text', (v) => typeof v === 'string');
  if (has(r, 'tool_calls') && r.tool_calls !== null && !Array.isArray(r.tool_calls)) s1.push({ code: 'wrong_type', path: '$.response.tool_calls' });
  if (s1.length) throw new Reject(s1);
  const resp = { call_id: r.call_id, iteration: r.iteration, span_id: has(r, 'span_id') ? r.span_id : null, text: r.text, tool_calls: Array.isArray(r.tool_calls) ? r.tool_calls : [] };
  const s2 = [];
  const probe = { ...resp, execution_id: execId, loop_state: null };
  validateDef(RR, 'ProviderCallResponse', probe, '$', s2);
  if (s2.length) throw new Reject(s2.map((f) => ({ code: f.code, path: f.path.startsWith('$.execution_id') ? f.path : '$.response' + f.path.slice(1) })));
  const u = firstUnsafe(resp.tool_calls, '$.response.tool_calls');
  if (u) throw new Reject([{ code: 'canonical_unsafe_integer', path: u }]);
  const payload = providerCallResponse(resp, execId);
  const pf = [];
  validateDef(RR, 'ProviderCallResponse', payload, '$', pf);
  if (pf.length) throw new Error(`the payload built is invalid: ${JSON.stringify(pf)}`);
  return payload; // numbers as built: a loop-state integer stays an integer
}

// Every document type of every contract schema (x-documentTypes), and the ones decoded here:
// run-record's eight and the session journal's event (docs/protocol.md, "Contracts and spellings").
const ALL_DOCTYPES = allDocumentTypes();
const DECODED = (dt) => dt.startsWith('run-record.') || dt === 'session-event.event';

function roundtrip(input) {
  if (!isObj(input)) throw new Reject([{ code: 'wrong_type', path: '$' }]);
  const shape = roundtripInputFindings(input, (doctype) => ALL_DOCTYPES.has(doctype));
  if (shape.length) throw new Reject(shape);
  if (!DECODED(input.doctype)) throw new Skipped(`document type ${input.doctype} is not of a contract this producer declares`);
  const [file, def] = ALL_DOCTYPES.get(input.doctype);
  const findings = [];
  options.historical = input.historical === true;
  let decoded;
  try {
    decoded = validateDef(file, def, input.document, '$.document', findings);
  } finally {
    options.historical = false;
  }
  if (findings.length) throw new Reject(findings);
  return decoded;
}

const OPERATIONS = {
  'document.roundtrip': roundtrip, 'runrecord.project': runrecordProject, 'runrecord.provider_call_response': responseOp };

// Debugging aid: JS_RUNRECORD_LOG=FILE appends every message received and answered.
serve({ implementation: IMPLEMENTATION, contracts: ['run-record'], operations: OPERATIONS, log: 'JS_RUNRECORD_LOG' });
