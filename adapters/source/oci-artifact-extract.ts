/**
 * Unpacks the content layer of an OCI artifact (a tar+gzip, as `flux push artifact` and
 * `oras push <folder>` write it) into a fresh folder — only after every entry passed the checks of
 * domain/source/oci-artifact.ts `planExtraction`, so a refused archive writes nothing at all.
 *
 * The writes themselves never follow a link: folders are created below the fresh folder, files are
 * created exclusively (`wx`: an existing name, link or not, is an error), and links are created
 * last. Each link's real path is then checked to stay inside the folder (a chain of links that
 * each look fine lexically, `d/l -> ..` and `e -> d/l/..`, is caught here). No owners, no modes
 * from the archive: files are 0644, folders 0755.
 */
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { isWithin } from '../../domain/render/path-safety.ts';
import { readTarEntries, TarFormatError } from '../../domain/render/tar-entries.ts';
import { planExtraction, type ExtractStep } from '../../domain/source/oci-artifact.ts';

/** Why a layer cannot be unpacked: the entry (or the archive) and the reason. Nothing was written. */
export class ArtifactContentError extends Error {
  override name = 'ArtifactContentError';
}

/** Most entries one artifact may hold. */
const MAX_ENTRIES = 20_000;

/** The steps of unpacking `layer` (gzip-compressed tar), unpacked size at most `maxBytes`; throws ArtifactContentError. */
export function planLayer(layer: Uint8Array, maxBytes: number): ExtractStep[] {
  if (layer.length < 2 || layer[0] !== 0x1f || layer[1] !== 0x8b) {
    throw new ArtifactContentError(
      'the layer is not gzip-compressed (a tar+gzip layer was expected; for a plain file use layerSelector.operation copy)',
    );
  }
  let tar: Buffer;
  try {
    // The tar headers add to the files' bytes: room for them, still bounded.
    tar = gunzipSync(layer, { maxOutputLength: maxBytes + 512 * (MAX_ENTRIES + 2) });
  } catch (error) {
    if (error instanceof RangeError)
      throw new ArtifactContentError(`the layer unpacks to more than convoy's limit of ${maxBytes} bytes`);
    throw new ArtifactContentError(
      `the layer is not valid gzip (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  let entries;
  try {
    entries = readTarEntries(tar, MAX_ENTRIES);
  } catch (error) {
    if (error instanceof TarFormatError)
      throw new ArtifactContentError(`the layer is not a tar archive convoy can read (${error.message})`);
    throw error;
  }
  const plan = planExtraction(entries, maxBytes);
  if (!plan.ok) throw new ArtifactContentError(`entry ${plan.entry} ${plan.why}; nothing was written`);
  return plan.steps;
}

/** Carries out checked steps below the empty folder `into`; throws ArtifactContentError when a link leads outside. */
export async function writeSteps(steps: readonly ExtractStep[], into: string): Promise<void> {
  for (const step of steps) {
    const path = join(into, ...step.path.split('/'));
    switch (step.op) {
      case 'dir':
        await mkdir(path, { recursive: true, mode: 0o755 });
        break;
      case 'file':
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        await writeFile(path, step.data, { flag: 'wx', mode: 0o644 });
        break;
      case 'symlink':
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        await symlink(step.target, path);
        break;
    }
  }
  const root = await realpath(into);
  for (const step of steps) {
    if (step.op !== 'symlink') continue;
    const path = join(into, ...step.path.split('/'));
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      continue; // dangling: the render sandbox refuses it if a tool would read it
    }
    if (!isWithin(root, real)) {
      throw new ArtifactContentError(
        `entry ${JSON.stringify(step.path)} is a symbolic link that, through other links, leads outside the artifact`,
      );
    }
  }
}
