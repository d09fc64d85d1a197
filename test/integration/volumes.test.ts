// Block volumes through real HTTP on the local cloud (docs/volumes.md): create, list, describe, delete; byte ranges
// read with HTTP Range and written at ?offset=, atomic up to 256 KiB at any offset; trims; clear 4xx for bad input,
// changing nothing; one namespace never sees another's volumes.
import { volumeLimits } from '../../schemas/topology';
import { call, errorOf, freshNamespace, kvPath, randomBytes } from './support';

let key: string;
let otherKey: string;
const B = volumeLimits.blockBytes;

beforeAll(async () => {
  ({ key } = await freshNamespace('volumes'));
  ({ key: otherKey } = await freshNamespace('volumes-other'));
});

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const create = (name: string, sizeBytes: number, as = key) =>
  call('/v1/volumes', { method: 'POST', key: as, ...json({ name, sizeBytes }) });
/** Each volume's writer epoch, from its attach (createAttached). */
const epochs = new Map<string, number>();
const attach = (name: string, holder: string, as = key) =>
  call(`/v1/volumes/${name}/lease`, { method: 'POST', key: as, ...json({ holder, leaseSeconds: 30 }) });
async function createAttached(name: string, sizeBytes: number): Promise<void> {
  expect((await create(name, sizeBytes)).status).toBe(201);
  const attached = await attach(name, 'integration');
  expect(attached.status).toBe(200);
  epochs.set(name, ((await attached.json()) as { epoch: number }).epoch);
}
const write = (name: string, offset: number, bytes: Uint8Array, epoch = epochs.get(name)) =>
  call(`/v1/volumes/${name}/data?offset=${offset}&epoch=${epoch}`, {
    method: 'PUT',
    key,
    body: Buffer.from(bytes),
    headers: { 'content-type': 'application/octet-stream' },
  });
const read = (name: string, range?: string, as = key) =>
  call(`/v1/volumes/${name}/data`, { key: as, headers: range === undefined ? {} : { range } });
const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('block volumes over HTTP', () => {
  it('creates a volume, lists and describes it, and refuses a taken name, a bad size and a bad name', async () => {
    const created = await create('disk', 1024 * B);
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: 'disk', sizeBytes: 1024 * B, blockBytes: B, state: 'active' });
    expect(await (await call('/v1/volumes', { key })).json()).toMatchObject({ volumes: [{ name: 'disk' }] });
    expect(await (await call('/v1/volumes/disk', { key })).json()).toMatchObject({ name: 'disk', allocatedBytes: 0 });
    expect(await errorOf(await create('disk', B))).toMatchObject({ status: 409, code: 'volume.exists' });
    expect(await errorOf(await create('odd', B + 1))).toMatchObject({ status: 400, code: 'volume.sizeInvalid' });
    expect(await errorOf(await create('-bad', B))).toMatchObject({ status: 400, code: 'volume.nameInvalid' });
    expect(await errorOf(await call('/v1/volumes/bad%20name', { key }))).toMatchObject({ status: 400, code: 'volume.nameInvalid' });
    expect(await errorOf(await call('/v1/volumes/missing', { key }))).toMatchObject({ status: 404, code: 'volume.notFound' });
  });

  it('writes at unaligned offsets and reads ranges back (206 with Content-Range), unwritten bytes as zeros', async () => {
    await createAttached('data', 256 * B);
    const first = randomBytes(3 * B + 100, 1);
    const wrote = await write('data', 1000, first);
    expect({ status: wrote.status, body: await wrote.json() }).toEqual({ status: 200, body: { offset: 1000, length: first.length } });
    const ranged = await read('data', `bytes=0-${4 * B + 1099}`);
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-${4 * B + 1099}/${256 * B}`);
    const expected = new Uint8Array(4 * B + 1100);
    expected.set(first, 1000);
    expect(same(await bytesOf(ranged), expected)).toBe(true);
    // The last bytes (a suffix range), unwritten: zeros.
    const suffix = await read('data', 'bytes=-10');
    expect({ status: suffix.status, range: suffix.headers.get('content-range') }).toEqual({
      status: 206,
      range: `bytes ${256 * B - 10}-${256 * B - 1}/${256 * B}`,
    });
    expect(same(await bytesOf(suffix), new Uint8Array(10))).toBe(true);
    // A whole 256 KiB write at an unaligned offset (65 blocks), read back whole.
    const large = randomBytes(volumeLimits.ioBytesMax, 2);
    expect((await write('data', 3, large)).status).toBe(200);
    expect(same(await bytesOf(await read('data', `bytes=3-${2 + volumeLimits.ioBytesMax}`)), large)).toBe(true);
    expect(await (await call('/v1/volumes/data', { key })).json()).toMatchObject({ allocatedBytes: 65 * B });
  });

  it('refuses bad ranges and sizes with a clear 4xx, writing nothing', async () => {
    await createAttached('limits', 64 * B);
    const cases = [
      [await write('limits', 64 * B - 1, randomBytes(2, 3)), 416, 'volume.rangeNotSatisfiable'],
      [await write('limits', 0, randomBytes(volumeLimits.ioBytesMax + 1, 3)), 413, 'volume.ioTooLarge'],
      [await read('limits', `bytes=${64 * B}-`), 416, 'volume.rangeNotSatisfiable'],
      [await read('limits', 'bytes=0-1,5-6'), 400, 'request.invalid'],
      [await read('limits', 'items=0-1'), 400, 'request.invalid'],
      [await call('/v1/volumes/limits/data?offset=-1&epoch=1', { method: 'PUT', key, body: 'x' }), 400, 'request.invalid'],
      [await call('/v1/volumes/limits/data?offset=0&epoch=1&length=3', { method: 'PUT', key, body: 'x' }), 400, 'request.invalid'],
      [await call('/v1/volumes/limits/data?offset=0', { method: 'PUT', key, body: 'x' }), 400, 'request.invalid'],
      [await write('limits', 0, randomBytes(2, 3), 99), 409, 'volume.fenced'],
      [await call('/v1/volumes/limits/trim', { method: 'POST', key, ...json({ offset: 0 }) }), 400, 'request.invalid'],
    ] as const;
    for (const [response, status, code] of cases) expect(await errorOf(response)).toMatchObject({ status, code });
    expect(await (await call('/v1/volumes/limits', { key })).json()).toMatchObject({ allocatedBytes: 0 });
    // The whole of a small volume without a Range: 200.
    const whole = await read('limits');
    expect({ status: whole.status, length: (await bytesOf(whole)).length }).toEqual({ status: 200, length: 64 * B });
  });

  it('trims: the range reads as zeros, whole blocks are freed', async () => {
    await createAttached('trimmed', 16 * B);
    expect((await write('trimmed', 0, randomBytes(4 * B, 4))).status).toBe(200);
    const trimmed = await call('/v1/volumes/trimmed/trim', {
      method: 'POST',
      key,
      ...json({ offset: 100, length: 3 * B, epoch: epochs.get('trimmed') }),
    });
    expect({ status: trimmed.status, body: await trimmed.json() }).toEqual({ status: 200, body: { offset: 100, length: 3 * B } });
    const expected = randomBytes(4 * B, 4);
    expected.fill(0, 100, 100 + 3 * B);
    expect(same(await bytesOf(await read('trimmed', `bytes=0-${4 * B - 1}`)), expected)).toBe(true);
    expect(await (await call('/v1/volumes/trimmed', { key })).json()).toMatchObject({ allocatedBytes: 2 * B });
  });

  it("keeps a namespace's volumes to itself, and their blocks out of its key listing", async () => {
    await createAttached('private', 4 * B);
    expect((await write('private', 0, randomBytes(B, 5))).status).toBe(200);
    expect(await errorOf(await read('private', 'bytes=0-9', otherKey))).toMatchObject({ status: 404, code: 'volume.notFound' });
    expect(await (await call('/v1/volumes', { key: otherKey })).json()).toEqual({ volumes: [] });
    expect(await errorOf(await attach('private', 'intruder', otherKey))).toMatchObject({ status: 404, code: 'volume.notFound' });
    // The other namespace may have a volume of the same name: its own.
    expect((await create('private', 4 * B, otherKey)).status).toBe(201);
    expect(same(await bytesOf(await read('private', 'bytes=0-9', otherKey)), new Uint8Array(10))).toBe(true);
    const listing = (await (await call('/v1/kv?limit=1000', { key })).json()) as { items: unknown[] };
    expect(listing.items).toEqual([]);
    expect((await call(kvPath('anything'), { key })).status).toBe(404);
  });

  it('deletes a volume with its blocks; the name is then free and starts empty', async () => {
    await createAttached('gone', 16 * B);
    expect((await write('gone', 0, randomBytes(8 * B, 6))).status).toBe(200);
    const deleted = await call('/v1/volumes/gone', { method: 'DELETE', key });
    expect({ status: deleted.status, body: await deleted.json() }).toEqual({
      status: 200,
      body: { name: 'gone', status: 'deleted', blocksDeleted: 8 },
    });
    expect(await errorOf(await read('gone', 'bytes=0-0'))).toMatchObject({ status: 404, code: 'volume.notFound' });
    const oldEpoch = epochs.get('gone')!;
    await createAttached('gone', 16 * B);
    expect(same(await bytesOf(await read('gone', `bytes=0-${8 * B - 1}`)), new Uint8Array(8 * B))).toBe(true);
    // The new volume's writer epoch is past the old one's: a writer of the deleted volume lands nothing in it.
    expect(epochs.get('gone')).toBeGreaterThan(oldEpoch);
    expect(await errorOf(await write('gone', 0, randomBytes(B, 7), oldEpoch))).toMatchObject({ status: 409, code: 'volume.fenced' });
  });

  it('lets one writer attach at a time: another holder is refused by name, and a writer taken over is fenced', async () => {
    await createAttached('shared', 16 * B);
    const first = epochs.get('shared')!;
    expect(await errorOf(await attach('shared', 'host-b'))).toMatchObject({
      status: 409,
      code: 'volume.leaseHeld',
      details: { holder: 'integration' },
    });
    // Renewed by its holder: the same epoch.
    expect(await (await attach('shared', 'integration')).json()).toMatchObject({ holder: 'integration', epoch: first });
    expect((await write('shared', 0, randomBytes(B, 7))).status).toBe(200);
    const detached = await call(`/v1/volumes/shared/lease?epoch=${first}`, { method: 'DELETE', key });
    expect({ status: detached.status, body: await detached.json() }).toEqual({ status: 200, body: { name: 'shared', detached: true } });
    const taken = await attach('shared', 'host-b');
    expect(await taken.json()).toMatchObject({ holder: 'host-b', epoch: first + 1 });
    expect(await errorOf(await write('shared', 0, randomBytes(B, 8), first))).toMatchObject({
      status: 409,
      code: 'volume.fenced',
      details: { epoch: first, currentEpoch: first + 1 },
    });
    expect(same(await bytesOf(await read('shared', `bytes=0-${B - 1}`)), randomBytes(B, 7))).toBe(true);
    expect(await (await call('/v1/volumes/shared', { key })).json()).toMatchObject({ epoch: first + 1, lease: { holder: 'host-b' } });
  });

  it('takes snapshots that read as the volume was, while it changes; lists and deletes them; refuses bad requests', async () => {
    await createAttached('snapped', 64 * B);
    const before = randomBytes(6 * B, 7);
    expect((await write('snapped', 0, before)).status).toBe(200);
    const snapshots = (suffix = '', init: Parameters<typeof call>[1] = { key }) => call(`/v1/volumes/snapped/snapshots${suffix}`, init);
    const taken = await snapshots('', { method: 'POST', key, ...json({ name: 'first' }) });
    expect(taken.status).toBe(201);
    expect(await taken.json()).toMatchObject({ name: 'first', sizeBytes: 64 * B, state: 'ready' });
    // Changed after it: an unaligned write across blocks, and a trim.
    const after = randomBytes(3 * B, 8);
    expect((await write('snapped', 100, after)).status).toBe(200);
    expect(
      (await call('/v1/volumes/snapped/trim', { method: 'POST', key, ...json({ offset: 4 * B, length: B, epoch: epochs.get('snapped') }) }))
        .status,
    ).toBe(200);
    const ranged = await snapshots('/first/data', { key, headers: { range: `bytes=0-${6 * B - 1}` } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-${6 * B - 1}/${64 * B}`);
    expect(same(await bytesOf(ranged), before)).toBe(true);
    const live = await bytesOf(await read('snapped', `bytes=100-${100 + 3 * B - 1}`));
    expect(same(live, after)).toBe(true);
    const described = (await (await call('/v1/volumes/snapped', { key })).json()) as { snapshotBytes: number; snapshots: unknown[] };
    expect(described.snapshotBytes).toBeGreaterThan(0);
    expect(described.snapshots).toMatchObject([{ name: 'first', state: 'ready' }]);
    expect(await (await snapshots()).json()).toMatchObject({ snapshots: [{ name: 'first' }] });
    // Bad requests: a taken name, a bad name, an unknown snapshot, a range past its end, another namespace.
    expect(await errorOf(await snapshots('', { method: 'POST', key, ...json({ name: 'first' }) }))).toMatchObject({
      status: 409,
      code: 'volume.snapshotExists',
    });
    expect(await errorOf(await snapshots('', { method: 'POST', key, ...json({ name: '-bad' }) }))).toMatchObject({
      status: 400,
      code: 'volume.nameInvalid',
    });
    expect(await errorOf(await snapshots('', { method: 'POST', key, ...json({ title: 'x' }) }))).toMatchObject({ status: 400 });
    expect(await errorOf(await snapshots('/missing/data', { key, headers: { range: 'bytes=0-9' } }))).toMatchObject({
      status: 404,
      code: 'volume.snapshotNotFound',
    });
    expect(await errorOf(await snapshots('/first/data', { key, headers: { range: `bytes=${64 * B}-` } }))).toMatchObject({ status: 416 });
    expect(await errorOf(await snapshots('/first/data', { key: otherKey, headers: { range: 'bytes=0-9' } }))).toMatchObject({
      status: 404,
      code: 'volume.notFound',
    });
    const deleted = await snapshots('/first', { method: 'DELETE', key });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ name: 'first' });
    expect(await (await snapshots()).json()).toEqual({ snapshots: [] });
    expect(await (await call('/v1/volumes/snapped', { key })).json()).toMatchObject({ snapshotBytes: 0 });
  });

  it('clones a volume from a snapshot: it reads as the snapshot until written, and the snapshot stays while it lives', async () => {
    await createAttached('parent', 16 * B);
    const base = randomBytes(8 * B, 9);
    expect((await write('parent', 0, base)).status).toBe(200);
    const snapshot = await call('/v1/volumes/parent/snapshots', { method: 'POST', key, ...json({ name: 'gold' }) });
    expect(snapshot.status).toBe(201);
    const from = { volume: 'parent', snapshot: 'gold' };
    const cloned = await call('/v1/volumes', { method: 'POST', key, ...json({ name: 'child', sizeBytes: 32 * B, from }) });
    expect(cloned.status).toBe(201);
    expect(await cloned.json()).toMatchObject({ name: 'child', sizeBytes: 32 * B, origin: { ...from, sizeBytes: 16 * B } });
    // The parent moves on; the child writes unaligned over inherited blocks and past the snapshot's end.
    expect((await write('parent', 0, randomBytes(8 * B, 10))).status).toBe(200);
    const childEpoch = ((await (await attach('child', 'integration')).json()) as { epoch: number }).epoch;
    epochs.set('child', childEpoch);
    const changed = randomBytes(B, 11);
    expect((await write('child', 3 * B + 10, changed)).status).toBe(200);
    expect((await write('child', 20 * B, changed)).status).toBe(200);
    const expected = new Uint8Array(32 * B);
    expected.set(base);
    expected.set(changed, 3 * B + 10);
    expected.set(changed, 20 * B);
    expect(same(await bytesOf(await read('child', `bytes=0-${32 * B - 1}`)), expected)).toBe(true);
    const described = (await (await call('/v1/volumes/child', { key })).json()) as { allocatedBytes: number };
    expect(described.allocatedBytes).toBe(3 * B);
    // The snapshot names its clone and is not deleted, nor its volume, while the clone lives.
    expect(await (await call('/v1/volumes/parent/snapshots', { key })).json()).toMatchObject({
      snapshots: [{ name: 'gold', clones: ['child'] }],
    });
    for (const path of ['/v1/volumes/parent/snapshots/gold', '/v1/volumes/parent']) {
      expect(await errorOf(await call(path, { method: 'DELETE', key }))).toMatchObject({ status: 409, code: 'volume.hasClones' });
    }
    // Bad clones: smaller than the snapshot, of an unknown snapshot, from another namespace's volume.
    const bad = async (body: unknown, as = key) => errorOf(await call('/v1/volumes', { method: 'POST', key: as, ...json(body) }));
    expect(await bad({ name: 'small', sizeBytes: 8 * B, from })).toMatchObject({ status: 400, code: 'volume.sizeInvalid' });
    expect(await bad({ name: 'nosnap', from: { volume: 'parent', snapshot: 'nope' } })).toMatchObject({
      status: 404,
      code: 'volume.snapshotNotFound',
    });
    expect(await bad({ name: 'stolen', from }, otherKey)).toMatchObject({ status: 404, code: 'volume.notFound' });
    expect(await bad({ name: 'sizeless' })).toMatchObject({ status: 400, code: 'volume.sizeInvalid' });
    // Deleted, the clone frees the snapshot.
    for (let status = 202; status === 202;) status = (await call('/v1/volumes/child', { method: 'DELETE', key })).status;
    expect((await call('/v1/volumes/parent/snapshots/gold', { method: 'DELETE', key })).status).toBe(200);
  });
});
