// OCI registries beyond plain auth, on the real apiserver with real registries
// (distribution v3.1.2, test/harness/oci-registry.ts) and the real helm:
// - TLS with a private CA from a Secret (certSecretRef, key ca.crt), the registry serving a
//   certificate signed by a CA made here with openssl; a wrong CA is SourceNotReady naming the
//   registry and the TLS error;
// - cosign verification (verify: {provider: cosign, secretRef}) of signatures the real cosign wrote
//   (scripts/build-cosign.sh; cosign sign --key --tlog-upload=false): signed → applied; unsigned or
//   signed with another key → Applied False/SourceNotReady, nothing applied, not retried with backoff;
// - 429/5xx retried with backoff and a registry that hangs, injected by a small proxy in front of the
//   real registry (test/harness/fault-proxy.ts);
// - ECR through IAM: the registry side — the token's AWS:<password> as basic auth on the real registry.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEcrTokenSource } from '../../adapters/aws/ecr-token.ts';
import { fetchOciHelmChart } from '../../adapters/source/oci-helm.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { cosignBinary, generateKeyPair, signArtifact, type CosignKeyPair } from '../harness/cosign.ts';
import { startFaultProxy, type FaultProxy } from '../harness/fault-proxy.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { makeTestCa, startOciRegistry, type OciRegistry } from '../harness/oci-registry.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { until } from '../harness/runtime-env.ts';

function applied(release: Release) {
  return release.status?.conditions?.find((c) => c.type === 'Applied');
}

describe(
  'OCI registries: custom CA, cosign verification, 429/5xx/hang, ECR tokens',
  { timeout: 600_000 },
  () => {
    let env: ReconcileEnv;
    let core: CoreV1Api;
    let open: OciRegistry;
    let tls: OciRegistry;
    let locked: OciRegistry;
    let proxy: FaultProxy;
    let work: string;
    let cosign: string;
    let key: CosignKeyPair;
    let otherKey: CosignKeyPair;
    let ports: ReconcilePorts;
    let n = 0;

    /** A container's ports that trust the plain-HTTP registry and its fault proxy, with this per-request registry timeout. */
    const portsWithOciTimeout = (ociTimeoutMs: number): ReconcilePorts =>
      env.ports({
        wiring: {
          tenancy: { ...env.tenancy, insecureRegistries: new Set([open.host, proxy.host]) },
          ociTimeoutMs,
        },
      });

    beforeAll(async () => {
      cosign = await cosignBinary();
      env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'oci-auth');
      core = env.kc.makeApiClient(CoreV1Api);
      work = await mkdtemp(join(tmpdir(), 'convoy-oci-auth-'));
      open = await startOciRegistry();
      tls = await startOciRegistry({ tls: true });
      locked = await startOciRegistry({ users: [{ username: 'AWS', password: 'ecr-token-password-123' }] });
      proxy = await startFaultProxy(open.host);
      // Every server runs on 127.0.0.1: the egress allow list opens exactly these.
      env.allowEgress(open.host, tls.host, locked.host, proxy.host);
      ports = portsWithOciTimeout(1500);
      for (const [name, dir] of [
        ['key', 'right'],
        ['otherKey', 'other'],
      ] as const) {
        const folder = join(work, dir);
        await mkdir(folder);
        const pair = await generateKeyPair(cosign, folder);
        if (name === 'key') key = pair;
        else otherKey = pair;
      }
      await core.createNamespacedSecret({
        namespace: env.ns.name,
        body: { metadata: { name: 'cosign-key' }, stringData: { 'cosign.pub': key.publicPem } },
      });
      await core.createNamespacedSecret({
        namespace: env.ns.name,
        body: { metadata: { name: 'other-cosign-key' }, stringData: { 'cosign.pub': otherKey.publicPem } },
      });
    });
    afterAll(async () => {
      await proxy?.stop();
      await open?.stop();
      await tls?.stop();
      await locked?.stop();
      await env?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    async function release(helm: Record<string, unknown>, extra: Record<string, unknown> = {}) {
      const name = `auth-${++n}`;
      await env.api.create('Release', env.ns.name, name, {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: { helm },
        content: { type: 'Helm', helm: { releaseName: name } },
        ...extra,
      });
      return name;
    }

    const configMap = async (name: string) => {
      try {
        return (await core.readNamespacedConfigMap({ namespace: env.ns.name, name })).data;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    };

    describe('TLS with a private CA (certSecretRef)', () => {
      it('the CA from a Secret (key ca.crt) verifies the registry: rendered and applied', async () => {
        const pushed = await tls.pushChart('charts', 'tlsdemo', '1.0.0');
        await core.createNamespacedSecret({
          namespace: env.ns.name,
          body: { metadata: { name: 'registry-ca' }, stringData: { 'ca.crt': tls.caPem ?? '' } },
        });
        const name = await release({
          repository: tls.url('charts'),
          chart: 'tlsdemo',
          version: '1.0.0',
          certSecretRef: { name: 'registry-ca' },
        });
        const result = await env.reconcile(name, ports);
        expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
        expect(result.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
          version: '1.0.0',
          digest: pushed.digest,
        });
        expect((await configMap('tlsdemo-version'))?.['version']).toBe('1.0.0');
      });

      it('a wrong CA: SourceNotReady naming the registry and the class of TLS failure (no TLS library text), retried', async () => {
        const wrong = await makeTestCa(work, 'some-other-ca');
        await core.createNamespacedSecret({
          namespace: env.ns.name,
          body: { metadata: { name: 'wrong-ca' }, stringData: { 'ca.crt': wrong.caPem } },
        });
        const name = await release({
          repository: tls.url('charts'),
          chart: 'tlsdemo',
          version: '1.0.0',
          certSecretRef: { name: 'wrong-ca' },
        });
        const result = await env.reconcile(name, ports);
        const cond = applied(result.release);
        expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        expect(cond?.message).toContain(
          `registry ${tls.host}: TLS failure: certificate not trusted; the CA in spec.source.helm.certSecretRef (ca.crt) did not sign`,
        );
        expect(cond?.message).not.toMatch(/UNABLE_TO|SELF_SIGNED|unable to|routines|error:/);
        expect(result.outcome.kind).toBe('retry');
      });

      it('no certSecretRef: the public trust store refuses the private CA, and the message names certSecretRef', async () => {
        const result = await env.reconcile(
          await release({ repository: tls.url('charts'), chart: 'tlsdemo', version: '1.0.0' }),
          ports,
        );
        expect(applied(result.release)?.reason).toBe('SourceNotReady');
        expect(applied(result.release)?.message).toContain(
          `registry ${tls.host}: TLS failure: certificate not trusted; `,
        );
        expect(applied(result.release)?.message).toContain('name it in spec.source.helm.certSecretRef');
      });

      it('a certSecretRef Secret without ca.crt: SourceNotReady naming the Secret and the key', async () => {
        await core.createNamespacedSecret({
          namespace: env.ns.name,
          body: { metadata: { name: 'no-ca' }, stringData: { 'tls.crt': 'x' } },
        });
        const result = await env.reconcile(
          await release({
            repository: tls.url('charts'),
            chart: 'tlsdemo',
            version: '1.0.0',
            certSecretRef: { name: 'no-ca' },
          }),
          ports,
        );
        expect(applied(result.release)?.message).toBe(
          `spec.source.helm.certSecretRef: Secret ${env.ns.name}/no-ca has no key ca.crt`,
        );
      });
    });

    describe('cosign verification (signatures written by the real cosign)', () => {
      it('signed with the key: verified, rendered and applied', async () => {
        const pushed = await open.pushChart('signed', 'sdemo', '1.0.0');
        await signArtifact(cosign, join(work, 'right'), key, `${open.host}/signed/sdemo@${pushed.digest}`);
        const name = await release({
          repository: open.url('signed'),
          chart: 'sdemo',
          version: '1.0.0',
          insecure: true,
          verify: { provider: 'cosign', secretRef: { name: 'cosign-key' } },
        });
        const result = await env.reconcile(name, ports);
        expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
        expect((await configMap('sdemo-version'))?.['version']).toBe('1.0.0');
      });

      it('unsigned: Applied False/SourceNotReady saying so, nothing applied, not retried with backoff', async () => {
        const pushed = await open.pushChart('unsigned', 'udemo', '1.0.0');
        const name = await release({
          repository: open.url('unsigned'),
          chart: 'udemo',
          version: '1.0.0',
          insecure: true,
          verify: { provider: 'cosign', secretRef: { name: 'cosign-key' } },
        });
        const result = await env.reconcile(name, ports);
        const cond = applied(result.release);
        expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        expect(cond?.message).toBe(
          `chart udemo in ${open.host}/unsigned/udemo (${pushed.digest}) is not signed: ${open.host}/unsigned/udemo has no cosign signature (tag ${pushed.digest.replace(':', '-')}.sig); sign it with cosign sign --key, or remove spec.source.helm.verify. Nothing was rendered`,
        );
        expect(result.release.status?.lastAttempted?.failure?.stage).toBe('SourceResolution');
        expect(result.outcome.kind).toBe('stop');
        expect(result.release.status?.lastSuccessful).toBeUndefined();
        expect(await configMap('udemo-version')).toBeUndefined();
      });

      it('signed with another key: refused, nothing applied; once signed with the right key, the next reconcile applies it', async () => {
        const pushed = await open.pushChart('wrongkey', 'wdemo', '1.0.0');
        await signArtifact(
          cosign,
          join(work, 'other'),
          otherKey,
          `${open.host}/wrongkey/wdemo@${pushed.digest}`,
        );
        const name = await release({
          repository: open.url('wrongkey'),
          chart: 'wdemo',
          version: '1.0.0',
          insecure: true,
          verify: { provider: 'cosign', secretRef: { name: 'cosign-key' } },
        });
        const refused = await env.reconcile(name, ports);
        const cond = applied(refused.release);
        expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        expect(cond?.message).toBe(
          `chart wdemo in ${open.host}/wrongkey/wdemo (${pushed.digest}) has no valid cosign signature for the key in spec.source.helm.verify.secretRef: 1 signature checked; a signature does not verify with the public key (signed with another key, or altered). Nothing was rendered`,
        );
        expect(refused.outcome.kind).toBe('stop');
        expect(await configMap('wdemo-version')).toBeUndefined();

        // The artifact's signatures change (cosign adds a layer to the .sig manifest): verified now.
        await signArtifact(cosign, join(work, 'right'), key, `${open.host}/wrongkey/wdemo@${pushed.digest}`);
        const healed = await env.reconcile(name, ports);
        expect(applied(healed.release)).toMatchObject({ status: 'True', reason: 'Applied' });
        expect((await configMap('wdemo-version'))?.['version']).toBe('1.0.0');
      });

      it('the key Secret is read as the Release identity in its namespace: a missing Secret or key names them', async () => {
        await core.createNamespacedSecret({
          namespace: env.ns.name,
          body: { metadata: { name: 'no-pub' }, stringData: { other: 'x' } },
        });
        const noKey = await env.reconcile(
          await release({
            repository: open.url('signed'),
            chart: 'sdemo',
            version: '1.0.0',
            insecure: true,
            verify: { provider: 'cosign', secretRef: { name: 'no-pub' } },
          }),
          ports,
        );
        expect(applied(noKey.release)?.message).toBe(
          `spec.source.helm.verify.secretRef: Secret ${env.ns.name}/no-pub has no key cosign.pub`,
        );
        const missing = await env.reconcile(
          await release({
            repository: open.url('signed'),
            chart: 'sdemo',
            version: '1.0.0',
            insecure: true,
            verify: { provider: 'cosign', secretRef: { name: 'absent' } },
          }),
          ports,
        );
        expect(applied(missing.release)?.message).toBe(
          `spec.source.helm.verify.secretRef: Secret ${env.ns.name}/absent does not exist`,
        );
      });
    });

    describe('a registry answering 429/5xx or hanging (a fault proxy in front of the real registry)', () => {
      let digest = '';
      beforeAll(async () => {
        digest = (await open.pushChart('flaky', 'fdemo', '1.0.0')).digest;
        await open.pushChart('slow', 'hdemo', '1.0.0');
      });
      const via = () => `oci://${proxy.host}/flaky`;

      it('503 twice, then the answer: retried with backoff within the resolve, applied', async () => {
        const from = proxy.log.length;
        proxy.failNext(2, 503);
        const result = await env.reconcile(
          await release({ repository: via(), chart: 'fdemo', version: '1.0.0', insecure: true }),
          ports,
        );
        expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
        expect(result.release.status?.lastAttempted?.resolvedSource?.helm?.digest).toBe(digest);
        expect(proxy.log.slice(from, from + 3)).toEqual([
          'HEAD /v2/flaky/fdemo/manifests/1.0.0 503',
          'HEAD /v2/flaky/fdemo/manifests/1.0.0 503',
          'HEAD /v2/flaky/fdemo/manifests/1.0.0 200',
        ]);
      });

      it.each([
        [429, 'is rate limiting the manifest 1.0.0 of', 'HTTP 429, 3 attempts'],
        [503, 'failed the manifest 1.0.0 of', 'HTTP 503, 3 attempts'],
        [500, 'failed the manifest 1.0.0 of', 'HTTP 500, 3 attempts'],
      ])(
        '%i on every attempt: SourceNotReady naming the registry and the HTTP status, retried with the Release backoff',
        async (status, says, statusText) => {
          const from = proxy.log.length;
          proxy.failNext(3, status, { retryAfterSeconds: 1 });
          const result = await env.reconcile(
            await release(
              { repository: via(), chart: 'fdemo', version: '1.0.0', insecure: true },
              { syncPolicy: { retryBackoff: { initial: '5s' } } },
            ),
            ports,
          );
          const cond = applied(result.release);
          expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
          expect(cond?.message).toBe(
            `registry ${proxy.host} ${says} ${proxy.host}/flaky/fdemo (${statusText}); will retry with backoff`,
          );
          expect(result.outcome.kind === 'retry' && result.outcome.policy).toEqual({
            initialMs: 5000,
            factor: 2,
            maxMs: 600000,
          });
          expect(proxy.log.slice(from)).toEqual(
            Array(3).fill(`HEAD /v2/flaky/fdemo/manifests/1.0.0 ${status}`),
          );
        },
      );

      it('a registry that hangs: the request times out (per request), SourceNotReady naming the registry', async () => {
        proxy.hang('/v2/slow/');
        try {
          const slow = await env.reconcile(
            await release({
              repository: `oci://${proxy.host}/slow`,
              chart: 'hdemo',
              version: '1.0.0',
              insecure: true,
            }),
            ports,
          );
          expect(applied(slow.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
          expect(applied(slow.release)?.message).toBe(
            `registry ${proxy.host} did not answer HEAD /v2/slow/hdemo/manifests/1.0.0 (timed out after at most 2 s per request); will retry`,
          );
          expect(slow.outcome.kind).toBe('retry');
        } finally {
          proxy.release();
        }
      });

      it('while a registry hangs, a Release of another repository reconciled in the same container is Applied: it does not wait for the hung resolve', async () => {
        // Causal, not timed: the hung resolve gets a per-request timeout far beyond any reconcile here, and the
        // other Release is reconciled while the proxy holds the hung request (a fresh-clone CI beside two others
        // took longer than the 1.5-s timeout for the other Release's whole reconcile, when this case raced them).
        const patient = portsWithOciTimeout(300_000);
        const heldBefore = proxy.log.filter((line) => line.endsWith(' held')).length;
        proxy.hang('/v2/slow/');
        let hungDone = false;
        try {
          const hung = await release({
            repository: `oci://${proxy.host}/slow`,
            chart: 'pdemo',
            version: '1.0.0',
            insecure: true,
          });
          const pending = env.reconcile(hung, patient).finally(() => {
            hungDone = true;
          });
          await until(
            "the proxy holds the hung Release's first request",
            () => proxy.log.filter((line) => line.endsWith(' held')).length > heldBefore,
            { timeoutMs: 120_000 },
          );
          const fast = await env.reconcile(
            await release({ repository: via(), chart: 'fdemo', version: '1.0.0', insecure: true }),
            patient,
          );
          expect(applied(fast.release)).toMatchObject({ status: 'True', reason: 'Applied' });
          expect(hungDone).toBe(false);
          expect(proxy.log.filter((line) => line.startsWith('HEAD /v2/slow/pdemo/manifests/1.0.0'))).toEqual([
            'HEAD /v2/slow/pdemo/manifests/1.0.0 held',
          ]);
          // Released: the held request is closed, and the hung Release's run ends without applying anything.
          proxy.release();
          const slow = await pending;
          expect(applied(slow.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        } finally {
          proxy.release();
        }
      });
    });

    describe('ECR through IAM: the registry side', () => {
      it('the GetAuthorizationToken token (base64 AWS:<password>) is basic auth that the real registry accepts', async () => {
        const pushed = await locked.pushChart('charts', 'edemo', '1.0.0');
        const ecr = createEcrTokenSource({
          credentials: () => Promise.resolve({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
          endpoint: 'https://api.ecr.eu-west-1.amazonaws.com',
          // ECR itself cannot be reached here: the documented answer (test/unit/source/ecr-token.test.ts checks the request).
          fetch: () =>
            Promise.resolve({
              status: 200,
              text: () =>
                Promise.resolve(
                  JSON.stringify({
                    authorizationData: [
                      {
                        authorizationToken: Buffer.from('AWS:ecr-token-password-123').toString('base64'),
                        expiresAt: Date.now() / 1000 + 43200,
                      },
                    ],
                  }),
                ),
            }),
        });
        const credentials = await ecr.credentialsFor('123456789012.dkr.ecr.eu-west-1.amazonaws.com');
        const cache = join(work, 'ecr-cache');
        const chart = await fetchOciHelmChart(
          {
            repository: locked.url('charts'),
            chart: 'edemo',
            version: '1.0.0',
            plainHttp: true,
            credentials,
          },
          cache,
          { egress: env.egress },
        );
        expect(chart.resolved).toMatchObject({ version: '1.0.0', digest: pushed.digest });
        await expect(
          fetchOciHelmChart(
            {
              repository: locked.url('charts'),
              chart: 'edemo',
              version: '1.0.0',
              plainHttp: true,
              credentials: { username: 'AWS', password: 'expired' },
            },
            join(work, 'ecr-cache-2'),
            { egress: env.egress },
          ),
        ).rejects.toThrow(
          `registry ${locked.host} refused the manifest 1.0.0 of ${locked.host}/charts/edemo (HTTP 401 Unauthorized)`,
        );
      });

      it('provider: aws where the functions have no AWS identity: SourceNotReady naming the field', async () => {
        const name = await release({
          repository: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/charts',
          chart: 'demo',
          version: '1.0.0',
          provider: 'aws',
        });
        const result = await env.reconcile(name, ports);
        expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        expect(applied(result.release)?.message).toContain(
          "spec.source.helm.provider: aws needs the functions' AWS identity",
        );
      });

      it('admission: provider aws needs an ECR repository and no secretRef; provider, certSecretRef and verify need oci://', async () => {
        await expect(
          release({ repository: open.url('charts'), chart: 'demo', provider: 'aws' }),
        ).rejects.toThrow('provider aws needs an Amazon ECR repository');
        await expect(
          release({
            repository: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/charts',
            chart: 'demo',
            provider: 'aws',
            secretRef: { name: 'pull' },
          }),
        ).rejects.toThrow("provider aws authenticates with the functions' role: leave out secretRef");
        await expect(
          release({
            repository: 'https://charts.example.com',
            chart: 'demo',
            verify: { provider: 'cosign', secretRef: { name: 'k' } },
          }),
        ).rejects.toThrow('verify is only allowed with an oci:// repository');
        await expect(
          release({ repository: 'https://charts.example.com', chart: 'demo', certSecretRef: { name: 'ca' } }),
        ).rejects.toThrow('certSecretRef is only allowed with an oci:// repository');
        await expect(
          release({
            repository: open.url('charts'),
            chart: 'demo',
            verify: { provider: 'notary', secretRef: { name: 'k' } },
          }),
        ).rejects.toThrow(/verify\.provider/);
      });
    });
  },
);
