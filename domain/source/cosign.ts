/**
 * Key-based cosign signatures of OCI artifacts, the pure part (no network, no fs): where cosign
 * stores the signatures of a digest, and whether one signature layer signs that digest with a key.
 *
 * cosign's format (the one `cosign sign --key` writes without the new bundle format):
 * - the signatures of `<repo>@sha256:<hex>` are the layers of the manifest tagged `sha256-<hex>.sig`
 *   in the same repository;
 * - each layer (media type `application/vnd.dev.cosign.simplesigning.v1+json`) is a "simple signing"
 *   JSON payload whose `critical.image.docker-manifest-digest` is the signed digest and
 *   `critical.type` is `cosign container image signature`;
 * - the layer's annotation `dev.cosignproject.cosign/signature` is the base64 signature of the
 *   payload bytes: ECDSA P-256 with SHA-256 (ASN.1 DER), for cosign's default key pair.
 * Keyless signatures (Fulcio certificates, the Rekor log) need the internet and are not verified here.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export const COSIGN_SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
const SIMPLE_SIGNING_TYPE = 'cosign container image signature';

/** The tag cosign stores the signatures of `digest` (sha256:<hex>) under. */
export function cosignSignatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

export class CosignKeyError extends Error {
  override name = 'CosignKeyError';
}

/** A PEM public key (cosign.pub); throws CosignKeyError naming `what` (never the key) when it is not one. */
export function cosignPublicKey(pem: string, what: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new CosignKeyError(
      `${what} is not a PEM public key (cosign.pub as cosign generate-key-pair writes it)`,
      { cause: error },
    );
  }
  const type = key.asymmetricKeyType;
  if (type !== 'ec' && type !== 'rsa' && type !== 'ed25519') {
    throw new CosignKeyError(
      `${what} is a ${type ?? 'unknown'} key; cosign keys are ECDSA (P-256), RSA or Ed25519`,
    );
  }
  return key;
}

export type SignatureCheck = { ok: true } | { ok: false; why: string };

/**
 * Whether one signature layer signs `digest`: the payload is a simple-signing document naming
 * exactly that digest, and the signature verifies against the key. `why` says what is wrong,
 * for the Release's message.
 */
export function checkCosignSignature(input: {
  payload: Uint8Array;
  signatureBase64: string | undefined;
  digest: string;
  key: KeyObject;
}): SignatureCheck {
  if (input.signatureBase64 === undefined || input.signatureBase64 === '') {
    return { ok: false, why: `a signature layer has no ${COSIGN_SIGNATURE_ANNOTATION} annotation` };
  }
  const signature = Buffer.from(input.signatureBase64, 'base64');
  if (signature.length === 0) return { ok: false, why: 'a signature annotation is not base64' };
  let signed: boolean;
  try {
    const type = input.key.asymmetricKeyType;
    signed = verify(type === 'ed25519' ? null : 'sha256', input.payload, input.key, signature);
  } catch {
    signed = false;
  }
  if (!signed)
    return {
      ok: false,
      why: 'a signature does not verify with the public key (signed with another key, or altered)',
    };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(input.payload).toString('utf8'));
  } catch {
    return { ok: false, why: 'a signed payload is not JSON' };
  }
  const critical =
    typeof parsed === 'object' && parsed !== null ? (parsed as { critical?: unknown }).critical : undefined;
  const c =
    typeof critical === 'object' && critical !== null
      ? (critical as { type?: unknown; image?: unknown })
      : undefined;
  const image =
    typeof c?.image === 'object' && c.image !== null ? (c.image as Record<string, unknown>) : undefined;
  if (c === undefined || c.type !== SIMPLE_SIGNING_TYPE || image === undefined) {
    return {
      ok: false,
      why: `a signed payload is not a cosign simple-signing document (critical.type "${SIMPLE_SIGNING_TYPE}")`,
    };
  }
  const named = image['docker-manifest-digest'];
  if (named !== input.digest) {
    return {
      ok: false,
      why: `a valid signature signs ${typeof named === 'string' ? named.slice(0, 80) : 'no digest'}, not ${input.digest}`,
    };
  }
  return { ok: true };
}
