/**
 * What a client of one OCI repository is given (createOciClient in oci-registry.ts). Its own file
 * because both the client and the wording of its failures (oci-answers.ts) read it: the client
 * imports the wording, and the wording names the registry, repository and spec field from here.
 */
import type { Egress } from '../egress/client.ts';
import type { RegistryCredentials } from '../../domain/source/oci.ts';

export interface OciClientOptions {
  registry: string;
  repository: string;
  /** Plain HTTP (`insecure: true`, allowed by the installation); default HTTPS. */
  plainHttp?: boolean;
  /**
   * Which `host[:port]` a redirect or a token realm may reach over plain HTTP (the installation's
   * CONVOY_INSECURE_REGISTRIES); default: the registry itself when `plainHttp`, no other.
   */
  plainHttpAllowed?: ((host: string) => boolean) | undefined;
  /** The egress client every request goes through; default one with the strict policy (public addresses only). */
  egress?: Egress | undefined;
  credentials?: RegistryCredentials | undefined;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /** The spec field for errors, e.g. `spec.source.helm`. */
  field: string;
  /** Counts requests (the bench and tests: a digest-pinned cache hit makes none). */
  onRequest?: (method: string, path: string, status: number) => void;
  /** PEM CA bundle the registry's TLS certificate must chain to (instead of the public trust store). */
  caPem?: string | undefined;
  /** Retries of a request answered 429 or 5xx, with exponential backoff; default 2. */
  retries?: number;
  /** First backoff delay of those retries; default 500 ms (then 1 s, 2 s …; a Retry-After up to 5 s wins). */
  retryDelayMs?: number;
}
