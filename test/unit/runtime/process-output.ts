import { vi } from 'vitest';

/**
 * Captures what the code under test writes to process.stdout and process.stderr (Powertools
 * Logger and Metrics write there through their own Console) until `restore()`.
 */
export function captureProcessOutput() {
  const chunks: string[] = [];
  const collect = (chunk: string | Uint8Array): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(collect),
    vi.spyOn(process.stderr, 'write').mockImplementation(collect),
  ];
  return {
    /** Every complete line written so far, parsed as JSON. */
    json: (): Record<string, unknown>[] =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
