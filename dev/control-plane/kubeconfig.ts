// The kubeconfig handed to tests and `convoy dev`: the admin client certificate plus one
// token user (and context) per extra user.
import { stringify as stringifyYaml } from 'yaml';
import type { Pki } from './pki.ts';

export function renderKubeconfig(server: string, pki: Pki, tokens: Record<string, string>): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const users = Object.entries(tokens);
  return stringifyYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'convoy-test', cluster: { server, 'certificate-authority-data': b64(pki.caPem) } }],
    users: [
      {
        name: 'admin',
        user: { 'client-certificate-data': b64(pki.adminCertPem), 'client-key-data': b64(pki.adminKeyPem) },
      },
      ...users.map(([name, token]) => ({ name, user: { token } })),
    ],
    contexts: [
      { name: 'admin', context: { cluster: 'convoy-test', user: 'admin', namespace: 'default' } },
      ...users.map(([name]) => ({
        name,
        context: { cluster: 'convoy-test', user: name, namespace: 'default' },
      })),
    ],
    'current-context': 'admin',
    preferences: {},
  });
}
