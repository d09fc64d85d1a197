// One `npm start` per data directory: a second is refused with the owner's pid, a stale lock is taken over,
// and a stop says so and frees the directory.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../../cdk/local/engines/child';
import { HomeLockedError, lockFileName, lockHome } from '../../cdk/local/home-lock';
import { spawnNpmStart } from '../support/npm-start';

const freshHome = () => mkdtempSync(join(tmpdir(), 'ringstore-lock-'));

const start = (home: string) => spawnNpmStart(home);

/** A pid that surely belongs to no process: one that has just exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid;

describe('data directory lock', () => {
  it('refuses a second owner while the first lives, and releases only its own lock', () => {
    // Prepare
    const home = freshHome();
    const first = lockHome(home, 1111, () => true);
    // Act
    const second = () => lockHome(home, 2222, () => true);
    // Assess
    expect(second).toThrow(HomeLockedError);
    expect(second).toThrow('another Ringstore (pid 1111) is running on the data directory');
    first.release();
    expect(existsSync(join(home, lockFileName))).toBe(false);
    lockHome(home, 2222, () => true).release();
  });

  it('takes over a lock whose process is gone', () => {
    // Prepare
    const home = freshHome();
    const pid = deadPid();
    expect(pidAlive(pid)).toBe(false);
    writeFileSync(join(home, lockFileName), `${pid}\n`);
    // Act
    const lock = lockHome(home, process.pid);
    // Assess
    expect(pidAlive(process.pid)).toBe(true);
    expect(lock.path).toBe(join(home, lockFileName));
    lock.release();
  });

  it('makes npm start on a directory in use exit at once with a message naming the owner', async () => {
    // Prepare: the suite's own local cloud holds its home.
    const home = process.env.RINGSTORE_IT_HOME!;
    // Act
    const second = start(home);
    const code = await second.exited;
    // Assess
    expect(code).toBe(1);
    expect(second.stderr()).toMatch(/another Ringstore \(pid \d+\) is running on the data directory/);
    expect(second.stdout()).not.toContain('API:');
  }, 30_000);

  it('logs that npm start stopped and frees the directory on SIGINT', async () => {
    // Prepare
    const home = freshHome();
    const cloud = start(home);
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (cloud.stdout().includes('API:')) resolve();
        else if (cloud.child.exitCode !== null) reject(new Error(`npm start exited: ${cloud.stderr()}`));
        else return;
        clearInterval(timer);
      }, 100);
    });
    expect(existsSync(join(home, lockFileName))).toBe(true);
    // Act
    cloud.child.kill('SIGINT');
    const code = await cloud.exited;
    // Assess
    expect(code).toBe(0);
    expect(cloud.stderr()).toMatch(/\[ringstore\] stopped after [\d.]+ s/);
    expect(existsSync(join(home, lockFileName))).toBe(false);
  }, 120_000);
});
