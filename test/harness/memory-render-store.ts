// An in-memory RenderStore (the port is not Kubernetes, so a fake is fine) for HTTP API tests.
import {
  compareNewestFirst,
  type RenderStore,
  type StoredRender,
  type StoredRenderMeta,
} from '../../domain/store/render-store.ts';

export class MemoryRenderStore implements RenderStore {
  readonly renders = new Map<string, StoredRender>();
  private key(ns: string, release: string, renderRef: string) {
    return `${ns}/${release}/${renderRef}`;
  }
  put(meta: StoredRenderMeta, objects: readonly object[]): Promise<void> {
    const k = this.key(meta.namespace, meta.release, meta.renderRef);
    if (!this.renders.has(k)) this.renders.set(k, { meta, objects });
    return Promise.resolve();
  }
  get(ns: string, release: string, renderRef: string): Promise<StoredRender | undefined> {
    return Promise.resolve(this.renders.get(this.key(ns, release, renderRef)));
  }
  has(ns: string, release: string, renderRef: string): Promise<boolean> {
    return Promise.resolve(this.renders.has(this.key(ns, release, renderRef)));
  }
  list(ns: string, release: string): Promise<StoredRenderMeta[]> {
    const metas = [...this.renders.values()]
      .map((r) => r.meta)
      .filter((m) => m.namespace === ns && m.release === release);
    return Promise.resolve(metas.sort(compareNewestFirst));
  }
  delete(ns: string, release: string, renderRef: string): Promise<void> {
    this.renders.delete(this.key(ns, release, renderRef));
    return Promise.resolve();
  }
}
