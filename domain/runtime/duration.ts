/**
 * Go / Kubernetes durations (`time.ParseDuration`, metav1.Duration):
 * a sequence of decimal numbers with units, such as `500ms`, `5s`, `1h30m`,
 * `1.5h` or `720h`. Units: ns, us (µs, μs), ms, s, m, h. `0` alone is zero.
 * No days: Go has none, so `7d` is refused and `168h` is the way to write it.
 * Negative durations are refused: every duration in convoy is an interval,
 * a timeout or an age.
 */

export type ParseDurationResult =
  { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly error: string };

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

// Go's limit: an int64 of nanoseconds (about 292 years).
const MAX_MS = 9_223_372_036_854.775;

// One "<number><unit>" term: digits with an optional fraction (either side may be empty, not both).
const TERM = /^(\d*)(?:\.(\d*))?([a-zA-Zµμ]*)/;

export function parseDuration(input: string): ParseDurationResult {
  const fail = (why: string): ParseDurationResult => ({
    ok: false,
    error: `invalid duration ${JSON.stringify(input)}: ${why}; write it like 30s, 5m, 1h30m or 500ms (units: ns, us, ms, s, m, h)`,
  });

  let rest = input;
  if (rest.startsWith('-')) return fail('must not be negative');
  if (rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return { ok: true, ms: 0 };
  if (rest === '') return fail('it is empty');

  let total = 0;
  while (rest !== '') {
    const match = TERM.exec(rest);
    const whole = match?.[1] ?? '';
    const fraction = match?.[2];
    const unit = match?.[3] ?? '';
    if (whole === '' && (fraction === undefined || fraction === '')) {
      return fail(`expected a number at ${JSON.stringify(rest)}`);
    }
    const term = match?.[0] ?? '';
    if (unit === '') return fail(`missing unit after ${JSON.stringify(term)}`);
    const unitMs = UNIT_MS[unit];
    if (unitMs === undefined) return fail(`unknown unit ${JSON.stringify(unit)}`);
    total += Number(`${whole || '0'}.${fraction ?? ''}0`) * unitMs;
    if (total > MAX_MS) return fail('it is longer than about 292 years');
    rest = rest.slice(term.length);
  }
  return { ok: true, ms: total };
}

/**
 * Formats milliseconds the way Go prints a duration, for messages and logs:
 * `1h30m0s`, `5s`, `1.5s`, `500ms`, `0s`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0) return '0s';
  if (ms < 1) return `${trim(ms * 1000)}µs`;
  if (ms < 1000) return `${trim(ms)}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  let text = `${trim(seconds)}s`;
  if (hours > 0 || minutes > 0) text = `${minutes}m${text}`;
  if (hours > 0) text = `${hours}h${text}`;
  return text;
}

function trim(value: number): string {
  // At most microsecond precision; no trailing zeros.
  return String(Math.round(value * 1000) / 1000);
}
