'use strict';
// The CLI in a checkout of the repository (sdk/src present): its TypeScript sources bundled by esbuild into
// node_modules/.cache/ringstore-cli/, rebuilt whenever a file the bundle was made from has changed (esbuild's
// metafile lists them), so a stale build is never run. A cached start loads one file (about 0.1 s) where
// compiling each source at start (tsx) took 0.6 s, and the test suite starts the CLI some hundred times.
// Not shipped: the published package runs dist/.

const { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const sdk = resolve(__dirname, '..');
const repository = resolve(sdk, '..');
const entry = join(sdk, 'src', 'cli', 'main.ts');
const cacheDir = join(repository, 'node_modules', '.cache', 'ringstore-cli');
const bundleFile = join(cacheDir, 'main.cjs');
const inputsFile = join(cacheDir, 'inputs.json');

/** Whether every input the cached bundle was built from is unchanged (same size and modification time). */
function cachedBundleCurrent() {
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

function build() {
  // esbuild is a dependency of the repository (the CDK bundles with it), not of the published SDK.
  const esbuild = require('esbuild');
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${bundleFile}.${process.pid}.tmp`;
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Dependencies load from node_modules as they do for the sources; only the SDK's own code is bundled.
    packages: 'external',
    outfile: partial,
    absWorkingDir: repository,
    metafile: true,
    logLevel: 'silent',
    // The CLI finds its package.json by walking up from its own folder: the sources' folder, not the cache's.
    define: { __dirname: JSON.stringify(join(sdk, 'src', 'cli')) },
  });
  const inputs = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const stat = statSync(join(repository, input));
    inputs[input] = `${stat.size}:${stat.mtimeMs}`;
  }
  // Renamed into place: two CLIs started at once never load a half-written bundle.
  renameSync(partial, bundleFile);
  writeFileSync(`${inputsFile}.${process.pid}.tmp`, JSON.stringify(inputs));
  renameSync(`${inputsFile}.${process.pid}.tmp`, inputsFile);
}

/** The CLI module (its `run`), from the cache when current, else built first. */
exports.loadCheckoutCli = function loadCheckoutCli() {
  if (!cachedBundleCurrent()) build();
  return require(bundleFile);
};
