// Import boundaries between convoy's folders, checked by `npm run lint` (scripts/lint.ts) and
// counted by scripts/arch-figures.ts. docs/conventions.md says what each folder is for; these rules
// keep the folders honest without anyone having to remember them.
//
// Paths are relative to the folder depcruise runs in (the repository root; the lint test runs the
// same rules in a fixture tree of its own), so every pattern starts at a top-level folder.

/**
 * Folders that ship: every top-level folder but the tests, the benchmarks and the repository's own
 * scripts (so a folder added later is covered without editing this file).
 */
const PRODUCT = '^(?!(test|bench|scripts)/)[^/]+/';

/** Any top-level folder of the repository other than the named ones (npm packages and Node built-ins are not folders here). */
const otherThan = (folders) => `^(?!(${folders.join('|')})/)[^/]+/`;

/** Where npm packages resolve to: in node_modules here, or up the tree from a fixture tree. */
const PACKAGES = '(^|/)node_modules/';

/**
 * What domain/ may use from outside the repository: an allowlist, so that a new dependency of the
 * pure core is a decision someone makes in this file rather than an accident. These do no I/O.
 */
const DOMAIN_BUILTINS = '^(node:)?(crypto|buffer|util|path|url|assert|events|string_decoder)$';
const DOMAIN_PACKAGES = '(^|/)node_modules/(zod|yaml|semver|re2js|diff|@marcbachmann/cel-js)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Import circles make load order matter and hide which module is the lower layer; ' +
        'move the shared part into a module both import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-domain-only',
      severity: 'error',
      comment:
        'domain/ is the pure core (schemas, status, planning, rules): it must run in a unit test ' +
        'with no world around it. Define a port (an interface) in domain/ and implement it outside.',
      from: { path: '^domain/' },
      to: { path: otherThan(['domain']), pathNot: PACKAGES, dependencyTypesNot: ['core'] },
    },
    {
      name: 'domain-is-pure-builtins',
      severity: 'error',
      comment:
        'domain/ does no I/O: no file system, processes, network or host. Take what it needs as ' +
        'an argument or a port (DOMAIN_BUILTINS in .dependency-cruiser.js lists what it may use).',
      from: { path: '^domain/' },
      to: { dependencyTypes: ['core'], pathNot: DOMAIN_BUILTINS },
    },
    {
      name: 'domain-is-pure-packages',
      severity: 'error',
      comment:
        'domain/ imports no AWS, Kubernetes client, HTTP, git or queue library: those live in ' +
        'adapters/ behind a port. A new pure library goes into DOMAIN_PACKAGES in .dependency-cruiser.js.',
      from: { path: '^domain/' },
      to: {
        dependencyTypes: [
          'npm',
          'npm-dev',
          'npm-peer',
          'npm-optional',
          'npm-no-pkg',
          'npm-unknown',
          'unknown',
        ],
        pathNot: DOMAIN_PACKAGES,
      },
    },
    {
      name: 'adapters-import-domain-only',
      severity: 'error',
      comment:
        'adapters/ are thin translations between the world and domain/: they may use domain/, ' +
        'each other and libraries, nothing else of this repository (no entry point, no tests).',
      from: { path: '^adapters/' },
      to: { path: otherThan(['adapters', 'domain']), pathNot: PACKAGES, dependencyTypesNot: ['core'] },
    },
    {
      name: 'relay-not-cli',
      severity: 'error',
      comment:
        'The relay image ships only what relay/main.ts reaches; the CLI is a separate entry ' +
        'point. Move what both need into domain/ or adapters/.',
      from: { path: '^relay/' },
      to: { path: '^cli/' },
    },
    {
      name: 'relay-not-functions',
      severity: 'error',
      comment:
        "The relay is not a Lambda function: importing functions/ drags the functions' clients " +
        'into the relay image. Move what both need into domain/ or adapters/.',
      from: { path: '^relay/' },
      to: { path: '^functions/' },
    },
    {
      name: 'client-not-functions',
      severity: 'error',
      comment:
        "client/ is the published typed client (convoy/client): it must not pull the functions' " +
        'runtime into its users. Move what both need into domain/.',
      from: { path: '^client/' },
      to: { path: '^functions/' },
    },
    {
      name: 'product-not-test',
      severity: 'error',
      comment: 'Shipped code never imports test code: move the helper into the product (dev/, adapters/).',
      from: { path: PRODUCT },
      to: { path: '^test/', pathNot: PACKAGES, dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    // Type-only imports count: a domain type that needs an adapter's type still couples them.
    tsPreCompilationDeps: true,
    doNotFollow: { path: ['node_modules'] },
    // node_modules is not followed but not excluded: excluding it would hide imports of packages from
    // the rules that forbid some of them.
    exclude: {
      path: ['^dist/', '^cdk\\.out/', '^\\.tools/', '^\\.convoy/', '^coverage/', '^test/fixtures/'],
    },
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
    skipAnalysisNotInRules: true,
  },
};
