// Harn's default policy (docs/redaction.md part 1): ../js/redact.mjs as it is (its \b
// reads Unicode 14.0.0's word characters from docs/vectors/unicode-word-14.json).
import { loadPolicy, redactText, redactValue } from '../js/redact.mjs';

export const loadDefaultPolicy = loadPolicy;

export { redactText, redactValue };
