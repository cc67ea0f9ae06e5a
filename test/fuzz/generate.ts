/**
 * A seeded generator of the inputs convoy reads from users beyond what
 * admission refuses: the annotations convoy.dev/pin, sync-requested-at,
 * force-sync-requested-at (on the Release), sync-wave and prune (on rendered
 * objects), and odd Release spec values. The same seed gives the same cases,
 * so a failure is reproducible: FUZZ_SEED overrides SEED.
 */
export const SEED = 0x10c0ffee;

/** mulberry32: a small, well-mixed 32-bit PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzCase {
  index: number;
  annotations: Record<string, string>;
  /** Merged over a valid spec. */
  spec: Record<string, unknown>;
  /** Annotations of the one rendered ConfigMap. */
  objectAnnotations: Record<string, string>;
}

const HEX = '0123456789abcdef';

export function generateCases(count: number, seed = Number(process.env['FUZZ_SEED'] ?? SEED)): FuzzCase[] {
  const random = prng(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items.at(int(items.length)) as T;
  const hex = (n: number, alphabet = HEX) =>
    Array.from({ length: n }, () => alphabet[int(alphabet.length)]).join('');
  const junk = (n: number) =>
    Array.from({ length: n }, () =>
      String.fromCodePoint(pick([32 + int(95), 0x80 + int(0x700), 0x1f600 + int(50), 0])),
    ).join('');

  const pins = (): string =>
    pick([
      () => `sha256:${hex(64)}`,
      () => `sha256:${hex(64).toUpperCase()}`,
      () => `sha256:${hex(int(70))}`,
      () => `sha1:${hex(40)}`,
      () => hex(64),
      () => 'garbage',
      () => ` sha256:${hex(64)}`,
      () => `sha256:${hex(64)}\n`,
      () => `sha256:${'a'.repeat(2000)}`,
      () => junk(1 + int(40)),
      () => '',
    ])();
  const times = (): string =>
    pick([
      () => new Date(Date.UTC(2026, 0, 1) + int(1e10)).toISOString(),
      () => new Date(Date.UTC(2026, 0, 1) + int(1e10)).toISOString().replace(/\.\d+Z$/, 'Z'),
      () => '2026-13-45T99:99:99Z',
      () => 'yesterday',
      () => String(int(2e9)),
      () => '-1',
      () => junk(1 + int(20)),
      () => `${'9'.repeat(300)}`,
      () => '',
    ])();
  const waves = (): string =>
    pick([
      '0',
      '1',
      '-3',
      ' 2 ',
      '+4',
      '1.5',
      '1e3',
      'NaN',
      '99999999999999999999',
      '',
      junk(5),
      '0x10',
      '-0',
    ]);
  const prunes = (): string => pick(['disabled', 'Disabled', 'false', 'true', '', junk(3)]);
  const durations = (): string =>
    pick(['1s', '5m', '0', '-1s', '1d', 'forever', '1h30m', '0.5s', '9999999h', '', junk(4)]);

  return Array.from({ length: count }, (_, index) => {
    const annotations: Record<string, string> = {};
    if (random() < 0.6) annotations['convoy.dev/pin'] = pins();
    if (random() < 0.5) annotations['convoy.dev/sync-requested-at'] = times();
    if (random() < 0.5) annotations['convoy.dev/force-sync-requested-at'] = times();
    const objectAnnotations: Record<string, string> = {};
    if (random() < 0.6) objectAnnotations['convoy.dev/sync-wave'] = waves();
    if (random() < 0.4) objectAnnotations['convoy.dev/prune'] = prunes();
    const spec: Record<string, unknown> = {};
    if (random() < 0.4)
      spec['syncPolicy'] = {
        mode: pick(['Auto', 'Manual']),
        interval: durations(),
        ...(random() < 0.5
          ? { retryBackoff: { initial: durations(), factor: pick([1, 2, 0, -1, 1e9]), max: durations() } }
          : {}),
      };
    if (random() < 0.3) spec['healthAssessment'] = { interval: durations() };
    if (random() < 0.3)
      spec['driftDetection'] = { interval: durations(), mode: pick(['Detect', 'Correct', 'Nope']) };
    return { index, annotations, spec, objectAnnotations };
  });
}
