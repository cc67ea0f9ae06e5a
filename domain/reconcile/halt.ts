import { Stops, type StopName } from './stops.ts';

/** A reconcile that ended at one of the spec's stop rows, with the message for Applied. */
export interface Halt {
  readonly halt: StopName;
  readonly message: string;
  readonly error?: Error;
  readonly hook?: { name: string; phase: 'PreSync' | 'PostSync' };
}

export function halt(name: StopName, message: string, error?: unknown): Halt {
  return error instanceof Error ? { halt: name, message, error } : { halt: name, message };
}

export function isHalt(value: unknown): value is Halt {
  return (
    typeof value === 'object' &&
    value !== null &&
    'halt' in value &&
    typeof value.halt === 'string' &&
    value.halt in Stops
  );
}

/** Runs one step; a thrown error becomes the Halt its classifier names. */
export async function attempt<T>(
  run: () => Promise<T>,
  onError: (error: unknown) => Halt,
): Promise<T | Halt> {
  try {
    return await run();
  } catch (error) {
    return onError(error);
  }
}
