// The certificates and keys a throwaway control plane needs: a CA, the apiserver's serving
// certificate, an admin client certificate (O=system:masters) and service-account signing keys.
import { generateKeyPair, webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { loadX509 } from './load-x509.ts';

export interface Pki {
  caPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
  saPublicPem: string;
  saPrivatePem: string;
}

export async function generatePki(): Promise<Pki> {
  const x509 = await loadX509();
  const crypto = webcrypto;
  const ec = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' } as const;
  const newKeys = () => crypto.subtle.generateKey(ec, true, ['sign', 'verify']);
  const keyPem = async (key: webcrypto.CryptoKey) =>
    x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(Date.now() + 365 * 24 * 60 * 60 * 1000);

  const saKeys = promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

  const [caKeys, servingKeys, adminKeys] = await Promise.all([newKeys(), newKeys(), newKeys()]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=convoy-test-ca',
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const leaf = async (
    subject: string,
    keys: webcrypto.CryptoKeyPair,
    usage: string,
    sans?: { type: 'dns' | 'ip'; value: string }[],
  ) =>
    x509.X509CertificateGenerator.create(
      {
        subject,
        issuer: ca.subject,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        notBefore,
        notAfter,
        signingAlgorithm,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
            true,
          ),
          new x509.ExtendedKeyUsageExtension([usage], false),
          await x509.AuthorityKeyIdentifierExtension.create(ca, false, crypto),
          ...(sans ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
        ],
      },
      crypto,
    );
  const serving = await leaf('CN=kube-apiserver', servingKeys, x509.ExtendedKeyUsage.serverAuth, [
    { type: 'dns', value: 'localhost' },
    { type: 'ip', value: '127.0.0.1' },
  ]);
  const admin = await leaf('CN=admin, O=system:masters', adminKeys, x509.ExtendedKeyUsage.clientAuth);
  const sa = await saKeys;
  return {
    caPem: ca.toString('pem'),
    servingCertPem: serving.toString('pem'),
    servingKeyPem: await keyPem(servingKeys.privateKey),
    adminCertPem: admin.toString('pem'),
    adminKeyPem: await keyPem(adminKeys.privateKey),
    saPublicPem: sa.publicKey,
    saPrivatePem: sa.privateKey,
  };
}
