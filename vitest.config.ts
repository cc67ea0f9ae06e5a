import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/harness/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // A safety net, not a speed check: a CDK synth takes 1–3 s alone and over 5 s (vitest's
          // default) while integration files run beside it on 2 cores (speed targets: npm run bench).
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // Two files at a time: npm test took 1,919 s one at a time, 1,170 s two at a time (a quiet
          // fresh clone). Safe because files share nothing they change: each makes its own namespaces
          // (freshNamespace), cluster-scoped objects carry its installation's suffix, ports are free
          // ones, and each runtime's functions act as their installation's own ServiceAccount
          // (runtime-env.ts), not the control plane's one user of the group convoy:functions, which
          // every installation binds — with that user, a test revoking a verb from its installation's
          // functions ClusterRole found it still granted by the other file's installation.
          maxWorkers: 2,
        },
      },
    ],
  },
});
