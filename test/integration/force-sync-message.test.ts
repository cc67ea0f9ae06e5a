/**
 * A force sync of an object the server cannot apply says what the server said: the
 * apiserver's Status message (the field it refused), not only "apply refused by the server
 * (HTTP 500)", which reads like a crash — and never a Secret's values.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

describe('force sync: an apply the server refuses', () => {
  let env: ReconcileEnv;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'force-msg');
  });
  afterAll(() => env.close());

  it('a forced sync (no dry run) of a Deployment with an unknown field: Applied DeployFailed names the field as the server did', async () => {
    const repo = await env.repo('unknown-field', {
      'deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicaz: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "registry.invalid/web:1"}]}
`,
    });
    await env.api.create(
      'Release',
      env.ns.name,
      'forced',
      {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: { git: { url: repo.url, ref: { branch: 'main' } } },
      },
      { annotations: { 'convoy.dev/force-sync-requested-at': '2026-12-02T10:00:00Z' } },
    );
    const result = await env.reconcile('forced');
    const applied = result.release.status?.conditions?.find((c) => c.type === 'Applied');
    process.stdout.write(`Applied message: ${applied?.message ?? ''}\n`);
    expect(applied?.reason).toBe('DeployFailed');
    // What the server said: the field and why, the object, and what to do — not a bare "(HTTP 500)".
    expect(applied?.message).toContain(
      `Deployment ${env.ns.name}/web: apply refused by the server: .spec.replicaz: field not declared in schema`,
    );
    expect(applied?.message).toContain(
      'does not fit the Deployment schema of apps/v1 (fix or remove the field in the source)',
    );
    expect(applied?.message).not.toContain('HTTP 500');
    expect(applied?.message).not.toContain('failed to create typed patch object');
    expect(result.release.status?.lastAttempted?.failure).toMatchObject({
      stage: 'Syncing',
      reason: 'DeployFailed',
    });
    expect(result.release.status?.lastHandledForceSyncAt).toBe('2026-12-02T10:00:00Z');
  });

  it("a forced sync of a Secret with an unknown field says what the server said without the Secret's values", async () => {
    const repo = await env.repo('secret-field', {
      'secret.yaml': `apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: hunter2-very-secret}
dataz: {token: aHVudGVyMi12ZXJ5LXNlY3JldA==}
`,
    });
    await env.api.create(
      'Release',
      env.ns.name,
      'forced-secret',
      {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: { git: { url: repo.url, ref: { branch: 'main' } } },
      },
      { annotations: { 'convoy.dev/force-sync-requested-at': '2026-12-02T10:00:00Z' } },
    );
    const result = await env.reconcile('forced-secret');
    const applied = result.release.status?.conditions?.find((c) => c.type === 'Applied');
    process.stdout.write(`Applied message: ${applied?.message ?? ''}\n`);
    expect(applied?.reason).toBe('DeployFailed');
    expect(applied?.message).toContain(
      `Secret ${env.ns.name}/creds: apply refused by the server: .dataz: field not declared in schema`,
    );
    expect(applied?.message).not.toContain('hunter2');
    expect(applied?.message).not.toContain('aHVudGVy');
  });
});
