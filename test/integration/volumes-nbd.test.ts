// `ringstore volume serve` on the local cloud, used by standard tools as a disk (issue 37's proof): qemu-io writes
// patterns at aligned and unaligned offsets over nbd:// and reads them back; nbdinfo shows the handshake; nbdcopy
// copies an ext4 image made with `mkfs.ext4 -d` into the volume and back, and e2fsck finds the copy clean with
// every file intact. nbdfuse shows the volume as a file, mkfs.ext4 makes a filesystem on it and fuse2fs mounts it:
// files written through the mount are in the volume. A second server is refused the volume while the first holds its
// lease. A snapshot is exported read-only while the volume changes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { qemuIo, tool } from '../../sdk/test/support/nbd-tools';
import { stopAfterFile } from '../support/teardown';
import { call, freshNamespace } from './support';

const MiB = 1024 * 1024;
// These tests drive whole filesystems through the tools, 4 KiB requests through the KV store, and each step has a
// bound of its own that names what never finished: the project's 60 s for a whole test is a timeout, not work, on a
// busy machine (the FUSE test took 32 s alone and over 60 s in a full run on a slow machine).
jest.setTimeout(300_000);
/** The FUSE test's budget for its steps, inside jest's bound: what is left of it is its cleanup's. */
const FUSE_WORK_BOUND_MS = 220_000;
const root = join(__dirname, '..', '..');
let key: string;
const work = mkdtempSync(join(tmpdir(), 'ringstore-volumes-nbd-'));

beforeAll(async () => {
  ({ key } = await freshNamespace('volumes-nbd'));
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

const cliEnv = () => ({
  ...process.env,
  RINGSTORE_ENDPOINT: process.env.RINGSTORE_IT_URL,
  RINGSTORE_API_KEY: key,
  RINGSTORE_CONFIG_DIR: work,
});

/** `ringstore volume serve` as a user runs it, on a free port: the URI it prints, and its stop. */
async function serveVolume(
  name: string,
  holder: string,
  extra: readonly string[] = [],
): Promise<{ uri: string; output: () => string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(root, 'sdk', 'bin', 'ringstore'), 'volume', 'serve', name, '--port', '0', '--holder', holder, ...extra],
    { cwd: root, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = stopAfterFile(`ringstore volume serve ${name} (pid ${child.pid})`, async () => {
    if (child.exitCode === null) child.kill('SIGINT');
    await exited;
  });
  const uri = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`volume serve printed no URI in 60 s:\n${output}`)), 60_000);
    const look = () => {
      const match = /at (nbd:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`volume serve exited with ${code}:\n${output}`));
    });
  });
  return { uri, output: () => output, stop };
}

/** One `ringstore` CLI command, as a user runs it: its standard output. */
async function ringstore(args: readonly string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'sdk', 'bin', 'ringstore'), ...args], {
    cwd: root,
    env: cliEnv(),
  });
  return stdout;
}

/** Waits, 100 ms apart, until `done` holds; fails with `what` past `boundMs`. */
async function until(done: () => boolean, boundMs: number, what: () => string): Promise<void> {
  for (const deadline = Date.now() + boundMs; !done();) {
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `work` within `boundMs`, else an error naming `what` (the work itself is left to finish or fail). */
async function bounded(boundMs: number, what: string, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish in ${Math.round(boundMs / 1000)} s`)), boundMs);
  });
  try {
    await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `settling` settles within `boundMs`. */
async function settlesWithin(settling: Promise<unknown>, boundMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), boundMs)));
  try {
    return await Promise.race([settling.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Unmounts a FUSE mount if it is mounted: lazily when it is busy, so that no mount outlives the test. */
async function unmountFuse(at: string): Promise<void> {
  await tool('fusermount3', ['-u', at], { timeoutMs: 20_000 }).catch(() =>
    tool('fusermount3', ['-uz', at], { timeoutMs: 20_000 }).catch(() => undefined),
  );
}

async function createVolume(name: string, sizeBytes: number): Promise<void> {
  const created = await call('/v1/volumes', {
    method: 'POST',
    key,
    body: JSON.stringify({ name, sizeBytes }),
    headers: { 'content-type': 'application/json' },
  });
  expect(created.status).toBe(201);
}

describe('ringstore volume serve, to real NBD clients', () => {
  it('takes qemu-io patterns at aligned and unaligned offsets and reads them back', async () => {
    await createVolume('qemu', 32 * MiB);
    const served = await serveVolume('qemu', 'qemu-test');
    try {
      const info = JSON.parse((await tool('nbdinfo', ['--json', served.uri])).stdout) as { exports: Array<Record<string, unknown>> };
      expect(info.exports[0]).toMatchObject({
        'export-size': 32 * MiB,
        block_size_preferred: 4096,
        block_size_maximum: 262144,
        can_trim: true,
      });
      const output = await qemuIo(served.uri, [
        'write -P 0xab 1000 5000',
        'write -P 0xcd 16777216 262144',
        'write -P 0x5a 100 300000',
        'aio_write -P 0x11 8388608 65536',
        'aio_write -P 0x22 8454144 65536',
        'aio_flush',
        'discard 16777216 4096',
        'read -P 0x5a 100 300000',
        'read -P 0 16777216 4096',
        'read -P 0xcd 16781312 258048',
        'read -P 0x11 8388608 65536',
        'read -P 0x22 8454144 65536',
        'flush',
      ]);
      expect(output).not.toMatch(/failed|error|Pattern verification/i);
    } finally {
      await served.stop();
    }
    // What qemu-io wrote is the volume's: read back through the REST API.
    const read = await call('/v1/volumes/qemu/data', { key, headers: { range: 'bytes=300100-300199' } });
    expect([...new Uint8Array(await read.arrayBuffer())].every((byte) => byte === 0)).toBe(true);
  });

  it('holds an ext4 filesystem copied in and out with nbdcopy: e2fsck finds it clean, every file intact', async () => {
    const files = join(work, 'files');
    mkdirSync(join(files, 'docs'), { recursive: true });
    const contents = Array.from({ length: 30 }, (_, n) => `file ${n} `.repeat(300 + n * 41));
    contents.forEach((text, n) => writeFileSync(join(files, 'docs', `file-${n}.txt`), text));
    const image = join(work, 'in.img');
    await tool('mkfs.ext4', ['-q', '-F', '-d', files, image, '16M']);
    await createVolume('ext4', 16 * MiB);
    const served = await serveVolume('ext4', 'ext4-test');
    const out = join(work, 'out.img');
    try {
      await tool('nbdcopy', [image, served.uri], { timeoutMs: 240_000 });
      await tool('nbdcopy', [served.uri, out], { timeoutMs: 240_000 });
    } finally {
      await served.stop();
    }
    expect(Buffer.compare(readFileSync(out), readFileSync(image))).toBe(0);
    const check = await tool('e2fsck', ['-fn', out]);
    expect(check.stdout).not.toMatch(/error|corrupt/i);
    // Every file, read back out of the copy (debugfs cat), is the one written.
    for (const n of [0, 13, 29]) {
      const { stdout } = await tool('debugfs', ['-R', `cat /docs/file-${n}.txt`, out]);
      expect(stdout).toBe(contents[n]);
    }
  });

  it('takes a filesystem made and mounted through FUSE (nbdfuse, mkfs.ext4, fuse2fs): files written through it are in the volume', async () => {
    // One budget for the whole test, each step bounded by what is left of it, so that a slow or stuck step fails
    // naming itself and the cleanup below (unmounts, nbdfuse, the server) still has time within jest's bound.
    const deadline = Date.now() + FUSE_WORK_BOUND_MS;
    const left = (step: string): number => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new Error(`the FUSE test's ${FUSE_WORK_BOUND_MS / 1000} s ran out before ${step}`);
      return ms;
    };
    await createVolume('fuse', 8 * MiB);
    const served = await serveVolume('fuse', 'fuse-test');
    const asFile = join(work, 'fuse-nbd');
    const mounted = join(work, 'fuse-fs');
    mkdirSync(asFile);
    mkdirSync(mounted);
    const contents = Array.from({ length: 6 }, (_, n) => `through fuse ${n} `.repeat(150 + n * 97));
    // nbdfuse stays in the foreground until its mount is unmounted; its pid file says it is ready.
    const pidFile = join(work, 'nbdfuse.pid');
    const nbdfuse = spawn('nbdfuse', ['-P', pidFile, asFile, served.uri], { stdio: ['ignore', 'ignore', 'pipe'] });
    let nbdfuseErrors = '';
    nbdfuse.stderr.on('data', (chunk: Buffer) => (nbdfuseErrors += chunk.toString()));
    const nbdfuseExited = new Promise<void>((resolve) => nbdfuse.once('exit', () => resolve()));
    let fuse2fs: ChildProcess | undefined;
    try {
      await until(
        () => existsSync(pidFile),
        Math.min(30_000, left('nbdfuse was ready')),
        () => `nbdfuse never became ready: ${nbdfuseErrors}`,
      );
      const device = join(asFile, 'nbd');
      // No discard of the whole new volume first (it reads as zeros already): a third of mkfs's time here.
      await tool('mkfs.ext4', ['-q', '-F', '-E', 'nodiscard', device], { timeoutMs: left('mkfs.ext4 made the filesystem') });
      // fuse2fs in the foreground, so that its exit is seen: it writes the superblock and the group descriptors as it
      // leaves, after the unmount has returned, and e2fsck must not read them half-written.
      fuse2fs = spawn('fuse2fs', [device, mounted, '-f'], { stdio: ['ignore', 'ignore', 'pipe'] });
      const fuse2fsExited = new Promise<void>((resolve) => fuse2fs!.once('exit', () => resolve()));
      await until(
        () => readFileSync('/proc/self/mounts', 'utf8').includes(` ${mounted} `),
        Math.min(30_000, left('fuse2fs mounted it')),
        () => 'fuse2fs never mounted the filesystem',
      );
      // Asynchronous file calls: a stalled FUSE request must not block the event loop and every timer with it.
      await bounded(left('the files were written through the mount'), 'writing the files through the mount', async () => {
        await mkdir(join(mounted, 'docs'));
        for (const [n, text] of contents.entries()) await writeFile(join(mounted, 'docs', `file-${n}.txt`), text);
        expect(await readFile(join(mounted, 'docs', 'file-3.txt'), 'utf8')).toBe(contents[3]);
      });
      await tool('fusermount3', ['-u', mounted], { timeoutMs: left('fuse2fs unmounted it') });
      if (!(await settlesWithin(fuse2fsExited, left('fuse2fs wrote its last blocks and left'))))
        throw new Error('fuse2fs did not leave after its unmount');
      const check = await tool('e2fsck', ['-fn', device], { timeoutMs: left('e2fsck checked it') });
      expect(check.stdout).not.toMatch(/error|corrupt/i);
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nvolume serve said:\n${served.output()}`, {
        cause: error,
      });
    } finally {
      await unmountFuse(mounted);
      if (fuse2fs && fuse2fs.exitCode === null) fuse2fs.kill('SIGKILL');
      await unmountFuse(asFile);
      // nbdfuse leaves once its mount is gone; one that does not is killed, never waited for without end.
      if (!(await settlesWithin(nbdfuseExited, 10_000))) {
        nbdfuse.kill('SIGKILL');
        await unmountFuse(asFile);
      }
      await served.stop();
    }
    // The files are the volume's: copied out by a new server, read out of the copy.
    const again = await serveVolume('fuse', 'fuse-check');
    const out = join(work, 'fuse-out.img');
    try {
      await tool('nbdcopy', [again.uri, out], { timeoutMs: left('nbdcopy copied the volume out') });
    } finally {
      await again.stop();
    }
    for (const n of [0, 3, 5]) {
      const { stdout } = await tool('debugfs', ['-R', `cat /docs/file-${n}.txt`, out]);
      expect(stdout).toBe(contents[n]);
    }
  });

  it('refuses a second writer while the first serves the volume, and takes it once the first has stopped', async () => {
    await createVolume('shared', 4 * MiB);
    const first = await serveVolume('shared', 'first-host');
    try {
      await expect(serveVolume('shared', 'second-host')).rejects.toThrow(/attached to first-host/);
    } finally {
      await first.stop();
    }
    // The first detached as it stopped: the second attaches at once.
    const second = await serveVolume('shared', 'second-host');
    await second.stop();
    expect(second.output()).toMatch(/stopped serving volume shared and detached/);
  });

  it('exports a snapshot read-only while the volume changes: qemu-io reads it as it was, a write is refused', async () => {
    await createVolume('snapped', 8 * MiB);
    const writer = await serveVolume('snapped', 'snap-writer');
    try {
      expect(await qemuIo(writer.uri, ['write -P 0xaa 0 1048576', 'write -P 0x33 5000 10000'])).not.toMatch(/failed|error/i);
      expect(await ringstore(['volume', 'snapshot', 'snapped', 'before'])).toMatch(/took snapshot before of volume snapped/);
      // The volume changes after the snapshot, through the same writer.
      expect(await qemuIo(writer.uri, ['write -P 0xbb 0 262144'])).not.toMatch(/failed|error/i);
      const snapshot = await serveVolume('snapped', 'unused', ['--snapshot', 'before']);
      try {
        expect(snapshot.uri).toMatch(/\/snapped@before$/);
        const info = JSON.parse((await tool('nbdinfo', ['--json', snapshot.uri])).stdout) as { exports: Array<Record<string, unknown>> };
        expect(info.exports[0]).toMatchObject({ 'export-size': 8 * MiB, is_read_only: true });
        const output = await qemuIo(
          snapshot.uri,
          ['read -P 0xaa 0 5000', 'read -P 0x33 5000 10000', 'read -P 0xaa 15000 1033576', 'read -P 0 1048576 4096'],
          ['-r'],
        );
        expect(output).not.toMatch(/failed|error|Pattern verification/i);
        await expect(qemuIo(snapshot.uri, ['write -P 1 0 4096'])).rejects.toThrow(/Permission denied|read-only/i);
        expect(await qemuIo(writer.uri, ['read -P 0xbb 0 262144', 'read -P 0xaa 262144 786432'], ['-r'])).not.toMatch(
          /failed|error|Pattern verification/i,
        );
      } finally {
        await snapshot.stop();
      }
    } finally {
      await writer.stop();
    }
    const out = join(work, 'snapshot-head.bin');
    await ringstore(['volume', 'read', 'snapped', '--snapshot', 'before', '--length', '4K', '--out', out]);
    expect([...readFileSync(out)].every((byte) => byte === 0xaa)).toBe(true);
    expect(JSON.parse(await ringstore(['volume', 'snapshots', 'snapped', '--json']))).toMatchObject([
      { name: 'before', state: 'ready', sizeBytes: 8 * MiB },
    ]);
    expect(await ringstore(['volume', 'rm-snapshot', 'snapped', 'before'])).toMatch(
      /deleted snapshot before of volume snapped \(\d+ block copies freed\)/,
    );
    expect(await ringstore(['volume', 'snapshots', 'snapped'])).toMatch(/has no snapshots/);
  });
});
