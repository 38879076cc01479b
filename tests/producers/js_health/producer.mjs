#!/usr/bin/env node
// A session-health producer speaking the producer protocol (docs/protocol.md) on stdio.
import { Rejected, Skipped, allDocumentTypes, roundtripInputFindings, serve } from '../js_common/protocol.mjs';
import { has, isObj, keyPath } from '../js_common/schema.mjs';
import { validateDef } from './schema.mjs';
import { reduce } from './reducer.mjs';

const IMPLEMENTATION = { name: 'acme-health-js', version: '0.1.0', language: 'javascript' };
const HEALTH = 'session-health.schema.json';
const OBS = 'health-observation.schema.json';

// Every document type of every contract schema (docs/x-keywords.md, x-documentTypes),
// and the ones this producer decodes.
const ALL_DOCTYPES = allDocumentTypes();
const DOC_TYPES = {
  'session-health.fact': [HEALTH, 'SessionHealthFact'],
  'session-health.acp-notification': [HEALTH, 'SessionHealthAcpNotification'],
  'session-health.a2a-status-update': [HEALTH, 'SessionHealthA2aStatusUpdate'],
  'health-observation.observation': [OBS, 'HealthObservation'],
  'health-observation.stream': [OBS, 'HealthObservationStream'],
};

// Rejected with every finding, each (code, path) once (docs/protocol.md, "The answer").
const reject = (list) => new Rejected(list, { dedupe: true });
function closed(input, allowed) {
  const out = [];
  for (const k of Object.keys(input)) if (!allowed.includes(k)) out.push({ code: 'unknown_field', path: keyPath('$', k) });
  return out;
}

function roundtrip(input) {
  if (!isObj(input)) throw reject([{ code: 'wrong_type', path: '$' }]);
  const shape = roundtripInputFindings(input, (doctype) => ALL_DOCTYPES.has(doctype));
  if (shape.length) throw reject(shape);
  const dt = DOC_TYPES[input.doctype];
  if (!dt) throw new Skipped(`document type ${input.doctype} is not of a contract this producer declares`);
  const findings = [];
  const decoded = validateDef(dt[0], dt[1], input.document, '$.document', findings);
  if (findings.length) throw reject(findings);
  return decoded;
}

function healthReduce(input) {
  if (!isObj(input)) throw reject([{ code: 'wrong_type', path: '$' }]);
  const findings = [];
  const stream = validateDef(OBS, 'HealthObservationStream', input, '$', findings);
  if (findings.length) throw reject(findings);
  return { facts: reduce(stream.session_id, stream.observations) };
}

function a2aStatusUpdate(input) {
  if (!isObj(input)) throw reject([{ code: 'wrong_type', path: '$' }]);
  // The input's own members first (closed, both required).
  const shape = closed(input, ['fact', 'task']);
  if (!has(input, 'fact')) shape.push({ code: 'required', path: '$.fact' });
  if (!has(input, 'task')) shape.push({ code: 'required', path: '$.task' });
  if (shape.length) throw reject(shape);
  // Then the fact; the task only once the fact is valid (observed from the reference:
  // a task finding is not reported beside a fact finding).
  const factFindings = [];
  validateDef(HEALTH, 'SessionHealthFact', input.fact, '$.fact', factFindings);
  if (factFindings.length) throw reject(factFindings);
  const task = input.task;
  if (!isObj(task)) throw reject([{ code: 'wrong_type', path: '$.task' }]);
  const tf = [];
  // A missing, non-string or empty id/contextId is `required` (a task without an id string).
  for (const k of ['id', 'contextId']) if (typeof task[k] !== 'string' || task[k] === '') tf.push({ code: 'required', path: `$.task.${k}` });
  if (!has(task, 'status')) tf.push({ code: 'required', path: '$.task.status' });
  else if (!isObj(task.status)) tf.push({ code: 'wrong_type', path: '$.task.status' });
  else if (typeof task.status.state !== 'string') tf.push({ code: 'required', path: '$.task.status.state' });
  else {
    // The status the update carries: state (one of A2A's) and, when given, timestamp.
    const st = { state: task.status.state };
    if (has(task.status, 'timestamp')) st.timestamp = task.status.timestamp;
    validateDef(HEALTH, 'A2aTaskStatus', st, '$.task.status', tf);
  }
  if (tf.length) throw reject(tf);
  const status = { state: task.status.state };
  if (has(task.status, 'timestamp')) status.timestamp = task.status.timestamp;
  return {
    kind: 'status-update',
    taskId: task.id,
    contextId: task.contextId,
    status,
    final: false,
    // The fact verbatim, as received (an integral float stays one).
    metadata: { harn: { sessionHealth: input.fact } },
  };
}

const OPERATIONS = { 'health.reduce': healthReduce, 'health.a2a_status_update': a2aStatusUpdate, 'document.roundtrip': roundtrip };

// Debugging aid: JS_HEALTH_LOG=FILE appends every message received and answered.
serve({ implementation: IMPLEMENTATION, contracts: ['session-health'], operations: OPERATIONS, log: 'JS_HEALTH_LOG' });
