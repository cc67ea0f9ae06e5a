/**
 * Secret (core): always Healthy, and its content is never read — no Secret
 * data may reach a message, the status or a log (ARCHITECTURE.md). kstatus
 * agrees (alwaysReady); Argo CD has no Secret rule (no health = healthy).
 * CEL checks never apply to Secrets: `compileChecks` rejects them.
 */
import type { ObjectHealth } from '../types.ts';
import { healthy } from './fields.ts';

export function isSecret(apiVersion: string, kind: string): boolean {
  return apiVersion === 'v1' && kind === 'Secret';
}

export function secretHealth(): ObjectHealth {
  return healthy('Secrets are always healthy');
}
