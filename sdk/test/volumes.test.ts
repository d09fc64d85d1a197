// Block volumes in the SDK against the fake Ringstore: the requests each command sends (one Range header per read,
// the epoch on every write and trim), what it refuses before any request, how the `Volume` handle splits reads,
// writes and trims past VOLUME_IO_BYTES_MAX and carries its lease, its snapshots, deleteVolume's loop, and which
// requests the transport may send twice.

import fc from 'fast-check';
import { contentRange, parseByteRange } from '../../lambdas/http/byte-range';
import {
  AttachVolumeCommand,
  ConflictError,
  CreateVolumeCommand,
  DetachVolumeCommand,
  ListVolumesCommand,
  NotFoundError,
  ReadVolumeCommand,
  RingstoreClient,
  RingstoreCommand,
  RingstoreError,
  TrimVolumeCommand,
  ValidationError,
  VOLUME_BLOCK_BYTES,
  VOLUME_IO_BYTES_MAX,
  WriteVolumeCommand,
} from '../src';
import { clientFixture } from './support/cli-fixture';
import type { RecordedRequest } from './support/fake-server';

jest.setTimeout(30_000);

const B = VOLUME_BLOCK_BYTES;
const MAX = VOLUME_IO_BYTES_MAX;

/** `length` bytes of a pattern that differs at every offset within 251 bytes, from `seed`. */
function pattern(length: number, seed = 1): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7 + seed) % 251);
}

/** Whether two byte arrays hold the same bytes (jest's toEqual walks a large array for seconds). */
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

const dataRequests = (requests: readonly RecordedRequest[], method: string) =>
  requests.filter((request) => request.method === method && request.pathname.endsWith('/data'));

describe('volume commands and client methods', () => {
  const fixture = clientFixture();
  const client = () => fixture.client();
  const fake = () => fixture.fake();

  it('creates, lists page by page, and describes volumes', async () => {
    const created = await client().createVolume('disk', 64 * B);
    await client().createVolume('boot', B);
    const first = await client().listVolumes({ limit: 1 });
    const second = await client().send(new ListVolumesCommand({ limit: 1, cursor: first.cursor! }));
    const described = await client().describeVolume('disk');

    expect(created).toMatchObject({ name: 'disk', sizeBytes: 64 * B, blockBytes: B, state: 'active', epoch: 0 });
    expect(created.lease).toBeUndefined();
    expect(first.volumes.map((volume) => volume.name)).toEqual(['boot']);
    expect(second).toEqual({ volumes: [expect.objectContaining({ name: 'disk' })] });
    expect(described).toEqual({ ...created, allocatedBytes: 0, snapshotBytes: 0, snapshots: [] });
    const create = fake().requests[0]!;
    expect(`${create.method} ${create.rawUrl} ${create.headers['content-type']}`).toBe('POST /v1/volumes application/json');
    expect(JSON.parse(create.body.toString('utf8'))).toEqual({ name: 'disk', sizeBytes: 64 * B });
  });

  it('throws the server refusals with their codes: a taken name, an unknown volume', async () => {
    await client().createVolume('disk', B);

    const taken = await client()
      .createVolume('disk', B)
      .catch((caught: unknown) => caught);
    const missing = await client()
      .describeVolume('missing')
      .catch((caught: unknown) => caught);

    expect(taken).toBeInstanceOf(ConflictError);
    expect(taken).toMatchObject({ code: 'volume.exists', status: 409 });
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ code: 'volume.notFound' });
  });

  it.each([
    ['a size off the block grid', () => new CreateVolumeCommand({ name: 'disk', sizeBytes: B + 1 })],
    ['a size of 0', () => new CreateVolumeCommand({ name: 'disk', sizeBytes: 0 })],
    ['an empty name', () => new CreateVolumeCommand({ name: '', sizeBytes: B })],
    ['a negative offset', () => new ReadVolumeCommand({ volume: 'disk', offset: -1, length: 1 })],
    ['a negative length', () => new ReadVolumeCommand({ volume: 'disk', offset: 0, length: -1 })],
    ['a fractional offset', () => new ReadVolumeCommand({ volume: 'disk', offset: 0.5, length: 1 })],
    ['a read over VOLUME_IO_BYTES_MAX', () => new ReadVolumeCommand({ volume: 'disk', offset: 0, length: MAX + 1 })],
    [
      'a write over VOLUME_IO_BYTES_MAX',
      () => new WriteVolumeCommand({ volume: 'disk', offset: 0, data: new Uint8Array(MAX + 1), epoch: 1 }),
    ],
    ['a write at epoch 0', () => new WriteVolumeCommand({ volume: 'disk', offset: 0, data: new Uint8Array(1), epoch: 0 })],
    ['a trim over VOLUME_IO_BYTES_MAX', () => new TrimVolumeCommand({ volume: 'disk', offset: 0, length: MAX + 1, epoch: 1 })],
    ['an attach without a holder', () => new AttachVolumeCommand({ volume: 'disk', holder: '' })],
    ['a lease of 0 seconds', () => new AttachVolumeCommand({ volume: 'disk', holder: 'h', leaseSeconds: 0 })],
    ['a detach without an epoch', () => new DetachVolumeCommand({ volume: 'disk', epoch: Number.NaN })],
    ['a page of 1001', () => new ListVolumesCommand({ limit: 1001 })],
  ] as Array<[string, () => RingstoreCommand<object, unknown>]>)(
    'refuses %s with a ValidationError before any request',
    async (_case, command) => {
      const error = await client()
        .send(command())
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: 'client.invalidInput', status: 0 });
      expect(fake().requests).toEqual([]);
    },
  );

  it('reads a range with one Range header and answers its bytes; an empty read sends nothing', async () => {
    await client().createVolume('disk', 16 * B);
    const disk = client().volume('disk');
    await disk.attach({ holder: 'test' });
    await disk.write(1000, pattern(3 * B));
    const before = fake().requests.length;

    const read = await client().send(new ReadVolumeCommand({ volume: 'disk', offset: 1000, length: 3 * B }));
    const empty = await client().send(new ReadVolumeCommand({ volume: 'disk', offset: 5, length: 0 }));

    expect(read).toEqual(pattern(3 * B));
    expect(empty).toEqual(new Uint8Array(0));
    const sent = fake().requests.slice(before);
    expect(sent.map((request) => `${request.method} ${request.rawUrl} ${request.headers.range}`)).toEqual([
      `GET /v1/volumes/disk/data bytes=1000-${1000 + 3 * B - 1}`,
    ]);
  });

  it('reads the bytes up to the end of the volume, and throws the 416 of a range that starts past it', async () => {
    await client().createVolume('disk', 4 * B);

    const tail = await client()
      .volume('disk')
      .read(4 * B - 10, 3 * MAX);
    const past = await client()
      .volume('disk')
      .read(4 * B, 1)
      .catch((caught: unknown) => caught);

    expect(tail).toEqual(new Uint8Array(10));
    expect(past).toBeInstanceOf(RingstoreError);
    expect(past).toMatchObject({ status: 416, code: 'volume.rangeNotSatisfiable', details: { sizeBytes: 4 * B } });
  });

  it('refuses an answer whose Content-Range is not the range asked', async () => {
    const lying = new RingstoreClient({
      endpoint: 'http://ringstore.test',
      apiKey: 'k',
      maxAttempts: 1,
      fetch: async () => new Response(new Uint8Array(4), { status: 206, headers: { 'content-range': 'bytes 8-11/100' } }),
    });

    await expect(lying.send(new ReadVolumeCommand({ volume: 'disk', offset: 0, length: 4 }))).rejects.toMatchObject({
      code: 'response.invalid',
    });
  });

  it("sends a Range the server's parser reads as the range asked, and reads the Content-Range the server answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 44 }).chain((size) =>
          fc.record({
            size: fc.constant(size),
            offset: fc.integer({ min: 0, max: size - 1 }),
            length: fc.integer({ min: 1, max: 64 }),
          }),
        ),
        async ({ size, offset, length }) => {
          let parsed: { offset: number; length: number } | undefined;
          const server = new RingstoreClient({
            endpoint: 'http://ringstore.test',
            apiKey: 'k',
            maxAttempts: 1,
            fetch: async (_url, init) => {
              parsed = parseByteRange(new Headers(init?.headers).get('range') ?? undefined, size);
              return new Response(Buffer.from(pattern(parsed.length)), {
                status: 206,
                headers: { 'content-range': contentRange(parsed, size) },
              });
            },
          });

          const read = await server.send(new ReadVolumeCommand({ volume: 'disk', offset, length }));

          expect(parsed).toEqual({ offset, length: Math.min(length, size - offset) });
          expect(read).toEqual(pattern(Math.min(length, size - offset)));
        },
      ),
    );
  });
});

describe('the Volume handle', () => {
  const fixture = clientFixture();
  const client = () => fixture.client();
  const fake = () => fixture.fake();

  beforeEach(async () => {
    await client().createVolume('disk', 1024 * B);
  });

  it('splits a write and a read past VOLUME_IO_BYTES_MAX into consecutive requests, each within it, the epoch on each write', async () => {
    const disk = client().volume('disk');
    const { epoch } = await disk.attach({ holder: 'host-a' });
    const bytes = pattern(2 * MAX + 1000, 3);

    const ack = await disk.write(1000, bytes);
    const read = await disk.read(1000, bytes.byteLength);

    expect(ack).toEqual({ offset: 1000, length: bytes.byteLength });
    expect(same(read, bytes)).toBe(true);
    const writes = dataRequests(fake().requests, 'PUT');
    expect(writes.map((request) => [request.query.get('offset'), request.query.get('epoch'), request.body.byteLength])).toEqual([
      ['1000', String(epoch), MAX],
      [String(1000 + MAX), String(epoch), MAX],
      [String(1000 + 2 * MAX), String(epoch), 1000],
    ]);
    expect(dataRequests(fake().requests, 'GET').map((request) => request.headers.range)).toEqual([
      `bytes=1000-${1000 + MAX - 1}`,
      `bytes=${1000 + MAX}-${1000 + 2 * MAX - 1}`,
      `bytes=${1000 + 2 * MAX}-${1000 + 2 * MAX + 999}`,
    ]);
  });

  it('takes, lists, reads (in parts, at their paths) and deletes snapshots; refuses an empty snapshot name unsent', async () => {
    const disk = client().volume('disk');
    await disk.attach({ holder: 'host-a' });
    const before = pattern(MAX + 5000, 4);
    await disk.write(100, before);
    const taken = await disk.createSnapshot('before');
    await disk.write(100, pattern(MAX + 5000, 5));

    const read = await disk.readSnapshot('before', 100, before.byteLength);
    const listed = await disk.snapshots();
    const deleted = await disk.deleteSnapshot('before');

    expect(taken).toMatchObject({ name: 'before', sizeBytes: 1024 * B, state: 'ready' });
    expect(same(read, before)).toBe(true);
    expect(listed.map((snapshot) => snapshot.name)).toEqual(['before']);
    expect(deleted).toEqual({ name: 'before', copiesDeleted: 0 });
    const sent = fake().requests.filter((request) => request.pathname.includes('/snapshots'));
    expect(sent.map((request) => `${request.method} ${request.pathname} ${request.headers.range ?? ''}`.trim())).toEqual([
      'POST /v1/volumes/disk/snapshots',
      `GET /v1/volumes/disk/snapshots/before/data bytes=100-${100 + MAX - 1}`,
      `GET /v1/volumes/disk/snapshots/before/data bytes=${100 + MAX}-${100 + MAX + 4999}`,
      'GET /v1/volumes/disk/snapshots',
      'DELETE /v1/volumes/disk/snapshots/before',
    ]);
    expect(JSON.parse(sent[0]!.body.toString('utf8'))).toEqual({ name: 'before' });
    const requestsBefore = fake().requests.length;
    await expect(disk.createSnapshot('')).rejects.toBeInstanceOf(ValidationError);
    await expect(disk.readSnapshot('', 0, 10)).rejects.toBeInstanceOf(ValidationError);
    await expect(disk.readSnapshot('missing', 0, 10)).rejects.toMatchObject({ status: 404, code: 'volume.snapshotNotFound' });
    expect(fake().requests.length).toBe(requestsBefore + 1);
  });

  it('clones a volume from a snapshot: one request with `from`, its size the snapshot’s unless given; a bad size unsent', async () => {
    const disk = client().volume('disk');
    await disk.attach({ holder: 'host-a' });
    await disk.write(0, pattern(5000, 6));
    await disk.createSnapshot('before');

    const clone = await client().cloneVolume('copy', { volume: 'disk', snapshot: 'before' });
    const larger = await client().cloneVolume('larger', { volume: 'disk', snapshot: 'before' }, { sizeBytes: 2048 * B });
    const read = await client().volume('copy').read(0, 5000);
    const refused = await disk.deleteSnapshot('before').catch((error: unknown) => error);

    expect(clone).toMatchObject({ name: 'copy', sizeBytes: 1024 * B, origin: { volume: 'disk', snapshot: 'before', sizeBytes: 1024 * B } });
    expect(larger.sizeBytes).toBe(2048 * B);
    expect(same(read, pattern(5000, 6))).toBe(true);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: 'volume.hasClones', details: { clones: ['copy', 'larger'] } });
    expect((await disk.snapshots())[0]!.clones).toEqual(['copy', 'larger']);
    const created = fake().requests.filter((request) => request.method === 'POST' && request.pathname === '/v1/volumes');
    expect(created.map((request) => JSON.parse(request.body.toString('utf8')) as unknown).slice(-2)).toEqual([
      { name: 'copy', from: { volume: 'disk', snapshot: 'before' } },
      { name: 'larger', sizeBytes: 2048 * B, from: { volume: 'disk', snapshot: 'before' } },
    ]);
    const requestsBefore = fake().requests.length;
    await expect(client().cloneVolume('odd', { volume: 'disk', snapshot: 'before' }, { sizeBytes: 100 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(fake().requests.length).toBe(requestsBefore);
  });

  it('trims in parts too: the range reads as zeros, whole blocks are freed', async () => {
    const disk = client().volume('disk');
    await disk.attach({ holder: 'host-a' });
    await disk.write(0, pattern(3 * MAX));

    await disk.trim(100, 2 * MAX);

    const expected = pattern(3 * MAX);
    expected.fill(0, 100, 100 + 2 * MAX);
    expect(same(await disk.read(0, 3 * MAX), expected)).toBe(true);
    const trims = fake().requests.filter((request) => request.pathname.endsWith('/trim'));
    expect(trims.map((request) => JSON.parse(request.body.toString('utf8')) as unknown)).toEqual([
      { offset: 100, length: MAX, epoch: disk.lease!.epoch },
      { offset: 100 + MAX, length: MAX, epoch: disk.lease!.epoch },
    ]);
    // Freed: the blocks one part covers whole. Kept, zeroed: blocks 0 and 128 (partly covered), and block 64, which
    // each part covers half of.
    expect((await disk.describe()).allocatedBytes).toBe(3 * MAX - 2 * MAX + 2 * B);
  });

  it('refuses a write, a trim, a renewal and a detach before attach, saying to attach first, without a request', async () => {
    const disk = client().volume('disk');
    const before = fake().requests.length;

    const refusals = await Promise.all([
      disk.write(0, new Uint8Array(1)).catch((caught: unknown) => caught),
      disk.trim(0, 1).catch((caught: unknown) => caught),
      disk.renew().catch((caught: unknown) => caught),
      disk.detach().catch((caught: unknown) => caught),
    ]);

    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(ValidationError);
      expect((refusal as Error).message).toMatch(/^volume disk is not attached: (attach it|there is no lease)/);
    }
    expect(fake().requests.length).toBe(before);
    expect(disk.lease).toBeUndefined();
  });

  it('keeps the epoch through a renewal; another holder is refused by name until the first detaches, then gets the next epoch', async () => {
    const first = client().volume('disk');
    const second = client().volume('disk');
    const attached = await first.attach({ holder: 'host-a', leaseSeconds: 60 });

    const renewed = await first.renew();
    const refused = await second.attach({ holder: 'host-b' }).catch((caught: unknown) => caught);
    await first.write(0, pattern(B));
    await first.detach();
    const afterDetach = await first.write(0, pattern(B)).catch((caught: unknown) => caught);
    const taken = await second.attach({ holder: 'host-b' });
    await second.write(0, pattern(B, 9));

    const leases = fake().requests.filter((request) => request.pathname.endsWith('/lease'));
    expect(leases.map((request) => `${request.method} ${request.rawUrl} ${request.body.toString('utf8')}`)).toEqual([
      'POST /v1/volumes/disk/lease {"holder":"host-a","leaseSeconds":60}',
      'POST /v1/volumes/disk/lease {"holder":"host-a","leaseSeconds":60}',
      'POST /v1/volumes/disk/lease {"holder":"host-b"}',
      `DELETE /v1/volumes/disk/lease?epoch=${attached.epoch} `,
      'POST /v1/volumes/disk/lease {"holder":"host-b"}',
    ]);
    expect(renewed).toMatchObject({ holder: 'host-a', epoch: attached.epoch });
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: 'volume.leaseHeld', details: { holder: 'host-a' } });
    expect(afterDetach).toBeInstanceOf(ValidationError);
    expect(first.lease).toBeUndefined();
    expect(taken.epoch).toBe(attached.epoch + 1);
    expect(second.lease).toEqual(taken);
    expect(dataRequests(fake().requests, 'PUT').map((request) => request.query.get('epoch'))).toEqual([
      String(attached.epoch),
      String(taken.epoch),
    ]);
    expect(await second.read(0, B)).toEqual(pattern(B, 9));
  });

  it('sends a writer taken over the server refusal, volume.fenced, and lets go of its lease on detach', async () => {
    const first = client().volume('disk');
    const { epoch } = await first.attach({ holder: 'host-a' });
    fake().volumes.get('test', 'disk')!.lease!.expiresAtMs = 0;
    await client().volume('disk').attach({ holder: 'host-b' });

    const fenced = await first.write(0, pattern(10)).catch((caught: unknown) => caught);
    const detached = await first.detach().catch((caught: unknown) => caught);

    expect(fenced).toBeInstanceOf(ConflictError);
    expect(fenced).toMatchObject({ code: 'volume.fenced', details: { epoch, currentEpoch: epoch + 1 } });
    expect(detached).toMatchObject({ code: 'volume.fenced' });
    expect(first.lease).toBeUndefined();
  });
});

describe('deleteVolume', () => {
  const fixture = clientFixture();
  const client = () => fixture.client();
  const fake = () => fixture.fake();

  it('deletes again while the server answers deleting, reporting the blocks removed so far, and totals them', async () => {
    await client().createVolume('disk', 64 * B);
    const disk = client().volume('disk');
    await disk.attach({ holder: 'host-a' });
    await disk.write(0, pattern(10 * B));
    fake().volumes.deleteBlocksPerRequest = 3;
    const progress: number[] = [];

    const deleted = await client().deleteVolume('disk', { onProgress: (blocks) => progress.push(blocks) });

    expect(progress).toEqual([3, 6, 9]);
    expect(deleted).toEqual({ name: 'disk', status: 'deleted', blocksDeleted: 10 });
    expect(fake().requests.filter((request) => request.method === 'DELETE').length).toBe(4);
    await expect(client().describeVolume('disk')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('takes a volume gone after a deleting answer as deleted, but throws a 404 on the first request', async () => {
    await client().createVolume('disk', 64 * B);
    const disk = client().volume('disk');
    await disk.attach({ holder: 'host-a' });
    await disk.write(0, pattern(4 * B));
    fake().volumes.deleteBlocksPerRequest = 1;
    const gone = { status: 404, body: { error: { code: 'volume.notFound', message: 'no volume disk', retryable: false } } };

    const deleted = await client().deleteVolume('disk', { onProgress: () => fake().failNext.push(gone) });
    const missing = await client()
      .deleteVolume('missing')
      .catch((caught: unknown) => caught);

    expect(deleted).toEqual({ name: 'disk', status: 'deleted', blocksDeleted: 1 });
    expect(missing).toBeInstanceOf(NotFoundError);
  });
});

describe('which volume requests the transport sends twice', () => {
  const fixture = clientFixture();
  const fake = () => fixture.fake();
  const unavailable = { status: 503, body: { error: { code: 'shard.unavailable', message: 'down', retryable: true } } };
  const retrying = () => new RingstoreClient({ endpoint: fake().url, apiKey: 'user-key', maxAttempts: 3, sleep: async () => undefined });

  it('retries a read, a write and a trim (the same bytes at the same epoch land the same), never an attach or a detach', async () => {
    const client = retrying();
    await client.createVolume('disk', 16 * B);
    const disk = client.volume('disk');
    const attempts = async (action: () => Promise<unknown>): Promise<number> => {
      fake().failNext.push(unavailable);
      const before = fake().requests.length;
      await action().catch(() => undefined);
      return fake().requests.length - before;
    };

    const attach = await attempts(() => disk.attach({ holder: 'host-a' }));
    await disk.attach({ holder: 'host-a' });
    const write = await attempts(() => disk.write(0, pattern(100)));
    const trim = await attempts(() => disk.trim(0, 10));
    const read = await attempts(() => disk.read(0, 100));
    const detach = await attempts(() => disk.detach());

    expect({ attach, write, trim, read, detach }).toEqual({ attach: 1, write: 2, trim: 2, read: 2, detach: 1 });
    expect(disk.lease).toBeDefined(); // the detach failed: the lease is still the handle's
    const expected = pattern(100);
    expected.fill(0, 0, 10);
    expect(await disk.read(0, 100)).toEqual(expected);
  });
});
