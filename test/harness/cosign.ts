/**
 * The real cosign (sigstore), built from Go modules by scripts/build-cosign.sh and cached like the
 * registry, to sign test artifacts the way users do: `cosign generate-key-pair` and
 * `cosign sign --key … --tlog-upload=false` (no Rekor, no Fulcio: nothing leaves the machine).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');
/** The password of the test key pairs (cosign encrypts the private key with it). */
const PASSWORD = 'convoy-test-cosign';

export async function cosignBinary(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [join(root, 'scripts', 'build-cosign.sh')], {
    maxBuffer: 1 << 20,
    timeout: 30 * 60_000,
  });
  return stdout.trim();
}

export interface CosignKeyPair {
  /** cosign.key (encrypted with the test password). */
  keyFile: string;
  /** cosign.pub, PEM. */
  publicPem: string;
}

function env(dir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    COSIGN_PASSWORD: PASSWORD,
    COSIGN_YES: 'true',
    SIGSTORE_NO_CACHE: 'true',
    TUF_ROOT: join(dir, 'tuf'),
  };
}

/** `cosign generate-key-pair` in `dir` (a folder of its own per pair). */
export async function generateKeyPair(cosign: string, dir: string): Promise<CosignKeyPair> {
  await execFileAsync(cosign, ['generate-key-pair'], { cwd: dir, env: env(dir) });
  return { keyFile: join(dir, 'cosign.key'), publicPem: await readFile(join(dir, 'cosign.pub'), 'utf8') };
}

/** `cosign sign --key` of `<host>/<repository>@<digest>` on a plain-HTTP registry, without the transparency log. */
export async function signArtifact(
  cosign: string,
  dir: string,
  key: CosignKeyPair,
  reference: string,
): Promise<void> {
  await execFileAsync(
    cosign,
    [
      'sign',
      '--key',
      key.keyFile,
      '--tlog-upload=false',
      '--allow-http-registry',
      '--allow-insecure-registry',
      '--yes',
      reference,
    ],
    { cwd: dir, env: env(dir) },
  );
}
