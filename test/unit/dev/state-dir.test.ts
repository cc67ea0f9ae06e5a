// dev/state-dir.ts: where `convoy dev` writes the embedded cluster's kubeconfig.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DEV_API_PORT, devKubeconfigName, devStateDir, isCheckout } from '../../../dev/state-dir.ts';

const root = mkdtempSync(join(tmpdir(), 'convoy-state-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("convoy dev's state folder", () => {
  it('an installed package: $XDG_STATE_HOME/convoy, never the package folder', () => {
    const packageRoot = '/usr/lib/node_modules/convoy/dist';
    expect(
      devStateDir({
        packageRoot,
        env: { XDG_STATE_HOME: '/home/u/state' },
        home: '/home/u',
        checkout: false,
      }),
    ).toBe('/home/u/state/convoy');
  });

  it('without XDG_STATE_HOME, or with a relative one (the XDG spec ignores it): ~/.local/state/convoy', () => {
    const packageRoot = '/usr/lib/node_modules/convoy/dist';
    expect(devStateDir({ packageRoot, env: {}, home: '/home/u', checkout: false })).toBe(
      '/home/u/.local/state/convoy',
    );
    expect(devStateDir({ packageRoot, env: { XDG_STATE_HOME: '' }, home: '/home/u', checkout: false })).toBe(
      '/home/u/.local/state/convoy',
    );
    expect(
      devStateDir({ packageRoot, env: { XDG_STATE_HOME: 'state' }, home: '/home/u', checkout: false }),
    ).toBe('/home/u/.local/state/convoy');
  });

  it('a checkout keeps its gitignored .convoy/', () => {
    expect(
      devStateDir({
        packageRoot: '/src/convoy',
        env: { XDG_STATE_HOME: '/s' },
        home: '/home/u',
        checkout: true,
      }),
    ).toBe('/src/convoy/.convoy');
  });

  it('a checkout is a folder with .git outside node_modules; an installed copy (even with a .git) or a plain folder is not; npm link resolves to the checkout', () => {
    const checkout = join(root, 'convoy');
    mkdirSync(join(checkout, '.git'), { recursive: true });
    const installed = join(root, 'node_modules', 'convoy');
    mkdirSync(join(installed, '.git'), { recursive: true });
    const plain = join(root, 'plain');
    mkdirSync(plain);
    const linked = join(root, 'global', 'node_modules', 'convoy');
    mkdirSync(join(root, 'global', 'node_modules'), { recursive: true });
    symlinkSync(checkout, linked);
    expect([isCheckout(checkout), isCheckout(installed), isCheckout(plain), isCheckout(linked)]).toEqual([
      true,
      false,
      false,
      true,
    ]);
  });

  it('one kubeconfig file per running convoy dev: `kubeconfig` on the default API port, `kubeconfig-<port>` on another, `kubeconfig-pid<pid>` on port 0', () => {
    expect(devKubeconfigName(DEFAULT_DEV_API_PORT, 42)).toBe('kubeconfig');
    expect(devKubeconfigName(18480, 42)).toBe('kubeconfig-18480');
    expect(devKubeconfigName(0, 42)).toBe('kubeconfig-pid42');
    // Two runs at once hold two API ports (or two pids): never one file.
    const names = [
      devKubeconfigName(8480, 1),
      devKubeconfigName(8490, 1),
      devKubeconfigName(0, 1),
      devKubeconfigName(0, 2),
    ];
    expect(new Set(names).size).toBe(names.length);
  });
});
