/**
 * Registry options shared by the OCI sources (spec.source.helm with an oci:// repository, and the
 * `oci` source kind): how convoy authenticates (`provider`), which CA the registry's TLS chains to
 * (`certSecretRef`) and which signature the artifact must carry (`verify`). Spread `ociRegistryFields`
 * into a source's z.object and add `ociRegistryRules(urlField)` to its CEL rules.
 */
import { z } from 'zod';
import { localObjectReference, type CelRule } from './common.ts';
import { ECR_OCI_URL_PATTERN } from '../source/ecr.ts';

export const ociVerifySchema = z
  .object({
    provider: z
      .enum(['cosign'])
      .describe(
        'cosign: a key-based cosign signature (cosign sign --key). Keyless verification is not supported.',
      ),
    secretRef: localObjectReference(
      'A Secret in the Release namespace with the public key as key cosign.pub (PEM), read as the Release identity.',
    ),
  })
  .describe(
    'Verify the artifact before anything is rendered: its digest must carry a cosign signature (tag sha256-<hex>.sig in the same repository) that verifies with the key. Unsigned or wrongly signed: Applied False, SourceNotReady, not retried with backoff.',
  );

export type OciVerify = z.infer<typeof ociVerifySchema>;

export const ociRegistryFields = {
  provider: z
    .enum(['generic', 'aws'])
    .optional()
    .describe(
      "generic (default): anonymous, or the credentials of secretRef. aws: an Amazon ECR registry, with a token from ecr:GetAuthorizationToken called with the functions' own role (the installation grants the repositories); not together with secretRef.",
    ),
  certSecretRef: localObjectReference(
    "A Secret in the Release namespace with key ca.crt: the PEM CA bundle the registry's TLS certificate chains to (instead of the public trust store), read as the Release identity.",
  ).optional(),
  verify: ociVerifySchema.optional(),
};

/** The CEL rules of those fields; `url` is the field holding the oci:// location (e.g. `repository`). */
export function ociRegistryRules(url: string, opts: { ociOnly: boolean }): CelRule[] {
  const onlyOci = (field: string): CelRule => ({
    rule: `!has(self.${field}) || self.${url}.startsWith('oci://')`,
    message: `${field} is only allowed with an oci:// ${url}`,
  });
  return [
    ...(opts.ociOnly ? [onlyOci('provider'), onlyOci('certSecretRef'), onlyOci('verify')] : []),
    {
      rule: "!has(self.provider) || self.provider != 'aws' || !has(self.secretRef)",
      message: "provider aws authenticates with the functions' role: leave out secretRef",
    },
    {
      rule: `!has(self.provider) || self.provider != 'aws' || self.${url}.matches('${ECR_OCI_URL_PATTERN.replace(/\\/g, '\\\\')}')`,
      message: `provider aws needs an Amazon ECR ${url}: oci://<account>.dkr.ecr.<region>.amazonaws.com/<path>`,
    },
  ];
}
