#!/usr/bin/env node
// A redaction.apply producer speaking the producer protocol (docs/protocol.md) on stdio.
import fs from 'node:fs';
import readline from 'node:readline';
import { JsonError, parse, stringify } from '../js/json.mjs';
import * as harn from './harn.mjs';
import * as ours from './detectors.mjs';

const IMPLEMENTATION = { name: 'acme-redaction-js', version: '0.1.0', language: 'javascript' };
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && v.constructor === undefined;

// Both built-in policies, loaded once.
const POLICIES = {
  default: { text: (t, p) => harn.redactText(t, p), value: (v, p) => harn.redactValue(v, p), policy: harn.loadDefaultPolicy() },
  extended: { text: (t, p) => ours.redactText(t, p), value: (v, p) => ours.redactValue(v, p), policy: ours.loadDetectorPolicy() },
};

class Rejected extends Error {
  constructor(findings) {
    super(findings[0].message ?? `${findings[0].code} at ${findings[0].path}`);
    this.findings = findings;
  }
}

// Sorted by path (code point order), then code (docs/protocol.md, "The answer").
const cmp = (a, b) => {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
};
function reject(list) {
  const fs = list.map((f) => ({ code: f.code, path: f.path, message: f.message ?? `${f.code} at ${f.path}` }));
  fs.sort((a, b) => cmp(a.path, b.path) || cmp(a.code, b.code));
  return new Rejected(fs.slice(0, 1000));
}
const keyPathTop = (k) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `$.${k}` : `$['${k.replace(/[\\']/g, (c) => '\\' + c)}']`);

// RedactionApplyInput (docs/protocol.md, "redaction.apply").
function redactionApply(input) {
  if (!isObj(input)) throw reject([{ code: 'wrong_type', path: '$' }]);
  // Three stages, each only when the one before found nothing (observed from the
  // docs/protocol.md, redaction.apply): unknown members; the policy; text and value.
  const unknown = Object.keys(input).filter((k) => !['text', 'value', 'policy'].includes(k));
  if (unknown.length) throw reject(unknown.map((k) => ({ code: 'unknown_field', path: keyPathTop(k) })));
  // A missing, non-string or unknown policy alike: invalid_case at $.policy (not `required`).
  if (typeof input.policy !== 'string' || !has(POLICIES, input.policy)) {
    throw reject([{ code: 'invalid_case', path: '$.policy', message: 'policy is default or extended' }]);
  }
  const hasText = has(input, 'text');
  if (hasText === has(input, 'value') || (hasText && typeof input.text !== 'string')) {
    throw reject([{ code: 'invalid_case', path: '$', message: 'give exactly one of text (a string) and value' }]);
  }
  const p = POLICIES[input.policy];
  return hasText ? { text: p.text(input.text, p.policy) } : { value: p.value(input.value, p.policy) };
}

const OPERATIONS = { 'redaction.apply': redactionApply };

function answer(msg) {
  if (msg.cmd === 'start') return { protocol_version: 1, implementation: IMPLEMENTATION, contracts: [], operations: Object.keys(OPERATIONS) };
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
    if (e instanceof JsonError) return { seq, outcome: 'rejected', rejection: { code: e.code, path: '$', message: e.message } };
    return { seq, outcome: 'errored', message: String(e?.stack ?? e) };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
// Debugging aid: JS_REDACTION_LOG=FILE appends every message received and answered.
const LOG = process.env.JS_REDACTION_LOG;
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
rl.on('close', () => process.stdout.write('', () => process.exit(0)));
