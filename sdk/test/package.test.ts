// The SDK as a user gets it: `npm pack` (which builds dist/ on prepack), installed from the tarball into
// a scratch project outside the repository, then required, imported, type-checked and its CLI run there.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { FakeRingstore } from './support/fake-server';

const run = promisify(execFile);
const SDK = join(__dirname, '..');
const REPO = join(SDK, '..');
const TSC = require.resolve('typescript/bin/tsc');
/**
 * TypeScript 7 (the native compiler) type-checks the consumers too. It cannot be a dependency of the
 * repository beside 5.9 (both install a `tsc` bin, and typescript-eslint needs 5.x), so the test installs it
 * once from the npm registry into `.ringstore/`, as the scripts do for the Go tools.
 */
const TS7_VERSION = '7.0.2';
const TS7_HOME = join(SDK, '..', '.ringstore', `typescript-${TS7_VERSION}`);

async function typescript7(): Promise<string> {
  const tsc = join(TS7_HOME, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    await mkdir(TS7_HOME, { recursive: true });
    await writeFile(join(TS7_HOME, 'package.json'), JSON.stringify({ name: 'typescript-7', version: '1.0.0', private: true }));
    await npm(['install', '--no-save', `typescript@${TS7_VERSION}`], TS7_HOME);
  }
  return tsc;
}
const SDK_MANIFEST = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

/** The directory of the package `name` that holds `file` (its package.json is not in its exports). */
function packageRoot(file: string, name: string): string {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (
      existsSync(join(dir, 'package.json')) &&
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === name
    ) {
      return dir;
    }
  }
  throw new Error(`no package.json of ${name} above ${file}`);
}

/**
 * The SDK's runtime dependencies and theirs, as the repository installed them (each resolved from the package
 * that needs it): packed and installed beside the SDK's tarball, so the scratch install resolves them without
 * the network (npm --offline).
 */
function runtimeDependencies(): string[] {
  const dirs = new Set<string>();
  const visit = (fromDir: string, name: string): void => {
    const dir = packageRoot(createRequire(join(fromDir, 'package.json')).resolve(name), name);
    if (dirs.has(dir)) return;
    dirs.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dir, dependency);
  };
  for (const dependency of Object.keys(SDK_MANIFEST.dependencies)) visit(SDK, dependency);
  return [...dirs];
}

jest.setTimeout(120_000);

/** The environment without npm's per-run variables, so a nested npm does not act on the repository. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env: cleanEnv() });
  return stdout;
}

/**
 * Packs the packages of `packDirs` with one `npm pack` (an npm process costs about a second each) into the
 * empty directory `destination`, and returns their tarballs (stdout also carries prepack's output, so the files
 * are looked up).
 */
async function tarballs(packDirs: readonly string[], destination: string): Promise<string[]> {
  await mkdir(destination);
  await npm(['pack', ...packDirs, '--pack-destination', destination], destination);
  const files = (await readdir(destination)).filter((file) => file.endsWith('.tgz'));
  if (files.length !== packDirs.length) throw new Error(`npm pack of ${packDirs.length} packages left ${files.length} tarballs`);
  return files.map((file) => join(destination, file));
}

// What a consumer writes: ESM with named imports, and CommonJS through `import = require`.
const CONSUMER_ESM = `import { NotFoundError, RingstoreClient, TransactionAbortedError } from '@ringstore/sdk';

const client = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_0123456789ab_example' });

export async function greeting(): Promise<string | undefined> {
  await client.put('greeting', new Uint8Array([104, 105]), { ifNoneMatch: '*', ttlSeconds: 60 });
  try {
    const { writes } = await client.transact([{ op: 'put', key: 'b', value: 'x', ifVersion: 0 }]);
    return writes[0]?.key ?? (await client.get('greeting')).text();
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof TransactionAbortedError) return undefined;
    throw err;
  }
}
`;
const CONSUMER_CJS = `import sdk = require('@ringstore/sdk');

const client: sdk.RingstoreClient = new sdk.RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'k' });
export = { client, limit: sdk.VALUE_BYTES_MAX };
`;

/**
 * What a README example takes as given without declaring it: the clients it names (a second region's
 * admin clients in the DR example) and Node's `process` (the scratch project has no @types/node).
 */
function readmePrelude(code: string): string {
  const given = ['client', 'backupAdmin', 'oldPrimaryAdmin'].filter(
    (name) => new RegExp(`\\b${name}\\.`).test(code) && !new RegExp(`const ${name}\\b`).test(code),
  );
  return [
    ...given.map((name) => `declare const ${name}: import('@ringstore/sdk').RingstoreClient;\n`),
    code.includes('process.') ? 'declare const process: { env: Record<string, string | undefined> };\n' : '',
  ].join('');
}

describe("the root README's SDK example, inside the repository", () => {
  it('runs as written, saved as tour.mts and run with npx tsx (npm ci built the SDK: the root prepare script)', async () => {
    // Prepare: the README's first TypeScript block, against the fake server instead of npm start's address.
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    const tour = /With the TypeScript SDK[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(tour).toContain("from '@ringstore/sdk'");
    const fake = await new FakeRingstore().start();
    // Inside the repository, where the workspace links @ringstore/sdk (.ringstore/ is the local data, ignored by git).
    const file = join(REPO, '.ringstore', `readme-tour-${process.pid}.mts`);
    await mkdir(dirname(file), { recursive: true });
    try {
      await writeFile(file, tour!.replaceAll('http://127.0.0.1:4510', fake.url));
      // Act
      const ran = await run(join(REPO, 'node_modules', '.bin', 'tsx'), [file], { cwd: REPO, env: { ...process.env, KEY: 'user-key' } });
      // Assess: it wrote greeting, then committed its transaction (key a).
      expect(ran.stderr).toBe('');
      expect(fake.requests.map((request) => `${request.method} ${request.pathname}`)).toEqual(
        expect.arrayContaining(['PUT /v1/kv/greeting', 'GET /v1/kv/greeting', 'POST /v1/txn']),
      );
      expect([...fake.store.keys()].some((key) => key.endsWith('a'))).toBe(true);
    } finally {
      await rm(file, { force: true });
      await fake.close();
    }
  });
});

describe('the packed SDK in a project of its own', () => {
  let scratch: string;
  let project: string;

  beforeAll(async () => {
    // Prepare: pack (building dist/), install it and its dependencies' tarballs offline into a fresh project.
    scratch = await mkdtemp(join(tmpdir(), 'ringstore-sdk-package-'));
    project = join(scratch, 'app');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    const [sdkTarball, dependencyTarballs] = await Promise.all([
      tarballs([SDK], join(scratch, 'sdk')),
      tarballs(runtimeDependencies(), join(scratch, 'dependencies')),
    ]);
    await npm(['install', '--offline', '--ignore-scripts', ...sdkTarball, ...dependencyTarballs], project);
  });

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('ships compiled JavaScript and declarations, no TypeScript sources and no TypeScript loader', async () => {
    const installed = join(project, 'node_modules', '@ringstore', 'sdk');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const { stdout } = await run('find', ['.', '-type', 'f'], { cwd: installed });
    const files = stdout.split('\n').filter((line) => line !== '');

    // commander parses the CLI's words, cli-progress draws its rebalance progress bar, the two @smithy packages
    // sign requests with AWS credentials (SigV4); nothing else at run time.
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual([
      '@smithy/hash-node',
      '@smithy/signature-v4',
      'cli-progress',
      'commander',
    ]);
    expect(files).toEqual(
      expect.arrayContaining(['./dist/cjs/index.js', './dist/cjs/index.d.ts', './dist/esm/index.mjs', './dist/esm/index.d.mts']),
    );
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.d.mts'))).toEqual([]);
    expect(files.some((file) => file.startsWith('./node_modules/tsx'))).toBe(false);
  });

  it('is required from CommonJS and imported from ESM, as one module', async () => {
    const script = `
      const { createRequire } = await import('node:module');
      const esm = await import('@ringstore/sdk');
      const cjs = createRequire(process.cwd() + '/').call(null, '@ringstore/sdk');
      const client = new esm.RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'k' });
      console.log(JSON.stringify({
        esmClient: typeof esm.RingstoreClient,
        sameClass: esm.NotFoundError === cjs.NotFoundError,
        cjsClient: client instanceof cjs.RingstoreClient,
        limit: cjs.VALUE_BYTES_MAX,
      }));`;

    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project, env: cleanEnv() });

    expect(JSON.parse(stdout)).toEqual({ esmClient: 'function', sameClass: true, cjsClient: true, limit: 10 * 1024 * 1024 });
  });

  it('type-checks strictly with tsc --init defaults and with the default lib (DOM included), on TypeScript 5.9 and 7', async () => {
    await writeFile(join(project, 'consumer.mts'), CONSUMER_ESM);
    await writeFile(join(project, 'consumer.cts'), CONSUMER_CJS);
    await run(process.execPath, [TSC, '--init'], { cwd: project });
    // No "lib" and no "types": the default libraries, DOM among them, and no @types/node.
    const strictDefaultLib = {
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext' },
      files: ['consumer.mts', 'consumer.cts'],
    };
    await writeFile(join(project, 'tsconfig.strict.json'), JSON.stringify(strictDefaultLib));

    const tsc7 = await typescript7();
    const checks = await Promise.allSettled(
      [TSC, tsc7].flatMap((tsc) => [
        run(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: project }),
        run(process.execPath, [tsc, '-p', 'tsconfig.strict.json'], { cwd: project }),
      ]),
    );

    const failures = checks.flatMap((check) =>
      check.status === 'rejected' ? [String((check.reason as { stdout?: string }).stdout ?? check.reason)] : [],
    );
    expect(failures).toEqual([]);
  });

  it("type-checks the README's TypeScript examples against the installed package", async () => {
    const readme = await readFile(join(SDK, 'README.md'), 'utf8');
    // Blocks that show `require` beside `import` are alternatives, not one program: the consumers above cover them.
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((match) => match[1] ?? '')
      .filter((code) => !code.includes('require('));
    const files = await Promise.all(
      blocks.map(async (code, index) => {
        const file = `readme-${index + 1}.mts`;
        await writeFile(join(project, file), readmePrelude(code) + code + '\nexport {};\n');
        return file;
      }),
    );
    await writeFile(
      join(project, 'tsconfig.readme.json'),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext' }, files }),
    );

    const [check] = await Promise.allSettled([run(process.execPath, [TSC, '-p', 'tsconfig.readme.json'], { cwd: project })]);

    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(check?.status === 'rejected' ? String((check.reason as { stdout?: string }).stdout ?? check.reason) : '').toBe('');
  });

  it('runs the compiled CLI', async () => {
    const { stdout } = await run(join(project, 'node_modules', '.bin', 'ringstore'), ['--help'], { cwd: project, env: cleanEnv() });

    expect(stdout).toContain('Usage: ringstore');
    expect(stdout).toContain('connect http://127.0.0.1:4510');
  });
});
