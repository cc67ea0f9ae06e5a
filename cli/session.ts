// One verb run: its output and the cluster connections it opened (closed at the end).
import type { GlobalFlags } from './args.ts';
import type { Cluster } from '../views/cluster.ts';
import type { Output } from './output.ts';

export interface Session {
  readonly io: Output;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted when the user stops the command (Ctrl-C, SIGTERM): `get -w` ends there with exit 0. */
  readonly signal: AbortSignal;
  /**
   * Connects with the user's kubeconfig (running its exec plugin, if any, once); the connection
   * is closed when the verb ends.
   */
  cluster(flags: GlobalFlags): Promise<Cluster>;
  /** Waits `ms` (wait's polling); ends early when the session is aborted. */
  sleep(ms: number): Promise<void>;
}

export function createSession(
  io: Output,
  env: NodeJS.ProcessEnv = process.env,
  signal: AbortSignal = new AbortController().signal,
): Session & { close(): void } {
  const opened: Cluster[] = [];
  return {
    io,
    env,
    signal,
    async cluster(flags) {
      // The Kubernetes transport is loaded only by the verbs that connect.
      const { connect } = await import('./kube.ts');
      const c = await connect(flags, env);
      opened.push(c);
      return c;
    },
    sleep: (ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      }),
    close() {
      for (const c of opened.splice(0)) c.close();
    },
  };
}
