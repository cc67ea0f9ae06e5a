// One verb run: its output and the cluster connections it opened (closed at the end).
import type { GlobalFlags } from './args.ts';
import { connect, type Cluster } from './kube.ts';
import type { Output } from './output.ts';

export interface Session {
  readonly io: Output;
  readonly env: NodeJS.ProcessEnv;
  /**
   * Connects with the user's kubeconfig (running its exec plugin, if any, once); the connection
   * is closed when the verb ends.
   */
  cluster(flags: GlobalFlags): Promise<Cluster>;
  /** Waits `ms` (wait's polling); ends early when the session is aborted. */
  sleep(ms: number): Promise<void>;
}

export function createSession(io: Output, env: NodeJS.ProcessEnv = process.env): Session & { close(): void } {
  const opened: Cluster[] = [];
  return {
    io,
    env,
    async cluster(flags) {
      const c = await connect(flags, env);
      opened.push(c);
      return c;
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close() {
      for (const c of opened.splice(0)) c.close();
    },
  };
}
