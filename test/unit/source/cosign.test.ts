// Key-based cosign signatures, the payload and signature checks: a simple-signing
// payload naming the artifact digest, ECDSA P-256/SHA-256 over the payload bytes, the public key
// PEM as cosign generate-key-pair writes it (cosign.pub). Signatures are made here with node:crypto
// in cosign's format; test/integration/oci-auth.test.ts verifies ones the real cosign wrote.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkCosignSignature,
  cosignPublicKey,
  cosignSignatureTag,
  CosignKeyError,
} from '../../../domain/source/cosign.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const { privateKey, publicKey } = pair();
const other = pair();
const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

function payload(digest: string, type = 'cosign container image signature'): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': 'reg.example/app' },
        image: { 'docker-manifest-digest': digest },
        type,
      },
      optional: null,
    }),
  );
}
const signed = (bytes: Buffer, key = privateKey) => sign('sha256', bytes, key).toString('base64');

describe('cosign signatures', () => {
  it('the signature tag of a digest: sha256-<hex>.sig', () => {
    expect(cosignSignatureTag(DIGEST)).toBe(`sha256-${'ab'.repeat(32)}.sig`);
  });

  it('a payload naming the digest, signed with the key: valid', () => {
    const bytes = payload(DIGEST);
    expect(
      checkCosignSignature({
        payload: bytes,
        signatureBase64: signed(bytes),
        digest: DIGEST,
        key: cosignPublicKey(pem, 'cosign.pub'),
      }),
    ).toEqual({ ok: true });
  });

  it('signed with another key: not valid, saying so', () => {
    const bytes = payload(DIGEST);
    const check = checkCosignSignature({
      payload: bytes,
      signatureBase64: signed(bytes, other.privateKey),
      digest: DIGEST,
      key: publicKey,
    });
    expect(check).toEqual({
      ok: false,
      why: 'a signature does not verify with the public key (signed with another key, or altered)',
    });
  });

  it('a valid signature of another digest (a signature copied from another artifact): not valid', () => {
    const elsewhere = `sha256:${'cd'.repeat(32)}`;
    const bytes = payload(elsewhere);
    expect(
      checkCosignSignature({
        payload: bytes,
        signatureBase64: signed(bytes),
        digest: DIGEST,
        key: publicKey,
      }),
    ).toEqual({
      ok: false,
      why: `a valid signature signs ${elsewhere}, not ${DIGEST}`,
    });
  });

  it('an altered payload (the signature was of other bytes): not valid', () => {
    const bytes = payload(DIGEST);
    const signature = signed(bytes);
    const altered = Buffer.from(bytes.toString('utf8').replace('reg.example/app', 'reg.example/evil'));
    expect(
      checkCosignSignature({ payload: altered, signatureBase64: signature, digest: DIGEST, key: publicKey })
        .ok,
    ).toBe(false);
  });

  it('a signed payload that is not a simple-signing document, or no signature annotation: not valid', () => {
    const wrongType = payload(DIGEST, 'something else');
    expect(
      checkCosignSignature({
        payload: wrongType,
        signatureBase64: signed(wrongType),
        digest: DIGEST,
        key: publicKey,
      }),
    ).toMatchObject({ ok: false });
    expect(
      JSON.stringify(
        checkCosignSignature({
          payload: wrongType,
          signatureBase64: signed(wrongType),
          digest: DIGEST,
          key: publicKey,
        }),
      ),
    ).toContain('not a cosign simple-signing document');
    const notJson = Buffer.from('not json');
    expect(
      checkCosignSignature({
        payload: notJson,
        signatureBase64: signed(notJson),
        digest: DIGEST,
        key: publicKey,
      }),
    ).toEqual({ ok: false, why: 'a signed payload is not JSON' });
    expect(
      checkCosignSignature({
        payload: payload(DIGEST),
        signatureBase64: undefined,
        digest: DIGEST,
        key: publicKey,
      }),
    ).toEqual({ ok: false, why: 'a signature layer has no dev.cosignproject.cosign/signature annotation' });
  });

  it('a key that is not a PEM public key is refused naming where it came from, not echoing it', () => {
    expect(() =>
      cosignPublicKey(
        '-----BEGIN PUBLIC KEY-----\nnot-a-key\n-----END PUBLIC KEY-----\n',
        'Secret ns/keys cosign.pub',
      ),
    ).toThrow(CosignKeyError);
    expect(() => cosignPublicKey('garbage', 'Secret ns/keys cosign.pub')).toThrow(
      'Secret ns/keys cosign.pub is not a PEM public key (cosign.pub as cosign generate-key-pair writes it)',
    );
  });
});
