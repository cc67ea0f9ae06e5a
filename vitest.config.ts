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
          // One file at a time (vitest's default on 2 cores). Two at a time took npm test from
          // 1,919 s to 1,170 s on a quiet fresh clone, but the runtimes of parallel files share one
          // functions user (dev/control-plane.ts FUNCTIONS_USER): a test that revokes a verb from its
          // installation's ClusterRole still finds it granted by the other file's installation.
          // Parallel files need an identity per installation first (issue 21, left).
          maxWorkers: 1,
        },
      },
    ],
  },
});
