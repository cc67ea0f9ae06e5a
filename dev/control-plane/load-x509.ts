// Loads @peculiar/x509 behind a minimal Reflect metadata polyfill.

/**
 * @peculiar/x509 2.x loads tsyringe, which throws at import time unless a Reflect metadata
 * polyfill (reflect-metadata, core-js, @abraham/reflection) is present. None is a dependency
 * here, so install a minimal one, only when no polyfill is loaded, before importing it.
 * TODO: drop this once `reflect-metadata` is added to package.json and imported instead.
 */
export async function loadX509(): Promise<typeof import('@peculiar/x509')> {
  installReflectMetadataShim();
  return import('@peculiar/x509');
}

function installReflectMetadataShim(): void {
  const reflect = Reflect as unknown as Record<string, unknown>;
  if (typeof reflect.getMetadata === 'function') return;
  type Key = unknown;
  type Prop = string | symbol | undefined;
  const store = new WeakMap<object, Map<Prop, Map<Key, unknown>>>();
  const table = (target: object, prop: Prop, create: boolean): Map<Key, unknown> | undefined => {
    let byProp = store.get(target);
    if (!byProp) {
      if (!create) return undefined;
      byProp = new Map();
      store.set(target, byProp);
    }
    let byKey = byProp.get(prop);
    if (!byKey && create) {
      byKey = new Map();
      byProp.set(prop, byKey);
    }
    return byKey;
  };
  const defineMetadata = (key: Key, value: unknown, target: object, prop?: Prop): void => {
    table(target, prop, true)?.set(key, value);
  };
  const hasOwnMetadata = (key: Key, target: object, prop?: Prop): boolean =>
    table(target, prop, false)?.has(key) ?? false;
  const getOwnMetadata = (key: Key, target: object, prop?: Prop): unknown =>
    table(target, prop, false)?.get(key);
  const hasMetadata = (key: Key, target: object, prop?: Prop): boolean => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      if (hasOwnMetadata(key, t, prop)) return true;
    }
    return false;
  };
  const getMetadata = (key: Key, target: object, prop?: Prop): unknown => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      if (hasOwnMetadata(key, t, prop)) return getOwnMetadata(key, t, prop);
    }
    return undefined;
  };
  const metadata = (key: Key, value: unknown) => (target: object, prop?: Prop) =>
    defineMetadata(key, value, target, prop);
  Object.assign(reflect, {
    defineMetadata,
    hasOwnMetadata,
    getOwnMetadata,
    hasMetadata,
    getMetadata,
    metadata,
  });
}
