// How the CLI prints a combined verdict (domain/status/verdict.ts) in one line.
import type { Verdict } from '../domain/status/verdict.ts';

export function verdictWord(v: Verdict): string {
  if (v.ready) return v.health === 'NotConfigured' ? 'Ready (health not assessed)' : 'Ready';
  if (v.kind === 'suspended') return 'Suspended';
  if (v.kind === 'failure') return `Failed (${v.signal})`;
  return v.retrying === true ? `Retrying (${v.signal})` : `Waiting (${v.signal})`;
}

export const verdictLine = (v: Verdict): string => `${verdictWord(v)}: ${v.message}`;
