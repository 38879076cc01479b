#!/usr/bin/env node
// A session-recap producer speaking the producer protocol (docs/protocol.md) on stdio.
import { Float } from './json.mjs';
import { Rejected, Skipped, serve } from '../js_common/protocol.mjs';
import { isObj } from '../js_common/schema.mjs';
import { Finding, validateDocType } from './validate.mjs';
import { loadPolicy } from './redact.mjs';
import { project, readQuery } from './recap.mjs';
import { Findings, projectStored } from './stored.mjs';

const IMPLEMENTATION = { name: 'acme-recap-js', version: '0.1.0', language: 'javascript' };
const RECAP = 'session-recap-v1.schema.json';
const DOC_TYPES = { 'session-recap.query': 'RecapQuery', 'session-recap.envelope': 'RecapEnvelope', 'session-recap.snapshot': 'RecapSnapshot' };
const policy = loadPolicy();

// One finding: the answer names it and does not claim it is every finding.
const asRejected = (f) => new Rejected([f], { complete: false });
// Every finding (docs/protocol.md, "The answer").
const asRejectedAll = (list) => new Rejected(list);

function roundtrip(input) {
  if (!isObj(input)) throw asRejected({ code: 'wrong_type', path: '$', message: 'input must be an object' });
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
  if (!isObj(input)) throw asRejected({ code: 'wrong_type', path: '$', message: 'input must be an object' });
  const has = (k) => Object.prototype.hasOwnProperty.call(input, k);
  // The session comes as journal events or as Harn's stored events, never both
  // (docs/protocol.md, recap.project); checked before anything else.
  if (has('events') && has('storedEvents')) throw asRejected({ code: 'invalid_case', path: '$', message: 'give events or storedEvents, not both' });
  if (!has('query')) throw asRejected({ code: 'required', path: '$.query', message: 'query is missing' });
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

serve({ implementation: IMPLEMENTATION, contracts: ['session-recap'], operations: OPERATIONS });
