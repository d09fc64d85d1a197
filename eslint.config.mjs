// ESLint for every TypeScript file of the repository, with type information (typescript-eslint's strict
// type-checked rules), the layering rules of docs/architecture.md, and formatting left to Prettier.
// A rule that does not fit is turned off here with its reason, never with inline disables.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * Who may import whom (docs/architecture.md, "Layers"): for the files of each layer, the relative imports
 * that would point the wrong way. Patterns are gitignore-style, matched against the import as written.
 * `typesFrom`: imports allowed as `import type` only (none of the module's code is bundled).
 */
const layers = [
  {
    files: ['schemas/**/*.ts'],
    group: ['../lambdas/**', '../cdk/**', '../sdk/**', '../bench/**', '../test/**'],
    message: 'schemas/ is the contract: it imports nothing from the sides that share it.',
  },
  {
    files: ['lambdas/ports/**/*.ts'],
    group: ['../core/**', '../adapters/**', '../wiring/**', '../handlers/**', '../http/**', '../entries/**', '../config'],
    message: 'ports are the ground floor: they import only schemas/.',
  },
  {
    files: ['lambdas/core/**/*.ts'],
    group: ['../adapters/**', '../wiring/**', '../handlers/**', '../http/**', '../entries/**', '../config'],
    message: 'the core is pure: it imports ports and schemas/ only.',
  },
  {
    files: ['lambdas/adapters/**/*.ts'],
    group: ['../wiring/**', '../handlers/**', '../http/**', '../entries/**'],
    message: 'adapters implement ports; they are wired, they do not wire.',
  },
  {
    // Except the decoder of the replicator's and the applier's input (DynamoDB stream events), which needs the
    // codecs, as lambdas/http decodes API Gateway events for the HTTP handlers.
    files: ['lambdas/handlers/**/*.ts'],
    group: ['../adapters/**', '!../adapters/dynamodb-stream', '!../adapters/dynamodb-txn-stream', '../wiring/**', '../entries/**'],
    message:
      'a handler receives its dependencies (its exported *Deps interface, of ports and services): it imports no adapter, wiring or entry; the wiring builds its deps.',
  },
  {
    files: ['lambdas/http/**/*.ts'],
    group: ['../adapters/**', '../wiring/**', '../handlers/**', '../entries/**', '../config'],
    message: 'lambdas/http is the edge: API Gateway events and middlewares over the core, built by the handlers.',
  },
  {
    // A deps builder (wiring/*-deps.ts) returns the deps interface its handler declares: a type, never the handler.
    files: ['lambdas/wiring/**/*.ts'],
    group: ['../http/**', '../entries/**'],
    typesFrom: ['../handlers/**'],
    message:
      'the wiring builds ports, services and the deps handlers declare (as types only); the handlers compose them with the middlewares of lambdas/http.',
  },
  {
    files: ['lambdas/entries/**/*.ts'],
    group: ['../core/**', '../adapters/**', '../http/**', '../ports/**', '../config'],
    message:
      'an entry (and handler-factories.ts, every entry for the local cloud) is a handler put together with its wiring, and nothing else.',
  },
  {
    files: ['cdk/app.ts'],
    group: ['../lambdas/**', './local/**'],
    message: 'the deploy side builds from schemas/ (the topology), never from the runtime.',
  },
  {
    files: ['cdk/stacks/**/*.ts'],
    group: ['../../lambdas/**', '../local/**'],
    message: 'the deploy side builds from schemas/ (the topology), never from the runtime.',
  },
  {
    files: ['cdk/constructs/**/*.ts'],
    group: ['../../lambdas/**', '../local/**', '../stacks/**'],
    message: 'constructs build from schemas/ and take props; stacks compose them.',
  },
];

/**
 * The files allowed past the size rules, each with its reason: only the contract's two single sources.
 */
const sizeExceptions = [
  {
    // The contract's single sources (docs/architecture.md, "Layers"): every route, handler spec and limit in one
    // file, every request and response schema in another, read by both the CDK app and the runtime.
    files: ['schemas/topology.ts', 'schemas/api.ts'],
    rule: 'max-lines',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', '.ringstore/', 'cdk.out/', '**/dist/', 'coverage/', 'sdk/bin/'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-duplicate-imports': 'error',
      // Template literals are how messages name numbers and values; the rule's own `allowNumber` etc.
      // cover most cases, and a value that prints badly is caught by the tests that read the messages.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // `_name` marks a deliberately unused binding (a destructured field dropped from a copy).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // Non-null assertions follow an index access whose bound was checked one line above
      // (`noUncheckedIndexedAccess` cannot see it); each would otherwise need a dead branch.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `(x) => void work(x)` callbacks (event handlers, forEach) read better as arrow shorthands.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Lambda handlers are async by contract (middy awaits them) even when a branch has nothing to await.
      '@typescript-eslint/require-await': 'off',
      // Closed sets of values are unions of literal types here, never TypeScript enums, so enums are
      // refused outright, and the type-aware check of what is assigned to an enum, which guarded nothing here,
      // is off (the lint's rules: 52 s instead of 57 s, `TIMING=all npx eslint .`).
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'use a union of literal types, not an enum' }],
      '@typescript-eslint/no-unsafe-enum-assignment': 'off',
    },
  },
  {
    // Tests and benches: jest's `expect(...).rejects` and mocks read as unbound methods and unsafe `any`
    // by design; the assertions themselves are what is checked.
    files: ['test/**/*.ts', 'sdk/test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      // jest's asymmetric matchers (expect.any, expect.objectContaining) are typed `any` by jest itself.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // Tests read flags that other async tasks flip (TypeScript narrows them as constants), guard the
      // cleanup of fixtures a failed beforeAll may not have built, and assert facts about literals.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Test doubles mirror the API's generic accessors (json<T>()); type-level checks (Identical<A, B>)
      // need their phantom parameters.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
    },
  },
  {
    // API Gateway events at the edge: @types/aws-lambda types headers, multiValueHeaders, pathParameters and
    // the request context as always present, but API Gateway sends null for them (test invocations, requests
    // without headers), so the guards in lambdas/http are the boundary's checks, not dead code.
    files: ['lambdas/http/**/*.ts'],
    rules: { '@typescript-eslint/no-unnecessary-condition': 'off' },
  },
  {
    // The local Lambda host builds a complete Context, whose type still requires the deprecated
    // done/fail/succeed callbacks.
    files: ['cdk/local/lambda-events.ts'],
    rules: { '@typescript-eslint/no-deprecated': 'off' },
  },
  {
    // The SDK is a public API that JavaScript callers reach without the types: it checks its inputs and
    // its environment (WebCrypto, fetch) at run time whatever the types say. `json<T>()` is its typed
    // accessor for a value whose shape only the caller knows, as fetch's Response.json() is.
    files: ['sdk/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
    },
  },
  {
    // CDK template assertions read CloudFormation JSON, which is untyped by nature (Template.toJSON() is
    // `any`); typing every resource shape would restate CloudFormation. The assertions are the checks.
    files: ['test/cdk/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // k6 scripts (loadtest/k6): @types/k6 declares scenarios as an abstract class, `BaseScenario`, where k6
    // itself takes plain objects (its documentation's own examples); `jsonOf<T>()` is the typed accessor
    // for a body whose shape only the caller knows, as fetch's Response.json() is.
    files: ['loadtest/k6/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
    },
  },
  {
    // Plain JavaScript (this file, jest.config.js, scripts/*.mjs and *.cjs, cdk/local/start.cjs): no type information to check with.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        module: 'writable',
        require: 'readonly',
        exports: 'writable',
        setTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
  {
    // A CommonJS file (scripts/checkout-bundle.cjs, which the CLI and the local cloud start through; test/sequencer.cjs)
    // imports with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // s3rver ships CommonJS with no types and no ES entry for its models: the local S3 stand-in requires
    // them (cdk/local/engines/s3.ts), typed by hand where it does.
    files: ['cdk/local/engines/s3.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The CLI looks for control characters on purpose, to quote a key or a value that holds them.
    files: ['sdk/src/cli/format.ts', 'sdk/src/cli/format-json.ts', 'sdk/src/cli/txn-ops.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // Size: a file reads whole at 500 lines, a function at 80 (blank lines and comments count).
    files: ['lambdas/**/*.ts', 'cdk/**/*.ts', 'sdk/src/**/*.ts', 'schemas/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 500 }], 'max-lines-per-function': ['error', { max: 80 }] },
  },
  ...sizeExceptions.map(({ files, rule }) => ({ files, rules: { [rule]: 'off' } })),
  ...layers.map(({ files, ignores = [], group, typesFrom = [], message }) => ({
    files,
    ignores,
    rules: {
      // typescript-eslint's version of the rule: the same patterns, and `allowTypeImports` for `typesFrom`.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [{ group, message }, ...(typesFrom.length > 0 ? [{ group: typesFrom, message, allowTypeImports: true }] : [])],
        },
      ],
    },
  })),
  prettier,
  {
    // After eslint-config-prettier, which turns max-len off: Prettier wraps code at 140 columns, but not
    // comments; long strings, templates, URLs and patterns stay whole (a message is searched for as a whole).
    rules: {
      'max-len': ['error', { code: 140, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
);
