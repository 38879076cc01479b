// The session-health reducer of docs/health.md (sections 2-4), over a checked
// health-observation.stream. Sums are BigInt (the reference never bounds a sum);
// means and ratios are IEEE-754 divisions of the two counts as doubles.
import { Float } from '../js/json.mjs';

const emptyPop = () => ({ calls: 0n, successes: 0n, exits: 0n, nonzero: 0n, wallSum: 0n, wallCount: 0n, proseSum: 0n, proseCount: 0n });
const big = (v) => (typeof v === 'bigint' ? v : BigInt(v));
const out = (b) => (b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b); // exact integer for the writer
const dbl = (x) => new Float(x);

export function reduce(sessionId, observations) {
  const s = {
    iteration: null,
    started: false,
    closed: false,
    counted: new Set(),
    commands: new Set(),
    turn: emptyPop(),
    rolling: emptyPop(),
    expected: null, // {ms: double, count: bigint}
    edits: null, // bigint or null
    trend: null,
    held: [], // diagnostic measurements, oldest first, at most two
    stop: null,
  };
  const facts = [];
  const emit = () => facts.push(fact(sessionId, s));

  const countCall = (callId, success, mutation, telemetry) => {
    if (s.counted.has(callId)) return;
    s.counted.add(callId);
    for (const p of [s.turn, s.rolling]) {
      p.calls += 1n;
      if (success) p.successes += 1n;
    }
    let repeat = false;
    const t = telemetry ?? null;
    if (t && t.command_exit_code !== undefined && t.command_exit_code !== null) {
      const id = t.command_id ?? null;
      if (id !== null && s.commands.has(id)) repeat = true;
      else {
        if (id !== null) s.commands.add(id);
        for (const p of [s.turn, s.rolling]) {
          p.exits += 1n;
          if (Number(t.command_exit_code) !== 0) p.nonzero += 1n;
        }
      }
    }
    if (mutation) s.edits = (s.edits ?? 0n) + 1n;
    const ver = t ? t.verification ?? null : null;
    if (ver !== null && !repeat) {
      s.edits = 0n;
      const d = ver.diagnostics ?? null;
      if (d !== null) measure({ fp: d.set_fingerprint, count: big(d.count) });
    }
    if (s.closed) emit();
  };

  const measure = (m) => {
    const same = (a, b) => a.fp === b.fp && a.count === b.count;
    if (s.held.length > 0) {
      const p = s.held[s.held.length - 1];
      if (s.held.length === 2 && same(s.held[0], m) && !same(p, m)) s.trend = 'oscillating';
      else s.trend = m.count < p.count ? 'improving' : m.count > p.count ? 'regressing' : 'flat';
    }
    s.held.push(m);
    if (s.held.length > 2) s.held.shift();
  };

  for (const o of observations) {
    switch (o.kind) {
      case 'iteration_started':
        s.iteration = o.iteration;
        s.started = true;
        s.closed = false;
        s.turn = emptyPop();
        s.counted = new Set();
        s.expected = s.rolling.wallCount > 0n ? { ms: Number(s.rolling.wallSum) / Number(s.rolling.wallCount), count: s.rolling.wallCount } : null;
        break;
      case 'tool_call_completed':
        if (o.streaming_parse_candidate) break;
        countCall(o.call_id, o.success, o.mutation_applied === true, o.telemetry);
        break;
      case 'tool_call_abandoned':
        countCall(o.call_id, false, false, null);
        break;
      case 'iteration_finished':
        if (s.started && o.wall_time_ms !== null && s.turn.wallCount === 0n) {
          for (const p of [s.turn, s.rolling]) { p.wallSum += big(o.wall_time_ms); p.wallCount += 1n; }
        }
        if (o.prose_characters !== null && s.turn.proseCount === 0n) {
          for (const p of [s.turn, s.rolling]) { p.proseSum += big(o.prose_characters); p.proseCount += 1n; }
        }
        s.closed = true;
        emit();
        break;
      case 'terminal_outcome':
        s.stop = o.stop_class;
        s.closed = true;
        emit();
        break;
      case 'transcript_reset':
        s.rolling = emptyPop();
        break;
      case 'historical_messages_loaded':
        break;
      default:
        throw new Error(`unknown kind ${o.kind}`);
    }
  }
  return facts;
}

function rate(n, d) {
  if (d === 0n) return null;
  return { numerator: out(n), denominator: out(d), value: dbl(Number(n) / Number(d)) };
}

function view(s, p) {
  let wall = null;
  if (p.wallCount > 0n) {
    const ms = p.wallSum / p.wallCount; // truncated
    const e = s.expected;
    wall = {
      milliseconds: out(ms),
      sample_count: out(p.wallCount),
      expected: e ? { milliseconds: dbl(e.ms), source: 'prior_measured_turns', sample_count: out(e.count) } : null,
      actual_to_expected: e && e.ms > 0 ? dbl(Number(ms) / e.ms) : null,
    };
  }
  let prose = null;
  if (p.proseCount > 0n) {
    prose = {
      prose_characters: out(p.proseSum),
      tool_calls: out(p.calls),
      characters_per_tool_call: p.calls > 0n ? dbl(Number(p.proseSum) / Number(p.calls)) : null,
    };
  }
  return {
    tool_call_success_rate: rate(p.successes, p.calls),
    nonzero_command_exit_rate: rate(p.nonzero, p.exits),
    edits_since_verification: s.edits === null ? null : out(s.edits),
    diagnostic_trend: s.trend,
    turn_wall_time: wall,
    prose_to_tool_balance: prose,
    last_stop_class: s.stop,
  };
}

function fact(sessionId, s) {
  return {
    schema_version: 1,
    session_id: sessionId,
    iteration: s.iteration,
    turn: view(s, s.turn),
    rolling: view(s, s.rolling),
    heuristics: {},
  };
}
