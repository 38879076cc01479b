#!/usr/bin/env node
// Sends every case of a JSONL file ({"name", "op", "input"}) to the reference producer and
// to this producer, and prints the cases where they disagree (outcome, output, or the set
// of rejection findings). Run from /work/main with the venv active:
//   node tests/producers/js_runrecord/probes/diff.mjs tests/producers/js_runrecord/probes/probes.jsonl
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import { parse, stringify } from '../../js/json.mjs';

const cases = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim()).map((l) => parse(l)); // exact numbers: 1.0 and 2^64 are sent as written
function run(cmd) {
  const lines = ['{"cmd":"start","protocol_version":1}'];
  cases.forEach((c, i) => lines.push(stringify({ cmd: 'run', seq: i + 1, case: { operation: c.op, input: c.input } })));
  lines.push('{"cmd":"stop"}');
  const out = execSync(cmd, { input: lines.join('\n') + '\n', encoding: 'utf8', shell: '/bin/bash', maxBuffer: 1 << 28 });
  const byseq = new Map();
  for (const l of out.split('\n').slice(1)) if (l.trim()) { const m = JSON.parse(l); byseq.set(m.seq, m); }
  return byseq;
}
// Output compared as canonical text of the wire JSON (numbers by value: 1 and 1.0 agree).
const norm = (o) => {
  if (!o) return 'none';
  if (o.outcome === 'rejected') {
    const fs = o.rejection.findings ?? [o.rejection];
    return 'rejected ' + [...new Set(fs.map((f) => `${f.code}@${f.path}`))].sort().join(' ');
  }
  if (o.outcome === 'result') return 'result ' + JSON.stringify(sortKeys(o.output));
  return o.outcome;
};
const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v);
const ref = run('session-contracts reference-producer');
const me = run('node tests/producers/js_runrecord/producer.mjs');
let diffs = 0;
cases.forEach((c, i) => {
  const a = norm(ref.get(i + 1)), b = norm(me.get(i + 1));
  if (a !== b) { diffs++; console.log(`DIFF ${c.name}\n  ref ${a}\n  me  ${b}`); }
});
console.log(`${cases.length} cases, ${diffs} disagreements`);
