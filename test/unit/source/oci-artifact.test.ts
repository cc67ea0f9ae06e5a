// The pure parts of the `oci` source kind (domain/source/oci-artifact.ts): the artifact URL, the tag
// a semver range picks, the content layer of a manifest, and the checks of a layer's tar entries
// before anything is written. The tar bytes come from dev/oci-artifact-push.ts's writer and are read
// back by domain/render/tar-entries.ts, as the source does.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readTarEntries } from '../../../domain/render/tar-entries.ts';
import {
  copiedLayerName,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_ARTIFACT_URL_PATTERN,
  OCI_LAYER_TAR_GZIP,
  parseOciArtifactUrl,
  pickSemverTag,
  planExtraction,
  selectLayer,
} from '../../../domain/source/oci-artifact.ts';
import { tarGz, type TarInput } from '../../../dev/oci-artifact-push.ts';

const F = 'spec.source.oci';
const D = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;

function plan(entries: TarInput[], maxBytes = 1 << 20) {
  return planExtraction(readTarEntries(gunzipSync(tarGz(entries))), maxBytes);
}

describe('the artifact URL', () => {
  it('registry with port, repository with one or more components', () => {
    expect(parseOciArtifactUrl('oci://ghcr.io/org/app-manifests', F)).toEqual({
      registry: 'ghcr.io',
      repository: 'org/app-manifests',
    });
    expect(parseOciArtifactUrl('oci://127.0.0.1:5000/manifests', F)).toEqual({
      registry: '127.0.0.1:5000',
      repository: 'manifests',
    });
    expect(parseOciArtifactUrl('oci://Registry.Example.com/a/b/c', F)).toEqual({
      registry: 'registry.example.com',
      repository: 'a/b/c',
    });
  });

  it.each([
    'oci://ghcr.io',
    'oci://ghcr.io/',
    'oci://user:pass@ghcr.io/org/app',
    'oci://ghcr.io/Org/app',
    'oci://ghcr.io/org/app:1.0.0',
    'oci://ghcr.io/org/app@sha256:abc',
    'oci://ghcr.io/org/app?x=1',
    'https://ghcr.io/org/app',
    'oci://ghcr.io/org//app',
  ])('%s is refused naming the field', (url) => {
    expect(() => parseOciArtifactUrl(url, F)).toThrow(
      /^spec\.source\.oci\.url ".*" is not an OCI artifact location/,
    );
    expect(new RegExp(OCI_ARTIFACT_URL_PATTERN).test(url)).toBe(false);
  });
});

describe('ref.semver', () => {
  const tags = ['1.0.0', '1.2.0', 'v1.3.0', '2.0.0-rc.1', '2.0.0', 'latest', 'main'];
  it('the highest semver tag in range; a leading v is a version; other tags are ignored', () => {
    expect(pickSemverTag(tags, '1.x', 'artifact r/a', `${F}.ref.semver`)).toEqual({
      ok: true,
      tag: 'v1.3.0',
    });
    expect(pickSemverTag(tags, '~1.2', 'artifact r/a', `${F}.ref.semver`)).toEqual({
      ok: true,
      tag: '1.2.0',
    });
    expect(pickSemverTag(tags, '*', 'artifact r/a', `${F}.ref.semver`)).toEqual({ ok: true, tag: '2.0.0' });
  });

  it('pre-releases only when the range names one', () => {
    expect(pickSemverTag(['1.0.0', '2.0.0-rc.1'], '>=1', 'a', 's')).toEqual({ ok: true, tag: '1.0.0' });
    expect(pickSemverTag(['1.0.0', '2.0.0-rc.1'], '>=2.0.0-rc.0', 'a', 's')).toEqual({
      ok: true,
      tag: '2.0.0-rc.1',
    });
  });

  it('nothing in range: the newest semver tags and how many tags were ignored', () => {
    const pick = pickSemverTag(tags, '^3', 'artifact r/a', `${F}.ref.semver`);
    expect(pick).toEqual({
      ok: false,
      message:
        'artifact r/a has no tag matching "^3" (newest semver tags: 2.0.0, 2.0.0-rc.1, 1.3.0, 1.2.0, 1.0.0; 2 tags that are not semver ignored); push one or change spec.source.oci.ref.semver',
    });
  });

  it('not a range: says so, naming the field', () => {
    const pick = pickSemverTag(tags, 'not a range!', 'a', `${F}.ref.semver`);
    expect(pick.ok === false && pick.message).toMatch(
      /^spec\.source\.oci\.ref\.semver "not a range!" is not a semver range/,
    );
  });
});

describe('the content layer', () => {
  const flux = { mediaType: FLUX_CONTENT_MEDIA_TYPE, digest: D(1), size: 10 };
  const oras = { mediaType: OCI_LAYER_TAR_GZIP, digest: D(2), size: 20 };
  const yaml = {
    mediaType: 'application/yaml',
    digest: D(3),
    size: 30,
    annotations: { 'org.opencontainers.image.title': 'app.yaml' },
  };

  it('default: the flux content layer first, else the ORAS folder layer', () => {
    expect(selectLayer([oras, flux], undefined, 'r/a@x', F)).toMatchObject({
      ok: true,
      index: 1,
      operation: 'extract',
    });
    expect(selectLayer([yaml, oras], undefined, 'r/a@x', F)).toMatchObject({
      ok: true,
      index: 1,
      layer: { digest: D(2) },
    });
  });

  it('layerSelector.mediaType picks that layer; operation copy is kept', () => {
    expect(
      selectLayer([flux, yaml], { mediaType: 'application/yaml', operation: 'copy' }, 'r/a@x', F),
    ).toMatchObject({ ok: true, index: 1, operation: 'copy' });
  });

  it('no such layer: the message lists the media types found', () => {
    expect(selectLayer([yaml], undefined, 'r/a@x', F)).toEqual({
      ok: false,
      message: `r/a@x has no content layer (${FLUX_CONTENT_MEDIA_TYPE} or ${OCI_LAYER_TAR_GZIP} or application/vnd.docker.image.rootfs.diff.tar.gzip); it has layers of media type application/yaml; name the content layer in spec.source.oci.layerSelector.mediaType`,
    });
    expect(selectLayer([flux], { mediaType: 'text/plain' }, 'r/a@x', F)).toMatchObject({
      ok: false,
      message: `r/a@x has no layer of media type text/plain (spec.source.oci.layerSelector.mediaType); it has layers of media type ${FLUX_CONTENT_MEDIA_TYPE}`,
    });
  });

  it('a Helm chart is pointed at spec.source.helm', () => {
    const pick = selectLayer(
      [{ mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', digest: D(4) }],
      undefined,
      'r/a@x',
      F,
    );
    expect(pick.ok === false && pick.message).toMatch(/it is a Helm chart: use spec\.source\.helm/);
  });

  it('a copied layer is named by its title annotation, never outside the folder', () => {
    expect(copiedLayerName(yaml)).toEqual({ ok: true, name: 'app.yaml' });
    const climbing = copiedLayerName({
      ...yaml,
      annotations: { 'org.opencontainers.image.title': '../x.yaml' },
    });
    expect(climbing.ok === false && climbing.message).toContain('contains a ".." segment');
    const absolute = copiedLayerName({
      ...yaml,
      annotations: { 'org.opencontainers.image.title': '/etc/x.yaml' },
    });
    expect(absolute.ok === false && absolute.message).toContain('is an absolute path');
    expect(copiedLayerName({ ...yaml, annotations: {} })).toMatchObject({ ok: false });
  });
});

describe('tar entries of a content layer', () => {
  it('a flux push artifact folder: folders, files, a link inside; ./ prefixes and the root entry are fine; links come last', () => {
    const result = plan([
      { name: './', type: 'directory' },
      { name: './base', type: 'directory' },
      { name: './base/cm.yaml', content: 'a: 1\n' },
      { name: 'overlay/kustomization.yaml', content: 'resources: [../base]\n' },
      { name: 'overlay/link.yaml', type: 'symlink', target: '../base/cm.yaml' },
      { name: 'copy.yaml', type: 'hardlink', target: 'base/cm.yaml' },
    ]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.steps.map((s) => `${s.op} ${s.path}`)).toEqual([
      'dir base',
      'file base/cm.yaml',
      'file overlay/kustomization.yaml',
      'file copy.yaml',
      'symlink overlay/link.yaml',
    ]);
    expect(result.bytes).toBe(5 + 21 + 5);
  });

  it.each<[string, TarInput[], RegExp]>([
    ['a ../ name', [{ name: '../evil.yaml', content: 'x' }], /^contains a "\.\." segment$/],
    ['a nested ../ name', [{ name: 'a/../../evil.yaml', content: 'x' }], /^contains a "\.\." segment$/],
    ['an absolute name', [{ name: '/etc/evil.yaml', content: 'x' }], /^is an absolute path$/],
    [
      'a link to an absolute path',
      [{ name: 'l', type: 'symlink', target: '/etc/passwd' }],
      /^is a symbolic link to an absolute path$/,
    ],
    [
      'a link climbing out',
      [{ name: 'a/l', type: 'symlink', target: '../../outside' }],
      /^is a symbolic link that leads outside the artifact$/,
    ],
    [
      'a hard link out',
      [{ name: 'h', type: 'hardlink', target: '../outside' }],
      /hard link whose target contains a "\.\." segment/,
    ],
    [
      'a hard link to something not in the archive',
      [{ name: 'h', type: 'hardlink', target: 'etc/passwd' }],
      /not an earlier regular file/,
    ],
    [
      'an entry below a link',
      [
        { name: 'l', type: 'symlink', target: '.' },
        { name: 'l/x.yaml', content: 'x' },
      ],
      /lies below the symbolic link "l"/,
    ],
    ['a FIFO', [{ name: 'pipe', type: 'fifo' }], /not a regular file, folder or link/],
    [
      'a name twice',
      [
        { name: 'a.yaml', content: 'x' },
        { name: 'a.yaml', content: 'y' },
      ],
      /appears twice/,
    ],
    [
      'a link over a folder of files',
      [
        { name: 'd/x.yaml', content: 'x' },
        { name: 'd', type: 'symlink', target: '.' },
      ],
      /appears twice/,
    ],
  ])('%s is refused, naming the entry', (_what, entries, why) => {
    const result = plan(entries);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.why).toMatch(why);
    expect(result.entry).toBe(
      JSON.stringify(entries.at(-1)!.name.endsWith('/') ? entries.at(-1)!.name : entries.at(-1)!.name),
    );
  });

  it('the unpacked size is bounded, naming the limit', () => {
    const result = plan(
      [
        { name: 'a', content: 'x'.repeat(600) },
        { name: 'b', content: 'y'.repeat(600) },
      ],
      1000,
    );
    expect(result).toEqual({
      ok: false,
      entry: '"b"',
      why: "takes the unpacked artifact over convoy's limit of 1000 bytes",
    });
  });

  it('link names survive the tar reader: ustar linkname', () => {
    const entries = readTarEntries(
      gunzipSync(
        tarGz([
          { name: 'l', type: 'symlink', target: 'x/y.yaml' },
          { name: 'h', type: 'hardlink', target: 'l' },
        ]),
      ),
    );
    expect(entries.map((e) => [e.name, e.type, e.linkName])).toEqual([
      ['l', 'symlink', 'x/y.yaml'],
      ['h', 'hardlink', 'l'],
    ]);
  });
});
