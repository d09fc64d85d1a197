// A test that fails mid-way leaves no process or port behind, and jest exits: a fixture test starts a fault
// cloud and a load, then fails an expectation; jest (with the fault project's setup) is run on it, and
// afterwards its cloud process is gone, its API and engine ports refuse connections and its home is removed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const root = join(__dirname, '..', '..');
/** The fixture's cloud starts in about 20 s alone; the bound leaves room for a busy machine, not for a hang. */
const jestBoundMs = 150_000;

function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/**
 * The fixture's cloud runs on the fault clouds' shared engines (test/support/shared-engines.ts), which die with the
 * jest process that started them by a signal, not in its teardown: their ports close a moment after it exits.
 */
const sharedEnginesGoneMs = 15_000;

/** Whether `url` refuses connections within `boundMs` (asked again every 100 ms). */
async function refusedWithin(url: string, boundMs: number): Promise<boolean> {
  for (const deadline = Date.now() + boundMs; ;) {
    if (await refusesConnections(url)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('leaves no process, port or home behind after a test that fails mid-way, and jest exits', async () => {
  // Prepare: the fault project's configuration, matching the fixture only.
  const work = mkdtempSync(join(tmpdir(), 'ringstore-teardown-'));
  const report = join(work, 'report.json');
  const jestConfig = createRequire(__filename)(join(root, 'jest.config.js')) as { projects: Array<Record<string, unknown>> };
  const fault = jestConfig.projects.find((project) => project.displayName === 'fault')!;
  const config = join(work, 'jest.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      ...fault,
      rootDir: root,
      displayName: 'fixture',
      testMatch: ['<rootDir>/test/support/fixtures/fails-mid-test.fixture.ts'],
    }),
  );

  // Act
  const started = Date.now();
  const outcome = await new Promise<{ code: number | null; output: string; hung: boolean }>((resolve) => {
    const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), '--config', config, '--ci'], {
      cwd: root,
      env: { ...process.env, RINGSTORE_FIXTURE_REPORT: report },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ code: null, output, hung: true });
    }, jestBoundMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, hung: false });
    });
  });

  // Assess
  try {
    const context = `jest ${outcome.hung ? `still running after ${jestBoundMs} ms` : `exited ${outcome.code} after ${Date.now() - started} ms`}:\n${outcome.output.slice(-3_000)}`;
    expect({ context, hung: outcome.hung, code: outcome.code }).toEqual({ context, hung: false, code: 1 });
    expect(outcome.output).toMatch(/the expectation that fails mid-test/);
    const fixture = JSON.parse(readFileSync(report, 'utf8')) as { pid: number; url: string; dynamodbEndpoint: string; home: string };
    expect({
      cloudAlive: alive(fixture.pid),
      apiRefuses: await refusesConnections(fixture.url),
      engineRefuses: await refusedWithin(fixture.dynamodbEndpoint, sharedEnginesGoneMs),
      homeLeft: existsSync(fixture.home),
    }).toEqual({ cloudAlive: false, apiRefuses: true, engineRefuses: true, homeLeft: false });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}, 180_000);
