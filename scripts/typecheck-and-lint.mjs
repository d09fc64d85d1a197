// Type checking and ESLint in one process over the same TypeScript programs (`npm test`'s static checks; alone:
// `node scripts/typecheck-and-lint.mjs`). `tsc -p` and ESLint's type-aware rules each built the programs of every
// tsconfig and type-checked them again: the checker the compiler's diagnostics have filled is the one the rules ask
// (parserOptions.programs), and the pair costs about half the CPU of the two processes.
// Both are incremental: the programs from the build info in node_modules/.cache (as `tsc --incremental`), the lint
// from ESLint's cache, so a second run checks what changed.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const ts = require('typescript');
const { ESLint } = require('eslint');

const cache = join(root, 'node_modules', '.cache', 'ringstore-checks');
mkdirSync(cache, { recursive: true });

/**
 * The tsconfigs, each with the files ESLint lints by its program: the program of the nearest tsconfig, as
 * ESLint's project service would pick (the service's program also holds the files it imports from the others,
 * compiled with its own options).
 */
const projects = [
  { tsconfig: 'sdk/tsconfig.json', files: ['sdk/**/*.ts'] },
  { tsconfig: 'loadtest/k6/tsconfig.json', files: ['loadtest/k6/**/*.ts'] },
  { tsconfig: 'tsconfig.json', files: ['**/*.ts'], ignores: ['sdk/**', 'loadtest/k6/**'] },
];

const formatHost = {
  getCanonicalFileName: (file) => file,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

/** The project's program, built incrementally, and the compiler's diagnostics of it (what `tsc -p --noEmit` prints). */
function checkProject(tsconfig) {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, tsconfig),
    { noEmit: true, incremental: true, tsBuildInfoFile: join(cache, `${tsconfig.replace(/\W/g, '-')}.tsbuildinfo`) },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.formatDiagnostic(diagnostic, formatHost));
      },
    },
  );
  const builder = ts.createIncrementalProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    host: ts.createIncrementalCompilerHost(parsed.options),
  });
  const diagnostics = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
    ...builder.getSemanticDiagnostics(),
  ];
  // With noEmit, emit writes the build info only, as `tsc --incremental --noEmit` does.
  builder.emit();
  return { program: builder.getProgram(), diagnostics };
}

const started = Date.now();
let failed = false;
const checked = projects.map((project) => {
  const { program, diagnostics } = checkProject(project.tsconfig);
  if (diagnostics.length > 0) {
    failed = true;
    const print = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
    console.log(`tsc -p ${project.tsconfig}: ${diagnostics.length} error(s)\n${print(diagnostics, formatHost)}`);
  }
  return { ...project, program };
});

const eslint = new ESLint({
  cwd: root,
  cache: true,
  cacheLocation: join(cache, 'eslint'),
  overrideConfig: checked.map(({ tsconfig, files, ignores = [], program }) => ({
    files,
    ignores,
    // ESLint's cache hashes the configuration as JSON: the program stands in it as its tsconfig's name.
    languageOptions: {
      parserOptions: { projectService: false, programs: Object.assign([program], { toJSON: () => [`program of ${tsconfig}`] }) },
    },
  })),
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const problems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
if (problems > 0) {
  failed = true;
  console.log(await formatter.format(results));
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(
  `${projects.map((p) => `tsc -p ${p.tsconfig}`).join(', ')} and eslint (${results.length} files${problems > 0 ? `, ${problems} problem(s)` : ''}) in ${seconds} s`,
);
process.exitCode = failed ? 1 : 0;
