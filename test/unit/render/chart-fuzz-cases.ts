/**
 * Seeded chart trees for the render-sandbox fuzz (chart-sandbox-fuzz.test.ts). Each case is a
 * repository checkout holding a Helm chart (at the root or in a subfolder, with or without a
 * subchart folder or a vendored archive) and at most one attack on it:
 *
 * - symbolic links to the secret outside: absolute, relative (exact, or overshooting to `/`),
 *   chained through links inside, to folders (templates/, charts/sub, files/), on a template,
 *   Chart.yaml, values.yaml, a subchart's files;
 * - a hard link to the secret; a FIFO; a link loop; a link that leads nowhere;
 * - vendored archives (charts/sub-0.1.0.tgz) with link, hard-link, absolute, `..` and FIFO
 *   entries, or a nested archive holding one;
 * - templates asking `.Files.Get` for an absolute or `..` path (helm must return nothing);
 *
 * and decorations that must keep rendering: links inside the checkout (a linked template, values
 * file or library chart in another folder of the repository), legit vendored archives.
 *
 * Every chart dumps what helm loaded — each file of `.Files` raw and base64, the values and the
 * chart metadata — so any outside content that reached helm would show in the render.
 */
import { prng } from '../../fuzz/generate.ts';
import type { TarFixtureEntry } from './tar-fixture.ts';

/** An archive entry; `tgz` makes it a nested archive of those entries. */
export type FuzzTarEntry = TarFixtureEntry & { tgz?: FuzzTarEntry[] };

/**
 * In link targets, archive link names and template paths, `{OUT}` stands for the outside
 * folder's absolute path and `{OUT-REL}` for the same without its leading `/`.
 */
export function withOutside(text: string, outside: string): string {
  return text.split('{OUT-REL}').join(outside.slice(1)).split('{OUT}').join(outside);
}

export const CHART_FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? 0x5a4db0c5);

/** What the fuzz writes into the checkout. */
export type FuzzNode =
  | { kind: 'file'; content: string }
  | { kind: 'symlink'; target: string }
  | { kind: 'hardlink-to-secret' }
  | { kind: 'fifo' }
  | { kind: 'tgz'; entries: FuzzTarEntry[] };

export interface ChartFuzzCase {
  index: number;
  /** The chart folder inside the checkout ('' = the root). */
  chart: string;
  /** Paths relative to the checkout root, written in order (folders made as needed). */
  nodes: [string, FuzzNode][];
  /** What the attack was, for failure messages. */
  attack: string;
  expect: { verdict: 'renders' } | { verdict: 'refused'; files: string[]; why: RegExp };
}

/** The outside folder's files; `secret` is filled in with the run's random string. */
export function outsideFiles(secret: string): Record<string, string> {
  return {
    'secret.txt': `${secret}\n`,
    'values.yaml': `leak: ${secret}\n`,
    'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata: {k: ${secret}}\n`,
    'chart/Chart.yaml': `apiVersion: v2\nname: sub\nversion: 0.1.0\ndescription: ${secret}\n`,
    'chart/templates/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen-sub}\ndata: {k: ${secret}}\n`,
    'templates/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen-tpl}\ndata: {k: ${secret}}\n`,
    'Chart.yaml': `apiVersion: v2\nname: app\nversion: 0.1.0\ndescription: ${secret}\n`,
  };
}

/** A template that shows everything helm loaded for its chart. */
export function dumpTemplate(extraGets: string[] = []): string {
  const gets = extraGets
    .map((path, i) => `  get-${i}: {{ .Files.Get ${JSON.stringify(path)} | b64enc | quote }}\n`)
    .join('');
  return (
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Chart.Name }}-dump}\ndata:\n' +
    '  values: {{ .Values | toJson | quote }}\n' +
    '  chart: {{ .Chart | toJson | quote }}\n' +
    '{{- range $path, $_ := .Files.Glob "**" }}\n' +
    '  f-{{ $path | sha256sum | trunc 12 }}: {{ $.Files.Get $path | quote }}\n' +
    '  b-{{ $path | sha256sum | trunc 12 }}: {{ $.Files.Get $path | b64enc | quote }}\n' +
    '{{- end }}\n' +
    gets
  );
}

const SUB_CHART = 'apiVersion: v2\nname: sub\nversion: 0.1.0\n';

function join(...parts: string[]): string {
  return parts.filter((p) => p !== '' && p !== '.').join('/');
}
function depthOf(path: string): number {
  return path.split('/').length - 1; // folders above the entry, inside the checkout
}

/**
 * The checkout lives at `<base>/cases/<i>/repo`, the outside folder at `<base>/outside`:
 * from the checkout root, `../../../outside`.
 */
const UP_TO_BASE = 3;

export function generateChartCases(count: number, seed = CHART_FUZZ_SEED): ChartFuzzCase[] {
  const random = prng(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const cases: ChartFuzzCase[] = [];

  for (let index = 0; index < count; index++) {
    const chart = pick(['', 'chart', 'deploy/apps/web']);
    const at = (path: string) => join(chart, path);
    const withSub = random() < 0.5;
    const nodes = new Map<string, FuzzNode>();
    const file = (content: string): FuzzNode => ({ kind: 'file', content });
    nodes.set(at('Chart.yaml'), file('apiVersion: v2\nname: app\nversion: 0.1.0\n'));
    nodes.set(at('values.yaml'), file('greeting: hello\n'));
    nodes.set(at('files/notes.txt'), file('notes inside the chart\n'));
    if (withSub) {
      nodes.set(at('charts/sub/Chart.yaml'), file(SUB_CHART));
      nodes.set(at('charts/sub/values.yaml'), file('sub: true\n'));
      nodes.set(at('charts/sub/templates/dump.yaml'), file(dumpTemplate()));
    }
    const getPaths = ['kubeconfig.txt', 'files/notes.txt'];

    /** A relative target from `link` to `outside/<name>`: exact, or overshooting up to `/`. */
    const relativeOut = (link: string, name: string): string => {
      const up = depthOf(link);
      const target =
        random() < 0.5
          ? `${'../'.repeat(up + UP_TO_BASE)}outside/${name}`
          : `${'../'.repeat(up + 40)}{OUT-REL}/${name}`;
      return target.replace(/\/$/, '');
    };
    const outsideRef = (name: string) => `{OUT}/${name}`.replace(/\/$/, '');

    type Attack = () => { attack: string; expect: ChartFuzzCase['expect'] };
    const fileTargets = [
      'kubeconfig.txt',
      'files/k.txt',
      'templates/x.yaml',
      'Chart.yaml',
      'values.yaml',
      ...(withSub
        ? [
            'charts/sub/k.txt',
            'charts/sub/templates/t.yaml',
            'charts/sub/values.yaml',
            'charts/sub/Chart.yaml',
          ]
        : []),
    ];
    const outsideFor = (path: string) =>
      path.endsWith('Chart.yaml')
        ? 'Chart.yaml'
        : path.endsWith('values.yaml')
          ? 'values.yaml'
          : path.includes('templates/')
            ? 'cm.yaml'
            : 'secret.txt';
    const refused = (files: string[], why: RegExp) => ({ verdict: 'refused' as const, files, why });

    const attacks: Attack[] = [
      () => {
        const path = at(pick(fileTargets));
        nodes.set(path, { kind: 'symlink', target: outsideRef(outsideFor(path)) });
        return {
          attack: `absolute link ${path}`,
          expect: refused([path], /symbolic link to an absolute path/),
        };
      },
      () => {
        const path = at(pick(fileTargets));
        nodes.set(path, { kind: 'symlink', target: relativeOut(path, outsideFor(path)) });
        return {
          attack: `relative link out ${path}`,
          expect: refused([path], /leads outside the repository checkout/),
        };
      },
      () => {
        // A chain: the attacked file -> hop1 -> hop2 -> outside, all hops inside the chart.
        const path = at(pick(fileTargets));
        const hop1 = at('hops/one');
        const hop2 = at('hops/deeper/two');
        nodes.set(path, { kind: 'symlink', target: relUp(path, hop1) });
        nodes.set(hop1, { kind: 'symlink', target: 'deeper/two' });
        nodes.set(hop2, {
          kind: 'symlink',
          target: random() < 0.5 ? outsideRef(outsideFor(path)) : relativeOut(hop2, outsideFor(path)),
        });
        return {
          attack: `chain ${path} -> ${hop1} -> ${hop2} -> out`,
          expect: refused([path, hop1, hop2], /leads outside|absolute path/),
        };
      },
      () => {
        const dir = at(
          pick([
            'templates',
            'files',
            ...(withSub ? ['charts/sub', 'charts/sub/templates'] : ['charts/sub']),
          ]),
        );
        for (const key of [...nodes.keys()]) if (key.startsWith(`${dir}/`)) nodes.delete(key);
        const name = dir.endsWith('charts/sub') ? 'chart' : dir.endsWith('templates') ? 'templates' : '';
        nodes.set(dir, {
          kind: 'symlink',
          target: random() < 0.5 ? outsideRef(name) : relativeOut(dir, name),
        });
        return { attack: `folder link out ${dir}`, expect: refused([dir], /leads outside|absolute path/) };
      },
      () => {
        const path = at(pick(fileTargets));
        nodes.set(path, { kind: 'hardlink-to-secret' });
        return { attack: `hard link ${path}`, expect: refused([path], /is a hard link/) };
      },
      () => {
        const path = at(pick(['values.yaml', 'files/pipe', 'templates/pipe.yaml']));
        nodes.set(path, { kind: 'fifo' });
        return { attack: `fifo ${path}`, expect: refused([path], /device, FIFO or socket/) };
      },
      () => {
        const loop = pick(['folder', 'files'] as const);
        if (loop === 'folder') {
          // Each points at the chart folder, which contains the link.
          const [where, target] = pick([
            ['templates/loop', '..'],
            ['files/up', '..'],
            ['loop', '.'],
          ] as const);
          const path = at(where);
          nodes.set(path, { kind: 'symlink', target });
          return {
            attack: `folder loop ${path}`,
            expect: refused([path], /a folder that contains it \(a loop\)/),
          };
        }
        nodes.set(at('files/a.txt'), { kind: 'symlink', target: 'b.txt' });
        nodes.set(at('files/b.txt'), { kind: 'symlink', target: 'a.txt' });
        return {
          attack: 'file link loop',
          expect: refused([at('files/a.txt'), at('files/b.txt')], /leads nowhere/),
        };
      },
      () => {
        const path = at(pick(fileTargets));
        nodes.set(path, { kind: 'symlink', target: 'no/such/file' });
        return { attack: `dangling link ${path}`, expect: refused([path], /leads nowhere/) };
      },
      () => {
        for (const key of [...nodes.keys()]) if (key.startsWith(at('charts/sub/'))) nodes.delete(key);
        const bad = pick<FuzzTarEntry>([
          { name: 'sub/k.txt', type: 'symlink', linkName: '{OUT}/secret.txt' },
          { name: 'sub/templates/t.yaml', type: 'symlink', linkName: '../../../../../{OUT-REL}/cm.yaml' },
          { name: 'sub/k.txt', type: 'hardlink', linkName: 'sub/Chart.yaml' },
          { name: '/sub/k.txt', content: 'absolute' },
          { name: 'sub/../../k.txt', content: 'climbs' },
          { name: 'sub/pipe', type: 'fifo' },
          { name: `sub/${'deep/'.repeat(30)}k.txt`, type: 'symlink', linkName: '/etc/passwd', pax: true },
        ]);
        const nested = random() < 0.3;
        const entries: FuzzTarEntry[] = [
          { name: 'sub/Chart.yaml', content: SUB_CHART },
          { name: 'sub/templates/dump.yaml', content: dumpTemplate() },
          bad,
        ];
        const archive = at('charts/sub-0.1.0.tgz');
        nodes.set(
          archive,
          nested
            ? {
                kind: 'tgz',
                entries: [
                  { name: 'outer/Chart.yaml', content: 'apiVersion: v2\nname: outer\nversion: 0.1.0\n' },
                  { name: 'outer/charts/sub-0.1.0.tgz', tgz: entries },
                ],
              }
            : { kind: 'tgz', entries },
        );
        return {
          attack: `archive entry ${bad.name} (${bad.type ?? 'file'})${nested ? ', nested' : ''}`,
          expect: refused([archive], /symbolic link|hard link|absolute path|"\.\."|not a regular file/),
        };
      },
      () => {
        // Not an attack on the tree: a template asking for outside paths. helm must return nothing.
        getPaths.push(
          pick([
            '{OUT}/secret.txt',
            '../../../outside/secret.txt',
            `${'../'.repeat(20)}{OUT-REL}/secret.txt`,
            '..',
            '/',
          ]),
        );
        return { attack: `Files.Get ${getPaths.at(-1)}`, expect: { verdict: 'renders' } };
      },
      () => ({ attack: 'none', expect: { verdict: 'renders' } }),
    ];

    /** Links that stay inside the checkout: they must keep rendering. */
    const decorations = [
      () => {
        nodes.set(
          'shared/cm.yaml',
          file('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared-{{ .Chart.Name }}}\n'),
        );
        nodes.set(at('templates/shared.yaml'), {
          kind: 'symlink',
          target: relUp(at('templates/shared.yaml'), 'shared/cm.yaml'),
        });
      },
      () => {
        nodes.set('config/values-prod.yaml', file('greeting: from-the-repository\n'));
        nodes.set(at('values.yaml'), {
          kind: 'symlink',
          target: relUp(at('values.yaml'), 'config/values-prod.yaml'),
        });
      },
      () => {
        nodes.set('library/Chart.yaml', file('apiVersion: v2\nname: library\nversion: 0.1.0\n'));
        nodes.set('library/templates/dump.yaml', file(dumpTemplate()));
        nodes.set(at('charts/library'), { kind: 'symlink', target: relUp(at('charts/library'), 'library') });
      },
      () => {
        nodes.set(at('files/alias.txt'), { kind: 'symlink', target: 'notes.txt' });
      },
      () => {
        nodes.set(at('charts/vendored-1.0.0.tgz'), {
          kind: 'tgz',
          entries: [
            { name: 'vendored/Chart.yaml', content: 'apiVersion: v2\nname: vendored\nversion: 1.0.0\n' },
            { name: 'vendored/templates/dump.yaml', content: dumpTemplate() },
          ],
        });
      },
    ];

    for (let i = int(3); i > 0; i--) pick(decorations)();
    // About a third of the cases render: an attack-free tree or a Files.Get of an outside path.
    const attack = random() < 0.25 ? attacks.at(-1)! : pick(attacks);
    const { attack: what, expect } = attack();
    nodes.set(at('templates/dump.yaml'), file(dumpTemplate(getPaths)));
    // A folder link replacing templates/ leaves no room for the dump.
    if (
      [...nodes.keys()].some(
        (k) => nodes.get(k)?.kind === 'symlink' && at('templates/dump.yaml').startsWith(`${k}/`),
      )
    ) {
      nodes.delete(at('templates/dump.yaml'));
    }
    cases.push({ index, chart, nodes: [...nodes.entries()], attack: what, expect });
  }
  return cases;
}

/** The relative path from the folder of `link` to `target` (both relative to the checkout root). */
export function relUp(link: string, target: string): string {
  return `${'../'.repeat(depthOf(link))}${target}`;
}
