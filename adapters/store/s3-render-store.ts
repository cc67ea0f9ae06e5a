import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import {
  RenderStoreReadError,
  RenderStoreUnavailableError,
  checkReleaseKey,
  checkRenderKey,
  compareNewestFirst,
} from '../../domain/store/render-store.ts';
import { mapBounded } from '../../domain/runtime/bounded.ts';
import type { RenderStore, StoredRender, StoredRenderMeta } from '../../domain/store/render-store.ts';
import { isNotFound, unavailableError } from './s3-errors.ts';

/**
 * The render store on S3 (the `@aws-sdk/client-s3` API, so the same code
 * talks to AWS S3 and to fauxqs in `convoy dev`).
 *
 * Layout: one object per render at `<prefix><namespace>/<release>/<hex>.json.gz`
 * (hex = renderRef without `sha256:`). The body is the gzip of the JSON
 * `{meta, objects}`. The object's user metadata (x-amz-meta-convoy-*)
 * repeats renderRef, createdAt, objectCount and, when they fit in S3's 2 KB
 * metadata limit, the resolved source/cluster/mutations, so `list` reads
 * metadata with one HEAD per render and never downloads a body.
 *
 * We use HEAD rather than the listing's LastModified: createdAt is the
 * caller's clock and must be the same in `list` and `get`, and objectCount
 * is not in a listing at all. Retention keeps about 20 renders per Release,
 * so `list` costs one LIST plus ~20 HEADs, run in parallel.
 *
 * Encryption at rest is the bucket's default encryption (SSE-KMS in AWS);
 * nothing here names a key. Renders hold Secrets: nothing here logs, and no
 * error message carries object content (not even a JSON parser's message,
 * which quotes the text it failed on).
 */

/**
 * The S3 client, or a function that makes it on first use. With a function, neither the client
 * nor the SDK's module (~90 ms of a cold start) is loaded until a run uses the store: the drift
 * and health runs right after an apply build on the reconcile's hint and never do.
 */
export type S3ClientSource = S3Client | (() => Promise<S3Client>);

type S3Sdk = typeof import('@aws-sdk/client-s3');

export interface S3RenderStoreOptions {
  readonly s3: S3ClientSource;
  readonly bucket: string;
  /** Key prefix; default `renders/`. */
  readonly prefix?: string;
  /** HEAD requests `list` runs at once; default 8. */
  readonly listConcurrency?: number;
}

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

const META_RENDER_REF = 'convoy-render-ref';
const META_CREATED_AT = 'convoy-created-at';
const META_OBJECT_COUNT = 'convoy-object-count';
const META_RESOLVED = 'convoy-resolved';
// S3 allows 2 KB of user metadata (keys plus values, UTF-8); leave room for the SDK's own.
const METADATA_BUDGET_BYTES = 1900;

const RENDER_FILE = /^([0-9a-f]{64})\.json\.gz$/;

const resolvedMutationsSchema = z.array(z.object({ name: z.string(), generation: z.number() }));

const storedMetaSchema = z.object({
  renderRef: z.string(),
  namespace: z.string(),
  release: z.string(),
  createdAt: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'not a time'),
  objectCount: z.number().int().min(0),
  resolvedSource: z.unknown().optional(),
  resolvedCluster: z.unknown().optional(),
  resolvedMutations: resolvedMutationsSchema.optional(),
});

const storedDocumentSchema = z.object({ meta: storedMetaSchema, objects: z.array(z.unknown()) });

const resolvedMetadataSchema = z.object({
  resolvedSource: z.unknown().optional(),
  resolvedCluster: z.unknown().optional(),
  resolvedMutations: resolvedMutationsSchema.optional(),
});

export function createS3RenderStore(options: S3RenderStoreOptions): RenderStore {
  const { bucket } = options;
  const source = options.s3;
  // Inside each operation's try: a client or SDK that cannot load is the store being unavailable.
  const connect = async (): Promise<{ s3: S3Client; sdk: S3Sdk }> => ({
    s3: typeof source === 'function' ? await source() : source,
    sdk: await import('@aws-sdk/client-s3'),
  });
  const prefix = options.prefix ?? 'renders/';
  const listConcurrency = options.listConcurrency ?? 8;

  const releasePrefix = (namespace: string, release: string): string => `${prefix}${namespace}/${release}/`;
  const keyOf = (namespace: string, release: string, renderRef: string): string =>
    `${releasePrefix(namespace, release)}${renderRef.slice('sha256:'.length)}.json.gz`;
  const unavailable = (operation: string, key: string, error: unknown): RenderStoreUnavailableError =>
    unavailableError(operation, bucket, key, error);

  async function head(operation: string, key: string): Promise<Record<string, string> | undefined> {
    try {
      const { s3, sdk } = await connect();
      const response = await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
      return response.Metadata ?? {};
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw unavailable(operation, key, error);
    }
  }

  return {
    async put(meta, objects) {
      checkRenderKey(meta.namespace, meta.release, meta.renderRef);
      if (meta.objectCount !== objects.length) {
        throw new RangeError(
          `render store: put ${meta.namespace}/${meta.release} ${meta.renderRef}: meta.objectCount is ${meta.objectCount} but ${objects.length} objects were given`,
        );
      }
      if (Number.isNaN(Date.parse(meta.createdAt))) {
        throw new RangeError(
          `render store: put ${meta.namespace}/${meta.release} ${meta.renderRef}: meta.createdAt ${JSON.stringify(meta.createdAt)} is not an RFC 3339 time`,
        );
      }
      const key = keyOf(meta.namespace, meta.release, meta.renderRef);
      // Content-addressed: an existing object already holds these objects, so keep it (and its createdAt).
      // fauxqs ignores `If-None-Match: *` on PutObject, so this is HEAD then PUT; two writers racing
      // both write the same objects and the later createdAt wins, which is harmless.
      if ((await head('put', key)) !== undefined) return;

      const storedMeta = normalizeMeta(meta);
      const body = await gzip(Buffer.from(JSON.stringify({ meta: storedMeta, objects }), 'utf8'));
      try {
        const { s3, sdk } = await connect();
        await s3.send(
          new sdk.PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentType: 'application/gzip',
            Metadata: metadataOf(storedMeta),
          }),
        );
      } catch (error) {
        throw unavailable('put', key, error);
      }
    },

    async get(namespace, release, renderRef) {
      checkRenderKey(namespace, release, renderRef);
      const key = keyOf(namespace, release, renderRef);
      let bytes: Uint8Array;
      try {
        const { s3, sdk } = await connect();
        const response = await s3.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
        if (response.Body === undefined) {
          throw new RenderStoreReadError(key, `render store: s3://${bucket}/${key} has no body; ${REPAIR}`);
        }
        bytes = await response.Body.transformToByteArray();
      } catch (error) {
        if (error instanceof RenderStoreReadError) throw error;
        if (isNotFound(error)) return undefined;
        throw unavailable('get', key, error);
      }
      return decodeRender(bucket, key, bytes, { namespace, release, renderRef });
    },

    async has(namespace, release, renderRef) {
      checkRenderKey(namespace, release, renderRef);
      // A missing bucket also answers HEAD with 404: `has` says false, and the next put or list names the bucket.
      return (await head('has', keyOf(namespace, release, renderRef))) !== undefined;
    },

    async list(namespace, release) {
      checkReleaseKey(namespace, release);
      const listPrefix = releasePrefix(namespace, release);
      const keys: string[] = [];
      try {
        // Delimiter "/" keeps another Release's renders out (names cannot hold "/", but a prefix of a name can match).
        const { s3, sdk } = await connect();
        for await (const page of sdk.paginateListObjectsV2(
          { client: s3 },
          { Bucket: bucket, Prefix: listPrefix, Delimiter: '/' },
        )) {
          for (const entry of page.Contents ?? []) {
            if (entry.Key !== undefined && RENDER_FILE.test(entry.Key.slice(listPrefix.length)))
              keys.push(entry.Key);
          }
        }
      } catch (error) {
        throw unavailable('list', listPrefix, error);
      }

      const metas = await mapBounded(keys, listConcurrency, async (key) => {
        const metadata = await head('list', key);
        // Deleted between LIST and HEAD (retention running elsewhere): not stored any more.
        if (metadata === undefined) return undefined;
        const hex = RENDER_FILE.exec(key.slice(listPrefix.length))?.[1] ?? '';
        return metaFromMetadata(bucket, key, metadata, { namespace, release, renderRef: `sha256:${hex}` });
      });
      return metas.filter((meta): meta is StoredRenderMeta => meta !== undefined).sort(compareNewestFirst);
    },

    async delete(namespace, release, renderRef) {
      checkRenderKey(namespace, release, renderRef);
      const key = keyOf(namespace, release, renderRef);
      try {
        // S3 answers 204 whether or not the key existed.
        const { s3, sdk } = await connect();
        await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        throw unavailable('delete', key, error);
      }
    },
  };
}

const REPAIR = 'delete the object and reconcile the Release to store the render again';

interface Expected {
  readonly namespace: string;
  readonly release: string;
  readonly renderRef: string;
}

/** Only the known fields, in a fixed order, so stored bodies do not depend on what else the caller's object held. */
function normalizeMeta(meta: StoredRenderMeta): StoredRenderMeta {
  return {
    renderRef: meta.renderRef,
    namespace: meta.namespace,
    release: meta.release,
    createdAt: meta.createdAt,
    objectCount: meta.objectCount,
    ...(meta.resolvedSource === undefined ? {} : { resolvedSource: meta.resolvedSource }),
    ...(meta.resolvedCluster === undefined ? {} : { resolvedCluster: meta.resolvedCluster }),
    ...(meta.resolvedMutations === undefined ? {} : { resolvedMutations: meta.resolvedMutations }),
  };
}

function metadataOf(meta: StoredRenderMeta): Record<string, string> {
  const metadata: Record<string, string> = {
    [META_RENDER_REF]: meta.renderRef,
    [META_CREATED_AT]: meta.createdAt,
    [META_OBJECT_COUNT]: String(meta.objectCount),
  };
  const resolved = {
    resolvedSource: meta.resolvedSource,
    resolvedCluster: meta.resolvedCluster,
    resolvedMutations: meta.resolvedMutations,
  };
  if (Object.values(resolved).some((value) => value !== undefined)) {
    // Header values must be ASCII: base64url of the JSON.
    const encoded = Buffer.from(JSON.stringify(resolved), 'utf8').toString('base64url');
    const size = Object.entries(metadata).reduce((sum, [name, value]) => sum + name.length + value.length, 0);
    if (size + META_RESOLVED.length + encoded.length <= METADATA_BUDGET_BYTES)
      metadata[META_RESOLVED] = encoded;
  }
  return metadata;
}

function metaFromMetadata(
  bucket: string,
  key: string,
  metadata: Record<string, string>,
  expected: Expected,
): StoredRenderMeta {
  const where = `render store: s3://${bucket}/${key}`;
  const renderRef = metadata[META_RENDER_REF];
  const createdAt = metadata[META_CREATED_AT];
  const objectCountText = metadata[META_OBJECT_COUNT];
  if (renderRef === undefined || createdAt === undefined || objectCountText === undefined) {
    throw new RenderStoreReadError(
      key,
      `${where} lacks the x-amz-meta-${META_RENDER_REF}, -${META_CREATED_AT} and -${META_OBJECT_COUNT} metadata convoy writes with every render, so it was not stored by convoy; ${REPAIR}`,
    );
  }
  if (renderRef !== expected.renderRef) {
    throw new RenderStoreReadError(
      key,
      `${where} says it holds ${renderRef.slice(0, 80)}, but its key names ${expected.renderRef}; ${REPAIR}`,
    );
  }
  const objectCount = Number(objectCountText);
  if (Number.isNaN(Date.parse(createdAt)) || !Number.isSafeInteger(objectCount) || objectCount < 0) {
    throw new RenderStoreReadError(
      key,
      `${where} has unreadable createdAt or objectCount metadata; ${REPAIR}`,
    );
  }
  const meta: StoredRenderMeta = { ...expected, createdAt, objectCount };
  const encoded = metadata[META_RESOLVED];
  if (encoded === undefined) return meta;
  let resolved: z.infer<typeof resolvedMetadataSchema>;
  try {
    resolved = resolvedMetadataSchema.parse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
  } catch {
    throw new RenderStoreReadError(
      key,
      `${where} has unreadable x-amz-meta-${META_RESOLVED} metadata; ${REPAIR}`,
    );
  }
  return normalizeMeta({ ...meta, ...resolved });
}

async function decodeRender(
  bucket: string,
  key: string,
  bytes: Uint8Array,
  expected: Expected,
): Promise<StoredRender> {
  const where = `render store: s3://${bucket}/${key}`;
  let json: Buffer;
  try {
    json = await gunzip(bytes);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new RenderStoreReadError(
      key,
      `${where} is not gzip-compressed data${typeof code === 'string' ? ` (${code})` : ''}; ${REPAIR}`,
    );
  }
  let document: unknown;
  try {
    document = JSON.parse(json.toString('utf8'));
  } catch {
    // The parser's message quotes the text it choked on, which may be Secret data: drop it.
    throw new RenderStoreReadError(key, `${where} does not hold valid JSON after decompression; ${REPAIR}`);
  }
  const parsed = storedDocumentSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue === undefined || issue.path.length === 0 ? '(top level)' : issue.path.join('.');
    throw new RenderStoreReadError(
      key,
      `${where} is not a stored render: ${path} is invalid (${issue?.code ?? 'invalid'}); ${REPAIR}`,
    );
  }
  const { meta, objects } = parsed.data;
  for (const field of ['renderRef', 'namespace', 'release'] as const) {
    if (meta[field] !== expected[field]) {
      throw new RenderStoreReadError(
        key,
        `${where} holds a render whose meta.${field} is ${JSON.stringify(meta[field].slice(0, 260))}, not the requested ${JSON.stringify(expected[field])}; ${REPAIR}`,
      );
    }
  }
  const notObject = objects.findIndex(
    (object) => typeof object !== 'object' || object === null || Array.isArray(object),
  );
  if (notObject !== -1) {
    throw new RenderStoreReadError(
      key,
      `${where} is not a stored render: objects.${notObject} is not an object; ${REPAIR}`,
    );
  }
  if (objects.length !== meta.objectCount) {
    throw new RenderStoreReadError(
      key,
      `${where} holds ${objects.length} objects but its meta.objectCount is ${meta.objectCount}; ${REPAIR}`,
    );
  }
  return { meta: normalizeMeta(meta), objects: objects as object[] };
}
