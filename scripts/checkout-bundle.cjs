'use strict';
// A program of this checkout run from its TypeScript sources bundled by esbuild into node_modules/.cache/<name>/,
// rebuilt whenever a file the bundle was made from has changed (esbuild's metafile lists them), so a stale build is
// never run. Loading one bundled file costs a fraction of compiling each source at start (tsx): the CLI 0.1 CPU-s
// against 0.6, the local cloud 1.2 against 2.0 (docs/testing.md, "Time"), and the test suite starts the CLI some
// hundred times and the local cloud some forty.
//
// Each source keeps its own `__dirname` and `__filename` (its folder in the repository, not the cache's), which the
// local engines and the API page use to find their files. Packages load from node_modules, as they do for the
// sources, except middy's, which ship ES modules only: bundled, they need no `require` of an ES module.

const { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');

const repository = resolve(__dirname, '..');

/** Whether every input the cached bundle was built from is unchanged (same size and modification time). */
function cachedBundleCurrent(bundleFile, inputsFile) {
  if (!existsSync(bundleFile) || !existsSync(inputsFile)) return false;
  try {
    const inputs = JSON.parse(readFileSync(inputsFile, 'utf8'));
    return Object.entries(inputs).every(([file, stamp]) => {
      const stat = statSync(join(repository, file));
      return `${stat.size}:${stat.mtimeMs}` === stamp;
    });
  } catch {
    return false;
  }
}

/** esbuild plugin: the sources' own `__dirname`/`__filename`, and packages left external but middy's. */
const asInTheRepository = {
  name: 'as-in-the-repository',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@middy/') ? undefined : { external: true }));
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const paths = /\b__(dirname|filename)\b/.test(source)
        ? `const __dirname = ${JSON.stringify(dirname(args.path))}, __filename = ${JSON.stringify(args.path)};\n`
        : '';
      return { contents: paths + source, loader: 'ts' };
    });
  },
};

async function build(entry, bundleFile, inputsFile) {
  // esbuild is a dependency of the repository (the CDK bundles with it), not of the published SDK.
  const esbuild = require('esbuild');
  mkdirSync(dirname(bundleFile), { recursive: true });
  const partial = `${bundleFile}.${process.pid}.tmp`;
  const result = await esbuild.build({
    entryPoints: [join(repository, entry)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: partial,
    absWorkingDir: repository,
    metafile: true,
    logLevel: 'silent',
    plugins: [asInTheRepository],
  });
  const inputs = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const stat = statSync(join(repository, input));
    inputs[input] = `${stat.size}:${stat.mtimeMs}`;
  }
  // Renamed into place: two programs started at once never load a half-written bundle.
  renameSync(partial, bundleFile);
  writeFileSync(`${inputsFile}.${process.pid}.tmp`, JSON.stringify(inputs));
  renameSync(`${inputsFile}.${process.pid}.tmp`, inputsFile);
}

/**
 * The module `entry` (a path from the repository's root), from the cache `name` when current, else built first.
 * @example const { run } = await loadCheckoutBundle('sdk/src/cli/main.ts', 'ringstore-cli');
 */
exports.loadCheckoutBundle = async function loadCheckoutBundle(entry, name) {
  const cacheDir = join(repository, 'node_modules', '.cache', name);
  const bundleFile = join(cacheDir, 'main.cjs');
  const inputsFile = join(cacheDir, 'inputs.json');
  if (!cachedBundleCurrent(bundleFile, inputsFile)) await build(entry, bundleFile, inputsFile);
  return require(bundleFile);
};
