// `npm run build` (also `prepack`): compiles src/ to CommonJS with declarations in dist/cjs/, then writes
// the ES-module entry dist/esm/ as a re-export of that same build, so an application that both imports and
// requires the SDK holds one copy of each class (`instanceof NotFoundError` holds whichever way it was loaded).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(sdk, 'package.json'));
const dist = join(sdk, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(sdk, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error('build: tsc failed');
  process.exit(1);
}

// The names come from the compiled module itself, so the ESM entry cannot miss an export the CJS one has.
const names = Object.keys(require(join(dist, 'cjs', 'index.js')))
  .filter((name) => name !== '__esModule' && name !== 'default')
  .sort();
if (names.length === 0) {
  console.error('build: dist/cjs/index.js exports nothing');
  process.exit(1);
}
mkdirSync(join(dist, 'esm'), { recursive: true });
writeFileSync(
  join(dist, 'esm', 'index.mjs'),
  [
    '// ES-module entry of @ringstore/sdk: the CommonJS build, re-exported (one copy of each class for both).',
    "import sdk from '../cjs/index.js';",
    '',
    `export const {\n${names.map((name) => `  ${name},`).join('\n')}\n} = sdk;`,
    '',
  ].join('\n'),
);
writeFileSync(join(dist, 'esm', 'index.d.mts'), "export * from '../cjs/index.js';\n");
console.log(`build: dist/cjs (CommonJS + .d.ts) and dist/esm (${names.length} exports)`);
