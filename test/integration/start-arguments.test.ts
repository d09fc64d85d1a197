// `npm start`'s command line and port, refused before any engine starts: an argument it does not take
// (npm keeps a flag given without `--` and passes its value on as a stray argument), and a port in use.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStartArgs, spawnNpmStart } from '../support/npm-start';

const repoRoot = join(__dirname, '..', '..');
let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ringstore-start-arguments-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** `npm start` as the package script runs it, to its exit (bounded: a start that went on would hang here). */
function start(args: readonly string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [...npmStartArgs(), ...args], {
    cwd: repoRoot,
    env: { ...process.env, RINGSTORE_HOME: home, RINGSTORE_PORT: '0', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const listening = (): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });

describe('npm start', () => {
  it('refuses an argument it does not take with the usage, before any engine starts', () => {
    const unknown = start(['--region', '2']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--region'");
    expect(unknown.stderr).toContain('usage: npm start [-- --regions 2] [-- --accept-demoted]');
    expect(unknown.stderr).not.toContain('local engines');
    expect(unknown.stdout).not.toContain('API:');
  });

  it('says how to pass a flag that npm took for itself (npm start --regions 2, without --: a stray 2 arrives)', () => {
    const stray = start(['2'], { npm_config_regions: 'true' });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("Unexpected argument '2'");
    expect(stray.stderr).toContain('npm took --regions for itself: run npm start -- --regions 2');
    expect(stray.stderr).not.toContain('local engines');
  });

  it('refuses engines already running for two regions, and a stage that cannot name tables, before any engine starts', () => {
    const shared = { RINGSTORE_DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' };
    const twoRegions = start(['--regions', '2'], shared);
    expect(twoRegions.code).toBe(2);
    expect(twoRegions.stderr).toContain('RINGSTORE_DYNAMODB_ENDPOINT takes one region');
    const badStage = start([], { ...shared, RINGSTORE_STAGE: 'Has Spaces' });
    expect(badStage.code).toBe(2);
    expect(badStage.stderr).toContain('RINGSTORE_STAGE');
    for (const refused of [twoRegions, badStage]) expect(refused.stderr).not.toContain('local engines');
  });

  it('prints its usage on --help and starts nothing', () => {
    const started = start(['--help']);
    expect(started).toMatchObject({ code: 0, stdout: expect.stringContaining('--regions 2') as unknown });
  });

  it('with --fresh runs on a new temporary directory, and removes it when stopped', async () => {
    // Act: start, wait for the API, stop with Ctrl-C.
    const { child, stdout: output, stderr: errors, exited } = spawnNpmStart(home, ['--fresh']);
    try {
      for (const deadline = Date.now() + 60_000; !output().includes('API: ') && child.exitCode === null;) {
        if (Date.now() > deadline) throw new Error(`no API within 60 s: ${errors()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const data = /data in (\S+) \(--fresh: removed when stopped\)/.exec(errors())?.[1];
      expect({ data, stderr: errors().slice(-2_000) }).toMatchObject({ data: expect.stringContaining('ringstore-fresh-') as unknown });
      expect(data).not.toBe(home);
      expect(existsSync(data!)).toBe(true);
      child.kill('SIGINT');
      // Assess: a clean stop, and nothing left of the run.
      expect(await exited).toBe(0);
      expect(existsSync(data!)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);

  it('says a taken port is taken, and how to start on another, before any engine starts', async () => {
    const holder = await listening();
    try {
      const port = (holder.address() as { port: number }).port;
      const started = start([], { RINGSTORE_PORT: String(port) });
      expect(started.code).toBe(1);
      expect(started.stderr).toContain(`error: port ${port} on 127.0.0.1 is taken (another npm start?)`);
      expect(started.stderr).toContain('RINGSTORE_PORT=0 npm start');
      expect(started.stderr).not.toContain('local engines');
    } finally {
      holder.close();
    }
  });
});
