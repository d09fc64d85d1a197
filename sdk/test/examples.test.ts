// The CLI examples of sdk/README.md and of `ringstore help` run as written (the endpoint swapped for the
// fake server's address), so they cannot drift from what the CLI does.

import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EXAMPLE_API_KEY } from '../src/cli/program';
import { FakeRingstore } from './support/fake-server';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'ringstore');
const README = join(__dirname, '..', 'README.md');
const LOCAL_CLOUD_MAIN = join(__dirname, '..', '..', 'cdk', 'local', 'main.ts');
const DOCUMENTED_ENDPOINT = 'http://127.0.0.1:4510';
// The form of the keys the server issues (lambdas/core/auth.ts).
const API_KEY_FORM = /^rs_[0-9a-f]{12}_[A-Za-z0-9_-]{32,128}$/;

jest.setTimeout(60_000);

/** The lines after each "Examples…:" heading of a help text, up to the next blank line. */
function helpExamples(help: string): string[] {
  const blocks = help.split(/^Examples[^\n]*:\n/m).slice(1);
  return blocks.flatMap(
    (block) =>
      block
        .split('\n\n')[0]
        ?.split('\n')
        .map((line) => line.trim()) ?? [],
  );
}

/** The lines of the README's `sh` blocks that run the CLI (or set its environment). */
function readmeExamples(readme: string): string[] {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks
    .flatMap((block) => block.split('\n'))
    .filter((line) => /(^|\| )ringstore\b/.test(line) || line.startsWith('export RINGSTORE_'));
}

describe('examples', () => {
  let fake: FakeRingstore;
  let home: string;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    // The documented key is an admin key of the fake, as `npm start`'s admin key is of the local cloud.
    fake.apiKeys.push({
      keyId: 'k_example',
      apiKey: EXAMPLE_API_KEY,
      namespace: 'test',
      role: 'admin',
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    home = await mkdtemp(join(tmpdir(), 'ringstore-examples-'));
    await mkdir(join(home, 'bin'));
    await writeFile(join(home, 'bin', 'ringstore'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    await chmod(join(home, 'bin', 'ringstore'), 0o755);
  });

  afterEach(async () => {
    await fake.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Runs the lines as one bash script (stopping at the first failure) in a fresh directory. */
  async function runScript(lines: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const script = ['set -euo pipefail', ...lines.map((line) => line.replaceAll(DOCUMENTED_ENDPOINT, fake.url))].join('\n');
    try {
      const { stdout, stderr } = await run('bash', ['-x', '-c', script], {
        cwd: home,
        env: { PATH: `${join(home, 'bin')}:${process.env.PATH ?? ''}`, HOME: home, RINGSTORE_CONFIG_DIR: join(home, 'config') },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const failed = err as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  it('name the local cloud: its default port and a key of the form it issues', async () => {
    const sources = [await readFile(README, 'utf8'), (await run(process.execPath, [BIN, 'help'], { env: {} })).stdout];
    const localDefaultPort = /RINGSTORE_PORT:[^\n]*\.default\((\d+)\)/.exec(await readFile(LOCAL_CLOUD_MAIN, 'utf8'))?.[1];

    expect(`http://127.0.0.1:${localDefaultPort}`).toBe(DOCUMENTED_ENDPOINT);
    expect(EXAMPLE_API_KEY).toMatch(API_KEY_FORM);
    for (const text of sources) {
      expect([...text.matchAll(/127\.0\.0\.1:(\d+)/g)].map((match) => match[1])).toEqual(expect.arrayContaining([localDefaultPort]));
      expect([...text.matchAll(/127\.0\.0\.1:(\d+)/g)].filter((match) => match[1] !== localDefaultPort)).toEqual([]);
      expect(text).not.toMatch(/\brk_\w+/);
    }
  });

  it('of ringstore help and ringstore help txn run, in order, on an empty store', async () => {
    await writeFile(join(home, 'photo.png'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    await writeFile(join(home, 'ops.json'), JSON.stringify({ ops: [{ op: 'get', key: 'b' }], timeoutMs: 2000 }));
    const main = helpExamples((await run(process.execPath, [BIN, 'help'], { env: {} })).stdout);
    const txn = helpExamples((await run(process.execPath, [BIN, 'help', 'txn'], { env: {} })).stdout);

    const result = await runScript([...main, ...txn]);

    expect(main.length).toBeGreaterThanOrEqual(5);
    expect(txn.length).toBeGreaterThanOrEqual(3);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('hello world\n');
    expect(await readFile(join(home, 'copy.png'))).toEqual(await readFile(join(home, 'photo.png')));
  });

  it('of the README run, in order, on an empty store', async () => {
    const lines = readmeExamples(await readFile(README, 'utf8'));

    const result = await runScript(lines);

    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('hello world\n');
    expect(result.stdout).toMatch(/^more: ringstore list balance\/ --limit 1 --cursor \S+$/m);
  });
});
