// ESM NestJS + Jest: tests run TypeScript through @swc/jest (keeps decorator metadata) under
// node --experimental-vm-modules; see docs/DEVELOPMENT.md.
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2023',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@fleet/contracts$': '<rootDir>/libs/contracts/src/index.ts',
    '^@fleet/contracts/release$': '<rootDir>/libs/contracts/src/release.ts',
    '^@fleet/cloud-provider$': '<rootDir>/libs/cloud-provider/src/index.ts',
    '^@fleet/discovery$': '<rootDir>/libs/discovery/src/index.ts',
    '^@fleet/database$': '<rootDir>/libs/database/src/index.ts',
    '^@fleet/crd-schema$': '<rootDir>/libs/crd-schema/src/index.ts',
    '^@fleet/desired-state$': '<rootDir>/libs/desired-state/src/index.ts',
    '^@fleet/observability$': '<rootDir>/libs/observability/src/index.ts',
    '^@fleet/testing$': '<rootDir>/test/support/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

// A test that fails and leaks a handle, run only by test/jest-guard/jest-exits.spec.ts to prove
// that this configuration still exits.
const jestGuard = process.env.FLEET_JEST_GUARD === '1';

export default {
  projects: jestGuard
    ? [
        {
          ...shared,
          displayName: 'jest-guard',
          testMatch: ['<rootDir>/test/jest-guard/*.fixture.ts'],
        },
      ]
    : [
        { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'] },
        {
          ...shared,
          displayName: 'e2e',
          testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
          slowTestThreshold: 30,
        },
        // Real etcd, kube-apiserver, kube-controller-manager and kube-scheduler (test/upstream),
        // started by each suite (test/real-kubernetes/README.md).
        {
          ...shared,
          displayName: 'real-kubernetes',
          testMatch: ['<rootDir>/test/**/*.real-spec.ts'],
          testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/real-karpenter/'],
          slowTestThreshold: 60,
        },
        // Upstream forks the module proxy refuses, built by hand from their own source
        // (test/upstream/*/README.md): only `npm run test:forks`, which names the binaries.
        ...(process.env.FLEET_FORK_SUITES === '1'
          ? [
              {
                ...shared,
                displayName: 'forks',
                testMatch: ['<rootDir>/test/**/*.fork-spec.ts'],
                slowTestThreshold: 60,
              },
            ]
          : []),
        // The real karpenter-provider-aws (test/upstream) on those control planes, as the fleet
        // and HyperShift run it (test/real-karpenter/README.md).
        {
          ...shared,
          displayName: 'real-karpenter',
          testMatch: ['<rootDir>/test/real-karpenter/*.real-spec.ts'],
          slowTestThreshold: 60,
        },
      ],
  // Every test and hook is bounded (suites that build or start processes raise it for their own
  // beforeAll, never unbounded), so a stuck suite fails instead of hanging.
  testTimeout: 60_000,
  // Suites run in worker processes that are replaced once they hold more than 1 GB: run in band,
  // one process grew past 4 GB over the suite, and its garbage-collection pauses made requests
  // with second-scale deadlines time out in late suites. Three workers on two cores, because most
  // of an end-to-end suite's time is spent waiting on other processes: two used 0.6 of a core on
  // average (14.5 min of CPU in a 26.5-minute run); three took the same suite, at the same load
  // average of about 10 from other work, from 26.5 to 21.4 minutes, every test passing.
  maxWorkers: Number(process.env.FLEET_JEST_WORKERS ?? 3),
  workerIdleMemoryLimit: '1GB',
  // Suites close what they open; this is the last guard, so that a suite that failed half-way
  // through its set-up cannot keep Jest (and CI) waiting on a handle it never got to close.
  forceExit: true,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.mjs'],
  // Longest suites first, from durations recorded in the repository when Jest's cache has none.
  testSequencer: '<rootDir>/scripts/jest-sequencer.mjs',
};
