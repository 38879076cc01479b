#!/usr/bin/env node
// A session-recap producer speaking the producer protocol (docs/protocol.md) on stdio.
import readline from 'node:readline';
import { Float, JsonError, parse, stringify } from './json.mjs';
import { Finding, validateDocType } from './validate.mjs';
import { loadPolicy } from './redact.mjs';
import { project, readQuery } from './recap.mjs';
import { Findings, projectStored } from './stored.mjs';

const IMPLEMENTATION = { name: 'acme-recap-js', version: '0.1.0', language: 'javascript' };
const RECAP = 'session-recap-v1.schema.json';
const DOC_TYPES = { 'session-recap.query': 'RecapQuery', 'session-recap.envelope': 'RecapEnvelope', 'session-recap.snapshot': 'RecapSnapshot' };
const policy = loadPolicy();
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Float);

class Rejected extends Error {
  constructor(code, path, message, findings) {
    super(message);
    this.code = code;
    this.path = path;
    this.findings = findings;
  }
}

// Every finding, sorted by path (code point order) then code, the first named
// (docs/protocol.md, "The answer").
const cmp = (a, b) => {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
};
function asRejectedAll(list) {
  const fs = list.map((f) => ({ code: f.code, path: f.path, message: f.message })).sort((a, b) => cmp(a.path, b.path) || cmp(a.code, b.code)).slice(0, 1000);
  return new Rejected(fs[0].code, fs[0].path, fs[0].message, fs);
}
class Skipped extends Error {}

function asRejected(f) {
  return new Rejected(f.code, f.path, f.message);
}

function roundtrip(input) {
  if (!isObj(input)) throw new Rejected('wrong_type', '$', 'input must be an object');
  const { doctype, document } = input;
  if (!Object.prototype.hasOwnProperty.call(DOC_TYPES, doctype)) throw new Skipped(`document type ${doctype} is not implemented`);
  if (doctype === 'session-recap.query') {
    let canon;
    try {
      canon = readQuery(document, '$.document');
    } catch (f) {
      if (f instanceof Finding) throw asRejected(f);
      throw f;
    }
    // Observed from the reference: aliases renamed, every other member kept verbatim
    // (docs/third-party-findings.md, finding 2).
    return canon;
  }
  const f = validateDocType(RECAP, DOC_TYPES[doctype], document, '$.document');
  if (f) throw asRejected(f);
  return document;
}

function recapProject(input) {
  if (!isObj(input)) throw new Rejected('wrong_type', '$', 'input must be an object');
  const has = (k) => Object.prototype.hasOwnProperty.call(input, k);
  // The session comes as journal events or as Harn's stored events, never both
  // (docs/protocol.md, recap.project); checked before anything else.
  if (has('events') && has('storedEvents')) throw new Rejected('invalid_case', '$', 'give events or storedEvents, not both');
  if (!has('query')) throw new Rejected('required', '$.query', 'query is missing');
  try {
    if (has('storedEvents')) return projectStored(input.storedEvents, input.query, policy, input);
    return project(input.events ?? [], input.query, policy, input);
  } catch (f) {
    if (f instanceof Findings) throw asRejectedAll(f.findings);
    if (f instanceof Finding) throw asRejected(f);
    throw f;
  }
}

const OPERATIONS = { 'recap.project': recapProject, 'document.roundtrip': roundtrip };

function answer(msg) {
  if (msg.cmd === 'start') {
    return { protocol_version: 1, implementation: IMPLEMENTATION, contracts: ['session-recap'], operations: Object.keys(OPERATIONS) };
  }
  const seq = msg.seq;
  const op = msg.case?.operation;
  const fn = OPERATIONS[op];
  if (!fn) return { seq, outcome: 'skipped', reason: `operation ${op} is not implemented` };
  try {
    return { seq, outcome: 'result', output: fn(msg.case.input) };
  } catch (e) {
    if (e instanceof Rejected) return { seq, outcome: 'rejected', rejection: { code: e.code, path: e.path, message: e.message, ...(e.findings ? { findings: e.findings } : {}) } };
    if (e instanceof Skipped) return { seq, outcome: 'skipped', reason: e.message };
    if (e instanceof JsonError) return { seq, outcome: 'rejected', rejection: { code: e.code, path: '$', message: e.message } };
    return { seq, outcome: 'errored', message: String(e?.stack ?? e) };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (line.trim() === '') return;
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
  process.stdout.write(stringify(answer(msg)) + '\n');
});
// Exit only once every answer written so far has reached the pipe.
rl.on('close', () => process.stdout.write('', () => process.exit(0)));
