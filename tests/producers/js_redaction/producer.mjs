#!/usr/bin/env node
// A redaction.apply producer speaking the producer protocol (docs/protocol.md) on stdio.
import { Rejected, serve } from '../js_common/protocol.mjs';
import { has, keyPath } from '../js_common/schema.mjs';
import * as harn from './harn.mjs';
import * as ours from './detectors.mjs';

const IMPLEMENTATION = { name: 'acme-redaction-js', version: '0.1.0', language: 'javascript' };
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && v.constructor === undefined;

// Both built-in policies, loaded once.
const POLICIES = {
  default: { text: (t, p) => harn.redactText(t, p), value: (v, p) => harn.redactValue(v, p), policy: harn.loadDefaultPolicy() },
  extended: { text: (t, p) => ours.redactText(t, p), value: (v, p) => ours.redactValue(v, p), policy: ours.loadDetectorPolicy() },
};

// RedactionApplyInput (docs/protocol.md, "redaction.apply").
function redactionApply(input) {
  if (!isObj(input)) throw new Rejected([{ code: 'wrong_type', path: '$' }]);
  // Three stages, each only when the one before found nothing (observed from the
  // docs/protocol.md, redaction.apply): unknown members; the policy; text and value.
  const unknown = Object.keys(input).filter((k) => !['text', 'value', 'policy'].includes(k));
  if (unknown.length) throw new Rejected(unknown.map((k) => ({ code: 'unknown_field', path: keyPath('$', k) })));
  // A missing, non-string or unknown policy alike: invalid_case at $.policy (not `required`).
  if (typeof input.policy !== 'string' || !has(POLICIES, input.policy)) {
    throw new Rejected([{ code: 'invalid_case', path: '$.policy', message: 'policy is default or extended' }]);
  }
  const hasText = has(input, 'text');
  if (hasText === has(input, 'value') || (hasText && typeof input.text !== 'string')) {
    throw new Rejected([{ code: 'invalid_case', path: '$', message: 'give exactly one of text (a string) and value' }]);
  }
  const p = POLICIES[input.policy];
  return hasText ? { text: p.text(input.text, p.policy) } : { value: p.value(input.value, p.policy) };
}

const OPERATIONS = { 'redaction.apply': redactionApply };

// Debugging aid: JS_REDACTION_LOG=FILE appends every message received and answered.
serve({ implementation: IMPLEMENTATION, contracts: [], operations: OPERATIONS, log: 'JS_REDACTION_LOG' });
