/**
 * Errors of the egress client, and the one-line description of any failed request for status
 * messages (the class of failure, never the server's answer or the TLS library's text).
 */
import { failureClass, type FailureClass } from '../../domain/egress/failure.ts';
import { describeRule, type EgressRule } from '../../domain/egress/policy.ts';

/** Where the installation's operator opens the policy, for messages. */
export const EGRESS_SETTING = 'egress.allow (CONVOY_EGRESS_ALLOW)';

/**
 * A connection convoy refused to make: the egress policy's rule, or a URL or redirect it does not
 * follow. Nothing was sent to the address refused.
 */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'ERR_EGRESS_REFUSED';
  /** The policy rule, when the policy refused (undefined: a URL or redirect problem). */
  readonly rule: EgressRule | undefined;

  constructor(message: string, rule?: EgressRule) {
    super(message);
    this.rule = rule;
  }

  /** The policy refused the address a URL (or a redirect, `redirected`) leads to. */
  static byRule(rule: EgressRule, redirected: boolean): EgressRefusedError {
    const where = redirected ? `a redirect leads to ${describeRule(rule)}` : `${describeRule(rule)}`;
    return new EgressRefusedError(
      `refused by the egress policy (${where}); if tenants may use that server, the installation's operator lists it in ${EGRESS_SETTING}`,
      rule,
    );
  }
}

/** A request that got no answer in time (the answer or idle timeout of the egress client). */
export class EgressTimeoutError extends Error {
  override name = 'EgressTimeoutError';
  readonly code = 'ERR_EGRESS_TIMEOUT';
}

/** The codes and names along an error's cause chain. */
function chain(error: unknown): { codes: string[]; names: string[] } {
  const codes: string[] = [];
  const names: string[] = [];
  let current: unknown = error;
  for (let i = 0; i < 6 && typeof current === 'object' && current !== null; i++) {
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (typeof name === 'string') names.push(name);
    current = cause;
  }
  return { codes, names };
}

/** The egress refusal somewhere in an error's cause chain. */
export function egressRefusalOf(error: unknown): EgressRefusedError | undefined {
  let current: unknown = error;
  for (let i = 0; i < 6 && current instanceof Error; i++) {
    if (current instanceof EgressRefusedError) return current;
    current = current.cause;
  }
  return undefined;
}

/**
 * What went wrong, in a few words: the egress refusal's own message, or the failure class
 * (connection refused, timed out, TLS failure: …). Never the error's own message.
 */
export function describeFailure(error: unknown): string {
  const refused = egressRefusalOf(error);
  if (refused !== undefined) return refused.message;
  return failureOf(error);
}

export function failureOf(error: unknown): FailureClass {
  const { codes, names } = chain(error);
  return failureClass(codes, names);
}
