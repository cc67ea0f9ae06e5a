/**
 * A read view could not answer, and the user must act: a Cluster that does not exist or names no
 * credentials, a kubeconfig Secret without its key. The message names the object and is the whole
 * answer: the CLI prints it as its one line (exit 1, cli/error-line.ts), the relay's API returns it
 * as 409 TargetNotReady (relay/http/release-views.ts).
 */
export class ViewFailure extends Error {
  override name = 'ViewFailure';
}
