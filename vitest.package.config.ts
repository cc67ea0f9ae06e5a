// `npm run test:package`: the slow packaging tests (npm pack builds dist/; a CDK app installs the
// tarball; the relay image is built, pushed to a local registry, validated and run). Kept out of
// `npm test`; .ci/run runs it after the suite.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'package',
    include: ['test/package/**/*.test.ts'],
    environment: 'node',
    reporters: ['default', './test/harness/summary-reporter.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 900_000,
    pool: 'forks',
  },
});
