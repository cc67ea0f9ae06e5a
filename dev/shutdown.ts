// When `convoy dev` should stop: SIGINT, SIGTERM or SIGHUP, or (under `npm start`) the npm
// process that started it is gone. Exposed as an AbortSignal plus the reason.
export interface ShutdownWatch {
  readonly signal: AbortSignal;
  /** Why the stop began ('SIGINT', 'parent process exited', …); undefined while running. */
  reason(): string | undefined;
  /** Removes the handlers (call once everything is stopped). */
  dispose(): void;
}

/**
 * A second signal more than `forceAfterMs` after the first ends the process at once (exit 130);
 * one arriving sooner is the same request repeated: a Ctrl-C under npm reaches convoy twice,
 * from the terminal and forwarded by npm.
 */
export function watchShutdown(
  opts: { readonly forceAfterMs?: number; readonly parentPollMs?: number } = {},
): ShutdownWatch {
  const controller = new AbortController();
  let why: string | undefined;
  let firstAt = 0;
  const begin = (reason: string): void => {
    if (why !== undefined) return;
    why = reason;
    firstAt = Date.now();
    controller.abort(new Error(reason));
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (why !== undefined && Date.now() - firstAt > (opts.forceAfterMs ?? 1_000)) {
      process.stderr.write(`convoy dev: ${signal} again: exiting without a clean stop\n`);
      process.exit(130); // the control plane's exit handler kills its processes; its reaper removes its folder
    }
    begin(signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);

  // Under `npm start`, a SIGKILLed npm cannot forward anything: notice that it is gone.
  let parentTimer: NodeJS.Timeout | undefined;
  if (process.env['npm_lifecycle_event'] !== undefined) {
    const parent = process.ppid;
    parentTimer = setInterval(() => {
      if (process.ppid !== parent) begin('the npm process that started convoy dev exited');
    }, opts.parentPollMs ?? 500);
    parentTimer.unref();
  }
  return {
    signal: controller.signal,
    reason: () => why,
    dispose() {
      for (const s of signals) process.off(s, onSignal);
      if (parentTimer) clearInterval(parentTimer);
    },
  };
}
