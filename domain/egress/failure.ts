/**
 * The class of a failed outbound request, for status messages: one short phrase, never the
 * server's answer or the TLS library's text (an internal server's words in a Release's status are
 * what a tenant scanning the network reads). The adapter collects the error codes and names of the
 * error's cause chain; this maps them.
 */

export type FailureClass =
  | 'connection refused'
  | 'timed out'
  | 'host not found'
  | 'connection reset'
  | 'network unreachable'
  | 'TLS failure: certificate not trusted'
  | 'TLS failure: certificate names another host'
  | 'TLS failure: certificate expired or not yet valid'
  | 'TLS failure: handshake failed'
  | 'network error';

const TRUST =
  /^(UNABLE_TO_(GET_ISSUER_CERT|GET_ISSUER_CERT_LOCALLY|VERIFY_LEAF_SIGNATURE|DECRYPT_CERT_SIGNATURE|DECODE_ISSUER_PUBLIC_KEY)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_SIGNATURE_FAILURE|CERT_REJECTED|CERT_UNTRUSTED|INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE)$/;

/** `codes`: the `code` of each error in the cause chain; `names`: their `name`. */
export function failureClass(codes: readonly string[], names: readonly string[]): FailureClass {
  if (
    names.includes('TimeoutError') ||
    names.includes('AbortError') ||
    codes.some((c) => c === 'ETIMEDOUT' || c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ERR_EGRESS_TIMEOUT')
  ) {
    return 'timed out';
  }
  for (const code of codes) {
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA')
      return 'host not found';
    if (
      code === 'ECONNRESET' ||
      code === 'EPIPE' ||
      code === 'UND_ERR_SOCKET' ||
      code === 'ERR_STREAM_PREMATURE_CLOSE'
    )
      return 'connection reset';
    if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'EADDRNOTAVAIL')
      return 'network unreachable';
    if (TRUST.test(code)) return 'TLS failure: certificate not trusted';
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH')
      return 'TLS failure: certificate names another host';
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
      return 'TLS failure: certificate expired or not yet valid';
    if (/^ERR_SSL_|^ERR_TLS_|^CERT_|SSL|TLS/.test(code)) return 'TLS failure: handshake failed';
  }
  return 'network error';
}

/** Whether the class is a TLS failure (the message then points at the CA setting). */
export function isTlsFailure(failure: FailureClass): boolean {
  return failure.startsWith('TLS failure');
}
