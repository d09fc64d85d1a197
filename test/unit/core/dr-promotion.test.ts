// DR promotion in the core (docs/dr.md, "Promotion"): the primary's lease to acknowledge writes, the
// backup's write permit, and the promotion's steps (fence, drain, wait for values, mark lost, open).
import { BackupWritePermit, PrimaryLease, PromotionService, type PromotionLimits } from '../../../lambdas/core/dr-promotion';
import { keyHashOf } from '../../../lambdas/core/dr-messages';
import { DrShipper } from '../../../lambdas/core/dr-shipper';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { drWriteHooks } from '../../../lambdas/core/dr-hooks';
import type { PendingEntry } from '../../../lambdas/ports';
import { limits } from '../../../schemas/topology';
import {
  ManualClock,
  MemoryBlobStore,
  MemoryDrStateStore,
  MemoryKeyChannel,
  MemoryPendingStore,
  MemoryPromotionLog,
  MemoryShardStore,
  memoryReplication,
  staticRing,
  memoryKv,
} from '../../support/memory-ports';

const leaseMs = 5_000;
const promotionLimits: PromotionLimits = {
  leaseWaitMs: leaseMs + 1_000,
  drainTimeoutMs: 10_000,
  valueWaitMs: 2_000,
  pollMs: 100,
  lostReportedMax: 2,
  scanPageSize: 2,
};

/** A clock whose monotonic time advances with its wall time (one process's view). */
function promotionOf(clock: ManualClock, options: { depths?: number[]; settle?: () => Promise<unknown> } = {}) {
  const state = new MemoryDrStateStore();
  const pending = new MemoryPendingStore();
  const log = new MemoryPromotionLog();
  const depths = [...(options.depths ?? [0])];
  const sleeps: number[] = [];
  const onSleep: Array<() => Promise<void>> = [];
  const promotion = new PromotionService({
    state,
    pending,
    log,
    clock,
    queue: { depth: async () => ({ waiting: depths.length > 1 ? depths.shift()! : depths[0]!, inFlight: 0 }) },
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
      for (const hook of onSleep) await hook();
    },
    limits: promotionLimits,
    ...(options.settle ? { settle: options.settle } : {}),
  });
  return { state, pending, log, promotion, sleeps, onSleep };
}

const entry = (key: string, version: number, writtenAtMs = version): PendingEntry => ({
  namespace: 'ns',
  key,
  keyHash: keyHashOf('ns', key),
  version,
  writtenAtMs,
  size: 1,
  sha256: '',
  contentType: 'text/plain',
  deleted: false,
  state: 'pending',
  receivedAtMs: 0,
});

const request = { id: 'promotion-1', reason: 'test' };

describe("the primary's lease", () => {
  it('acknowledges while the backup is a backup, and stops once a fence is older than the lease', async () => {
    // Prepare
    const clock = new ManualClock();
    const state = new MemoryDrStateStore();
    const lease = new PrimaryLease({ state, clock, leaseMs });
    await lease.assertWritable();
    // Act: the fence lands right after the lease was read
    state.state = { state: 'promoting', epoch: 1, updatedAtMs: clock.now, fencedAtMs: clock.now };
    clock.now += leaseMs - 1;
    const withinLease = await lease.assertWritable().then(() => 'acknowledged');
    clock.now += 1;
    const afterLease = await lease.assertWritable().catch((error: unknown) => error);
    // Assess
    expect(withinLease).toBe('acknowledged');
    expect(isRingstoreError(afterLease, 'dr.demoted')).toBe(true);
  });

  it('refuses to acknowledge once it cannot renew the lease: a partition looks like a promotion', async () => {
    // Prepare
    const clock = new ManualClock();
    const state = new MemoryDrStateStore();
    const lease = new PrimaryLease({ state, clock, leaseMs });
    await lease.assertWritable();
    state.down = true;
    // Act
    clock.now += leaseMs / 2;
    const halfway = await lease.assertWritable().then(() => 'acknowledged');
    clock.now += leaseMs / 2;
    const expired = await lease.assertWritable().catch((error: unknown) => error);
    // Assess
    expect(halfway).toBe('acknowledged');
    expect(isRingstoreError(expired, 'dr.backupUnreachable')).toBe(true);
    expect((expired as { retryable: boolean }).retryable).toBe(true);
  });

  it('reads the backup once per half lease under steady traffic', async () => {
    // Prepare
    const clock = new ManualClock();
    const state = new MemoryDrStateStore();
    const lease = new PrimaryLease({ state, clock, leaseMs });
    // Act: a write every 100 ms for 20 s
    for (let step = 0; step < 200; step += 1) {
      await lease.assertWritable();
      clock.now += 100;
    }
    // Assess: about 20 s / 2.5 s renewals, never one per write
    expect(state.reads).toBeLessThanOrEqual(10);
  });
});

describe("the backup's write permit", () => {
  it('refuses writes until the promotion opens the region', async () => {
    // Prepare
    const clock = new ManualClock();
    const state = new MemoryDrStateStore();
    const permit = new BackupWritePermit({ state, clock, refreshMs: 0 });
    // Act
    const asBackup = await permit.assertWritable().catch((error: unknown) => error);
    state.state = { state: 'promoting', epoch: 1, updatedAtMs: 0 };
    const whilePromoting = await permit.assertWritable().catch((error: unknown) => error);
    state.state = { state: 'promoted', epoch: 1, updatedAtMs: 0 };
    const promoted = await permit.assertWritable().then(() => 'writable');
    // Assess
    expect(isRingstoreError(asBackup, 'dr.backupReadOnly')).toBe(true);
    expect((whilePromoting as Error).message).toMatch(/being promoted/);
    expect(promoted).toBe('writable');
  });
});

describe('the promotion', () => {
  it('fences, waits out the lease, drains, waits for values, marks the rest lost, and opens the region', async () => {
    // Prepare: three keys pending; one value arrives during the wait
    const clock = new ManualClock();
    const { state, pending, promotion, sleeps, onSleep } = promotionOf(clock, { depths: [3, 1, 0] });
    for (const [key, version] of [
      ['a', 2],
      ['b', 5],
      ['c', 1],
    ] as const)
      await pending.record(entry(key, version, clock.now + version));
    onSleep.push(async () => {
      if (clock.now >= 1_700_000_000_000 + promotionLimits.leaseWaitMs + 500) await pending.clear(keyHashOf('ns', 'b'), 5);
    });
    // Act
    await promotion.begin(request);
    const fence = await promotion.fence(request);
    const fencedState = state.state?.state;
    const drain = await promotion.drain();
    const values = await promotion.awaitValues();
    const lost = await promotion.markLost();
    const opened = await promotion.open(request);
    // Assess
    expect(fence.epoch).toBe(1);
    expect(fencedState).toBe('promoting');
    expect(sleeps[0]).toBe(promotionLimits.leaseWaitMs);
    expect(drain).toMatchObject({ remaining: 0, waitedMs: 200 });
    expect(values).toMatchObject({ pending: 2, waitedMs: promotionLimits.valueWaitMs });
    // Oldest first, at most lostReportedMax listed; the count covers all.
    expect(lost.count).toBe(2);
    expect(lost.keys.map((key) => `${key.key}@${key.version}`)).toEqual(['c@1', 'a@2']);
    expect(pending.all().every((stored) => stored.state === 'lost')).toBe(true);
    expect(opened.epoch).toBe(1);
    expect(state.state?.state).toBe('promoted');
  });

  it('settles what is here before waiting, and once more at the deadline, before anything is marked lost', async () => {
    // Prepare: one entry the appliers left (a transaction half stored by a crash), one whose value comes late
    const clock = new ManualClock();
    let settles = 0;
    let valueCame = false;
    const { pending, promotion, onSleep } = promotionOf(clock, {
      settle: async () => {
        settles += 1;
        await pending.clear(keyHashOf('ns', 'left'), 1);
        if (valueCame) await pending.clear(keyHashOf('ns', 'late'), 1);
      },
    });
    await pending.record(entry('left', 1));
    await pending.record(entry('late', 1));
    // The late value lands in the bucket during the wait, but its event is lost: only a settle applies it.
    onSleep.push(async () => void (valueCame = true));
    // Act
    const values = await promotion.awaitValues();
    const lost = await promotion.markLost();
    // Assess
    expect(settles).toBe(2);
    expect(values.pending).toBe(0);
    expect(lost.count).toBe(0);
  });

  it('does not open the region while the key queue does not drain', async () => {
    // Prepare
    const clock = new ManualClock();
    const { state, promotion } = promotionOf(clock, { depths: [4] });
    await promotion.fence(request);
    // Act
    const failure = await promotion.drain().catch((error: unknown) => error);
    // Assess
    expect((failure as Error).message).toMatch(/still holds 4 messages/);
    expect(state.state?.state).toBe('promoting');
  });

  it('refuses to promote a region promoted already, and a retried fence is idempotent', async () => {
    // Prepare
    const clock = new ManualClock();
    const { state, promotion } = promotionOf(clock);
    await promotion.fence(request);
    const again = await promotion.fence(request);
    await promotion.open(request);
    // Act
    const second = await promotion.begin({ id: 'promotion-2', reason: 'again' }).catch((error: unknown) => error);
    // Assess
    expect(again.epoch).toBe(1);
    expect(state.state?.epoch).toBe(1);
    expect(isRingstoreError(second, 'request.invalid')).toBe(true);
  });

  it('leaves the old primary no acknowledged write the backup has not heard of', async () => {
    // Prepare: a primary writing every 300 ms, its key messages into the backup's queue
    const clock = new ManualClock();
    const { state } = promotionOf(clock);
    const keys = new MemoryKeyChannel();
    // When each write's notice reached the queue, by write id (the writes take w1, w2, ... in turn).
    const sentAt = new Map<string, number>();
    let writes = 0;
    const ids = { newId: () => `w${++writes}` };
    const shards = new MemoryShardStore();
    const { replication, health } = memoryReplication(shards, clock);
    const primary = memoryKv({
      shards,
      ring: staticRing(),
      clock,
      limits,
      replication,
      health,
      writeHooks: drWriteHooks({
        shipper: new DrShipper({
          keys: {
            send: async (messages) => {
              for (const message of messages) if ('notice' in message) sentAt.set(message.writeId, clock.now);
              await keys.send(messages);
            },
          },
          backupValues: new MemoryBlobStore(),
          blobs: new MemoryBlobStore(),
          limits: { shipConcurrency: 1 },
        }),
        ids,
        writeGuard: new PrimaryLease({ state, clock, leaseMs }),
      }),
    });
    const acknowledged: string[] = [];
    const refused: string[] = [];
    const writeFor = async (ms: number) => {
      for (const end = clock.now + ms; clock.now < end; clock.now += 300) {
        await primary.put('ns', 'k', { value: new Uint8Array([1]), contentType: 'x' }).then(
          () => acknowledged.push(`w${writes}`),
          (error: unknown) => refused.push((error as { code: string }).code),
        );
      }
    };
    await writeFor(3_000);
    // Act: the promotion's fence lands while the primary keeps writing through the fence's wait and after
    const fencedAtMs = clock.now;
    state.state = { state: 'promoting', epoch: 1, updatedAtMs: fencedAtMs, promotionId: request.id, fencedAtMs };
    await writeFor(promotionLimits.leaseWaitMs + 3_000);
    // Assess: every acknowledged write's notice was in the queue before the drain began
    const drainStartsAt = fencedAtMs + promotionLimits.leaseWaitMs;
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const writeId of acknowledged) expect(sentAt.get(writeId)).toBeLessThan(drainStartsAt);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(new Set(['dr.demoted']));
  });
});
