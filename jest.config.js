/** Jest projects by test level (docs/architecture.md, "Tests"): unit (no I/O), cdk (template), integration (local cloud),
 * fault (crash points and linearizability: each suite starts its own fault-enabled local cloud). */
// Type checking is done once by `tsc --noEmit` in scripts/test.mjs; jest only transpiles, to CommonJS.
const tsJest = [
  'ts-jest',
  {
    tsconfig: {
      isolatedModules: true,
      module: 'commonjs',
      moduleResolution: 'node10',
      target: 'ES2022',
      esModuleInterop: true,
      resolveJsonModule: true,
      allowJs: true,
    },
  },
];
// middy 6 ships ES modules only; the handler factories import it, so jest transpiles it to CommonJS too.
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest, '^.+/node_modules/@middy/.+\\.js$': tsJest },
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
      setupFilesAfterEnv: ['<rootDir>/test/integration/timeouts.ts', '<rootDir>/test/support/stop-after-file.ts'],
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
