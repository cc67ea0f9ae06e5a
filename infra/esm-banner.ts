/**
 * CommonJS dependencies bundled into ESM still call require() for Node built-ins,
 * and some read __filename; this banner gives them both. On one line, because the
 * CDK passes it through esbuild's command line. The imported names are prefixed so
 * they cannot collide with bundled code. Used by the CDK bundling and by
 * scripts/bundle-functions.ts, so the benchmark measures what is deployed.
 */
export const ESM_BANNER = [
  "import { createRequire as __convoyCreateRequire } from 'node:module';",
  "import { fileURLToPath as __convoyFileURLToPath } from 'node:url';",
  "import { dirname as __convoyDirname } from 'node:path';",
  'const require = __convoyCreateRequire(import.meta.url);',
  'const __filename = __convoyFileURLToPath(import.meta.url);',
  'const __dirname = __convoyDirname(__filename);',
].join(' ');
