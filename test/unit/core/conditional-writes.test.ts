// KvService under If-Match / If-None-Match (RFC 9110 §13.1.1–2, §13.2.2) on in-memory ports: every
// case answers with its status and a failed condition changes nothing.
import fc from 'fast-check';
import type { Conditions } from '../../../lambdas/core/conditions';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { sha256Hex } from '../../../lambdas/core/digest';
import { uploadKey } from '../../../lambdas/core/kv-uploads';
import { tokenOf } from '../../../lambdas/core/ring';
import { limits } from '../../../schemas/topology';
import { ManualClock, MemoryBlobStore, MemoryShardStore, memoryReplication, staticRing, memoryKv } from '../../support/memory-ports';
import { text } from '../../support/bytes';

const ring = staticRing(4);

function setup() {
  const shards = new MemoryShardStore();
  const blobs = new MemoryBlobStore();
  const clock = new ManualClock();
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({ shards, blobs, ring, clock, limits, replication, health });
  const writes = jest.spyOn(shards, 'write');
  /** What the owner holds for the key (a tombstone or an expired item included). */
  const stored = async (key: string) => {
    const [owner] = (await ring.current()).replicasOf(tokenOf('ns', key));
    return shards.peek(owner!.table, 'ns', key);
  };
  return { kv, shards, blobs, clock, writes, stored };
}

type State = 'absent' | 'live' | 'deleted' | 'expired';

/** A key in one of the states a condition can meet, at `version` (the tombstone's, or the expired item's). */
async function keyIn(fixture: ReturnType<typeof setup>, key: string, state: State, version: number) {
  const { kv, clock } = fixture;
  if (state === 'absent') return;
  if (state === 'deleted' && version < 2) throw new Error('a tombstone follows at least one write: version 2 or more');
  for (let v = 1; v < version; v += 1) await kv.put('ns', key, { value: text(`v${v}`), contentType: 'text/plain' });
  if (state === 'live') await kv.put('ns', key, { value: text(`v${version}`), contentType: 'text/plain' });
  if (state === 'deleted') await kv.delete('ns', key, {});
  if (state === 'expired') {
    await kv.put('ns', key, { value: text(`v${version}`), contentType: 'text/plain', ttlSeconds: 5 });
    clock.advanceSeconds(5);
  }
}

async function outcomeOf(action: Promise<{ version: number }>): Promise<string> {
  try {
    return `written v${(await action).version}`;
  } catch (error) {
    return isRingstoreError(error) ? error.code : `unexpected ${String(error)}`;
  }
}

const put = (fixture: ReturnType<typeof setup>, key: string, conditions: Conditions) =>
  outcomeOf(fixture.kv.put('ns', key, { value: text('new'), contentType: 'text/plain', ...conditions }));
const del = (fixture: ReturnType<typeof setup>, key: string, conditions: Conditions) => outcomeOf(fixture.kv.delete('ns', key, conditions));

describe('PUT and DELETE under conditions', () => {
  // [what, state, version, conditions, PUT outcome, DELETE outcome]
  const cases: Array<[string, State, number, Conditions, string, string]> = [
    ['If-Match: * on a live key', 'live', 3, { ifMatch: '*' }, 'written v4', 'written v4'],
    ['If-Match: * on an absent key', 'absent', 0, { ifMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: * on a deleted key', 'deleted', 3, { ifMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: * on an expired key', 'expired', 3, { ifMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: "3", "5" at 3', 'live', 3, { ifMatch: [3, 5] }, 'written v4', 'written v4'],
    ['If-Match: "3", "5" at 4', 'live', 4, { ifMatch: [3, 5] }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: "3" on a key deleted at 3', 'deleted', 3, { ifMatch: [3] }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: "3" on a key that expired at 3', 'expired', 3, { ifMatch: [3] }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match naming no version (W/"3", "nope-0")', 'live', 3, { ifMatch: [] }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-None-Match: * on an absent key', 'absent', 0, { ifNoneMatch: '*' }, 'written v1', 'kv.notFound'],
    ['If-None-Match: * on a deleted key', 'deleted', 3, { ifNoneMatch: '*' }, 'written v4', 'kv.notFound'],
    ['If-None-Match: * on an expired key', 'expired', 3, { ifNoneMatch: '*' }, 'written v4', 'kv.notFound'],
    ['If-None-Match: * on a live key', 'live', 3, { ifNoneMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-None-Match: "3" (or W/"3") at 3', 'live', 3, { ifNoneMatch: [3] }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-None-Match: "3", "4" at 5', 'live', 5, { ifNoneMatch: [3, 4] }, 'written v6', 'written v6'],
    ['If-None-Match: "3" on an absent key', 'absent', 0, { ifNoneMatch: [3] }, 'written v1', 'kv.notFound'],
    ['If-None-Match: "3" on a key deleted at 3', 'deleted', 3, { ifNoneMatch: [3] }, 'written v4', 'kv.notFound'],
    ['If-None-Match: "3" on a key that expired at 3', 'expired', 3, { ifNoneMatch: [3] }, 'written v4', 'kv.notFound'],
    ['If-None-Match naming no version ("abc")', 'live', 3, { ifNoneMatch: [] }, 'written v4', 'written v4'],
    [
      'If-Match: * and If-None-Match: "3" at 3',
      'live',
      3,
      { ifMatch: '*', ifNoneMatch: [3] },
      'kv.preconditionFailed',
      'kv.preconditionFailed',
    ],
    ['If-Match: * and If-None-Match: "3" at 4', 'live', 4, { ifMatch: '*', ifNoneMatch: [3] }, 'written v5', 'written v5'],
    ['If-Match: "3", "4" and If-None-Match: "4" at 3', 'live', 3, { ifMatch: [3, 4], ifNoneMatch: [4] }, 'written v4', 'written v4'],
    [
      'If-Match: "3", "4" and If-None-Match: "4" at 4',
      'live',
      4,
      { ifMatch: [3, 4], ifNoneMatch: [4] },
      'kv.preconditionFailed',
      'kv.preconditionFailed',
    ],
    ['If-Match: * and If-None-Match: *', 'live', 3, { ifMatch: '*', ifNoneMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['If-Match: "3" and If-None-Match: *', 'live', 3, { ifMatch: [3], ifNoneMatch: '*' }, 'kv.preconditionFailed', 'kv.preconditionFailed'],
    ['no condition on an absent key', 'absent', 0, {}, 'written v1', 'kv.notFound'],
  ];

  const rows = cases.map(([what, state, version, conditions, putOutcome, deleteOutcome]) => ({
    what,
    state,
    version,
    conditions,
    putOutcome,
    deleteOutcome,
  }));

  it.each(rows)('$what: PUT answers $putOutcome', async ({ state, version, conditions, putOutcome }) => {
    const fixture = setup();
    await keyIn(fixture, 'k', state, version);
    const before = await fixture.stored('k');
    expect(await put(fixture, 'k', conditions)).toBe(putOutcome);
    if (!putOutcome.startsWith('written')) expect(await fixture.stored('k')).toEqual(before);
  });

  it.each(rows)('$what: DELETE answers $deleteOutcome', async ({ state, version, conditions, deleteOutcome }) => {
    const fixture = setup();
    await keyIn(fixture, 'k', state, version);
    const before = await fixture.stored('k');
    expect(await del(fixture, 'k', conditions)).toBe(deleteOutcome);
    if (!deleteOutcome.startsWith('written')) expect(await fixture.stored('k')).toEqual(before);
  });

  it('refuses conditions no key state satisfies without asking the store', async () => {
    const fixture = setup();
    await keyIn(fixture, 'k', 'live', 2);
    fixture.writes.mockClear();
    for (const conditions of [{ ifMatch: [] }, { ifMatch: '*', ifNoneMatch: '*' }, { ifMatch: [2], ifNoneMatch: [2] }] as Conditions[]) {
      expect(await put(fixture, 'k', conditions)).toBe('kv.preconditionFailed');
      expect(await del(fixture, 'k', conditions)).toBe('kv.preconditionFailed');
    }
    expect(fixture.writes).not.toHaveBeenCalled();
  });

  it('refuses without storing the blob of a large value first', async () => {
    const fixture = setup();
    const big = new Uint8Array(limits.inlineValueBytesMax + 1);
    expect(await outcomeOf(fixture.kv.put('ns', 'big', { value: big, contentType: 'a/b', ifMatch: [] }))).toBe('kv.preconditionFailed');
    expect(fixture.blobs.objects.size).toBe(0);
  });

  it('evaluates If-Match first: its failure is the one reported when both fail', async () => {
    const fixture = setup();
    await keyIn(fixture, 'k', 'live', 5);
    const failure = await fixture.kv
      .put('ns', 'k', { value: text('x'), contentType: 'a/b', ifMatch: [1], ifNoneMatch: [5] })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'kv.preconditionFailed', details: { field: 'if-match' } });
    expect((failure as Error).message).toBe('key k is at version 5; If-Match names "1"');
    const second = await fixture.kv
      .put('ns', 'k', { value: text('x'), contentType: 'a/b', ifMatch: [5], ifNoneMatch: [5, 6] })
      .catch((e: unknown) => e);
    expect(second).toMatchObject({ code: 'kv.preconditionFailed' });
  });

  it('names the header that failed', async () => {
    const fixture = setup();
    await keyIn(fixture, 'k', 'live', 2);
    await expect(fixture.kv.put('ns', 'k', { value: text('x'), contentType: 'a/b', ifNoneMatch: '*' })).rejects.toMatchObject({
      details: { field: 'if-none-match' },
      message: 'key k already exists (version 2)',
    });
    await expect(fixture.kv.delete('ns', 'absent', { ifMatch: '*' })).rejects.toMatchObject({
      details: { field: 'if-match' },
      message: 'key absent does not exist; If-Match: * needs it to exist',
    });
  });

  it(`refuses more than ${limits.entityTagsMax} versions and versions that are not positive integers`, async () => {
    const fixture = setup();
    const many = Array.from({ length: limits.entityTagsMax + 1 }, (_, i) => i + 1);
    expect(await put(fixture, 'k', { ifMatch: many })).toBe('request.invalid');
    expect(await put(fixture, 'k', { ifNoneMatch: many })).toBe('request.invalid');
    expect(await put(fixture, 'k', { ifMatch: [0] })).toBe('request.invalid');
    expect(await put(fixture, 'k', { ifMatch: [1.5] })).toBe('request.invalid');
    // Duplicates count once.
    expect(await put(fixture, 'k', { ifNoneMatch: Array.from({ length: limits.entityTagsMax + 1 }, () => 9) })).toBe('written v1');
  });
});

/** RFC 9110 §13.2.2 step by step, over what a key holds: the outcome every conditional write must have. */
function expected(current: number | undefined, conditions: Conditions, kind: 'put' | 'delete', storedVersion: number): string {
  const { ifMatch, ifNoneMatch } = conditions;
  if (ifMatch !== undefined && !(current !== undefined && (ifMatch === '*' || ifMatch.includes(current)))) return 'kv.preconditionFailed';
  if (ifNoneMatch !== undefined && current !== undefined && (ifNoneMatch === '*' || ifNoneMatch.includes(current)))
    return 'kv.preconditionFailed';
  if (kind === 'delete' && current === undefined) return 'kv.notFound';
  return `written v${storedVersion + 1}`;
}

describe('any conditions on any key state', () => {
  const versionList = fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 4 });
  const condition = fc.option(fc.oneof(fc.constant('*' as const), versionList), { nil: undefined });

  it('answer as RFC 9110 evaluates them, and change nothing unless they hold', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<State>('absent', 'live', 'deleted', 'expired'),
        fc.integer({ min: 2, max: 5 }),
        condition,
        condition,
        fc.constantFrom<'put' | 'delete'>('put', 'delete'),
        async (state, version, ifMatch, ifNoneMatch, kind) => {
          const fixture = setup();
          await keyIn(fixture, 'k', state, version);
          const before = await fixture.stored('k');
          const conditions: Conditions = {
            ...(ifMatch === undefined ? {} : { ifMatch }),
            ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
          };
          const outcome = kind === 'put' ? await put(fixture, 'k', conditions) : await del(fixture, 'k', conditions);
          expect(outcome).toBe(expected(state === 'live' ? version : undefined, conditions, kind, before?.version ?? 0));
          if (!outcome.startsWith('written')) expect(await fixture.stored('k')).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('upload commit under conditions', () => {
  /** An upload whose bytes the client has sent (to the presigned URL). */
  async function uploaded(fixture: ReturnType<typeof setup>, key: string, bytes: Uint8Array) {
    const { uploadId } = await fixture.kv.createUpload('ns', key, { contentType: 'video/mp4' });
    const objectKey = uploadKey('ns', key, uploadId);
    await fixture.blobs.put(objectKey, bytes);
    return { uploadId, objectKey };
  }

  it('commits under If-Match: * only when the key exists, and keeps the upload when refused', async () => {
    const fixture = setup();
    const bytes = text('large enough in spirit');
    const { uploadId, objectKey } = await uploaded(fixture, 'movie', bytes);
    const commit = (conditions: Conditions) =>
      outcomeOf(fixture.kv.commitUpload('ns', 'movie', uploadId, { sha256: sha256Hex(bytes), contentType: 'video/mp4', ...conditions }));
    expect(await commit({ ifMatch: '*' })).toBe('kv.preconditionFailed');
    expect(await commit({ ifMatch: [] })).toBe('kv.preconditionFailed');
    expect(fixture.blobs.objects.has(objectKey)).toBe(true);
    expect(await fixture.stored('movie')).toBeUndefined();
    expect(await commit({ ifNoneMatch: [1] })).toBe('written v1');
    expect(fixture.blobs.objects.has(objectKey)).toBe(false);
  });

  it('answers a missing upload as without conditions, even when they could never hold', async () => {
    const fixture = setup();
    const missing = '00000000-0000-4000-8000-0000000000ff';
    expect(
      await outcomeOf(fixture.kv.commitUpload('ns', 'movie', missing, { sha256: 'a'.repeat(64), contentType: 'video/mp4', ifMatch: [] })),
    ).toBe('kv.uploadNotFound');
  });

  it('leaves no copied blob behind when a large commit fails its condition at the store', async () => {
    const fixture = setup();
    await keyIn(fixture, 'movie', 'live', 1);
    const bytes = new Uint8Array(limits.inlineValueBytesMax + 1).fill(3);
    const { uploadId, objectKey } = await uploaded(fixture, 'movie', bytes);
    const blobsBefore = new Set(fixture.blobs.objects.keys());
    expect(
      await outcomeOf(
        fixture.kv.commitUpload('ns', 'movie', uploadId, { sha256: sha256Hex(bytes), contentType: 'video/mp4', ifNoneMatch: [1] }),
      ),
    ).toBe('kv.preconditionFailed');
    expect(new Set(fixture.blobs.objects.keys())).toEqual(blobsBefore);
    expect(fixture.blobs.objects.has(objectKey)).toBe(true);
  });
});
