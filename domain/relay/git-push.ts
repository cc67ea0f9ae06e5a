/**
 * Git push webhooks (API.md "HTTP API": POST /v1/hooks/git), without I/O: which Releases and
 * ReleaseSets follow what was pushed. Reading a delivery (provider, signature, payload, repository
 * URL keys) is git-webhook-delivery.ts, re-exported here.
 *
 * Matching (matchReleases), decisions:
 * - A Release follows a repository through spec.source.git, through the
 *   GitRepository named by spec.source.gitRepositoryRef, and through every
 *   GitRepository values layer (spec.content.helm.valuesFrom kind
 *   GitRepository). GitRepositories are looked up in the Release's namespace.
 * - Repository URLs compare by normalizeRepoUrl, and the path case-insensitively
 *   (GitHub, GitLab and Gitea treat owner and repository names so); an extra
 *   reconcile is harmless, a missed one is not.
 * - refs/heads/<b> matches ref.branch == <b>. refs/tags/<t> matches
 *   ref.tag == <t> (a tag created or moved) and every ref.semver (a new tag
 *   can change what a range resolves to). ref.commit never matches: a commit
 *   does not move. Other refs (refs/pull/…, refs/merge-requests/…) match nothing.
 * - A push that deletes its ref (GitHub `deleted`, or `after` all zeros)
 *   matches nothing: there is nothing new to deliver, and the Release's own
 *   interval reports the missing ref.
 * - Suspended Releases are not matched: they do not reconcile; resuming one
 *   changes its spec, and the relay's watch sends it then.
 * - ReleaseSets (matchReleaseSets) by the same rules, read off the Release specs their
 *   children get: the template's spec, and the template with each override merged over it (an
 *   override may point some Clusters at another repository or branch). A set any of them
 *   follows gets a fleet message: the fleet function resolves the source anew and starts a
 *   rollout of the new commit. A spec that still holds a `${cluster.…}` placeholder where the
 *   URL or ref is compares as written (it matches nothing a push names).
 */
import { z } from 'zod';
import type { GitRef, Release } from '../api/index.ts';
import { mergePatch } from '../fleet/merge-patch.ts';
import { normalizeRepoUrl, type GitPush } from './git-webhook-delivery.ts';

export {
  constantTimeEqual,
  detectProvider,
  GIT_PROVIDERS,
  normalizeRepoUrl,
  readGitWebhook,
  sameRepository,
  verifySignature,
  type GitProvider,
  type GitPush,
  type GitWebhookDelivery,
  type HeaderLookup,
} from './git-webhook-delivery.ts';

/** Whether a Git reference of a Release or GitRepository follows the pushed ref (see the rules above). */
export function refFollowsPush(ref: GitRef, pushedRef: string): boolean {
  if (ref.commit !== undefined) return false;
  if (pushedRef.startsWith('refs/heads/'))
    return ref.branch !== undefined && ref.branch === pushedRef.slice('refs/heads/'.length);
  if (pushedRef.startsWith('refs/tags/')) {
    return (
      (ref.tag !== undefined && ref.tag === pushedRef.slice('refs/tags/'.length)) || ref.semver !== undefined
    );
  }
  return false;
}

/** What matching reads of a GitRepository; a parsed GitRepository fits. */
export interface GitRepositoryLike {
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
  readonly spec: { readonly url: string; readonly ref: GitRef };
}

/** The Releases that follow what was pushed, each once, ordered by namespace then name. */
export function matchReleases(
  push: GitPush,
  releases: readonly Release[],
  gitRepositories: readonly GitRepositoryLike[],
): Release[] {
  if (push.deleted) return [];
  const matcher = pushMatcher(push, gitRepositories);
  return uniqueSorted(
    releases.filter((release) => specFollowsPush(release.spec, release.metadata.namespace ?? '', matcher)),
  );
}

interface PushMatcher {
  /** A repository URL and ref follow the push. */
  readonly follows: (url: string, ref: GitRef) => boolean;
  /** The GitRepository `name` of `namespace` follows the push. */
  readonly repositoryFollows: (namespace: string, name: string) => boolean;
}

function pushMatcher(push: GitPush, gitRepositories: readonly GitRepositoryLike[]): PushMatcher {
  const pushed = new Set(push.repoUrls.map((u) => u.toLowerCase()));
  const follows = (url: string, ref: GitRef) => {
    const key = normalizeRepoUrl(url)?.toLowerCase();
    return key !== undefined && pushed.has(key) && refFollowsPush(ref, push.ref);
  };
  const repositories = new Map<string, GitRepositoryLike>();
  for (const repository of gitRepositories) {
    repositories.set(`${repository.metadata.namespace ?? ''}/${repository.metadata.name}`, repository);
  }
  return {
    follows,
    repositoryFollows: (namespace, name) => {
      const repository = repositories.get(`${namespace}/${name}`);
      return repository !== undefined && follows(repository.spec.url, repository.spec.ref);
    },
  };
}

/** What matching reads of a Release spec; a Release's spec fits, and so does a set's child spec (releaseSetChildSpecs). */
export interface FollowingSpec {
  readonly suspend?: boolean | undefined;
  readonly source: {
    readonly git?: { readonly url: string; readonly ref: GitRef } | undefined;
    readonly gitRepositoryRef?: { readonly name: string } | undefined;
  };
  readonly content?:
    | {
        readonly helm?:
          | { readonly valuesFrom?: readonly { readonly kind: string; readonly name: string }[] | undefined }
          | undefined;
      }
    | undefined;
}

function specFollowsPush(
  spec: FollowingSpec,
  namespace: string,
  { follows, repositoryFollows }: PushMatcher,
): boolean {
  if (spec.suspend === true) return false;
  const { git, gitRepositoryRef } = spec.source;
  if (git !== undefined && follows(git.url, git.ref)) return true;
  if (gitRepositoryRef !== undefined && repositoryFollows(namespace, gitRepositoryRef.name)) return true;
  return (spec.content?.helm?.valuesFrom ?? []).some(
    (layer) => layer.kind === 'GitRepository' && repositoryFollows(namespace, layer.name),
  );
}

function uniqueSorted<
  T extends { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } },
>(objects: readonly T[]): T[] {
  return [...new Map(objects.map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, object]) => object);
}

/** What matching reads of a ReleaseSet: its template spec and overrides, as stored (unvalidated). */
export interface ReleaseSetLike {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string | undefined;
    readonly uid?: string | undefined;
  };
  readonly spec: {
    readonly template: { readonly spec: unknown };
    readonly overrides?: readonly { readonly spec: unknown }[] | undefined;
  };
}

const followingSpecSchema = z.looseObject({
  suspend: z.boolean().optional(),
  source: z.looseObject({
    git: z
      .looseObject({
        url: z.string(),
        ref: z.looseObject({
          branch: z.string().optional(),
          tag: z.string().optional(),
          commit: z.string().optional(),
          semver: z.string().optional(),
        }),
      })
      .optional(),
    gitRepositoryRef: z.looseObject({ name: z.string() }).optional(),
  }),
  content: z
    .looseObject({
      helm: z
        .looseObject({
          valuesFrom: z.array(z.looseObject({ kind: z.string(), name: z.string() })).optional(),
        })
        .optional(),
    })
    .optional(),
});

/**
 * The source-bearing part of every spec the set's children can get: the template's, then the
 * template with each override merged over it. A spec that does not have this shape is left out
 * (the fleet function reports it: Generated False/TemplateFailed).
 */
export function releaseSetChildSpecs(set: ReleaseSetLike): FollowingSpec[] {
  const template = set.spec.template.spec;
  const specs = [
    template,
    ...(set.spec.overrides ?? []).map((override) => mergePatch(template, override.spec)),
  ];
  return specs.flatMap((spec) => {
    const parsed = followingSpecSchema.safeParse(spec);
    return parsed.success ? [parsed.data] : [];
  });
}

/** The ReleaseSets whose children follow what was pushed (see the rules above), each once, ordered by namespace then name. */
export function matchReleaseSets(
  push: GitPush,
  sets: readonly ReleaseSetLike[],
  gitRepositories: readonly GitRepositoryLike[],
): ReleaseSetLike[] {
  if (push.deleted) return [];
  const matcher = pushMatcher(push, gitRepositories);
  return uniqueSorted(
    sets.filter((set) =>
      releaseSetChildSpecs(set).some((spec) => specFollowsPush(spec, set.metadata.namespace ?? '', matcher)),
    ),
  );
}

/** The queue message cause for a push: `git push <ref> <sha7>`. */
export function pushCause(push: GitPush): string {
  return `git push ${push.ref} ${push.after.slice(0, 7)}`;
}
