// `convoy version` / `convoy --version`: the package's version (its package.json, found from this
// file in a checkout and in the installed package's dist/) and the Node.js running it.
import { readFileSync } from 'node:fs';

const CANDIDATES = ['../package.json', '../../package.json'];

function packageVersion(): string {
  for (const candidate of CANDIDATES) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'convoy' && typeof pkg.version === 'string') return pkg.version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return 'unknown';
}

export function convoyVersion(): { convoy: string; node: string; platform: string; line: string } {
  const convoy = packageVersion();
  const node = process.versions.node;
  const platform = `${process.platform}-${process.arch}`;
  return { convoy, node, platform, line: `convoy ${convoy} (Node.js ${node}, ${platform})` };
}
