import { describe, expect, it } from 'vitest';
import { loadRender } from '../../../domain/observe/load-render.ts';
import {
  RenderStoreReadError,
  RenderStoreUnavailableError,
  type RenderStore,
  type StoredRender,
} from '../../../domain/store/render-store.ts';
import { configMap, release, RENDER_A } from './fixtures.ts';

function storeWith(get: () => Promise<StoredRender | undefined>): RenderStore {
  const unused = () => Promise.reject(new Error('not used'));
  return { get, put: unused, has: unused, list: unused, delete: unused };
}
const meta = {
  renderRef: RENDER_A,
  namespace: 'team-a',
  release: 'web',
  createdAt: '2026-11-29T09:00:00Z',
  objectCount: 1,
};

describe('loading the render the observers compare', () => {
  it('a stored render loads its objects', async () => {
    const loaded = await loadRender(
      storeWith(() => Promise.resolve({ meta, objects: [configMap()] })),
      release(),
      RENDER_A,
    );
    expect(loaded).toEqual({ kind: 'loaded', renderRef: RENDER_A, objects: [configMap()] });
  });

  it('a render missing from the store, an unreadable one, and no store at all are unavailable with a message', async () => {
    expect(
      await loadRender(
        storeWith(() => Promise.resolve(undefined)),
        release(),
        RENDER_A,
      ),
    ).toMatchObject({
      kind: 'unavailable',
      message: `render ${RENDER_A} is not in the render store; the next reconcile of an unchanged source stores it again`,
    });
    const unreadable = storeWith(() => Promise.reject(new RenderStoreReadError('renders/x', 'bad gzip')));
    expect(await loadRender(unreadable, release(), RENDER_A)).toMatchObject({ kind: 'unavailable' });
    expect(await loadRender(undefined, release(), RENDER_A)).toMatchObject({
      kind: 'unavailable',
      message: expect.stringContaining('no render store') as unknown,
    });
    const notObjects = storeWith(() => Promise.resolve({ meta, objects: [{ kind: 'ConfigMap' }] }));
    expect(await loadRender(notObjects, release(), RENDER_A)).toMatchObject({
      kind: 'unavailable',
      message: expect.stringContaining('missing apiVersion') as unknown,
    });
  });

  it('a store that cannot be reached is an error (the runtime retries)', async () => {
    const down = storeWith(() =>
      Promise.reject(new RenderStoreUnavailableError('get', 'k', 'ECONNREFUSED', 'down')),
    );
    await expect(loadRender(down, release(), RENDER_A)).rejects.toBeInstanceOf(RenderStoreUnavailableError);
  });
});
