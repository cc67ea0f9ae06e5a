import { createServer } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import type { FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyRetention } from '../../../adapters/store/apply-retention.ts';
import { createS3RenderStore } from '../../../adapters/store/s3-render-store.ts';
import {
  InvalidRenderKeyError,
  RenderStoreReadError,
  RenderStoreUnavailableError,
} from '../../../domain/store/render-store.ts';
import type { RenderStore, StoredRenderMeta } from '../../../domain/store/render-store.ts';

const BUCKET = 'convoy-renders';
const NS = 'team-a';
const RELEASE = 'podinfo';
const SECRET_VALUE = 'aHVudGVyMg-very-secret';

let server: FauxqsServer;
let s3: S3Client;
let store: RenderStore;

function s3ClientFor(endpoint: string, maxAttempts = 3): S3Client {
  return new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    maxAttempts,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

function ref(n: number): string {
  return `sha256:${n.toString(16).padStart(64, '0')}`;
}

function keyOf(renderRef: string, release = RELEASE): string {
  return `renders/${NS}/${release}/${renderRef.slice('sha256:'.length)}.json.gz`;
}

function objectsOf(n: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${n}`, namespace: 'podinfo' },
      data: { n: String(n) },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'podinfo' },
      data: { token: SECRET_VALUE },
    },
  ];
}

function metaOf(n: number, createdAt: string, extra: Partial<StoredRenderMeta> = {}): StoredRenderMeta {
  return { renderRef: ref(n), namespace: NS, release: RELEASE, createdAt, objectCount: 2, ...extra };
}

async function putRaw(key: string, body: Uint8Array, metadata?: Record<string, string>): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, Metadata: metadata }));
}

async function getRaw(key: string): Promise<Uint8Array> {
  const response = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  if (response.Body === undefined) throw new Error(`no body at ${key}`);
  return response.Body.transformToByteArray();
}

async function keysUnder(prefix: string): Promise<string[]> {
  const response = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (response.Contents ?? []).map((entry) => entry.Key ?? '');
}

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  server = await startFauxqs({ port: 0, logger: false });
  server.createBucket(BUCKET);
  s3 = s3ClientFor(server.address);
  store = createS3RenderStore({ s3, bucket: BUCKET });
});

afterAll(async () => {
  s3.destroy();
  await server.stop();
});

beforeEach(() => {
  server.emptyBucket(BUCKET);
});

describe('S3 render store', () => {
  it('put then get returns the same meta and objects; the body is gzip of {meta, objects}', async () => {
    const meta = metaOf(1, '2026-11-29T10:00:00.000Z', {
      resolvedSource: { git: { url: 'https://git.example.com/org/apps.git', ref: 'main', commit: 'abc123' } },
      resolvedCluster: { name: 'prod-eu-1', uid: 'u-1' },
      resolvedMutations: [{ name: 'labels', generation: 3 }],
    });
    await store.put(meta, objectsOf(1));

    expect(await store.get(NS, RELEASE, ref(1))).toEqual({ meta, objects: objectsOf(1) });
    expect(await store.has(NS, RELEASE, ref(1))).toBe(true);

    const raw = await getRaw(keyOf(ref(1)));
    expect([raw[0], raw[1]]).toEqual([0x1f, 0x8b]);
    expect(JSON.parse(gunzipSync(raw).toString('utf8'))).toEqual({ meta, objects: objectsOf(1) });
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: keyOf(ref(1)) }));
    expect(head.Metadata).toMatchObject({
      'convoy-render-ref': ref(1),
      'convoy-created-at': '2026-11-29T10:00:00.000Z',
      'convoy-object-count': '2',
    });
    expect(JSON.stringify(head.Metadata)).not.toContain(SECRET_VALUE);
  });

  it('put is idempotent: the same renderRef twice is one object, and the first createdAt stays', async () => {
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await store.put(metaOf(1, '2026-11-29T11:00:00.000Z'), objectsOf(1));

    expect(await keysUnder(`renders/${NS}/${RELEASE}/`)).toEqual([keyOf(ref(1))]);
    const listed = await store.list(NS, RELEASE);
    expect(listed.map((meta) => meta.createdAt)).toEqual(['2026-11-29T10:00:00.000Z']);
    expect((await store.get(NS, RELEASE, ref(1)))?.meta.createdAt).toBe('2026-11-29T10:00:00.000Z');
  });

  it('list returns the Release’s renders newest first, from metadata, and no other Release’s', async () => {
    await store.put(metaOf(2, '2026-11-29T09:00:00.000Z'), objectsOf(2));
    await store.put(
      metaOf(3, '2026-11-29T11:00:00.000Z', {
        resolvedSource: { helm: { chart: 'podinfo', version: '6.7.1' } },
      }),
      objectsOf(3),
    );
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await store.put({ ...metaOf(4, '2026-11-29T12:00:00.000Z'), release: 'podinfo-canary' }, objectsOf(4));
    await store.put({ ...metaOf(5, '2026-11-29T12:00:00.000Z'), release: 'podinfo.v2' }, objectsOf(5));

    expect(await store.list(NS, RELEASE)).toEqual([
      metaOf(3, '2026-11-29T11:00:00.000Z', {
        resolvedSource: { helm: { chart: 'podinfo', version: '6.7.1' } },
      }),
      metaOf(1, '2026-11-29T10:00:00.000Z'),
      metaOf(2, '2026-11-29T09:00:00.000Z'),
    ]);
    expect(await store.list(NS, 'absent')).toEqual([]);
  });

  it('list leaves out resolved fields too large for S3 metadata; get still has them', async () => {
    const resolvedMutations = Array.from({ length: 100 }, (_, i) => ({
      name: `mutation-number-${i}`,
      generation: i,
    }));
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z', { resolvedMutations }), objectsOf(1));

    expect(await store.list(NS, RELEASE)).toEqual([metaOf(1, '2026-11-29T10:00:00.000Z')]);
    expect((await store.get(NS, RELEASE, ref(1)))?.meta.resolvedMutations).toEqual(resolvedMutations);
  });

  it('list pages through more renders than one ListObjectsV2 page', async () => {
    const many = 1003;
    const prefix = `renders/${NS}/${RELEASE}/`;
    await Promise.all(
      Array.from({ length: many }, (_, i) =>
        putRaw(`${prefix}${ref(i + 1).slice(7)}.json.gz`, new Uint8Array([0]), {
          'convoy-render-ref': ref(i + 1),
          'convoy-created-at': new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
          'convoy-object-count': '0',
        }),
      ),
    );
    const firstPage = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    expect(firstPage.IsTruncated).toBe(true);

    const listed = await store.list(NS, RELEASE);
    expect(listed).toHaveLength(many);
    expect(listed[0]?.renderRef).toBe(ref(many));
    expect(listed[many - 1]?.renderRef).toBe(ref(1));
  }, 30_000);

  it('delete removes the render; deleting a missing render is not an error', async () => {
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await store.delete(NS, RELEASE, ref(1));

    expect(await store.has(NS, RELEASE, ref(1))).toBe(false);
    expect(await store.get(NS, RELEASE, ref(1))).toBeUndefined();
    expect(await store.list(NS, RELEASE)).toEqual([]);
    await expect(store.delete(NS, RELEASE, ref(1))).resolves.toBeUndefined();
  });

  it('a missing render → get undefined, has false', async () => {
    expect(await store.get(NS, RELEASE, ref(42))).toBeUndefined();
    expect(await store.has(NS, RELEASE, ref(42))).toBe(false);
  });

  it('a body that is not gzip → RenderStoreReadError naming the key', async () => {
    await putRaw(keyOf(ref(1)), Buffer.from(`garbage ${SECRET_VALUE}`));

    const error = await store.get(NS, RELEASE, ref(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RenderStoreReadError);
    expect((error as RenderStoreReadError).key).toBe(keyOf(ref(1)));
    expect((error as Error).message).toContain(keyOf(ref(1)));
    expect((error as Error).message).not.toContain(SECRET_VALUE);
  });

  it('gzip of something that is not JSON → RenderStoreReadError without quoting the content', async () => {
    await putRaw(keyOf(ref(1)), gzipSync(`{"objects": [${SECRET_VALUE}`));

    const error = await store.get(NS, RELEASE, ref(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RenderStoreReadError);
    expect((error as Error).message).toContain(keyOf(ref(1)));
    expect((error as Error).message).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(error)).not.toContain(SECRET_VALUE);
  });

  it('JSON that is not a stored render → RenderStoreReadError naming the bad field', async () => {
    await putRaw(keyOf(ref(1)), gzipSync(JSON.stringify({ meta: { renderRef: ref(1) }, objects: [] })));

    await expect(store.get(NS, RELEASE, ref(1))).rejects.toThrow(RenderStoreReadError);
    await expect(store.get(NS, RELEASE, ref(1))).rejects.toThrow(/meta\.namespace/);
  });

  it('a stored meta.renderRef other than the requested one → RenderStoreReadError naming the key', async () => {
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await putRaw(keyOf(ref(2)), await getRaw(keyOf(ref(1))));

    const error = await store.get(NS, RELEASE, ref(2)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RenderStoreReadError);
    expect((error as Error).message).toContain(keyOf(ref(2)));
    expect((error as Error).message).toContain('meta.renderRef');
    expect((error as Error).message).not.toContain(SECRET_VALUE);
  });

  it('an object without convoy metadata in the Release’s folder → list throws RenderStoreReadError naming it', async () => {
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await putRaw(keyOf(ref(2)), Buffer.from('garbage'));

    const error = await store.list(NS, RELEASE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RenderStoreReadError);
    expect((error as RenderStoreReadError).key).toBe(keyOf(ref(2)));
  });

  it('files in the Release’s folder that are not renders are ignored by list', async () => {
    await store.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    await putRaw(`renders/${NS}/${RELEASE}/README.txt`, Buffer.from('notes'));
    await putRaw(`renders/${NS}/${RELEASE}/nested/${ref(2).slice(7)}.json.gz`, Buffer.from('x'));

    expect((await store.list(NS, RELEASE)).map((meta) => meta.renderRef)).toEqual([ref(1)]);
  });

  it('an unreachable endpoint → RenderStoreUnavailableError with the error name, for every operation', async () => {
    const down = s3ClientFor(`http://127.0.0.1:${await closedPort()}`, 1);
    const offline = createS3RenderStore({ s3: down, bucket: BUCKET });
    const calls: [string, () => Promise<unknown>][] = [
      ['put', () => offline.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1))],
      ['get', () => offline.get(NS, RELEASE, ref(1))],
      ['has', () => offline.has(NS, RELEASE, ref(1))],
      ['list', () => offline.list(NS, RELEASE)],
      ['delete', () => offline.delete(NS, RELEASE, ref(1))],
    ];
    for (const [operation, call] of calls) {
      const error = await call().catch((e: unknown) => e);
      expect(error, operation).toBeInstanceOf(RenderStoreUnavailableError);
      expect((error as RenderStoreUnavailableError).operation).toBe(operation);
      expect((error as RenderStoreUnavailableError).errorName).toBe('ECONNREFUSED');
      expect((error as Error).message).toContain('ECONNREFUSED');
      expect((error as Error).message).not.toContain(SECRET_VALUE);
    }
    down.destroy();
  });

  it('a missing bucket → RenderStoreUnavailableError NoSuchBucket on put, get and list', async () => {
    const noBucket = createS3RenderStore({ s3, bucket: 'no-such-bucket' });
    for (const call of [
      () => noBucket.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1)),
      () => noBucket.get(NS, RELEASE, ref(1)),
      () => noBucket.list(NS, RELEASE),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RenderStoreUnavailableError);
      expect((error as RenderStoreUnavailableError).errorName).toBe('NoSuchBucket');
      expect((error as Error).message).toMatch(/no-such-bucket.*NoSuchBucket/);
    }
  });

  it('a namespace, Release or renderRef that cannot be a key → InvalidRenderKeyError naming the field', async () => {
    await expect(store.get('team/a', RELEASE, ref(1))).rejects.toMatchObject({ field: 'namespace' });
    await expect(store.list(NS, '../other')).rejects.toMatchObject({ field: 'release' });
    await expect(store.has(NS, RELEASE, 'sha256:ABC')).rejects.toThrow(InvalidRenderKeyError);
    await expect(store.put({ ...metaOf(1, 'x'), renderRef: 'md5:1' }, objectsOf(1))).rejects.toMatchObject({
      field: 'renderRef',
    });
  });

  it('put refuses a meta whose objectCount or createdAt does not fit the render', async () => {
    await expect(
      store.put(metaOf(1, '2026-11-29T10:00:00.000Z', { objectCount: 3 }), objectsOf(1)),
    ).rejects.toThrow(/objectCount is 3 but 2 objects/);
    await expect(store.put(metaOf(1, 'yesterday'), objectsOf(1))).rejects.toThrow(/createdAt/);
    expect(await store.has(NS, RELEASE, ref(1))).toBe(false);
  });

  it('a custom prefix places renders under it', async () => {
    const prefixed = createS3RenderStore({ s3, bucket: BUCKET, prefix: 'convoy/prod/' });
    await prefixed.put(metaOf(1, '2026-11-29T10:00:00.000Z'), objectsOf(1));
    expect(await keysUnder('convoy/prod/')).toEqual([
      `convoy/prod/${NS}/${RELEASE}/${ref(1).slice(7)}.json.gz`,
    ]);
    expect(await store.has(NS, RELEASE, ref(1))).toBe(false);
  });
});

describe('applyRetention against a real bucket', () => {
  it('deletes what the policy expires, never a protected render, and leaves other Releases alone', async () => {
    const now = new Date('2026-11-29T12:00:00.000Z');
    const hoursAgo = (h: number): string => new Date(now.getTime() - h * 3_600_000).toISOString();
    // Newest first: 1 (1h), 2 (2h), 3 (3h), 4 (50h, protected: lastHealthy), 5 (60h).
    await store.put(metaOf(1, hoursAgo(1)), objectsOf(1));
    await store.put(metaOf(2, hoursAgo(2)), objectsOf(2));
    await store.put(metaOf(3, hoursAgo(3)), objectsOf(3));
    await store.put(metaOf(4, hoursAgo(50)), objectsOf(4));
    await store.put(metaOf(5, hoursAgo(60)), objectsOf(5));
    await store.put({ ...metaOf(6, hoursAgo(100)), release: 'other' }, objectsOf(6));

    const result = await applyRetention(
      store,
      NS,
      RELEASE,
      { maxRenders: 2, maxAge: '48h' },
      new Set([ref(4)]),
      now,
    );

    expect(result.deleted).toEqual([ref(5), ref(3)]);
    expect((await store.list(NS, RELEASE)).map((meta) => meta.renderRef)).toEqual([ref(1), ref(2), ref(4)]);
    expect(await store.has(NS, 'other', ref(6))).toBe(true);

    const again = await applyRetention(
      store,
      NS,
      RELEASE,
      { maxRenders: 2, maxAge: '48h' },
      new Set([ref(4)]),
      now,
    );
    expect(again.deleted).toEqual([]);
  });

  it('a store that fails mid-way surfaces the error; the next run finishes the job', async () => {
    const now = new Date('2026-11-29T12:00:00.000Z');
    await store.put(metaOf(1, '2026-11-29T11:00:00.000Z'), objectsOf(1));
    await store.put(metaOf(2, '2026-11-29T10:00:00.000Z'), objectsOf(2));
    await store.put(metaOf(3, '2026-11-29T09:00:00.000Z'), objectsOf(3));
    let failNext = true;
    const flaky: RenderStore = {
      ...store,
      list: (namespace, release) => store.list(namespace, release),
      delete: async (namespace, release, renderRef) => {
        if (failNext) {
          failNext = false;
          throw new RenderStoreUnavailableError(
            'delete',
            keyOf(renderRef),
            'SlowDown',
            'render store: throttled',
          );
        }
        await store.delete(namespace, release, renderRef);
      },
    };
    const policy = { maxRenders: 1, maxAge: '720h' };

    await expect(applyRetention(flaky, NS, RELEASE, policy, new Set(), now)).rejects.toThrow(
      RenderStoreUnavailableError,
    );
    expect(await applyRetention(flaky, NS, RELEASE, policy, new Set(), now)).toEqual({
      deleted: [ref(3), ref(2)],
    });
  });
});
