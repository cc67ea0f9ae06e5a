import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../platform/logger.ts';
import type { LoggerOptions } from '../../../platform/logger.ts';

function capture(options: Omit<LoggerOptions, 'write' | 'now'> = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...options, write: (line) => lines.push(line), now: () => new Date(0) });
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, entries };
}

describe('createLogger', () => {
  it('writes one JSON line per call with time, level, msg, base and call fields', () => {
    const { logger, lines, entries } = capture({ base: { service: 'convoy-reconcile' } });
    logger.info('applied', { objects: 3 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(entries()[0]).toEqual({
      time: '1970-01-01T00:00:00.000Z',
      level: 'info',
      msg: 'applied',
      service: 'convoy-reconcile',
      objects: 3,
    });
  });

  it('a child adds its fields to every line and leaves the parent untouched', () => {
    const { logger, entries } = capture();
    const a = logger.child({ messageId: 'a', loop: 'drift' });
    const b = a.child({ messageId: 'b' });
    a.info('one');
    b.warn('two');
    logger.error('three');
    expect(entries().map(({ messageId, loop }) => ({ messageId, loop }))).toEqual([
      { messageId: 'a', loop: 'drift' },
      { messageId: 'b', loop: 'drift' },
      { messageId: undefined, loop: undefined },
    ]);
  });

  it('fields cannot overwrite time, level or msg', () => {
    const { logger, entries } = capture();
    logger.info('real', { msg: 'fake', level: 'error' });
    expect(entries()[0]).toMatchObject({ msg: 'real', level: 'info' });
  });

  it('levels below the configured one are not written (default info)', () => {
    const { logger, entries } = capture();
    logger.debug('hidden');
    logger.info('shown');
    expect(entries().map((entry) => entry['msg'])).toEqual(['shown']);
    const verbose = capture({ level: 'debug' });
    verbose.logger.debug('shown');
    expect(verbose.entries()).toHaveLength(1);
  });

  it('errors are written as name and message, without the stack below error level', () => {
    const { logger, entries } = capture();
    const cause = new Error('connection reset');
    logger.warn('retrying', { error: new TypeError('bad thing', { cause }) });
    expect(entries()[0]?.['error']).toEqual({
      name: 'TypeError',
      message: 'bad thing',
      cause: { name: 'Error', message: 'connection reset' },
    });
  });

  it('errors at error level carry the stack', () => {
    const { logger, entries } = capture();
    logger.error('failed', { error: new Error('boom') });
    const error = entries()[0]?.['error'] as Record<string, unknown>;
    expect(error).toMatchObject({ name: 'Error', message: 'boom' });
    expect(error['stack']).toMatch(/^Error: boom\n\s+at /);
  });

  it('fields that JSON cannot hold never make the logger throw', () => {
    const { logger, entries } = capture();
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    logger.info('odd', { circular, big: 10n });
    expect(entries()[0]).toMatchObject({ msg: 'odd', circular: { self: '[Circular]' }, big: '10' });
  });
});
