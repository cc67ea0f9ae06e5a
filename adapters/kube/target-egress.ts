/**
 * The egress policy for a target cluster's API server a tenant named: the `server` of a kubeconfig
 * stored in a Secret of the tenant's namespace (a Cluster's spec.kubeConfig.secretRef). The
 * functions connect to it with the tenant's own credentials, so without a check a tenant could
 * point it at the management network (the metadata address, the apiserver, the Lambda runtime API
 * on loopback) and read what answered in ClusterNotReady's message.
 *
 * The same rules as every other outbound request (adapters/egress/): a literal address is checked
 * before anything is sent, a name is resolved and its addresses checked now (for a clear message),
 * and every connection then resolves through the guarded lookup — the address checked is the
 * address connected, so a resolver cannot answer differently between the two — and each new
 * socket's remote address is checked once connected. Kubernetes clients follow no redirects.
 *
 * Not checked here: the management cluster's own config (the operator's) and an EKS Cluster's
 * endpoint (AWS describes it for a role the installation's `eksRoles` allows).
 */
import type { Socket } from 'node:net';
import { parseIp } from '../../domain/egress/ip.ts';
import type { EgressPolicy } from '../../domain/egress/policy.ts';
import { describeUrlProblem, urlProblem } from '../../domain/egress/redirect.ts';
import { EgressRefusedError } from '../egress/errors.ts';
import {
  checkAddress,
  checkOnConnect,
  guardedLookup,
  systemResolver,
  type Resolver,
  type Target,
} from '../egress/lookup.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

export interface TargetEgress {
  policy: EgressPolicy;
  /** Name resolution; default dns.lookup with every address (tests inject a stub). */
  resolver?: Resolver | undefined;
}

/** The server may not be reached; the message names the server and the rule, never an answer. */
export class TargetEgressRefusedError extends Error {
  override name = 'TargetEgressRefusedError';
}

/**
 * `config` (a tenant's stored kubeconfig) with the egress policy's connect checks, or
 * TargetEgressRefusedError when the policy refuses its server (`what` opens the message).
 */
export async function guardTargetServer(
  config: KubeClientConfig,
  egress: TargetEgress,
  what: string,
): Promise<KubeClientConfig> {
  const url = new URL(config.server); // kubeClientConfig checked that it parses
  const refuse = (reason: string) =>
    new TargetEgressRefusedError(`${what}: the server ${url.host}: ${reason}`);
  const problem = urlProblem(url);
  if (problem !== undefined) throw refuse(describeUrlProblem(problem, url.protocol));
  const target: Target = {
    host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    redirected: false,
  };
  const resolver = egress.resolver ?? systemResolver;
  try {
    if (parseIp(target.host) !== undefined) checkAddress(egress.policy, target, target.host);
    else await checkName(egress.policy, resolver, target);
  } catch (error) {
    if (error instanceof EgressRefusedError) throw refuse(error.message);
    throw error;
  }
  return Object.freeze({
    ...config,
    connectGuard: {
      lookup: guardedLookup(egress.policy, resolver, target),
      onSocket: (socket: Socket) => checkOnConnect(egress.policy, target, socket),
    },
  });
}

/**
 * Refuses a name none of whose addresses the policy allows. A name that does not resolve is left
 * to the connection (whose message says so, as for any unreachable server).
 */
async function checkName(policy: EgressPolicy, resolver: Resolver, target: Target): Promise<void> {
  let addresses;
  try {
    addresses = await resolver(target.host);
  } catch {
    return;
  }
  let refusal: Error | undefined;
  for (const { address } of addresses) {
    try {
      checkAddress(policy, target, address);
      return;
    } catch (error) {
      refusal ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  if (refusal !== undefined) throw refusal;
}
