/**
 * The guarded connect of the egress client: name resolution checked against the policy in the
 * very callback net.connect uses, so the address checked is the address connected to (no DNS
 * rebinding between a check and a second lookup), plus a check of an IP literal before connecting
 * (net does not resolve literals) and of the socket's remote address once connected.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Socket } from 'node:net';
import { parseIp } from '../../domain/egress/ip.ts';
import { decideEgress, type EgressPolicy } from '../../domain/egress/policy.ts';
import { EgressRefusedError } from './errors.ts';

/** Resolves a host name to every address it has (dns.lookup with all: true); injectable for tests. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;
export type LookupFunction = (
  hostname: string,
  options: { family?: number | string; all?: boolean },
  callback: LookupCallback,
) => void;

export interface Target {
  /** The host as the URL names it (no brackets), lower case. */
  host: string;
  port: number;
  /** Whether this connection follows a redirect (for the message). */
  redirected: boolean;
}

/** Throws EgressRefusedError when `address` (an IP literal) may not be connected to for `target`. */
export function checkAddress(policy: EgressPolicy, target: Target, address: string): void {
  const ip = parseIp(address);
  if (ip === undefined) throw new EgressRefusedError(`the address ${address} does not parse`);
  const decision = decideEgress(policy, { host: target.host, port: target.port, address: ip });
  if (!decision.allowed) throw EgressRefusedError.byRule(decision.rule, target.redirected);
}

/** A `lookup` for net.connect that resolves with `resolver` and hands on only the addresses the policy allows. */
export function guardedLookup(policy: EgressPolicy, resolver: Resolver, target: Target): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (addresses) => {
        const family =
          options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const allowed: LookupAddress[] = [];
        let refusal: EgressRefusedError | undefined;
        for (const entry of addresses) {
          if (family !== 0 && entry.family !== family) continue;
          try {
            checkAddress(policy, target, entry.address);
            allowed.push(entry);
          } catch (error) {
            if (!(error instanceof EgressRefusedError)) throw error;
            refusal ??= error;
          }
        }
        if (allowed.length === 0) {
          const notFound = Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
          callback(refusal ?? notFound, options.all ? [] : '', undefined);
          return;
        }
        if (options.all) callback(null, allowed);
        else callback(null, allowed[0].address, allowed[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : '', undefined),
    );
  };
}

/** Checks the remote address of a socket once it connects (defence in depth: the lookup already checked it). */
export function checkOnConnect(policy: EgressPolicy, target: Target, socket: Socket): void {
  if (!socket.connecting) return; // a kept-alive socket, checked when it connected
  socket.once('connect', () => {
    const remote = socket.remoteAddress;
    try {
      if (remote === undefined) throw new EgressRefusedError('the connection has no remote address');
      checkAddress(policy, target, remote);
    } catch (error) {
      socket.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
