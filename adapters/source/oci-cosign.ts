/**
 * Verifies the key-based cosign signature of an OCI artifact before anything of it is rendered
 * (spec `verify: {provider: cosign, secretRef}`; docs/oci-sources.md "Verification").
 *
 * The signatures of `<repo>@sha256:<hex>` are the layers of the manifest tagged `sha256-<hex>.sig`
 * in the same repository (domain/source/cosign.ts has the format and the checks). One layer that
 * signs exactly this digest and verifies with the Secret's public key is enough, as `cosign verify
 * --key` decides. No transparency-log (Rekor) or certificate (Fulcio) check: those need the internet
 * and are keyless verification, out of scope. Signature manifests and payloads go through the same
 * client (credentials, CA, timeouts, retries, size limits) as the artifact.
 */
import type { KeyObject } from 'node:crypto';
import {
  checkCosignSignature,
  COSIGN_SIGNATURE_ANNOTATION,
  COSIGN_SIMPLE_SIGNING,
  cosignSignatureTag,
} from '../../domain/source/cosign.ts';
import { SourceVerificationError } from './errors.ts';
import type { OciClient } from './oci-registry.ts';

/** Largest simple-signing payload read (cosign's are ~250 bytes). */
const MAX_PAYLOAD_BYTES = 64 * 1024;
/** Signature layers checked at most (a signature manifest gains one layer per `cosign sign`). */
const MAX_SIGNATURES = 32;

export interface CosignVerification {
  /** The digest of the signature manifest that held the verifying signature. */
  signatureDigest: string;
}

/**
 * Resolves when a signature of `digest` verifies with `key`; throws SourceVerificationError
 * (terminal, reason SourceNotReady) saying why not: no signature, or none that verifies.
 * Registry trouble (401, 5xx, timeouts) stays SourceNotReadyError from the client: retried.
 */
export async function verifyCosignSignature(
  client: OciClient,
  digest: string,
  key: KeyObject,
  what: { artifact: string; field: string },
): Promise<CosignVerification> {
  const tag = cosignSignatureTag(digest);
  const signatureDigest = await client.resolveDigest(tag);
  if (signatureDigest === undefined) {
    throw new SourceVerificationError(
      `${what.field}.verify`,
      `${what.artifact} (${digest}) is not signed: ${client.location} has no cosign signature (tag ${tag}); sign it with cosign sign --key, or remove ${what.field}.verify. Nothing was rendered`,
    );
  }
  const { manifest } = await client.manifest(signatureDigest);
  const layers = (Array.isArray(manifest.layers) ? manifest.layers : [])
    .filter((l) => l.mediaType === COSIGN_SIMPLE_SIGNING)
    .slice(0, MAX_SIGNATURES);
  const reasons: string[] = [];
  for (const layer of layers) {
    if (typeof layer.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(layer.digest)) {
      reasons.push('a signature layer has no sha256 digest');
      continue;
    }
    const payload = await client.blob(
      layer.digest,
      MAX_PAYLOAD_BYTES,
      `the signature payload ${layer.digest}`,
    );
    const check = checkCosignSignature({
      payload,
      signatureBase64: layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION],
      digest,
      key,
    });
    if (check.ok) return { signatureDigest };
    reasons.push(check.why);
  }
  const distinct = [...new Set(reasons)];
  throw new SourceVerificationError(
    `${what.field}.verify`,
    `${what.artifact} (${digest}) has no valid cosign signature for the key in ${what.field}.verify.secretRef: ` +
      `${layers.length === 0 ? `the signature manifest ${tag} holds no ${COSIGN_SIMPLE_SIGNING} layer` : `${layers.length} signature${layers.length === 1 ? '' : 's'} checked; ${distinct.join('; ')}`}. Nothing was rendered`,
  );
}
