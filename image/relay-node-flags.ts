/**
 * The Node.js flags the relay image starts the relay with (the relay's memory). The
 * image's entrypoint (image/build-oci.ts, image/Dockerfile) and the relay-scale bench, which
 * measures the relay as the image runs it, read them here, and RELAY_MALLOC_ENV (below).
 *
 * - --optimize-for-size: V8 favours memory over speed (a smaller young generation, slower heap
 *   growth, pages given back sooner). The relay is I/O-bound; with 10,000 Releases its RSS
 *   settled at ~155 MiB instead of ~265 MiB (heap used the same, ~52 MiB), the event →
 *   message lag stayed well under its 1-s target (docs/decisions.md, bench/RESULTS.md).
 * - --max-semi-space-size=1 (MiB): the young generation small even where --optimize-for-size
 *   would not set it (V8 versions differ); the relay's garbage is short-lived (a watch event,
 *   a list page, a message).
 * - --expose-gc: the relay compacts its heap once after each full list (relay/heap-compaction.ts),
 *   giving back the pages V8 grew by while it parsed the list.
 */
export const RELAY_NODE_FLAGS: readonly string[] = [
  '--optimize-for-size',
  '--max-semi-space-size=1',
  '--expose-gc',
];

/**
 * The environment the relay image sets for glibc's malloc (the relay's memory). What
 * the relay holds outside V8's heap is mostly the buffers of its list pages and watch chunks
 * (64 KiB socket reads, a ~1.7 MB body per page of 500 Releases): freed, glibc kept them in its
 * heap, and after freeing one large mmap'd buffer it raised its mmap threshold so the next pages
 * came from the heap too. A fixed threshold of 64 KiB (which also stops that raising) gives every
 * such buffer its own mapping, returned on free; two arenas instead of eight per core. Measured
 * with 10,000 Releases, three A/B pairs: RSS settled 138 vs 151 MiB (non-heap memory 77-88 vs
 * 87-102 MiB), V8 heap the same (docs/decisions.md, "The relay's memory").
 */
export const RELAY_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '65536',
  MALLOC_ARENA_MAX: '2',
};
