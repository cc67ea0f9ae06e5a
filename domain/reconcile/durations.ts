import { parseDuration } from '../runtime/duration.ts';

/** A duration the CRD schema already validated; a fallback guards objects written before validation. */
export function durationMs(value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const parsed = parseDuration(value);
  return parsed.ok ? parsed.ms : fallbackMs;
}
