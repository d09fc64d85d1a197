// `ringstore volume …` against the fake Ringstore: create (sizes with binary suffixes), ls, describe, rm with its
// progress, read to a file or standard output, write from a file or standard input as a writer that attaches and
// detaches, trim, snapshots; and the size parsing and formatting they share.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatBytes, parseByteCount, parseVolumeSize } from '../src/cli/volumes';
import { cliFixture } from './support/cli-fixture';

jest.setTimeout(30_000);

const KiB = 1024;

function pattern(length: number, seed = 1): Buffer {
  return Buffer.from(Uint8Array.from({ length }, (_, i) => (i * 7 + seed) % 251));
}

describe('ringstore volume', () => {
  const { ringstore, fake } = cliFixture('volumes');
  let dir = '';

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ringstore-volume-files-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const volumeRequests = () => fake().requests.filter((request) => request.pathname.startsWith('/v1/volumes'));

  it('creates volumes with binary size suffixes, lists them, and describes one as text and as JSON', async () => {
    const created = await ringstore(['volume', 'create', 'disk', '64M']);
    await ringstore(['volume', 'create', 'boot', '4096']);
    const listed = await ringstore(['volume', 'ls']);
    const described = await ringstore(['volume', 'describe', 'disk']);
    const json = await ringstore(['volume', 'describe', 'disk', '--json']);

    expect(created).toMatchObject({ code: 0, stderr: '', stdout: 'created volume disk: 64 MiB (67,108,864 bytes)\n' });
    expect(listed.stdout).toMatch(
      /^NAME +SIZE +STATE +WRITER +CREATED\nboot +4 KiB +active +- +\S+\ndisk +64 MiB +active +- +\S+\n2 volumes\n$/,
    );
    expect(described.stdout).toMatch(
      /^volume {5}disk\nsize {7}64 MiB \(67,108,864 bytes, 16,384 blocks of 4096\)\nallocated {2}0 bytes \(0 bytes, 0\.0%\)\nstate {6}active\ncreated {4}\S+\nwriter {5}none \(never attached\)\nsnapshots {2}none\n$/,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: 'disk',
      sizeBytes: 64 * KiB * KiB,
      blockBytes: 4096,
      allocatedBytes: 0,
      epoch: 0,
    });
  });

  it('refuses a size off the 4 KiB grid or without a known suffix before any request, and says a taken name is taken', async () => {
    const odd = await ringstore(['volume', 'create', 'disk', '5000']);
    const unknown = await ringstore(['volume', 'create', 'disk', '1X']);
    await ringstore(['volume', 'create', 'disk', '1M']);
    const taken = await ringstore(['volume', 'create', 'disk', '1M']);

    expect(odd).toMatchObject({ code: 1, stdout: '' });
    expect(odd.stderr).toMatch(/'5000' is invalid for argument 'size'\. a volume's size is a multiple of 4096 bytes/);
    expect(unknown.stderr).toMatch(
      /'1X' is invalid for argument 'size'\. expected a number of bytes, or one with a binary suffix K, M, G or T/,
    );
    expect(taken).toMatchObject({ code: 1, stdout: '' });
    expect(taken.stderr).toMatch(/^error: .*\(volume\.exists\)\n$/);
    expect(volumeRequests().length).toBe(2);
  });

  it('writes a file at an offset as one writer (attached, then detached) and reads the range back to a file', async () => {
    await ringstore(['volume', 'create', 'disk', '1M']);
    const bytes = pattern(600 * KiB);
    await writeFile(join(dir, 'image.bin'), bytes);

    const wrote = await ringstore(['volume', 'write', 'disk', '--offset', '1000', join(dir, 'image.bin')]);
    const read = await ringstore(['volume', 'read', 'disk', '--offset', '1000', '--length', '600K', '--out', join(dir, 'copy.bin')]);

    expect(wrote).toMatchObject({ code: 0, stderr: '', stdout: `wrote 614,400 bytes to disk at offset 1000\n` });
    expect(read).toMatchObject({
      code: 0,
      stderr: '',
      stdout: `wrote 614,400 bytes of disk (from offset 1000) to ${join(dir, 'copy.bin')}\n`,
    });
    expect((await readFile(join(dir, 'copy.bin'))).equals(bytes)).toBe(true);
    const sent = volumeRequests().map((request) => `${request.method} ${request.pathname.replace('/v1/volumes/disk', '')}`);
    // One attach, three writes of at most 256 KiB, one detach; three reads.
    expect(sent.slice(1)).toEqual([
      'POST /lease',
      'PUT /data',
      'PUT /data',
      'PUT /data',
      'DELETE /lease',
      'GET /data',
      'GET /data',
      'GET /data',
    ]);
    const attach = volumeRequests().find((request) => request.pathname.endsWith('/lease'))!;
    expect(JSON.parse(attach.body.toString('utf8'))).toEqual({ holder: expect.stringMatching(/^cli-.+-\d+$/), leaseSeconds: 30 });
    expect(fake().volumes.get('test', 'disk')?.epoch).toBe(1);
    expect(fake().volumes.get('test', 'disk')?.lease).toBeUndefined();
  });

  it('writes standard input with - (or no file), and reads a small volume whole to standard output', async () => {
    await ringstore(['volume', 'create', 'disk', '8K']);

    const dash = await ringstore(['volume', 'write', 'disk', '--offset', '4K', '-'], { input: 'hello block' });
    const implicit = await ringstore(['volume', 'write', 'disk', '--offset', '1'], { input: 'ab' });
    const whole = await ringstore(['volume', 'read', 'disk']);
    const part = await ringstore(['volume', 'read', 'disk', '--offset', '4096', '--length', '11']);

    expect(dash).toMatchObject({ code: 0, stdout: 'wrote 11 bytes to disk at offset 4096\n' });
    expect(implicit).toMatchObject({ code: 0, stdout: 'wrote 2 bytes to disk at offset 1\n' });
    expect(whole.stdout).toBe(`\0ab${'\0'.repeat(4093)}hello block${'\0'.repeat(4096 - 11)}`);
    expect(part).toMatchObject({ code: 0, stderr: '', stdout: 'hello block' });
  });

  it('refuses a whole read of a large volume or past its end, - where standard input carries the commands, and leaves no --out of a failed read', async () => {
    await ringstore(['volume', 'create', 'big', '1G']);

    const whole = await ringstore(['volume', 'read', 'big']);
    const piped = await ringstore([], { input: 'volume write big --offset 0 -\n' });
    const missing = await ringstore(['volume', 'write', 'big', '--offset', '0', join(dir, 'missing.bin')]);
    const pastEnd = await ringstore(['volume', 'read', 'big', '--offset', '1G']);
    const noVolume = await ringstore(['volume', 'read', 'nothing', '--length', '4K', '--out', join(dir, 'never.bin')]);

    expect(whole).toMatchObject({ code: 1, stdout: '' });
    expect(whole.stderr).toBe('error: volume big holds 1 GiB from offset 0: give --length (at most 16 MiB is read without it)\n');
    expect(piped.stderr).toBe('error: - reads the bytes from standard input, which carries the commands here\n');
    expect(missing.stderr).toMatch(/^error: cannot read .*missing\.bin: ENOENT/);
    expect(pastEnd.stderr).toBe('error: offset 1073741824 is past the end of volume big (1073741824 bytes)\n');
    expect(noVolume).toMatchObject({ code: 1, stderr: 'error: no volume nothing (volume.notFound)\n' });
    await expect(readFile(join(dir, 'never.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(volumeRequests().some((request) => request.pathname.endsWith('/lease'))).toBe(false);
  });

  it('trims a range to zeros as one writer', async () => {
    await ringstore(['volume', 'create', 'disk', '64K']);
    await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'x'.repeat(10_000) });

    const trimmed = await ringstore(['volume', 'trim', 'disk', '--offset', '10', '--length', '8K']);
    const read = await ringstore(['volume', 'read', 'disk', '--length', '10000']);

    expect(trimmed).toMatchObject({ code: 0, stderr: '', stdout: 'trimmed 8,192 bytes of disk at offset 10\n' });
    expect(read.stdout).toBe(`${'x'.repeat(10)}${'\0'.repeat(8192)}${'x'.repeat(10_000 - 8202)}`);
    expect(fake().volumes.get('test', 'disk')?.lease).toBeUndefined();
  });

  it('takes a snapshot, lists it, reads it as the volume was (whole or a range), and deletes it', async () => {
    await ringstore(['volume', 'create', 'disk', '64K']);
    await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'a'.repeat(10_000) });

    const taken = await ringstore(['volume', 'snapshot', 'disk', 'before']);
    await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'b'.repeat(10_000) });
    const listed = await ringstore(['volume', 'snapshots', 'disk']);
    const json = await ringstore(['volume', 'snapshots', 'disk', '--json']);
    const described = await ringstore(['volume', 'describe', 'disk']);
    const whole = await ringstore(['volume', 'read', 'disk', '--snapshot', 'before']);
    const ranged = await ringstore(['volume', 'read', 'disk', '--snapshot', 'before', '--offset', '9998', '--length', '4']);
    const live = await ringstore(['volume', 'read', 'disk', '--length', '4']);
    const missing = await ringstore(['volume', 'read', 'disk', '--snapshot', 'missing']);
    const deleted = await ringstore(['volume', 'rm-snapshot', 'disk', 'before']);
    const none = await ringstore(['volume', 'snapshots', 'disk']);

    expect(taken).toMatchObject({ code: 0, stderr: '' });
    expect(taken.stdout).toMatch(/^took snapshot before of volume disk \(65,536 bytes\) at \S+\n$/);
    expect(listed.stdout).toMatch(/^SNAPSHOT +SIZE +CREATED +STATE +CLONES\nbefore +65,536 +\S+ +ready +-\n$/);
    expect(JSON.parse(json.stdout)).toMatchObject([{ name: 'before', sizeBytes: 65_536, state: 'ready' }]);
    expect(described.stdout).toMatch(/\nsnapshots {2}before \(0 bytes of block copies\)\n$/);
    expect(whole.stdout).toBe(`${'a'.repeat(10_000)}${'\0'.repeat(65_536 - 10_000)}`);
    expect(ranged.stdout).toBe('aa\0\0');
    expect(live.stdout).toBe('bbbb');
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(/volume disk has no snapshot named missing/);
    expect(deleted).toMatchObject({ code: 0, stdout: 'deleted snapshot before of volume disk (0 block copies freed)\n' });
    expect(none.stdout).toBe('volume disk has no snapshots\n');
  });

  it('clones a volume from a snapshot, names the clone on the snapshot, and refuses the snapshot’s deletion while it lives', async () => {
    await ringstore(['volume', 'create', 'disk', '64K']);
    await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'a'.repeat(100) });
    await ringstore(['volume', 'snapshot', 'disk', 'before']);

    const cloned = await ringstore(['volume', 'clone', 'disk', 'before', 'copy', '--size', '128K']);
    const read = await ringstore(['volume', 'read', 'copy', '--length', '101']);
    const described = await ringstore(['volume', 'describe', 'copy']);
    const origin = await ringstore(['volume', 'describe', 'disk']);
    const refused = await ringstore(['volume', 'rm-snapshot', 'disk', 'before']);
    const small = await ringstore(['volume', 'clone', 'disk', 'before', 'tiny', '--size', '4K']);

    expect(cloned).toMatchObject({ code: 0, stderr: '', stdout: 'created volume copy from snapshot before of disk: 128 KiB\n' });
    expect(read.stdout).toBe(`${'a'.repeat(100)}\0`);
    expect(described.stdout).toMatch(/\norigin {5}disk@before \(its first 64 KiB, copy-on-write\)\n$/);
    expect(origin.stdout).toMatch(/\nclones {5}of before: copy\n$/);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/clones read it: copy \(volume\.hasClones\)/);
    expect(small).toMatchObject({ code: 1, stdout: '' });
    expect(small.stderr).toMatch(/volume\.sizeInvalid/);
  });

  it('says who holds the lease when another writer is attached, writing nothing', async () => {
    await ringstore(['volume', 'create', 'disk', '64K']);
    fake().volumes.get('test', 'disk')!.lease = { holder: 'host-b', epoch: 1, expiresAtMs: Date.now() + 60_000 };
    fake().volumes.get('test', 'disk')!.epoch = 1;

    const refused = await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'x' });
    const described = await ringstore(['volume', 'describe', 'disk']);
    const listed = await ringstore(['volume', 'ls']);

    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^error: volume disk is attached to host-b until \S+ \(volume\.leaseHeld\)\n$/);
    expect(fake().volumes.get('test', 'disk')?.blocks.size).toBe(0);
    expect(described.stdout).toMatch(/\nwriter {5}host-b, epoch 1, lease until \S+\nsnapshots {2}none\n$/);
    expect(listed.stdout).toMatch(/\ndisk +64 KiB +active +host-b \(epoch 1\) +\S+\n/);
  });

  it('rm deletes a volume request after request, printing the blocks removed so far', async () => {
    await ringstore(['volume', 'create', 'disk', '64K']);
    await ringstore(['volume', 'write', 'disk', '--offset', '0'], { input: 'x'.repeat(5 * 4096) });
    fake().volumes.deleteBlocksPerRequest = 2;

    const removed = await ringstore(['volume', 'rm', 'disk']);
    const gone = await ringstore(['volume', 'describe', 'disk']);

    expect(removed).toMatchObject({ code: 0, stderr: '' });
    expect(removed.stdout).toBe(
      'deleting disk: 2 blocks removed so far\ndeleting disk: 4 blocks removed so far\ndeleted volume disk (5 blocks removed)\n',
    );
    expect(gone).toMatchObject({ code: 1, stderr: 'error: no volume disk (volume.notFound)\n' });
  });

  it('ls pages with --limit and says how to go on; --json prints the page', async () => {
    const empty = await ringstore(['volume', 'ls']);
    for (const name of ['a', 'b', 'c']) await ringstore(['volume', 'create', name, '4K']);

    const first = await ringstore(['volume', 'ls', '--limit', '2']);
    const cursor = /--cursor (\S+)$/m.exec(first.stdout)?.[1] ?? '';
    const rest = await ringstore(['volume', 'list', '--cursor', cursor, '--json']);

    expect(empty.stdout).toBe('0 volumes\n');
    expect(first.stdout).toMatch(/\n2 volumes\nmore: ringstore volume ls --limit 2 --cursor \S+\n$/);
    expect(JSON.parse(rest.stdout)).toEqual({ volumes: [expect.objectContaining({ name: 'c' })] });
  });

  it('lists the volume commands in its help', async () => {
    const help = await ringstore(['help', 'volume']);

    expect(help.code).toBe(0);
    for (const command of [
      'create',
      'ls',
      'describe',
      'rm',
      'read',
      'write',
      'trim',
      'serve',
      'snapshot',
      'snapshots',
      'rm-snapshot',
      'clone',
    ]) {
      expect(help.stdout).toContain(`  ${command}`);
    }
    expect(help.stdout).toContain('each is atomic, not the whole');
  });
});

describe('volume sizes', () => {
  it.each([
    ['4096', 4096],
    ['4K', 4096],
    ['64m', 64 * KiB * KiB],
    ['1GiB', KiB ** 3],
    ['2 TB', 2 * KiB ** 4],
    ['512B', 512],
    ['0', 0],
  ])('reads %j as %d bytes', (raw, bytes) => {
    expect(parseByteCount(raw)).toBe(bytes);
  });

  it.each(['', '-1', '1.5G', '1X', 'G', '99999999999T'])('refuses %j', (raw) => {
    expect(() => parseByteCount(raw)).toThrow(/expected a number of bytes/);
  });

  it('takes a positive multiple of 4096 as a volume size, nothing else', () => {
    expect(parseVolumeSize('1G')).toBe(KiB ** 3);
    expect(() => parseVolumeSize('0')).toThrow(/multiple of 4096/);
    expect(() => parseVolumeSize('6000')).toThrow(/multiple of 4096/);
  });

  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [4096, '4 KiB'],
    [1536 * KiB * KiB, '1.5 GiB'],
    [16 * KiB ** 4, '16 TiB'],
    [KiB * KiB + 1, '1 MiB'],
  ])('shows %d bytes as %s', (bytes, shown) => {
    expect(formatBytes(bytes)).toBe(shown);
  });
});
