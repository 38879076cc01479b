#!/usr/bin/env node
// A session-health producer speaking the producer protocol (docs/protocol.md) on stdio.
import fs from 'node:fs';
import readline from 'node:readline';
import { JsonError, parse, stringify } from '../js/json.mjs';
import { isObj, loadSchema, validateDef } from './schema.mjs';
import { reduce } from './reducer.mjs';

const IMPLEMENTATION = { name: 'acme-health-js', version: '0.1.0', language: 'javascript' };
const HEALTH = 'session-health.schema.json';
const OBS = 'health-observation.schema.json';
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

// Every document type of every contract schema (docs/x-keywords.md, x-documentTypes),
// and the ones this producer decodes.
const ALL_DOCTYPES = new Set();
for (const [file, contract] of [
  ['session-health.schema.json', 'session-health'],
  ['health-observation.schema.json', 'health-observation'],
  ['session-feedback.schema.json', 'session-feedback'],
  ['session-recap-v1.schema.json', 'session-recap'],
  ['run-record.schema.json', 'run-record'],
  ['session-event.schema.json', 'session-event'],
]) {
  try {
    for (const kind of Object.keys(loadSchema(file)['x-documentTypes'] ?? {})) ALL_DOCTYPES.add(`${contract}.${kind}`);
  } catch {
    /* a schema this checkout does not ship */
  }
}
const DOC_TYPES = {
  'session-health.fact': [HEALTH, 'SessionHealthFact'],
  'session-health.acp-notification': [HEALTH, 'SessionHealthAcpNotification'],
  'session-health.a2a-status-update': [HEALTH, 'SessionHealthA2aStatusUpdate'],
  'health-observation.observation': [OBS, 'HealthObservation'],
  'health-observation.stream': [OBS, 'HealthObservationStream'],
};

class Rejected extends Error {
  constructor(findings) {
    super(findings[0].message ?? `${findings[0].code} at ${findings[0].path}`);
    this.findings = findings;
  }
}
class Skipped extends Error {}

// Sorted by path (code point order), then code; at most 1,000 (docs/protocol.md, "The answer").
const cmp = (a, b) => {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
};
function reject(list) {
  const seen = new Set();
  const fs = [];
  for (const f of list) {
    const key = `${f.code}\u0000${f.path}`;
    if (!seen.has(key)) { seen.add(key); fs.push({ code: f.code, path: f.path, message: f.message ?? `${f.code} at ${f.path}` }); }
  }
  fs.sort((a, b) => cmp(a.path, b.path) || cmp(a.code, b.code));
  return new Rejected(fs.slice(0, 1000));
}
function closed(input, allowed) {
  const out = [];
  for (const k of Object.keys(input)) if (!allowed.includes(k)) out.push({ code: 'unknown_field', path: keyPathTop(k) });
  return out;
}
const keyPathTop = (k) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `$.${k}` : `$['${k.replace(/[\\']/g, (c) => '\\' + c)}']`);

function roundtrip(input) {
  if (!isObj(input)) throw reject([{ code: 'wrong_type', path: '$' }]);
  const shape = closed(input, ['doctype', 'document', 'historical', 'injected_at']);
  if (!has(input, 'doctype')) shape.push({ code: 'required', path: '$.doctype' });
  else if (typeof input.doctype !== 'string') shape.push({ code: 'wrong_type', path: '$.doctype' });
  else if (!ALL_DOCTYPES.has(input.doctype)) shape.push({ code: 'not_allowed_value', path: '$.doctype' });
  if (!has(input, 'document')) shape.push({ code: 'required', path: '$.document' });
  if (has(input, 'historical') && typeof input.historical !== 'boolean') shape.push({ code: 'invalid_case', path: '$.historical' });
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

function answer(msg) {
  if (msg.cmd === 'start') {
    return { protocol_version: 1, implementation: IMPLEMENTATION, contracts: ['session-health'], operations: Object.keys(OPERATIONS) };
  }
  const seq = msg.seq;
  const op = msg.case?.operation;
  const fn = OPERATIONS[op];
  if (!fn) return { seq, outcome: 'skipped', reason: `operation ${op} is not implemented` };
  try {
    return { seq, outcome: 'result', output: fn(msg.case.input) };
  } catch (e) {
    if (e instanceof Rejected) {
      const [first] = e.findings;
      return { seq, outcome: 'rejected', rejection: { code: first.code, path: first.path, message: first.message, findings: e.findings } };
    }
    if (e instanceof Skipped) return { seq, outcome: 'skipped', reason: e.message };
    if (e instanceof JsonError) return { seq, outcome: 'rejected', rejection: { code: e.code, path: '$', message: e.message } };
    return { seq, outcome: 'errored', message: String(e?.stack ?? e) };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
// Debugging aid: JS_HEALTH_LOG=FILE appends every message received and answered.
const LOG = process.env.JS_HEALTH_LOG;
rl.on('line', (line) => {
  if (line.trim() === '') return;
  if (LOG) fs.appendFileSync(LOG, '> ' + line + '\n');
  let msg;
  try {
    msg = parse(line);
  } catch (e) {
    process.stderr.write(`unreadable message: ${e.message}\n`);
    return;
  }
  if (msg.cmd === 'stop') {
    rl.close();
    return;
  }
  const reply = stringify(answer(msg));
  if (LOG) fs.appendFileSync(LOG, '< ' + reply + '\n');
  process.stdout.write(reply + '\n');
});
// Exit only once every answer written so far has reached the pipe.
rl.on('close', () => process.stdout.write('', () => process.exit(0)));
