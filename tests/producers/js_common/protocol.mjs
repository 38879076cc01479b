// The producer protocol's plumbing (docs/protocol.md) that every JavaScript producer
// here shares: the stdio line loop, the answer to each message, and the ordering of a
// rejection's findings. What each operation does stays in its own producer.
import fs from 'node:fs';
import readline from 'node:readline';
import { JsonError, parse, stringify } from '../js/json.mjs';
import { keyPath, loadSchema } from './schema.mjs';

// Code point order (docs/protocol.md: "sorted by path (code point order) and then code").
export function cmpCodePoint(a, b) {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}
export const sortFindings = (fs) => fs.sort((a, b) => cmpCodePoint(a.path, b.path) || cmpCodePoint(a.code, b.code));

// A case the producer refuses: its findings, each with a message, sorted by path then
// code, at most 1,000 (docs/protocol.md, "The answer"). With `dedupe`, a finding of the
// same code at the same path is kept once. With `complete: false` the answer names the
// first finding only, without claiming the list is every finding.
export class Rejected extends Error {
  constructor(list, { dedupe = false, complete = true } = {}) {
    const seen = new Set();
    const fs = [];
    for (const f of list) {
      const key = `${f.code}\u0000${f.path}`;
      if (dedupe && seen.has(key)) continue;
      seen.add(key);
      fs.push({ code: f.code, path: f.path, message: f.message ?? `${f.code} at ${f.path}` });
    }
    const findings = sortFindings(fs).slice(0, 1000);
    super(findings[0].message);
    this.findings = findings;
    this.complete = complete;
  }

  get rejection() {
    const [first] = this.findings;
    return { code: first.code, path: first.path, message: first.message, ...(this.complete ? { findings: this.findings } : {}) };
  }
}

// A case the producer does not implement (answered `skipped` with the reason).
export class Skipped extends Error {}

// Every document type of every contract schema (docs/x-keywords.md, x-documentTypes), as
// `contract.kind` -> [schema file, definition name].
export function allDocumentTypes() {
  const all = new Map();
  for (const [file, contract] of [
    ['session-health.schema.json', 'session-health'], ['health-observation.schema.json', 'health-observation'],
    ['session-feedback.schema.json', 'session-feedback'], ['session-recap-v1.schema.json', 'session-recap'],
    ['run-record.schema.json', 'run-record'], ['session-event.schema.json', 'session-event'],
  ]) {
    try {
      for (const [kind, ref] of Object.entries(loadSchema(file)['x-documentTypes'] ?? {})) all.set(`${contract}.${kind}`, [file, ref.split('/').pop()]);
    } catch { /* a schema this checkout does not ship */ }
  }
  return all;
}

// The findings of a document.roundtrip input's own members (docs/protocol.md, "Case
// inputs"): closed, doctype a known document type, document present, historical a boolean.
export function roundtripInputFindings(input, isDocType) {
  const has = (k) => Object.prototype.hasOwnProperty.call(input, k);
  const out = [];
  for (const k of Object.keys(input)) if (!['doctype', 'document', 'historical', 'injected_at'].includes(k)) out.push({ code: 'unknown_field', path: keyPath('$', k) });
  if (!has('doctype')) out.push({ code: 'required', path: '$.doctype' });
  else if (typeof input.doctype !== 'string') out.push({ code: 'wrong_type', path: '$.doctype' });
  else if (!isDocType(input.doctype)) out.push({ code: 'not_allowed_value', path: '$.doctype' });
  if (!has('document')) out.push({ code: 'required', path: '$.document' });
  if (has('historical') && typeof input.historical !== 'boolean') out.push({ code: 'invalid_case', path: '$.historical' });
  return out;
}

function answer(msg, { implementation, contracts, operations }) {
  if (msg.cmd === 'start') return { protocol_version: 1, implementation, contracts, operations: Object.keys(operations) };
  const seq = msg.seq;
  const op = msg.case?.operation;
  const fn = operations[op];
  if (!fn) return { seq, outcome: 'skipped', reason: `operation ${op} is not implemented` };
  try {
    return { seq, outcome: 'result', output: fn(msg.case.input) };
  } catch (e) {
    if (e instanceof Rejected) return { seq, outcome: 'rejected', rejection: e.rejection };
    if (e instanceof Skipped) return { seq, outcome: 'skipped', reason: e.message };
    if (e instanceof JsonError) return { seq, outcome: 'rejected', rejection: { code: e.code, path: '$', message: e.message } };
    return { seq, outcome: 'errored', message: String(e?.stack ?? e) };
  }
}

// Serves the protocol on stdio: one message a line in, one answer a line out, until
// `stop` or the end of input. `log` names an environment variable: when set, every
// message received and answered is appended to the file it names (a debugging aid).
export function serve({ implementation, contracts, operations, log }) {
  const logFile = log ? process.env[log] : undefined;
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    if (logFile) fs.appendFileSync(logFile, '> ' + line + '\n');
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
    const reply = stringify(answer(msg, { implementation, contracts, operations }));
    if (logFile) fs.appendFileSync(logFile, '< ' + reply + '\n');
    process.stdout.write(reply + '\n');
  });
  // Exit only once every answer written so far has reached the pipe.
  rl.on('close', () => process.stdout.write('', () => process.exit(0)));
}
