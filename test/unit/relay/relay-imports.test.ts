import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

describe("the relay's modules", () => {
  it('load without @kubernetes/client-node (~87 MiB of the relay process)', () => {
    // Everything relay/main.ts composes, imported in a fresh Node.js process that records every
    // import of client-node and who asked for it (relay/kube-config.ts loads it only for a
    // kubeconfig with a plugin, which this does not reach).
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith('@kubernetes/client-node')) seen.push(context.parentURL); return next(specifier, context); } });
      for (const file of ['relay/relay.ts', 'relay/kube-config.ts', 'relay/http/app.ts', 'relay/http/auth.ts', 'relay/http/release-api.ts', 'relay/http/git-hooks.ts', 'relay/http/user-cluster.ts', 'relay/http/serve.ts', 'adapters/store/s3-render-store.ts', 'platform/tenancy-config.ts']) await import('./' + file);
      console.log(JSON.stringify(seen));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').at(-1) ?? '[]')).toEqual([]);
  });

  it('start without the S3 SDK: relay/main.ts loads it on the first render-store request (~6 MiB at rest)', () => {
    // relay/main.ts itself, in a fresh Node.js process with no relay environment: every static
    // import is loaded before main() runs and refuses the environment, so what was resolved by
    // then is what the relay loads at start, whatever it does afterwards.
    const hook = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (/^@aws-sdk\\/client-s3|^@kubernetes\\/client-node/.test(specifier)) seen.push(specifier + ' from ' + context.parentURL); return next(specifier, context); } });
      process.on('exit', () => console.log('loaded: ' + JSON.stringify(seen)));`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CONVOY_')));
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, 'relay/main.ts'],
      { cwd: root, encoding: 'utf8', env },
    );
    expect(run.stderr).toContain('relay environment is invalid');
    const line = run.stdout.split('\n').find((l) => l.startsWith('loaded: '));
    expect(JSON.parse(line?.slice('loaded: '.length) ?? 'null')).toEqual([]);
  });
});
