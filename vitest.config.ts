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
          // Two files at a time on the 2-core CI machine (vitest's default there is 1): the files
          // mostly wait on apiservers, controllers and queues, each in its own namespaces
          // (issue 21: CI under 30 minutes as the suite grows; every test waits causally).
          maxWorkers: 2,
        },
      },
    ],
  },
});
