/** Nearest-rank percentile (p in 0..100) of `values`; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function median(values: readonly number[]): number | undefined {
  return percentile(values, 50);
}

/** Milliseconds, rounded to 0.1. */
export function ms(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Milliseconds since `start` (a performance.now() reading), rounded to 0.1. */
export function since(start: number): number {
  return ms(performance.now() - start);
}
