/** Jest projects by test level (docs/architecture.md, "Tests"): unit (no I/O), cdk (template), integration (local cloud),
 * fault (crash points and linearizability: each suite starts its own fault-enabled local cloud). */
// Type checking is done once by scripts/typecheck-and-lint.mjs (npm test); jest only transpiles, to CommonJS, with SWC
// (ts-jest's TypeScript transpiler made a fresh clone's unit and cdk projects cost 23 CPU-s more than a warm cache).
// `jsc.transform.hidden.jest` hoists `jest.mock` above the imports, as babel-jest does.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript' },
      target: 'es2022',
      transform: { hidden: { jest: true } },
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];
// middy 6 ships ES modules only; the handler factories import it, so jest transpiles it to CommonJS too.
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc, '^.+/node_modules/@middy/.+\\.js$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  // The longest files first (test/durations.json), so that the two workers end together on a fresh machine.
  testSequencer: '<rootDir>/test/sequencer.cjs',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/sdk/test/**/*.test.ts'] },
    { ...base, displayName: 'cdk', setupFiles: ['<rootDir>/test/cdk/setup.ts'], testMatch: ['<rootDir>/test/cdk/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      setupFilesAfterEnv: [
        '<rootDir>/test/integration/cloud.ts',
        '<rootDir>/test/integration/timeouts.ts',
        '<rootDir>/test/support/stop-after-file.ts',
      ],
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
    },
    {
      ...base,
      displayName: 'fault',
      setupFilesAfterEnv: ['<rootDir>/test/fault/timeouts.ts', '<rootDir>/test/support/stop-after-file.ts'],
      testMatch: ['<rootDir>/test/fault/**/*.test.ts'],
    },
    // Capacity units per operation, counted on an in-process local cloud (its own engines).
    {
      ...base,
      displayName: 'capacity',
      setupFilesAfterEnv: ['<rootDir>/test/fault/timeouts.ts', '<rootDir>/test/support/stop-after-file.ts'],
      testMatch: ['<rootDir>/test/capacity/**/*.test.ts'],
    },
  ],
};
