/**
 * `duration(string)` for CEL health checks, parsed as Go's `time.ParseDuration`
 * (what Kubernetes CEL, through cel-go, does): one linear pass over the text.
 *
 * cel-js parses durations with a backtracking regular expression that takes
 * cubic time on a long run of digits (`duration('1' * 3000)` took 9.7 s), so
 * cel-runtime.ts routes `duration(string)` here instead.
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';

/** Longer than any duration int64 nanoseconds can hold; refused before parsing. */
export const MAX_DURATION_TEXT = 256;

const NANOS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 micro sign
  ['μs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const MAX_NANOS = (1n << 63n) - 1n;
const NANOS_PER_SECOND = 1_000_000_000n;

export class DurationSyntaxError extends Error {
  constructor(text: string, reason: string) {
    super(`invalid duration '${text.length > 40 ? `${text.slice(0, 40)}…` : text}': ${reason}`);
    this.name = 'DurationSyntaxError';
  }
}

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

/** Parses a Go duration ("300ms", "-1.5h", "2h45m") into a cel-js Duration. Throws DurationSyntaxError. */
export function parseGoDuration(text: string): Duration {
  if (text.length > MAX_DURATION_TEXT)
    throw new DurationSyntaxError(text, `longer than ${MAX_DURATION_TEXT} characters`);
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return new Duration(0n, 0);
  if (rest === '') throw new DurationSyntaxError(text, 'empty');
  let total = 0n;
  let position = 0;
  while (position < rest.length) {
    const start = position;
    while (isDigit(rest[position])) position++;
    const whole = rest.slice(start, position);
    let fraction = '';
    if (rest[position] === '.') {
      position++;
      const fractionStart = position;
      while (isDigit(rest[position])) position++;
      fraction = rest.slice(fractionStart, position);
    }
    if (whole === '' && fraction === '') throw new DurationSyntaxError(text, 'expected a number');
    const unitStart = position;
    while (position < rest.length && rest[position] !== '.' && !isDigit(rest[position])) position++;
    const unitText = rest.slice(unitStart, position);
    if (unitText === '') throw new DurationSyntaxError(text, 'missing unit (ns, us, ms, s, m or h)');
    const unit = NANOS_PER_UNIT.get(unitText);
    if (unit === undefined) throw new DurationSyntaxError(text, `unknown unit '${unitText}'`);
    let value = BigInt(whole === '' ? '0' : whole) * unit;
    // Go keeps the fraction's leading digits that fit; 18 digits are more than any unit needs.
    const kept = fraction.slice(0, 18);
    if (kept !== '') value += (BigInt(kept) * unit) / 10n ** BigInt(kept.length);
    total += value;
    if (total > MAX_NANOS + (negative ? 1n : 0n)) throw new DurationSyntaxError(text, 'out of range');
  }
  const nanos = negative ? -total : total;
  return new Duration(nanos / NANOS_PER_SECOND, Number(nanos % NANOS_PER_SECOND));
}
