/**
 * The Node.js flags the relay image starts the relay with (issue 24: the relay's memory). The
 * image's entrypoint (image/build-oci.ts, image/Dockerfile) and the relay-scale bench, which
 * measures the relay as the image runs it, read them here.
 *
 * - --optimize-for-size: V8 favours memory over speed (a smaller young generation, slower heap
 *   growth, pages given back sooner). The relay is I/O-bound; with 10,000 Releases its RSS
 *   settled at ~155 MiB instead of ~265 MiB (heap used the same, ~52 MiB), the event →
 *   message lag stayed well under its 1-s target (docs/decisions.md, bench/README.md).
 * - --max-semi-space-size=1 (MiB): the young generation small even where --optimize-for-size
 *   would not set it (V8 versions differ); the relay's garbage is short-lived (a watch event,
 *   a list page, a message).
 */
export const RELAY_NODE_FLAGS: readonly string[] = ['--optimize-for-size', '--max-semi-space-size=1'];
