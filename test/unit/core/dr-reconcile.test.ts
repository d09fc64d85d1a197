// DR reconciliation in the core (docs/dr.md, "Reconciliation"): the old primary offers back the values it
// holds of lost keys; the promoted region lists them, restores one as a new write or discards it, and never
// applies an offered value by itself. Two in-memory regions, a real promotion between them.
import { keyHashOf, valueObjectKeyOf } from '../../../lambdas/core/dr-messages';
import { BackupWritePermit, PromotionService } from '../../../lambdas/core/dr-promotion';
import { LostKeyReconciler, LostValueOffer, settleLostKey } from '../../../lambdas/core/dr-reconcile';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import type { PendingEntry, ShardStore } from '../../../lambdas/ports';
import { ReconcileBody } from '../../../schemas/api';
import { limits } from '../../../schemas/topology';
import { memoryDrRegions } from '../../support/dr-regions';
import { ManualClock, MemoryDrStateStore, MemoryPromotionLog, weighedByRing } from '../../support/memory-ports';
import { decode, text } from '../../support/bytes';

const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
/** Values over 8 bytes are blobs, and over 16 bytes restored through the upload path: every path with small values. */
const testLimits = { ...limits, inlineValueBytesMax: 8 };
const backupLimits = { ...testLimits, directBodyBytesMax: 16 };
const long = (seed: string) => seed.repeat(24 / seed.length);

/** A key's copy on its owner, read strongly (what the wiring's reader does). */
const ownerCopy = (shards: ShardStore) => (namespace: string, key: string) =>
  shards.get(ring.ownerOf(tokenOf(namespace, key)).table, namespace, key, { consistent: true });

function regions(options: { offerBudgetMs?: number; offerConcurrency?: number; readCostMs?: number } = {}) {
  const clock = new ManualClock();
  const state = new MemoryDrStateStore();
  const log = new MemoryPromotionLog();
  const promoted = async () => (await state.read())?.state === 'promoted';
  const built = memoryDrRegions({
    ring,
    clock,
    limits: testLimits,
    backupLimits,
    promoted,
    writeGuard: new BackupWritePermit({ state, clock, refreshMs: 0 }),
    settleLost: (namespace, key) => settleLostKey({ pending: built.pending, values: built.backupBucket }, namespace, key),
  });
  const {
    ids,
    primaryShards,
    primaryBlobs,
    keys,
    transit,
    shipper,
    primary,
    backupShards,
    backupBucket: bucket,
    pending,
    applier,
    backup,
  } = built;
  const promotion = new PromotionService({
    state,
    pending,
    log,
    clock,
    queue: { depth: async () => ({ waiting: 0, inFlight: 0 }) },
    sleep: async (ms) => void (clock.now += ms),
    limits: { leaseWaitMs: 6_000, drainTimeoutMs: 10_000, valueWaitMs: 1_000, pollMs: 100, lostReportedMax: 1_000, scanPageSize: 3 },
  });
  /** What the old primary uploaded to the backup's bucket (each also fires the value applier, as S3's events do). */
  const offered: string[] = [];
  const offer = new LostValueOffer({
    promotions: log,
    readOwn: async (namespace, key) => {
      clock.now += options.readCostMs ?? 0;
      return ownerCopy(primaryShards)(namespace, key);
    },
    blobs: primaryBlobs,
    backupValues: {
      put: async (objectKey, bytes) => {
        await bucket.put(objectKey, bytes);
        offered.push(objectKey);
      },
    },
    clock,
    limits: { concurrency: options.offerConcurrency ?? 4, timeBudgetMs: options.offerBudgetMs ?? 60_000, failuresReportedMax: 5 },
  });
  const reconciler = new LostKeyReconciler({
    pending,
    values: bucket,
    kv: backup,
    readCurrent: ownerCopy(backupShards),
    promoted,
    clock,
    ids,
    limits: { directBodyBytesMax: backupLimits.directBodyBytesMax, listLimitMax: 100, readConcurrency: 4 },
  });

  return {
    clock,
    keys,
    transit,
    pending,
    bucket,
    state,
    applier,
    primary,
    backup,
    promotion,
    offer,
    offered,
    reconciler,
    primaryShards,
    backupShards,
    async put(key: string, value: string) {
      return primary.put('ns', key, { value: text(value), contentType: 'text/plain' });
    },
    /** Ships the owner's copy of each key (its value goes into transit), and delivers every key message. */
    async ship(...names: string[]) {
      await shipper.shipOwnerChanges(
        ...weighedByRing(
          names.map((key) => {
            const table = ring.ownerOf(tokenOf('ns', key)).table;
            return { sourceTable: table, item: primaryShards.peek(table, 'ns', key)! };
          }),
          ring,
        ),
      );
      const delivered = new Set<string>();
      for (const message of keys.sent.splice(0)) {
        const id = `${message.key}#${message.version}`;
        if (!delivered.has(id)) await applier.receiveKey(message);
        delivered.add(id);
      }
    },
    /** Lets the values of these keys in transit arrive, and fires their object-created events. */
    async arrive(...names: string[]) {
      for (const name of names) {
        const prefix = valueObjectKeyOf({ namespace: 'ns', key: name, version: 0, sha256: '' }).split('/').slice(0, 3).join('/');
        for (let index = transit.inTransit.length - 1; index >= 0; index -= 1) {
          const value = transit.inTransit[index]!;
          if (!value.objectKey.startsWith(prefix)) continue;
          transit.inTransit.splice(index, 1);
          await bucket.put(value.objectKey, value.bytes);
          await applier.receiveValue(value.objectKey);
        }
      }
    },
    /** The disaster, then a promotion: what is still in transit never arrives. */
    async disasterAndPromote(options: { open?: boolean } = {}) {
      transit.inTransit.length = 0;
      const request = { id: 'promotion-1', reason: 'test' };
      await promotion.begin(request);
      const { fencedAtMs } = await promotion.fence(request);
      const drain = await promotion.drain();
      const values = await promotion.awaitValues();
      const lost = await promotion.markLost();
      if (options.open === false) return;
      const { promotedAtMs } = await promotion.open(request);
      await promotion.finish(request, { fencedAtMs, drain, values, lost, promotedAtMs });
    },
    /** What a read in the backup answers: the value, or the refusal's code. */
    async read(key: string): Promise<string> {
      try {
        const result = await backup.get('ns', key, 'strong');
        // Past the direct body limit: the bytes a presigned URL would serve.
        return decode(result.kind === 'value' ? result.value : await bucket.get(result.item.blob!.objectKey));
      } catch (error) {
        if (isRingstoreError(error)) return `!${error.code}`;
        throw error;
      }
    },
    async version(key: string): Promise<number> {
      return (await ownerCopy(backupShards)('ns', key))?.version ?? 0;
    },
  };
}

type Regions = ReturnType<typeof regions>;

/** Keys `a` (small) and `big` (a blob, restored through the upload path): version 1 arrived, version 2 lost. */
async function lostTwo(world: Regions): Promise<void> {
  await world.put('a', 'a1');
  await world.put('big', long('b1'));
  await world.ship('a', 'big');
  await world.arrive('a', 'big');
  await world.put('a', 'a2');
  await world.put('big', long('b2'));
  await world.ship('a', 'big');
  await world.disasterAndPromote();
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined).catch((error: unknown) => error);

describe('the old primary offers lost values back', () => {
  it('uploads its copy at each lost version, where the promoted region looks for it', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    // Act
    const report = await world.offer.offer();
    // Assess
    expect(report).toMatchObject({ promotionId: 'promotion-1', lost: 2, listed: 2, offered: 2, notHeld: 0, failed: 0 });
    expect(report.next).toBeUndefined();
    const entries = await world.pending.scanLost(10);
    expect(world.offered.sort()).toEqual(entries.entries.map((entry) => valueObjectKeyOf(entry)).sort());
  });

  it('counts a key it holds at another version as not held', async () => {
    // Prepare: v2's value is lost; v3 was stored in the primary but never acknowledged (the backup was unreachable)
    const world = regions();
    await world.put('e', 'e1');
    await world.ship('e');
    await world.arrive('e');
    await world.put('e', 'e2');
    await world.ship('e');
    world.keys.down = true;
    const unacknowledged = await failureOf(world.put('e', 'e3'));
    world.keys.down = false;
    await world.disasterAndPromote();
    // Act
    const report = await world.offer.offer();
    // Assess
    expect(isRingstoreError(unacknowledged, 'dr.backupUnreachable')).toBe(true);
    expect(report).toMatchObject({ lost: 1, offered: 0, notHeld: 1 });
    expect(world.offered).toEqual([]);
  });

  it('stops at its time budget and continues from where it stopped', async () => {
    // Prepare: each read costs 10 ms; one key at a time, 15 ms a call
    const world = regions({ offerBudgetMs: 15, offerConcurrency: 1, readCostMs: 10 });
    for (const key of ['k1', 'k2', 'k3', 'k4', 'k5']) await world.put(key, `${key}-lost`);
    await world.ship('k1', 'k2', 'k3', 'k4', 'k5');
    await world.disasterAndPromote();
    // Act
    const calls = [await world.offer.offer()];
    while (calls.at(-1)!.next !== undefined) calls.push(await world.offer.offer({ from: calls.at(-1)!.next! }));
    // Assess
    expect(calls.map(({ from, next, offered }) => ({ from, next, offered }))).toEqual([
      { from: 0, next: 2, offered: 2 },
      { from: 2, next: 4, offered: 2 },
      { from: 4, next: undefined, offered: 1 },
    ]);
    expect(new Set(world.offered).size).toBe(5);
  });

  it('refuses before a completed promotion, and a start past the list', async () => {
    // Prepare
    const world = regions();
    await world.put('a', 'a1');
    await world.ship('a');
    // Act
    const never = await failureOf(world.offer.offer());
    await world.disasterAndPromote();
    const pastEnd = await failureOf(world.offer.offer({ from: 2 }));
    // Assess
    expect(isRingstoreError(never, 'dr.noPromotion')).toBe(true);
    expect(isRingstoreError(pastEnd, 'request.invalid')).toBe(true);
  });
});

describe('the promoted region never applies an offered value by itself', () => {
  it('ignores its object-created event and its sweep; the key stays lost until an admin decides', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    await world.offer.offer();
    // Act
    const outcomes = await Promise.all(world.offered.map((objectKey) => world.applier.receiveValue(objectKey)));
    const swept = await world.applier.retryPending({ olderThanMs: 0, pageSize: 10, pagesMax: 10 });
    // Assess
    expect(outcomes).toEqual(['ignored', 'ignored']);
    expect(swept.applied).toBe(0);
    expect(await world.read('a')).toBe('!dr.lost');
    expect(await world.read('big')).toBe('!dr.lost');
  });
});

describe('listing lost keys', () => {
  it('shows each lost write with its offer and the version held here', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    const before = await world.reconciler.list({ limit: 10 });
    await world.offer.offer();
    // Act
    const after = await world.reconciler.list({ limit: 10 });
    // Assess
    const byKey = (page: typeof after) => Object.fromEntries(page.entries.map((entry) => [entry.key, entry]));
    expect(byKey(before).a).toMatchObject({ version: 2, currentVersion: 1, superseded: false, offer: { needed: true, present: false } });
    expect(byKey(after).a).toMatchObject({ version: 2, size: 2, offer: { needed: true, present: true, size: 2 } });
    expect(byKey(after).big).toMatchObject({ version: 2, size: 24, offer: { present: true, size: 24 }, currentVersion: 1 });
  });

  it('pages with a cursor, and refuses a bad limit', async () => {
    // Prepare
    const world = regions();
    for (const key of ['k1', 'k2', 'k3']) await world.put(key, `${key}-lost`);
    await world.ship('k1', 'k2', 'k3');
    await world.disasterAndPromote();
    // Act
    const first = await world.reconciler.list({ limit: 2 });
    const second = await world.reconciler.list({ limit: 2, cursor: first.cursor! });
    const bad = await failureOf(world.reconciler.list({ limit: 0 }));
    // Assess
    expect([...first.entries, ...second.entries].map((entry) => entry.key).sort()).toEqual(['k1', 'k2', 'k3']);
    expect(second.cursor).toBeUndefined();
    expect(isRingstoreError(bad, 'request.invalid')).toBe(true);
  });
});

describe('restoring a lost key', () => {
  it('writes the offered value as the next version here; the key reads at it and is lost no more', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    await world.offer.offer();
    // Act
    const small = await world.reconciler.restore({ namespace: 'ns', key: 'a', version: 2 });
    const large = await world.reconciler.restore({ namespace: 'ns', key: 'big', version: 2, expectVersion: 1 });
    // Assess
    expect(small).toEqual({ namespace: 'ns', key: 'a', version: 2, action: 'restore', currentVersion: 2 });
    expect(large.currentVersion).toBe(2);
    expect(await world.read('a')).toBe('a2');
    expect(await world.read('big')).toBe(long('b2'));
    expect((await world.pending.scanLost(10)).entries).toEqual([]);
    // The offers are gone with the entries (the large one's bytes live on as the key's blob).
    expect([...world.bucket.objects.keys()].filter((objectKey) => objectKey.startsWith('dr/values/'))).toEqual([]);
  });

  it('refuses without an offer, and with an offer that does not match the lost write', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    // Act
    const missing = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'a', version: 2 }));
    const [entry] = (await world.pending.entriesOf(keyHashOf('ns', 'a'))).filter((e) => e.state === 'lost');
    await world.bucket.put(valueObjectKeyOf(entry!), text('zz'));
    const corrupt = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'a', version: 2 }));
    // Assess
    expect(isRingstoreError(missing, 'dr.noOffer')).toBe(true);
    expect(isRingstoreError(corrupt, 'dr.corruptOffer')).toBe(true);
    expect(await world.version('a')).toBe(1);
    expect(await world.read('a')).toBe('!dr.lost');
  });

  it('refuses in a region not promoted yet', async () => {
    // Prepare: the promotion marked the key lost and has not opened the region
    const world = regions();
    await world.put('a', 'a1');
    await world.ship('a');
    await world.disasterAndPromote({ open: false });
    // Act
    const restore = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'a', version: 1 }));
    const discard = await failureOf(world.reconciler.discard({ namespace: 'ns', key: 'a', version: 1 }));
    // Assess
    expect(isRingstoreError(restore, 'dr.notPromoted')).toBe(true);
    expect(isRingstoreError(discard, 'dr.notPromoted')).toBe(true);
  });

  it('refuses a version that is not lost, an older lost version of the key, and a wrong expected version', async () => {
    // Prepare: `d` lost at versions 2 and 3
    const world = regions();
    await world.put('d', 'd1');
    await world.ship('d');
    await world.arrive('d');
    await world.put('d', 'd2');
    await world.ship('d');
    await world.put('d', 'd3');
    await world.ship('d');
    await world.disasterAndPromote();
    await world.offer.offer();
    // Act
    const notLost = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'd', version: 1 }));
    const otherKey = await failureOf(world.reconciler.discard({ namespace: 'ns', key: 'nope', version: 3 }));
    const older = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'd', version: 2 }));
    const expected = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'd', version: 3, expectVersion: 2 }));
    // Assess
    expect(isRingstoreError(notLost, 'dr.notLost')).toBe(true);
    expect(isRingstoreError(otherKey, 'dr.notLost')).toBe(true);
    expect(isRingstoreError(older, 'dr.cannotRestore')).toBe(true);
    expect(isRingstoreError(expected, 'kv.preconditionFailed')).toBe(true);
    expect(await world.read('d')).toBe('!dr.lost');
  });

  it('refuses to write over a newer write unless told the version it overwrites', async () => {
    // Prepare: the key holds version 2 here (a write that did not settle the lost entry) past the lost version 2
    const world = regions();
    await lostTwo(world);
    await world.offer.offer();
    const table = ring.ownerOf(tokenOf('ns', 'a')).table;
    const newer = { ...world.backupShards.peek(table, 'ns', 'a')!, version: 2, value: text('new'), size: 3, sha256: 'x' };
    await world.backupShards.applyReplica(table, newer, { nowSeconds: 0, listed: true });
    // Act
    const refused = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'a', version: 2 }));
    const readBefore = await world.read('a');
    const forced = await world.reconciler.restore({ namespace: 'ns', key: 'a', version: 2, expectVersion: 2 });
    // Assess
    expect(isRingstoreError(refused, 'kv.preconditionFailed')).toBe(true);
    expect(readBefore).toBe('new');
    expect(forced.currentVersion).toBe(3);
    expect(await world.read('a')).toBe('a2');
  });

  it('restores a lost delete by deleting the key', async () => {
    // Prepare: a lost delete (a transaction's, lost with its partner's value)
    const world = regions();
    await world.put('g', 'g1');
    await world.ship('g');
    await world.arrive('g');
    await world.disasterAndPromote();
    const entry: PendingEntry = {
      namespace: 'ns',
      key: 'g',
      keyHash: keyHashOf('ns', 'g'),
      version: 2,
      txid: 'tx-1',
      writtenAtMs: 1,
      receivedAtMs: 1,
      size: 0,
      sha256: '',
      contentType: '',
      deleted: true,
      state: 'lost',
    };
    await world.pending.record(entry);
    // Act
    const [view] = (await world.reconciler.list({ limit: 10 })).entries;
    const outcome = await world.reconciler.restore({ namespace: 'ns', key: 'g', version: 2 });
    // Assess
    expect(view).toMatchObject({ key: 'g', deleted: true, offer: { needed: false, present: false }, txid: 'tx-1' });
    expect(outcome.currentVersion).toBe(2);
    expect(await world.read('g')).toBe('!kv.notFound');
  });
});

describe('a write whose notice was lost (its version never reached the backup)', () => {
  it('is listed at version 0, possibly never acknowledged; offered back by its write id and restored', async () => {
    // Prepare: 'a' written and applied; its next write acknowledged, its notice delivered, never shipped
    const world = regions();
    await world.put('a', 'one');
    await world.ship('a');
    await world.arrive('a');
    await world.put('a', long('two'));
    await world.applier.receive(world.keys.notices.at(-1)!);
    await world.disasterAndPromote();
    // Act
    const report = await world.promotion.latest();
    const offered = await world.offer.offer();
    const [listed] = (await world.reconciler.list({ limit: 10 })).entries;
    const refusedRead = await world.read('a');
    const outcome = await world.reconciler.restore({ namespace: 'ns', key: 'a', version: 0 });
    // Assess
    expect(report?.lost).toMatchObject({
      count: 1,
      possiblyNeverAcknowledged: 1,
      keys: [{ key: 'a', version: 0, possiblyNeverAcknowledged: true }],
    });
    expect(offered).toMatchObject({ offered: 1, notHeld: 0 });
    expect(listed).toMatchObject({
      key: 'a',
      version: 0,
      possiblyNeverAcknowledged: true,
      offer: { needed: true, present: true },
      currentVersion: 1,
    });
    expect(refusedRead).toBe('!dr.lost');
    expect(outcome).toMatchObject({ version: 0, action: 'restore', currentVersion: 2 });
    expect(await world.read('a')).toBe(long('two'));
  });

  it('is not offered by a primary whose copy is another write, and is discarded by version 0', async () => {
    // Prepare: the noticed write failed at the owner after its notice, and the withdrawal never came
    const world = regions();
    await world.put('a', 'one');
    await world.ship('a');
    await world.arrive('a');
    await world.primary.put('ns', 'a', { value: text('never'), contentType: 'text/plain', ifMatch: [7] }).catch(() => undefined);
    const announced = world.keys.notices.filter((notice) => notice.notice === 'announced' && notice.key === 'a').at(-1);
    await world.applier.receive(announced!);
    await world.disasterAndPromote();
    // Act
    const offered = await world.offer.offer();
    const discarded = await world.reconciler.discard({ namespace: 'ns', key: 'a', version: 0 });
    // Assess
    expect(announced).toBeDefined();
    expect(offered).toMatchObject({ offered: 0, notHeld: 1 });
    expect(discarded).toMatchObject({ version: 0, action: 'discard', currentVersion: 1 });
    expect(await world.read('a')).toBe('one');
  });
});

describe('discarding a lost key', () => {
  it('serves the key at what this region holds, and forgets the offer', async () => {
    // Prepare
    const world = regions();
    await lostTwo(world);
    await world.offer.offer();
    // Act
    const outcome = await world.reconciler.discard({ namespace: 'ns', key: 'a', version: 2 });
    const again = await failureOf(world.reconciler.discard({ namespace: 'ns', key: 'a', version: 2 }));
    // Assess
    expect(outcome).toEqual({ namespace: 'ns', key: 'a', version: 2, action: 'discard', currentVersion: 1 });
    expect(isRingstoreError(again, 'dr.notLost')).toBe(true);
    expect(await world.read('a')).toBe('a1');
    expect(world.offered.filter((objectKey) => world.bucket.objects.has(objectKey))).toHaveLength(1);
  });
});

describe('a write of a lost key in the promoted region', () => {
  it('settles it whatever the lost version: the key reads at the write, and a restore of the lost write is refused', async () => {
    // Prepare: `d` holds version 1 here and was lost at versions 2 and 3; its write here takes version 2
    const world = regions();
    await world.put('d', 'd1');
    await world.ship('d');
    await world.arrive('d');
    await world.put('d', 'd2');
    await world.put('d', 'd3');
    await world.ship('d');
    await world.disasterAndPromote();
    await world.offer.offer();
    // Act
    const ack = await world.backup.put('ns', 'd', { value: text('here'), contentType: 'text/plain' });
    const restore = await failureOf(world.reconciler.restore({ namespace: 'ns', key: 'd', version: 3 }));
    // Assess
    expect(ack.version).toBe(2);
    expect(await world.read('d')).toBe('here');
    expect(isRingstoreError(restore, 'dr.notLost')).toBe(true);
    expect((await world.reconciler.list({ limit: 10 })).entries).toEqual([]);
    expect(world.offered.filter((objectKey) => world.bucket.objects.has(objectKey))).toEqual([]);
  });
});

describe('the reconcile request', () => {
  it('refuses bad input with a 400 naming the field', () => {
    const parse = (body: unknown) => ReconcileBody.safeParse(body);
    expect(parse({ namespace: 'ns', key: 'a', version: 2, action: 'restore', expectVersion: 1 }).success).toBe(true);
    expect(parse({ namespace: 'ns', key: 'a', version: -1, action: 'restore' }).success).toBe(false);
    expect(parse({ namespace: 'ns', key: '', version: 2, action: 'discard' }).success).toBe(false);
    expect(parse({ namespace: 'n#s', key: 'a', version: 2, action: 'discard' }).success).toBe(false);
    expect(parse({ namespace: 'ns', key: 'a', version: 2, action: 'apply' }).success).toBe(false);
    expect(parse({ namespace: 'ns', key: 'a', version: 2, action: 'discard', expectVersion: 1 }).error?.issues[0]?.path).toEqual([
      'expectVersion',
    ]);
  });
});
