// Cross-region DR in the core (docs/dr.md): the shipper, the backup's appliers (ordering, duplicates,
// values before keys, values that never come, bad values) and the read gate, on in-memory regions.
import fc from 'fast-check';
import { InitialSync, startInitialSync } from '../../../lambdas/core/dr-initial-sync';
import { deduplicationIdOf, keyHashOf, parseValueObjectKey, valueObjectKeyOf } from '../../../lambdas/core/dr-messages';
import { PendingGate, gateVerdict } from '../../../lambdas/core/dr-pending-gate';
import { DrShipper } from '../../../lambdas/core/dr-shipper';
import { NoticeSettler } from '../../../lambdas/core/dr-notice-settler';
import { BackupWritePermit } from '../../../lambdas/core/dr-promotion';
import { drTxnHooks } from '../../../lambdas/core/dr-hooks';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { sha256Hex } from '../../../lambdas/core/digest';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import { TransactionService } from '../../../lambdas/core/transactions';
import type { TxnOp } from '../../../lambdas/core/txn-plan';
import type { OwnerChange } from '../../../lambdas/core/replication';
import type {
  BlobStore,
  DrKeyMessage,
  DrMetrics,
  DrWriteNotice,
  DrQueueMessage,
  DrMode,
  DrSyncState,
  DrSyncStateStore,
  PendingEntry,
} from '../../../lambdas/ports';
import { limits } from '../../../schemas/topology';
import { memoryDrRegions } from '../../support/dr-regions';
import {
  CountingIds,
  ManualClock,
  MemoryBlobStore,
  MemoryDrStateStore,
  MemoryKeyChannel,
  MemoryPendingStore,
  MemoryTxnRecords,
  testTxnLimits,
  ScriptedFaults,
  fixedRing,
  memoryReplication,
  weighedByRing,
} from '../../support/memory-ports';
import { decode, text } from '../../support/bytes';

const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
/** Values over 8 bytes are "large" here (kept as blobs), so both paths run without megabytes of test data. */
const testLimits = { ...limits, inlineValueBytesMax: 8 };
const ownerOf = (key: string) => ring.ownerOf(tokenOf('ns', key)).table;

function twoRegions(options: { drMode?: DrMode } = {}) {
  const faults = new ScriptedFaults();
  /** Whether the backup has been promoted (what its DR state says). */
  const region = { promoted: false };
  /** What the backup's sweeps reported of the pending table (its DrMetrics). */
  const pendingObserved: Array<Parameters<DrMetrics['pendingObserved']>[0]> = [];
  const metrics: DrMetrics = {
    keyReceived: () => undefined,
    valueApplied: () => undefined,
    valueCorrupt: () => undefined,
    keysLost: () => undefined,
    keySyncSent: () => undefined,
    pendingObserved: (observed) => void pendingObserved.push({ ...observed }),
  };
  const clock = new ManualClock();
  const regions = memoryDrRegions({
    clock,
    ring,
    limits: testLimits,
    promoted: async () => region.promoted,
    writeGuard: new BackupWritePermit({ state: new MemoryDrStateStore(), clock, refreshMs: 1_000 }),
    faults,
    metrics,
  });
  const { keys, transit, backupBucket, applier, primary, backup, primaryShards } = regions;

  /** What every acknowledged write was: the content of each version, per key. */
  const acked = new Map<string, Map<number, string | undefined>>();
  const drMode = options.drMode ?? 'key-sync';
  return {
    ...regions,
    region,
    faults,
    pendingObserved,
    acked,
    async put(key: string, value: string) {
      const ack = await primary.put('ns', key, { value: text(value), contentType: 'text/plain', drMode });
      acked.set(key, (acked.get(key) ?? new Map<number, string | undefined>()).set(ack.version, value));
      return ack;
    },
    async remove(key: string) {
      const ack = await primary.delete('ns', key, { drMode });
      acked.set(key, (acked.get(key) ?? new Map<number, string | undefined>()).set(ack.version, undefined));
      return ack;
    },
    /** The key message of one version, as the stream shipped it (a shipment sent again is one in the queue). */
    message(key: string, version: number): DrKeyMessage {
      const found = keys.sent.find((message) => message.key === key && message.version === version);
      if (!found) throw new Error(`no key message of ${key} v${version}`);
      return found;
    },
    /** The owner's current copy of `key`, as its stream would carry it now. */
    ownerChange(key: string): OwnerChange {
      const table = ownerOf(key);
      return { sourceTable: table, item: primaryShards.peek(table, 'ns', key)! };
    },
    /** Lets a value in transit arrive in the backup's bucket, then fires its object-created event. */
    async arrive(index: number) {
      const [value] = transit.inTransit.splice(index, 1);
      await backupBucket.put(value!.objectKey, value!.bytes);
      return applier.receiveValue(value!.objectKey);
    },
    /** What a backup read answers: the value, absent, or the refusal's code. */
    async readBackup(key: string): Promise<string> {
      try {
        const result = await backup.get('ns', key, 'eventual');
        return result.kind === 'value' ? decode(result.value) : `redirect ${result.url}`;
      } catch (error) {
        if (isRingstoreError(error)) return `!${error.code}`;
        throw error;
      }
    },
  };
}

type Regions = ReturnType<typeof twoRegions>;
type DeliveryStep = { kind: 'message'; index: number } | { kind: 'value'; index: number } | { kind: 'duplicate'; index: number };

/**
 * Delivers the messages queued so far (write notices and their withdrawals, the stream's key messages; one
 * copy of each, as the queue's deduplication keeps), the values in transit and duplicated messages, in the
 * interleaving `choices` picks, whatever their order in the queue; `afterEach` runs after every delivery
 * (with the message, or none for a value). Returns the messages left undelivered.
 */
async function deliverInterleaved(
  regions: Regions,
  choices: readonly number[],
  afterEach: (message?: DrQueueMessage) => Promise<void>,
): Promise<DrQueueMessage[]> {
  const messages = [...new Map(regions.keys.queued.map((m) => [deduplicationIdOf(m), m])).values()];
  const undelivered = [...messages];
  for (const choice of choices) {
    const steps: DeliveryStep[] = [
      ...undelivered.map((_, index) => ({ kind: 'message' as const, index })),
      ...regions.transit.inTransit.map((_, index) => ({ kind: 'value' as const, index })),
      ...messages.map((_, index) => ({ kind: 'duplicate' as const, index })),
    ];
    if (steps.length === 0) break;
    const step = steps[choice % steps.length]!;
    if (step.kind === 'value') {
      await regions.arrive(step.index);
      await afterEach();
      continue;
    }
    const [message] = step.kind === 'message' ? undelivered.splice(step.index, 1) : [messages[step.index]!];
    await regions.applier.receive(message!);
    await afterEach(message);
  }
  return undelivered;
}

/** A disaster: the promotion drains every queued message; a share of the values in transit arrives, the rest are lost. */
async function disaster(regions: Regions, undelivered: readonly DrQueueMessage[], keepShare: number): Promise<void> {
  for (const message of undelivered) await regions.applier.receive(message);
  const arriving = Math.floor(regions.transit.inTransit.length * keepShare);
  for (let index = 0; index < arriving; index += 1) await regions.arrive(0);
  regions.pending.markAllLost();
}

/** After a disaster: every key is at its latest acknowledged version, or refused as lost. */
async function expectLatestOrLost(regions: Regions, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    const versions = [...(regions.acked.get(key)?.keys() ?? [])];
    const latest = versions.length ? Math.max(...versions) : 0;
    const answer = await regions.readBackup(key);
    if (answer === '!dr.lost') continue;
    const expected = latest === 0 ? undefined : regions.acked.get(key)?.get(latest);
    expect(answer).toBe(expected === undefined ? '!kv.notFound' : expected);
  }
}

describe('value objects and key hashes', () => {
  it('name the key and version, and parse back', () => {
    // Prepare
    const message = { namespace: 'ns', key: 'users/42', version: 7, sha256: 'ab'.repeat(32) };
    // Act
    const objectKey = valueObjectKeyOf(message);
    // Assess
    expect(parseValueObjectKey(objectKey)).toEqual({ keyHash: keyHashOf('ns', 'users/42'), version: 7, shaPrefix: 'ab'.repeat(8) });
    expect(parseValueObjectKey('blobs/ns/whatever')).toBeUndefined();
    expect(keyHashOf('ns', 'a')).not.toBe(keyHashOf('nt', 'a'));
  });
});

describe('the primary', () => {
  it("acknowledges a key-sync write once its notice is in the queue; the stream's key message carries its write id", async () => {
    // Prepare
    const regions = twoRegions();
    // Act
    const ack = await regions.put('a', 'one');
    const onAck = [...regions.keys.queued];
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    // Assess: the notice went beside the owner write, the version follows from the stream
    expect(onAck).toEqual([expect.objectContaining({ notice: 'announced', namespace: 'ns', key: 'a' })]);
    const [notice] = regions.keys.notices;
    expect(regions.primaryShards.peek(ownerOf('a'), 'ns', 'a')?.writeId).toBe(notice!.writeId);
    expect(regions.message('a', ack.version)).toMatchObject({ writeId: notice!.writeId, size: 3, sha256: sha256Hex('one') });
  });

  it('withdraws the notice of a write whose owner write failed, after the notice', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    // Act: a write whose precondition fails at the owner
    const failure = await regions.primary
      .put('ns', 'a', { value: text('two'), contentType: 'text/plain', drMode: 'key-sync', ifMatch: [7] })
      .catch((error: unknown) => error);
    // Assess
    expect(isRingstoreError(failure, 'kv.preconditionFailed')).toBe(true);
    const [, announced, withdrawn] = regions.keys.queued;
    expect(announced).toMatchObject({ notice: 'announced', key: 'a' });
    const { content: _content, ...identity } = announced as DrWriteNotice;
    expect(withdrawn).toEqual({ ...identity, notice: 'withdrawn' });
  });

  it('does not acknowledge a key-sync write the backup could not be told of (and says it is stored)', async () => {
    // Prepare
    const regions = twoRegions();
    regions.keys.down = true;
    // Act
    const failure = await regions.put('a', 'one').catch((error: unknown) => error);
    // Assess
    expect(isRingstoreError(failure, 'dr.backupUnreachable')).toBe(true);
    expect((failure as { retryable: boolean }).retryable).toBe(true);
    expect(regions.primaryShards.peek(ownerOf('a'), 'ns', 'a')?.version).toBe(1);
  });

  it('acknowledges an async write without a key message; the stream ships it', async () => {
    // Prepare
    const regions = twoRegions({ drMode: 'async' });
    // Act
    await regions.put('a', 'one');
    const sentOnAck = regions.keys.sent.length;
    const shipped = await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    // Assess
    expect(sentOnAck).toBe(0);
    expect(shipped).toMatchObject({ shipped: 1, ignored: 0 });
    expect(regions.keys.sent).toHaveLength(1);
    expect(regions.transit.inTransit.map((value) => decode(value.bytes))).toEqual(['one']);
  });

  it('ships the newest owner version of each key, keys before values, and ignores replica copies', async () => {
    // Prepare
    const regions = twoRegions({ drMode: 'async' });
    await regions.put('a', 'one');
    const first = regions.ownerChange('a');
    await regions.put('a', 'two');
    const second = regions.ownerChange('a');
    const replicaTable = ring.replicasOf(tokenOf('ns', 'a'))[1]!.table;
    const replicaCopy = { sourceTable: replicaTable, item: second.item };
    const order: string[] = [];
    const keys = { send: async (messages: readonly DrKeyMessage[]) => void order.push(...messages.map((m) => `key ${m.version}`)) };
    const values = { put: async (objectKey: string) => void order.push(`value ${parseValueObjectKey(objectKey)?.version}`) };
    const shipper = new DrShipper({
      keys,
      backupValues: values as unknown as BlobStore,
      blobs: new MemoryBlobStore(),
      limits: { shipConcurrency: 2 },
    });
    // Act
    const result = await shipper.shipOwnerChanges(...weighedByRing([first, replicaCopy, second], ring));
    // Assess
    expect(order).toEqual(['key 2', 'value 2']);
    expect(result).toMatchObject({ shipped: 1, ignored: 2 });
  });

  it('ships a large value from the blob bucket, and skips one a newer write already replaced', async () => {
    // Prepare
    const regions = twoRegions({ drMode: 'async' });
    await regions.put('big', 'a large value');
    const large = regions.ownerChange('big');
    await regions.put('big', 'another large one');
    // Act: the stream carries both versions, one batch each
    const old = await regions.shipper.shipOwnerChanges(...weighedByRing([large], ring));
    const current = await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('big')], ring));
    // Assess
    expect(old).toMatchObject({ shipped: 0, superseded: 1 });
    expect(current).toMatchObject({ shipped: 1 });
    expect(regions.transit.inTransit.map((value) => decode(value.bytes))).toEqual(['another large one']);
  });

  it('sends each value before its key message in the key-and-value-together baseline', async () => {
    // Prepare
    const regions = twoRegions({ drMode: 'async' });
    await regions.put('a', 'one');
    const order: string[] = [];
    const shipper = new DrShipper({
      keys: { send: async () => void order.push('key') },
      backupValues: { put: async () => void order.push('value') } as unknown as BlobStore,
      blobs: new MemoryBlobStore(),
      limits: { shipConcurrency: 1 },
      order: 'together',
    });
    // Act
    await shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    // Assess
    expect(order).toEqual(['value', 'key']);
  });

  it('reports the first change to retry when a value cannot leave', async () => {
    // Prepare
    const regions = twoRegions({ drMode: 'async' });
    await regions.put('a', 'one');
    await regions.put('b', 'two');
    const shipper = new DrShipper({
      keys: new MemoryKeyChannel(),
      backupValues: { put: async () => Promise.reject(new Error('link down')) } as unknown as BlobStore,
      blobs: new MemoryBlobStore(),
      limits: { shipConcurrency: 1 },
    });
    // Act
    const result = await shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a'), regions.ownerChange('b')], ring));
    // Assess
    expect(result.firstFailedIndex).toBe(0);
  });
});

describe('the backup', () => {
  async function shipped(regions: ReturnType<typeof twoRegions>, key: string) {
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange(key)], ring));
  }

  it('serves a key once its value arrives after its key message', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    // Act
    const keyOutcome = await regions.applier.receiveKey(regions.message('a', 1));
    const whilePending = await regions.readBackup('a');
    const valueOutcome = await regions.arrive(0);
    // Assess
    expect(keyOutcome).toBe('pending');
    expect(whilePending).toBe('!replication.pending');
    expect(valueOutcome).toBe('applied');
    expect(await regions.readBackup('a')).toBe('one');
    expect(regions.pending.all()).toEqual([]);
    // The inline value now lives in the items; its object is gone.
    expect(regions.backupBucket.objects.size).toBe(0);
  });

  it('applies a value that arrives before its key message when the message comes', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    // Act
    const valueOutcome = await regions.arrive(0);
    const before = await regions.readBackup('a');
    const keyOutcome = await regions.applier.receiveKey(regions.message('a', 1));
    // Assess
    expect(valueOutcome).toBe('awaitingKey');
    // Unknown to the backup yet: absent, which is what it knows (a key-sync write's message is in the queue).
    expect(before).toBe('!kv.notFound');
    expect(keyOutcome).toBe('applied');
    expect(await regions.readBackup('a')).toBe('one');
  });

  it('keeps a large value as the blob of its items', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('big', 'a large value');
    await shipped(regions, 'big');
    // Act
    await regions.applier.receiveKey(regions.message('big', 1));
    await regions.arrive(0);
    // Assess
    expect(await regions.readBackup('big')).toBe('a large value');
    const item = regions.backupShards.peek(ownerOf('big'), 'ns', 'big');
    expect(item?.blob?.objectKey).toBe(valueObjectKeyOf(regions.message('big', 1)));
  });

  it('applies a delete from its key message alone, and a late older value never brings the key back', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.remove('a');
    await shipped(regions, 'a');
    // Act: the delete's message, then the older value and its message, late
    const deleteOutcome = await regions.applier.receiveKey(regions.message('a', 2));
    const lateValue = await regions.arrive(0);
    const lateKey = await regions.applier.receiveKey(regions.message('a', 1));
    // Assess
    expect(deleteOutcome).toBe('applied');
    expect(lateValue).toBe('awaitingKey');
    expect(lateKey).toBe('current');
    expect(await regions.readBackup('a')).toBe('!kv.notFound');
    expect(regions.backupShards.peek(ownerOf('a'), 'ns', 'a')).toMatchObject({ version: 2, tombstone: true });
    expect(regions.pending.all()).toEqual([]);
  });

  it('ignores duplicated key messages and values', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    const message = regions.message('a', 1);
    const objectKey = regions.transit.inTransit[0]!.objectKey;
    const bytes = regions.transit.inTransit[0]!.bytes;
    // Act
    await regions.applier.receiveKey(message);
    await regions.arrive(0);
    const again = await regions.applier.receiveKey(message);
    await regions.backupBucket.put(objectKey, bytes);
    const valueAgain = await regions.applier.receiveValue(objectKey);
    // Assess
    expect(again).toBe('current');
    expect(valueAgain).toBe('awaitingKey');
    expect(await regions.readBackup('a')).toBe('one');
    expect(regions.pending.all()).toEqual([]);
  });

  it('refuses a value whose bytes do not match its key message, and keeps the key pending', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 1));
    regions.transit.inTransit[0]!.bytes = text('two');
    // Act
    const outcome = await regions.arrive(0);
    // Assess
    expect(outcome).toBe('corrupt');
    expect(await regions.readBackup('a')).toBe('!replication.pending');
  });

  it('refuses a key lost in a disaster with 410 and the lost version', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 1));
    await regions.arrive(0);
    await regions.put('a', 'two');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 2));
    // Act: the value of version 2 never comes
    regions.pending.markAllLost();
    const failure = await regions.backup.get('ns', 'a', 'eventual').catch((error: unknown) => error);
    // Assess
    expect(isRingstoreError(failure, 'dr.lost')).toBe(true);
    expect((failure as { details: { version: number } }).details.version).toBe(2);
    // A lost entry is never applied by a late value either.
    expect(await regions.arrive(0)).toBe('ignored');
    expect(await regions.readBackup('a')).toBe('!dr.lost');
  });

  it('once promoted, takes no more shipments from the old primary and ignores the entries they left', async () => {
    // Prepare: v1 applied; v2 of a write the old primary never acknowledged arrives while the promotion runs
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 1));
    await regions.arrive(0);
    await regions.put('a', 'unacknowledged');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 2));
    regions.region.promoted = true;
    // Act
    const lateValue = await regions.arrive(0);
    const lateKey = await regions.applier.receiveKey({ ...regions.message('a', 2), version: 3 });
    const read = await regions.readBackup('a');
    const swept = await regions.applier.retryPending({ olderThanMs: 60_000, pageSize: 10, pagesMax: 1 });
    // Assess
    expect(lateValue).toBe('ignored');
    expect(lateKey).toBe('ignored');
    expect(read).toBe('one');
    expect(swept).toMatchObject({ cleared: 1 });
    expect(regions.pending.all()).toEqual([]);
  });

  it('takes no writes before promotion', async () => {
    // Prepare
    const regions = twoRegions();
    // Act
    const put = await regions.backup.put('ns', 'a', { value: text('x'), contentType: 'text/plain' }).catch((error: unknown) => error);
    const removal = await regions.backup.delete('ns', 'a', {}).catch((error: unknown) => error);
    const upload = await regions.backup.createUpload('ns', 'a', { contentType: 'text/plain' }).catch((error: unknown) => error);
    // Assess
    for (const failure of [put, removal, upload]) expect(isRingstoreError(failure, 'dr.backupReadOnly')).toBe(true);
  });

  it('applies a value whose object-created event was lost once the sweep finds it, and only after a while', async () => {
    // Prepare: the key message recorded, the value in the bucket, its event never delivered
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 1));
    const [value] = regions.transit.inTransit.splice(0, 1);
    await regions.backupBucket.put(value!.objectKey, value!.bytes);
    const options = { olderThanMs: 60_000, pageSize: 10, pagesMax: 2 };
    // Act
    const early = await regions.applier.retryPending(options);
    regions.clock.now += 61_000;
    const late = await regions.applier.retryPending(options);
    // Assess
    const seen = { pending: 1, lost: 0, complete: true };
    expect(early).toEqual({ examined: 0, applied: 0, cleared: 0, oldestPendingAgeMs: 0, ...seen });
    expect(late).toEqual({ examined: 1, applied: 1, cleared: 0, oldestPendingAgeMs: 61_000, ...seen });
    expect(regions.pendingObserved).toEqual([
      { pending: 1, lost: 0, oldestPendingAgeMs: 0 },
      { pending: 1, lost: 0, oldestPendingAgeMs: 61_000 },
    ]);
    expect(await regions.readBackup('a')).toBe('one');
  });

  it('a crash after a value is stored but before its entry is cleared leaves the key pending until the retry', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await shipped(regions, 'a');
    await regions.applier.receiveKey(regions.message('a', 1));
    const { objectKey, bytes } = regions.transit.inTransit[0]!;
    regions.faults.crashAt('dr.afterApply');
    // Act
    const crashed = await regions.arrive(0).catch((error: unknown) => error);
    const entriesAfterCrash = regions.pending.all().length;
    await regions.backupBucket.put(objectKey, bytes);
    const retried = await regions.applier.receiveValue(objectKey);
    // Assess
    expect(crashed).toBeInstanceOf(Error);
    expect(entriesAfterCrash).toBe(1);
    expect(retried).toBe('applied');
    expect(await regions.readBackup('a')).toBe('one');
  });
});

describe('write notices in the backup', () => {
  it('hold the key pending from the notice until the key message carrying its write id, which settles it', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    await regions.applier.receiveKey(regions.message('a', 1));
    await regions.arrive(0);
    await regions.put('a', 'two');
    // Act
    const noticed = await regions.applier.receive(regions.keys.notices.at(-1)!);
    const whileAnnounced = await regions.readBackup('a');
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    await regions.applier.receiveKey(regions.message('a', 2));
    const whileValuePending = await regions.readBackup('a');
    await regions.arrive(0);
    // Assess
    expect(noticed).toBe('pending');
    expect(whileAnnounced).toBe('!replication.pending');
    expect(whileValuePending).toBe('!replication.pending');
    expect(await regions.readBackup('a')).toBe('two');
    expect(regions.pending.all()).toEqual([]);
  });

  it('are dropped when withdrawn, whichever order the two arrive in, a late withdrawal leaving the key pending', async () => {
    // Prepare: two failed writes after a delivered one
    const regions = twoRegions();
    await regions.put('a', 'one');
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    for (const message of regions.keys.queued) await regions.applier.receive(message);
    await regions.arrive(0);
    const failed = () =>
      regions.primary
        .put('ns', 'a', { value: text('x'), contentType: 'text/plain', drMode: 'key-sync', ifMatch: [9] })
        .catch(() => 'failed');
    await failed();
    const [announced, withdrawn] = regions.keys.queued.slice(-2);
    // Act
    await regions.applier.receive(announced!);
    const announcedRead = await regions.readBackup('a');
    await regions.applier.receive(withdrawn!);
    const withdrawnRead = await regions.readBackup('a');
    await regions.applier.receive(withdrawn!);
    await regions.applier.receive(announced!);
    const reorderedRead = await regions.readBackup('a');
    // Assess
    expect(announcedRead).toBe('!replication.pending');
    expect(withdrawnRead).toBe('one');
    // Out of order (never in one message group of a FIFO queue), the notice stays: refused, never stale.
    expect(reorderedRead).toBe('!replication.pending');
  });

  it('left by a disaster are refused as lost and reported possibly never acknowledged; a promoted region drops pending ones', async () => {
    // Prepare
    const regions = twoRegions();
    await regions.put('a', 'one');
    await regions.applier.receive(regions.keys.notices.at(-1)!);
    regions.pending.markAllLost();
    regions.region.promoted = true;
    // Act
    const read = await regions.backup.get('ns', 'a', 'eventual').catch((error: unknown) => error);
    // Assess
    expect(isRingstoreError(read, 'dr.lost')).toBe(true);
    expect((read as { details: Record<string, unknown> }).details).toMatchObject({ version: 0, possiblyNeverAcknowledged: true });
  });
});

describe('the primary settling old write notices', () => {
  it("settles a notice its writer left by the key's current version, withdraws one of a key never written, leaves young ones", async () => {
    // Prepare: 'a' written, shipped and applied; then notices whose writers died: one on 'a', one on 'z', one young
    const regions = twoRegions();
    await regions.put('a', 'one');
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a')], ring));
    for (const message of regions.keys.queued) await regions.applier.receive(message);
    await regions.arrive(0);
    const notice = (key: string, writeId: string, writtenAtMs: number) =>
      regions.applier.receive({ notice: 'announced', namespace: 'ns', key, writeId, writtenAtMs });
    await notice('a', 'died-a', regions.clock.now);
    await notice('z', 'died-z', regions.clock.now);
    regions.clock.now += 61_000;
    await notice('a', 'young', regions.clock.now);
    const sentBefore = regions.keys.queued.length;
    const settler = new NoticeSettler({
      backupPending: regions.pending,
      readOwner: async (namespace, key) => regions.primaryShards.peek(ownerOf(key), namespace, key),
      keys: regions.keys,
      clock: regions.clock,
      limits: { settleAfterMs: 60_000, pageSize: 2, pagesMax: 10 },
    });
    // Act
    const report = await settler.settleOld();
    for (const message of regions.keys.queued.slice(sentBefore)) await regions.applier.receive(message);
    // Assess
    expect(report).toEqual({ examined: 2, settled: 1, withdrawn: 1 });
    expect(regions.keys.queued.slice(sentBefore)).toEqual([
      expect.objectContaining({ key: 'a', version: 1, writeId: 'died-a' }),
      expect.objectContaining({ notice: 'withdrawn', key: 'z', writeId: 'died-z' }),
    ]);
    expect(regions.pending.all().map((entry) => entry.writeId)).toEqual(['young']);
    expect(await regions.readBackup('z')).toBe('!kv.notFound');
  });
});

describe('the read gate', () => {
  const entry = (version: number, state: PendingEntry['state'] = 'pending'): PendingEntry => ({
    namespace: 'ns',
    key: 'a',
    keyHash: keyHashOf('ns', 'a'),
    version,
    writtenAtMs: version,
    size: 1,
    sha256: '',
    contentType: 'text/plain',
    deleted: false,
    state,
    receivedAtMs: 0,
  });
  const item = (version: number) => ({
    namespace: 'ns',
    key: 'a',
    version,
    token: 0,
    contentType: 'text/plain',
    size: 1,
    sha256: '',
    tombstone: false,
  });

  it('serves a copy no entry is ahead of', () => {
    expect(gateVerdict([], undefined)).toEqual({ kind: 'serve' });
    expect(gateVerdict([entry(3)], item(3))).toEqual({ kind: 'serve' });
    expect(gateVerdict([entry(2, 'lost')], item(3))).toEqual({ kind: 'serve' });
  });

  it('waits for the newest entry ahead, and refuses when that one is lost', () => {
    expect(gateVerdict([entry(4)], item(3))).toMatchObject({ kind: 'pending', version: 4 });
    expect(gateVerdict([entry(4, 'lost'), entry(5)], item(3))).toMatchObject({ kind: 'pending', version: 5 });
    expect(gateVerdict([entry(4), entry(5, 'lost')], item(3))).toMatchObject({ kind: 'lost', version: 5 });
    expect(gateVerdict([entry(1)], undefined)).toMatchObject({ kind: 'pending', version: 1 });
  });

  it('holds a write notice ahead of any copy and any numbered entry, since its version is not known', () => {
    const notice = (state: PendingEntry['state'] = 'pending'): PendingEntry => ({ ...entry(-5, state), notice: true, writeId: 'w1' });
    expect(gateVerdict([notice()], item(9))).toEqual({ kind: 'pending', writtenAtMs: -5 });
    expect(gateVerdict([notice(), entry(12)], item(9))).toEqual({ kind: 'pending', writtenAtMs: -5 });
    expect(gateVerdict([notice('lost'), entry(12)], item(15))).toEqual({ kind: 'lost', writtenAtMs: -5 });
    expect(gateVerdict([notice()], item(9), { promoted: true })).toEqual({ kind: 'serve' });
  });

  it('waits a bounded time for a pending value, and serves it if it comes meanwhile', async () => {
    // Prepare
    const pending = new MemoryPendingStore();
    const clock = new ManualClock();
    await pending.record(entry(2));
    let copy = item(1);
    const gate = new PendingGate({
      pending,
      clock,
      sleep: async (ms) => {
        clock.now += ms;
        // The value is applied 200 ms into the wait.
        if (clock.now - 1_700_000_000_000 >= 200) {
          copy = item(2);
          await pending.clear(keyHashOf('ns', 'a'), 2);
        }
      },
      limits: { pendingWaitMs: 1_000, pendingPollMs: 50 },
    });
    // Act
    const served = await gate.read('ns', 'a', async () => copy);
    // Assess
    expect(served?.version).toBe(2);
    expect(clock.now - 1_700_000_000_000).toBe(200);
  });
});

describe('zero undetected inconsistencies (property)', () => {
  /**
   * Writes to a few keys (small and large values, deletes), each with its notice beside the owner write: some
   * shipped by the stream right after, some never (the disaster came first), and some owner writes fail after
   * their notice, their withdrawal sometimes lost with the writer. Then every queued message and value is
   * delivered in any interleaving, with duplicates, and some values never arrive. After every delivery, and
   * after a disaster that loses what is still in transit, each backup read answers the newest version the
   * backup knows of (by key message, or by the notice of an acknowledged write), or refuses; never an older one.
   */
  function deliveryProperty(options: { broken: boolean }) {
    const write = fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      value: fc.option(fc.constantFrom('x', 'yy', 'a large value', 'another large value'), { nil: undefined }),
      outcome: fc.constantFrom('shipped', 'shipped', 'notShipped', 'failed', 'failedWithdrawalLost'),
    });
    return fc.asyncProperty(
      fc.array(write, { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.float({ min: 0, max: 1, noNaN: true }),
      async (writes, choices, keepShare) => {
        // Prepare: the writes; the version each acknowledged write's notice announced
        const regions = twoRegions();
        if (options.broken) regions.faults.broken.add('drServeWithoutPendingCheck');
        const announced = new Map<string, { key: string; version: number }>();
        for (const { key, value, outcome } of writes) {
          if (outcome === 'failed' || outcome === 'failedWithdrawalLost') {
            const failure = await regions.primary
              .put('ns', key, { value: text('never'), contentType: 'text/plain', drMode: 'key-sync', ifMatch: [99] })
              .catch((error: unknown) => error);
            expect(isRingstoreError(failure, 'kv.preconditionFailed')).toBe(true);
            if (outcome === 'failedWithdrawalLost') expect(regions.keys.queued.pop()).toMatchObject({ notice: 'withdrawn' });
            continue;
          }
          const history = regions.acked.get(key);
          const live = history !== undefined && [...history.values()].at(-1) !== undefined;
          if (value === undefined && !live) continue;
          const ack = value === undefined ? await regions.remove(key) : await regions.put(key, value);
          const notice = regions.keys.notices.at(-1)!;
          expect(notice).toMatchObject({ notice: 'announced', key });
          announced.set(notice.writeId, { key, version: ack.version });
          if (outcome === 'shipped') await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange(key)], ring));
        }
        const known = new Map<string, number>();
        const check = async () => {
          for (const key of ['a', 'b', 'c']) {
            const answer = await regions.readBackup(key);
            if (answer.startsWith('!') && answer !== '!kv.notFound') continue;
            const held = regions.backupShards.peek(ownerOf(key), 'ns', key);
            const version = held?.version ?? 0;
            expect(version).toBeGreaterThanOrEqual(known.get(key) ?? 0);
            const expected = version === 0 ? undefined : regions.acked.get(key)?.get(version);
            expect(answer).toBe(expected === undefined ? '!kv.notFound' : expected);
          }
        };
        const learn = (key: string, version: number) => known.set(key, Math.max(known.get(key) ?? 0, version));
        // Act: deliver in the chosen interleaving, checking after each message
        const undelivered = await deliverInterleaved(regions, choices, async (message) => {
          if (!message) return;
          if (!('notice' in message)) learn(message.key, message.version);
          else if (message.notice === 'announced' && announced.has(message.writeId))
            learn(message.key, announced.get(message.writeId)!.version);
          await check();
        });
        // The disaster: every acknowledged write's notice was durable in the queue, so the promotion drains them all.
        await disaster(regions, undelivered, keepShare);
        // Assess
        await expectLatestOrLost(regions, ['a', 'b', 'c']);
      },
    );
  }

  it('a backup read is never older than a write the backup knows of, whatever the delivery order', async () => {
    await fc.assert(deliveryProperty({ broken: false }), { numRuns: 150 });
  });

  it('the deliberately broken gate (no pending check) serves stale values, and the property catches it', async () => {
    await expect(fc.assert(deliveryProperty({ broken: true }), { numRuns: 150 })).rejects.toThrow(/Property failed/);
  });
});

/** Two regions whose primary also runs transactions (in process), announced as the txn handler does. */
function transactional(drMode: DrMode = 'key-sync') {
  const regions = twoRegions({ drMode });
  const clock = regions.clock;
  const records = new MemoryTxnRecords();
  const { replication } = memoryReplication(regions.primaryShards, clock);
  const txns = new TransactionService({
    shards: regions.primaryShards,
    records,
    ring: fixedRing(ring),
    clock,
    ids: new CountingIds(),
    replication,
    limits: testTxnLimits,
    hooks: drTxnHooks({ shipper: regions.shipper, clock }),
  });
  const commit = async (ops: TxnOp[]) => {
    const execution = await txns.plan('ns', ops, { consistency: 'eventual' });
    const outcome = await txns.runInProcess(execution);
    await txns.decided(execution, outcome, drMode);
    if (outcome.status === 'committed') {
      for (const { key, version } of outcome.writes) {
        const op = ops.find((candidate) => candidate.key === key);
        const value = op?.op === 'put' ? decode(op.value) : undefined;
        regions.acked.set(key, (regions.acked.get(key) ?? new Map<number, string | undefined>()).set(version, value));
      }
    }
    return outcome;
  };
  /** Ships the owners' current copies of `keys` as their streams would. */
  const ship = (...keys: string[]) =>
    regions.shipper.shipOwnerChanges(
      ...weighedByRing(
        keys.map((key) => regions.ownerChange(key)),
        ring,
      ),
    );
  return { ...regions, txns, commit, ship };
}

/** Two keys owned by one shard (a one-shard transaction commits atomically) and two owned by two. */
const sameShardKeys = (() => {
  const first = 'k0';
  for (let index = 1; ; index += 1) if (ownerOf(`k${index}`) === ownerOf(first)) return [first, `k${index}`] as const;
})();
const twoShardKeys = (() => {
  const first = 'k0';
  for (let index = 1; ; index += 1) if (ownerOf(`k${index}`) !== ownerOf(first)) return [first, `k${index}`] as const;
})();

describe('transactions in a DR primary', () => {
  it('are answered once the backup knows of every write, each message carrying the txid', async () => {
    // Prepare
    const regions = transactional();
    await regions.put('b', 'old');
    // Act
    const outcome = await regions.commit([
      { op: 'put', key: 'a', value: text('one') },
      { op: 'delete', key: 'b' },
    ]);
    // Assess
    expect(outcome.status).toBe('committed');
    if (outcome.status !== 'committed') return;
    const sent = regions.keys.sent.filter((message) => message.txid === outcome.txid);
    expect(sent.map(({ key, version, deleted }) => ({ key, version, deleted })).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'a', version: outcome.writes.find((write) => write.key === 'a')!.version, deleted: false },
      { key: 'b', version: outcome.writes.find((write) => write.key === 'b')!.version, deleted: true },
    ]);
    expect(sent.find((message) => message.key === 'a')?.sha256).toBe(sha256Hex('one'));
  });

  it('reach the backup: the announced keys are pending until the stream ships the values', async () => {
    // Prepare
    const regions = transactional();
    await regions.commit([
      { op: 'put', key: 'a', value: text('one') },
      { op: 'put', key: 'c', value: text('three') },
    ]);
    // Act
    for (const message of regions.keys.sent) await regions.applier.receiveKey(message);
    const whilePending = await regions.readBackup('a');
    await regions.shipper.shipOwnerChanges(...weighedByRing([regions.ownerChange('a'), regions.ownerChange('c')], ring));
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    // Assess
    expect(whilePending).toBe('!replication.pending');
    expect(await regions.readBackup('a')).toBe('one');
    expect(await regions.readBackup('c')).toBe('three');
  });

  it('are not acknowledged when the backup cannot be told: the outcome is unknown to the client', async () => {
    // Prepare
    const regions = transactional();
    regions.keys.down = true;
    // Act
    const failure = await regions.commit([{ op: 'put', key: 'a', value: text('one') }]).catch((error: unknown) => error);
    // Assess
    expect(isRingstoreError(failure, 'txn.outcomeUnknown')).toBe(true);
  });

  it('of an async namespace send nothing on the way', async () => {
    // Prepare
    const regions = transactional('async');
    // Act
    await regions.commit([{ op: 'put', key: 'a', value: text('one') }]);
    // Assess
    expect(regions.keys.sent).toEqual([]);
  });
});

/**
 * A committed transaction writing `values[0]` to one key and `values[1]` to a key of another shard,
 * shipped by their streams; with its key messages.
 */
async function committedPair(regions: ReturnType<typeof transactional>, values: readonly [string, string]) {
  const [a, b] = twoShardKeys;
  const outcome = await regions.commit([
    { op: 'put', key: a, value: text(values[0]) },
    { op: 'put', key: b, value: text(values[1]) },
  ]);
  if (outcome.status !== 'committed') throw new Error(`not committed: ${outcome.status}`);
  await regions.ship(a, b);
  const [first, second] = regions.keys.sent.filter((message) => message.txid === outcome.txid);
  return { a, b, outcome, first: first!, second: second! };
}

describe('transactions in the backup', () => {
  it.each([
    ['one shard', sameShardKeys],
    ['two shards', twoShardKeys],
  ])("the stream ships a transaction's writes with its txid and write count (%s)", async (_name, [first, second]) => {
    // Prepare
    const regions = transactional('async');
    await regions.put(first, 'plain');
    await regions.ship(first);
    // Act
    const outcome = await regions.commit([
      { op: 'put', key: first, value: text('one') },
      { op: 'put', key: second, value: text('two') },
    ]);
    await regions.ship(first, second);
    await regions.put(second, 'later');
    await regions.ship(second);
    // Assess
    if (outcome.status !== 'committed') throw new Error(`not committed: ${outcome.status}`);
    const byKey = (key: string, version: number) => regions.message(key, version);
    const version = (key: string) => outcome.writes.find((write) => write.key === key)!.version;
    expect(byKey(first, version(first))).toMatchObject({ txid: outcome.txid, txnWrites: 2 });
    expect(byKey(second, version(second))).toMatchObject({ txid: outcome.txid, txnWrites: 2 });
    // A plain write over a transaction's version carries no txid.
    expect(byKey(second, version(second) + 1).txid).toBeUndefined();
    expect(byKey(first, 1).txid).toBeUndefined();
  });

  it("applies a transaction's writes only once every one of them is here", async () => {
    // Prepare
    const regions = transactional();
    const [a, b] = twoShardKeys;
    await regions.put(a, 'zero');
    await regions.put('k-gone', 'zero');
    await regions.ship(a, 'k-gone');
    for (const message of regions.keys.sent) await regions.applier.receiveKey(message);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    regions.keys.sent.length = 0;
    const outcome = await regions.commit([
      { op: 'put', key: a, value: text('one') },
      { op: 'put', key: b, value: text('a large value') },
      { op: 'delete', key: 'k-gone' },
      { op: 'put', key: 'k-empty', value: text('') },
    ]);
    if (outcome.status !== 'committed') throw new Error(`not committed: ${outcome.status}`);
    await regions.ship(a, b, 'k-gone', 'k-empty');
    const unit = [a, b, 'k-gone', 'k-empty'];
    const readAll = async () => Promise.all(unit.map((key) => regions.readBackup(key)));
    // Act: every key message, then one value, then the other
    for (const message of [...regions.keys.sent]) await regions.applier.receiveKey(message);
    const readsBefore = await readAll();
    const firstValue = await regions.arrive(0);
    const readsWithOneValue = await readAll();
    const heldWithOneValue = unit.map((key) => regions.backupShards.peek(ownerOf(key), 'ns', key)?.version ?? 0);
    const lastValue = await regions.arrive(0);
    // Assess: nothing of it is applied until the last value, then all of it
    const pending = unit.map(() => '!replication.pending');
    expect(readsBefore).toEqual(pending);
    expect(firstValue).toBe('awaitingTransaction');
    expect(readsWithOneValue).toEqual(pending);
    expect(heldWithOneValue).toEqual([1, 0, 1, 0]);
    expect(lastValue).toBe('applied');
    expect(await readAll()).toEqual(['one', 'a large value', '!kv.notFound', '']);
  });

  it('applies a transaction whose values came before its last key message, in one go', async () => {
    // Prepare
    const regions = transactional();
    const { a, b, first, second } = await committedPair(regions, ['one', 'a large value']);
    // Act: the values first, then the key messages one by one
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    const firstOutcome = await regions.applier.receiveKey(first);
    const afterFirst = [await regions.readBackup(a), await regions.readBackup(b)];
    const secondOutcome = await regions.applier.receiveKey(second);
    // Assess
    expect(firstOutcome).toBe('pending');
    // The backup has not heard of the write to b yet: it serves what it holds (nothing), as for any key.
    expect(afterFirst).toEqual(['!replication.pending', '!kv.notFound']);
    expect(secondOutcome).toBe('applied');
    expect([await regions.readBackup(a), await regions.readBackup(b)]).toEqual(['one', 'a large value']);
    expect(regions.pending.all()).toEqual([]);
    expect(regions.pending.transactions.size).toBe(0);
  });

  it('loses a whole transaction when one of its values never comes, and names its txid', async () => {
    // Prepare
    const regions = transactional();
    const { a, b, outcome } = await committedPair(regions, ['one', 'two']);
    for (const message of [...regions.keys.sent]) await regions.applier.receiveKey(message);
    // Act: one value arrives, the other is lost in the disaster
    await regions.arrive(0);
    regions.pending.markAllLost();
    // Assess
    for (const key of [a, b]) {
      const failure = await regions.backup.get('ns', key, 'eventual').catch((error: unknown) => error);
      expect(isRingstoreError(failure, 'dr.lost')).toBe(true);
      expect((failure as { details?: { txid?: string } }).details?.txid).toBe(outcome.txid);
      expect(regions.backupShards.peek(ownerOf(key), 'ns', key)).toBeUndefined();
    }
  });

  it('a crash between two writes of a transaction leaves the rest pending, and the sweep completes it', async () => {
    // Prepare
    const regions = transactional();
    const { a, b, first, second } = await committedPair(regions, ['one', 'two']);
    await regions.applier.receiveKey(first);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    regions.faults.crashAt('dr.afterTransactionWrite');
    // Act
    const crashed = await regions.applier.receiveKey(second).catch((error: unknown) => error);
    const appliedBeforeSweep = [a, b].filter((key) => regions.backupShards.peek(ownerOf(key), 'ns', key) !== undefined).length;
    const pendingBeforeSweep = regions.pending.all().length;
    regions.clock.now += 120_000;
    const sweep = await regions.applier.retryPending({ olderThanMs: 60_000, pageSize: 10, pagesMax: 2 });
    // Assess
    expect(crashed).toBeInstanceOf(Error);
    expect(appliedBeforeSweep).toBe(1);
    expect(pendingBeforeSweep).toBe(2);
    expect(sweep.applied).toBeGreaterThanOrEqual(1);
    expect([await regions.readBackup(a), await regions.readBackup(b)]).toEqual(['one', 'two']);
    expect(regions.pending.all()).toEqual([]);
  });

  it('a newer plain write of one key goes ahead; the transaction still applies the rest', async () => {
    // Prepare
    const regions = transactional();
    const [a, b] = twoShardKeys;
    const outcome = await regions.commit([
      { op: 'put', key: a, value: text('one') },
      { op: 'put', key: b, value: text('two') },
    ]);
    if (outcome.status !== 'committed') throw new Error(`not committed: ${outcome.status}`);
    const newer = await regions.put(a, 'newer');
    await regions.ship(a, b);
    const messages = [...new Map(regions.keys.sent.map((m) => [`${m.key}#${m.version}`, m])).values()];
    const [plain] = messages.filter((message) => message.version === newer.version && message.key === a);
    // Act: the newer write of a arrives whole first; then the transaction's messages and b's value
    // (its value of a was superseded in the primary: it never leaves)
    await regions.applier.receiveKey(plain!);
    await regions.arrive(regions.transit.inTransit.findIndex((value) => value.objectKey.includes(keyHashOf('ns', a))));
    for (const message of messages.filter((candidate) => candidate !== plain)) await regions.applier.receiveKey(message);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    // Assess
    expect([await regions.readBackup(a), await regions.readBackup(b)]).toEqual(['newer', 'two']);
    expect(regions.pending.all()).toEqual([]);
  });
});

/**
 * A transaction writing a and b (two shards), then a newer plain write of a, all in one stream batch
 * (the transaction's write of a first), shipped: their key messages sent, their values in transit.
 */
async function transactionThenNewerWrite(regions: ReturnType<typeof transactional>) {
  const [a, b] = twoShardKeys;
  const outcome = await regions.commit([
    { op: 'put', key: a, value: text('one') },
    { op: 'put', key: b, value: text('two') },
  ]);
  if (outcome.status !== 'committed') throw new Error(`not committed: ${outcome.status}`);
  const transactionWriteOfA = regions.ownerChange(a);
  await regions.put(a, 'newer');
  await regions.shipper.shipOwnerChanges(...weighedByRing([transactionWriteOfA, regions.ownerChange(a), regions.ownerChange(b)], ring));
  return { a, b, outcome };
}

describe('transactions of an async namespace in the backup', () => {
  it("complete when a newer write of one key replaced the transaction's in the same stream batch", async () => {
    // Prepare
    const regions = transactional('async');
    // Act
    const { a, b, outcome } = await transactionThenNewerWrite(regions);
    const sent = regions.keys.sent.map(({ key, version, txid }) => ({ key, version, txid }));
    for (const message of [...regions.keys.sent]) await regions.applier.receiveKey(message);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    // Assess: the replaced write's key message went too (no value), and the backup applied the rest of it
    expect(sent).toEqual(
      expect.arrayContaining([
        { key: a, version: 1, txid: outcome.txid },
        { key: a, version: 2, txid: undefined },
        { key: b, version: 1, txid: outcome.txid },
      ]),
    );
    expect([await regions.readBackup(a), await regions.readBackup(b)]).toEqual(['newer', 'two']);
    expect(regions.pending.all()).toEqual([]);
  });

  it("complete when the newer write of a key arrives after the transaction's other values", async () => {
    // Prepare
    const regions = transactional('async');
    const { a, b } = await transactionThenNewerWrite(regions);
    const newerOfA = regions.keys.sent.find((message) => message.key === a && message.version === 2)!;
    // Act: everything but the newer write of a, then it
    for (const message of regions.keys.sent.filter((candidate) => candidate !== newerOfA)) await regions.applier.receiveKey(message);
    const valueOfA = regions.transit.inTransit.findIndex((value) => value.objectKey.includes(keyHashOf('ns', a)));
    const [late] = regions.transit.inTransit.splice(valueOfA, 1);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    const beforeNewer = await regions.readBackup(b);
    regions.transit.inTransit.push(late!);
    await regions.applier.receiveKey(newerOfA);
    await regions.arrive(0);
    // Assess: b waited for the transaction's write of a, which the newer write released
    expect(beforeNewer).toBe('!replication.pending');
    expect([await regions.readBackup(a), await regions.readBackup(b)]).toEqual(['newer', 'two']);
    expect(regions.pending.all()).toEqual([]);
  });
});

describe('transactions in a promoted region', () => {
  it('are refused when they touch a key lost in the disaster, until the key is written again', async () => {
    // Prepare: a's second write lost in the disaster; b whole
    const regions = transactional();
    await regions.put('a', 'one');
    await regions.put('b', 'two');
    await regions.ship('a', 'b');
    for (const message of [...regions.keys.sent]) await regions.applier.receiveKey(message);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    await regions.put('a', 'lost');
    await regions.ship('a');
    await regions.applier.receiveKey(regions.message('a', 2));
    regions.pending.markAllLost();
    regions.region.promoted = true;
    const state = new MemoryDrStateStore();
    state.state = { state: 'promoted', epoch: 1, updatedAtMs: regions.clock.now };
    const txns = new TransactionService({
      shards: regions.backupShards,
      records: new MemoryTxnRecords(),
      ring: fixedRing(ring),
      clock: regions.clock,
      ids: new CountingIds(),
      replication: memoryReplication(regions.backupShards, regions.clock).replication,
      limits: testTxnLimits,
      hooks: drTxnHooks({
        writeGuard: new BackupWritePermit({ state, clock: regions.clock, refreshMs: 1_000 }),
        lostKeys: regions.gate,
        clock: regions.clock,
      }),
    });
    // Act
    const reading = await txns.plan('ns', [{ op: 'get', key: 'a' }], { consistency: 'eventual' }).catch((error: unknown) => error);
    const writing = await txns
      .plan(
        'ns',
        [
          { op: 'put', key: 'a', value: text('new') },
          { op: 'get', key: 'b' },
        ],
        { consistency: 'eventual' },
      )
      .catch((error: unknown) => error);
    const untouched = await txns.plan('ns', [{ op: 'get', key: 'b' }], { consistency: 'eventual' });
    // A write in the promoted region past the lost version (how it gets there is reconciliation's concern).
    await regions.backupShards.applyReplica(
      ownerOf('a'),
      { ...regions.backupShards.peek(ownerOf('a'), 'ns', 'a')!, version: 3 },
      { nowSeconds: 0, listed: true },
    );
    const afterRewrite = await txns.plan('ns', [{ op: 'get', key: 'a' }], { consistency: 'eventual' });
    // Assess
    expect(isRingstoreError(reading, 'dr.lost')).toBe(true);
    expect((reading as { details?: { version?: number } }).details?.version).toBe(2);
    expect(isRingstoreError(writing, 'dr.lost')).toBe(true);
    expect(untouched.participants).toHaveLength(1);
    expect(afterRewrite.participants).toHaveLength(1);
  });
});

describe('transactions as a unit in the backup (property)', () => {
  type Op = { kind: 'put'; key: string; value: string } | { kind: 'txn'; writes: Array<{ key: string; value?: string }> };
  const keys = ['a', 'b', 'c', 'd'];

  /**
   * Plain writes and transactions of two or three keys, shipped as the streams would; the key messages
   * and values delivered in any interleaving, then a disaster that loses what is still in transit.
   * Whenever the backup serves a key at a version a transaction wrote, no other write of that
   * transaction is lost or served older: the backup shows a transaction whole or not at all.
   */
  function unitProperty(options: { broken: boolean }) {
    const value = fc.constantFrom('x', 'yy', 'a large value');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), key: fc.constantFrom(...keys), value }),
      fc.record({
        kind: fc.constant('txn' as const),
        writes: fc.uniqueArray(fc.record({ key: fc.constantFrom(...keys), value: fc.option(value, { nil: undefined }) }), {
          minLength: 2,
          maxLength: 3,
          selector: (write) => write.key,
        }),
      }),
    );
    return fc.asyncProperty(
      fc.array(op, { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.float({ min: 0, max: 1, noNaN: true }),
      async (ops, choices, keepShare) => {
        // Prepare
        const regions = transactional();
        if (options.broken) regions.faults.broken.add('drApplyTransactionsPerKey');
        /** The writes of each transaction, by `key#version` of any of them. */
        const unitOf = new Map<string, Array<{ key: string; version: number }>>();
        for (const step of ops) {
          if (step.kind === 'put') {
            await regions.put(step.key, step.value);
            await regions.ship(step.key);
            continue;
          }
          const outcome = await regions.commit(
            step.writes.map(({ key, value: written }) =>
              written === undefined ? { op: 'delete' as const, key } : { op: 'put' as const, key, value: text(written) },
            ),
          );
          if (outcome.status !== 'committed') continue;
          const unit = outcome.writes.map(({ key, version }) => ({ key, version }));
          for (const write of unit) unitOf.set(`${write.key}#${write.version}`, unit);
          await regions.ship(...unit.map((write) => write.key));
        }
        const check = async () => {
          const answers = new Map<string, string>();
          for (const key of keys) answers.set(key, await regions.readBackup(key));
          for (const key of keys) {
            const answer = answers.get(key)!;
            if (answer.startsWith('!') && answer !== '!kv.notFound') continue;
            const version = regions.backupShards.peek(ownerOf(key), 'ns', key)?.version ?? 0;
            for (const other of unitOf.get(`${key}#${version}`) ?? []) {
              if (other.key === key) continue;
              const otherAnswer = answers.get(other.key)!;
              const otherHeld = regions.backupShards.peek(ownerOf(other.key), 'ns', other.key)?.version ?? 0;
              // A lost entry the copy has caught up with refuses nothing.
              const lost =
                otherHeld < other.version &&
                regions.pending.all().some((e) => e.key === other.key && e.version === other.version && e.state === 'lost');
              // Half a transaction: one write served, another of it lost or served older.
              expect({ key, version, other, lost }).toEqual({ key, version, other, lost: false });
              if (!otherAnswer.startsWith('!') || otherAnswer === '!kv.notFound') expect(otherHeld).toBeGreaterThanOrEqual(other.version);
            }
          }
        };
        // Act: deliver in the chosen interleaving, checking after every delivery
        const undelivered = await deliverInterleaved(regions, choices, check);
        await disaster(regions, undelivered, keepShare);
        // Assess
        await check();
        await expectLatestOrLost(regions, keys);
      },
    );
  }

  it('the backup shows a transaction whole or not at all, whatever the delivery order', async () => {
    await fc.assert(unitProperty({ broken: false }), { numRuns: 150 });
  });

  it('applying each write on its own (the broken mode) serves half a transaction, and the property catches it', async () => {
    await expect(fc.assert(unitProperty({ broken: true }), { numRuns: 150 })).rejects.toThrow(/Property failed/);
  });
});

describe('the initial sync', () => {
  class MemorySyncState implements DrSyncStateStore {
    state: DrSyncState | undefined;
    async readSync() {
      return this.state && { ...this.state };
    }
    async saveSync(state: DrSyncState) {
      this.state = { ...state };
    }
  }

  it('ships every key written before DR, a slice of ranges per run, resuming after a failure', async () => {
    // Prepare: keys written by a primary without DR, then a shipper to a new backup
    const regions = twoRegions({ drMode: 'async' });
    for (const key of ['a', 'b', 'c', 'd', 'e']) await regions.put(key, `value of ${key}`);
    await regions.remove('e');
    const state = new MemorySyncState();
    const sync = new InitialSync({
      shipper: regions.shipper,
      shards: regions.primaryShards,
      state,
      clock: regions.clock,
      limits: { rangesPerRun: 20, readConcurrency: 4 },
    });
    await startInitialSync(state, ring, regions.clock);
    // Act: one run fails (the backup unreachable) and ships nothing; the next runs finish
    regions.keys.down = true;
    const failed = await sync.step(ring).catch((error: unknown) => error);
    regions.keys.down = false;
    let progress = await sync.step(ring);
    while (progress?.status === 'running') progress = await sync.step(ring);
    for (const message of regions.keys.sent) await regions.applier.receiveKey(message);
    while (regions.transit.inTransit.length > 0) await regions.arrive(0);
    // Assess
    expect(isRingstoreError(failed, 'dr.backupUnreachable')).toBe(true);
    expect(progress).toMatchObject({ status: 'completed', keys: 5, nextRange: ring.ranges().length });
    for (const key of ['a', 'b', 'c', 'd']) expect(await regions.readBackup(key)).toBe(`value of ${key}`);
    expect(await regions.readBackup('e')).toBe('!kv.notFound');
    expect(regions.pending.all()).toEqual([]);
  });

  it('goes on with a sync already running when started again', async () => {
    // Prepare
    const state = new MemorySyncState();
    const clock = new ManualClock();
    const first = await startInitialSync(state, ring, clock);
    state.state = { ...first, nextRange: 7 };
    // Act
    const again = await startInitialSync(state, ring, clock);
    // Assess
    expect(again.nextRange).toBe(7);
  });
});
