// Values made on first use and kept: one per Lambda container (the functions' clients) or per
// process (the relay's S3 client). No dependencies, so a caller loads nothing else with it.

/** once() for an async value; a rejected attempt is not kept, so the next invocation tries again. */
export function onceAsync<T>(create: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= create().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}
