// Who may acknowledge writes in a DR deployment, and the promotion of the backup (docs/dr.md,
// "Promotion"). The backup's DR state is the fence: the primary acknowledges a write only while it has
// seen the backup still a backup within its lease, so once a promotion has fenced the state and waited
// out the lease, no write can be acknowledged in the old primary. Every write it did acknowledge sent its
// key message before, so draining the key queue then tells the backup of all of them; whatever value has
// not arrived after a bounded wait is marked lost, never served older.
import { RingstoreError } from './errors';
import type {
  Clock,
  DrState,
  DrMetrics,
  DrStateStore,
  KeyQueueProbe,
  PendingEntry,
  PendingStore,
  PromotionLog,
  PromotionReport,
  PromotionRequest,
} from '../ports';

/** A region's permission to acknowledge a write; checked before a write and again before its acknowledgement. */
export interface DrWriteGuard {
  assertWritable(): Promise<void>;
}

/** A state never written is a backup at epoch 0. */
const initialState: DrState = { state: 'backup', epoch: 0, updatedAtMs: 0 };

interface StateLease {
  state: DrState;
  /** This process's monotonic time when the read was sent. */
  readAtMs: number;
}

/**
 * A cached read of the backup's DR state, shared by concurrent callers: fresh within `maxAgeMs`, else
 * read again (a lease, as CachedRingSource holds the ring). A state only moves forward, so a stale read
 * never shows a later state than the real one.
 */
class CachedDrState {
  private cached?: StateLease;
  private inFlight?: Promise<StateLease>;

  constructor(
    private readonly store: Pick<DrStateStore, 'read'>,
    private readonly clock: Clock,
  ) {}

  async within(maxAgeMs: number): Promise<StateLease> {
    const cached = this.cached;
    const age = cached ? this.clock.monotonicMs() - cached.readAtMs : Infinity;
    if (cached && age < maxAgeMs) {
      // Renewed in the background half-way, so steady traffic rarely waits for the other region.
      if (age >= maxAgeMs / 2) void this.reload().catch(() => undefined);
      return cached;
    }
    return this.reload();
  }

  private reload(): Promise<StateLease> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<StateLease> {
    const readAtMs = this.clock.monotonicMs();
    const state = (await this.store.read()) ?? initialState;
    if (this.cached && this.cached.state.epoch > state.epoch) return this.cached;
    this.cached = { state, readAtMs };
    return this.cached;
  }
}

/** The primary's lease: it may acknowledge writes while the backup was seen a backup within `leaseMs`. */
export class PrimaryLease implements DrWriteGuard {
  private readonly state: CachedDrState;

  constructor(private readonly deps: { state: Pick<DrStateStore, 'read'>; clock: Clock; leaseMs: number }) {
    this.state = new CachedDrState(deps.state, deps.clock);
  }

  async assertWritable(): Promise<void> {
    let lease: StateLease;
    try {
      lease = await this.state.within(this.deps.leaseMs);
    } catch (error) {
      throw new RingstoreError(
        'dr.backupUnreachable',
        'the backup region could not be reached to renew this region’s lease to acknowledge writes (a partition looks like a promotion ' +
          'from here); the write is not acknowledged: retry, or read strongly to see whether it applied',
        { retryable: true, cause: error },
      );
    }
    if (lease.state.state !== 'backup') {
      throw new RingstoreError(
        'dr.demoted',
        `the backup region was promoted (epoch ${lease.state.epoch}): this region no longer acknowledges writes; write to the promoted region`,
        { details: { epoch: lease.state.epoch, state: lease.state.state } },
      );
    }
  }
}

/** The backup's permission: writes only once it is promoted. */
export class BackupWritePermit implements DrWriteGuard {
  private readonly state: CachedDrState;

  constructor(private readonly deps: { state: Pick<DrStateStore, 'read'>; clock: Clock; refreshMs: number }) {
    this.state = new CachedDrState(deps.state, deps.clock);
  }

  async assertWritable(): Promise<void> {
    const { state } = await this.state.within(this.deps.refreshMs);
    if (state.state === 'promoted') return;
    throw new RingstoreError(
      'dr.backupReadOnly',
      state.state === 'promoting'
        ? 'this region is being promoted: it takes writes once the promotion has opened it (GET /v1/admin/dr/status)'
        : 'this region is the disaster-recovery backup: it serves reads only, and takes writes once it is promoted; write to the primary region',
      { details: { state: state.state } },
    );
  }
}

export interface PromotionLimits {
  /** The primary's lease plus a margin: after this long behind the fence, no write is acknowledged there. */
  leaseWaitMs: number;
  /** How long the key queue may take to empty; a queue that does not drain fails the promotion. */
  drainTimeoutMs: number;
  /** How long values still in transit are waited for before their keys are marked lost. */
  valueWaitMs: number;
  pollMs: number;
  /** Lost keys the report lists (the count covers all). */
  lostReportedMax: number;
  scanPageSize: number;
}

export interface PromotionDeps {
  state: DrStateStore;
  pending: PendingStore;
  queue: KeyQueueProbe;
  log: PromotionLog;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  limits: PromotionLimits;
  metrics?: DrMetrics;
  /**
   * Applies what is here and was left pending (the backup applier's sweep, with no age limit): a
   * transaction whose applier crashed after storing some of its writes is completed rather than lost.
   */
  settle?: () => Promise<unknown>;
}

/** The steps of the promotion workflow (schemas/dr-promotion-state-machine.asl.json), one method each. */
export class PromotionService {
  constructor(private readonly deps: PromotionDeps) {}

  /** Refuses a promotion of a region already promoted; records the promotion as running. */
  async begin(request: PromotionRequest): Promise<PromotionReport> {
    const current = (await this.deps.state.read()) ?? initialState;
    if (current.state === 'promoted') throw alreadyPromoted(current);
    const now = this.deps.clock.nowMs();
    const report: PromotionReport = { ...request, status: 'running', startedAtMs: now, updatedAtMs: now };
    await this.deps.log.save(report);
    return report;
  }

  /**
   * Moves the state to `promoting` (epoch + 1), then waits out the primary's lease: from then on the old
   * primary acknowledges no write. Idempotent for a retried step, and a new promotion takes over from one
   * that failed after fencing.
   */
  async fence(request: PromotionRequest): Promise<{ epoch: number; fencedAtMs: number }> {
    const current = (await this.deps.state.read()) ?? initialState;
    if (current.state === 'promoted') throw alreadyPromoted(current);
    let fenced = current;
    if (current.state === 'backup') {
      const now = this.deps.clock.nowMs();
      fenced = { state: 'promoting', epoch: current.epoch + 1, updatedAtMs: now, promotionId: request.id, fencedAtMs: now };
      if (!(await this.deps.state.save(fenced, current.epoch))) {
        throw new RingstoreError('throttled', 'the DR state changed while the promotion fenced it; retry', { retryable: true });
      }
    }
    await this.deps.sleep(this.deps.limits.leaseWaitMs);
    return { epoch: fenced.epoch, fencedAtMs: fenced.fencedAtMs ?? this.deps.clock.nowMs() };
  }

  /** Waits until the key queue is empty (nothing waiting, nothing being applied); fails after the timeout. */
  async drain(): Promise<{ waitedMs: number; remaining: number }> {
    const started = this.deps.clock.nowMs();
    for (;;) {
      const { waiting, inFlight } = await this.deps.queue.depth();
      const waitedMs = this.deps.clock.nowMs() - started;
      if (waiting + inFlight === 0) return { waitedMs, remaining: 0 };
      if (waitedMs >= this.deps.limits.drainTimeoutMs) {
        throw new RingstoreError(
          'internal',
          `the key queue still holds ${waiting + inFlight} messages after ${waitedMs} ms: the promotion stops before opening the region ` +
            '(keys the backup has not heard of would be served older); check the key applier and its dead-letter queue, then promote again',
          { details: { waiting, inFlight } },
        );
      }
      await this.deps.sleep(this.deps.limits.pollMs);
    }
  }

  /** Gives the values still in transit a bounded time to arrive. */
  async awaitValues(): Promise<{ waitedMs: number; pending: number }> {
    const started = this.deps.clock.nowMs();
    await this.deps.settle?.();
    for (let settledAgain = false; ;) {
      // A write notice has no value of its own: once the queue is drained, nothing more settles it.
      const pending = (await this.entries()).filter((entry) => entry.state === 'pending' && !entry.notice).length;
      const waitedMs = this.deps.clock.nowMs() - started;
      if (pending === 0) return { waitedMs, pending };
      if (waitedMs >= this.deps.limits.valueWaitMs) {
        if (settledAgain || !this.deps.settle) return { waitedMs, pending };
        // Once more at the deadline, for what arrived while the appliers were not looking.
        await this.deps.settle();
        settledAgain = true;
        continue;
      }
      await this.deps.sleep(this.deps.limits.pollMs);
    }
  }

  /** Marks every key still pending lost: from now on it is refused (410) until it is written again. */
  async markLost(): Promise<NonNullable<PromotionReport['lost']>> {
    const lost: PendingEntry[] = [];
    for (const entry of await this.entries()) {
      if (entry.state === 'lost') {
        lost.push(entry);
        continue;
      }
      if (await this.deps.pending.markLost(entry)) lost.push(entry);
    }
    lost.sort((a, b) => a.writtenAtMs - b.writtenAtMs);
    this.deps.metrics?.keysLost(lost.length);
    const possiblyNeverAcknowledged = lost.filter((entry) => entry.notice).length;
    return {
      count: lost.length,
      ...(possiblyNeverAcknowledged === 0 ? {} : { possiblyNeverAcknowledged }),
      keys: lost.slice(0, this.deps.limits.lostReportedMax).map(({ namespace, key, version, writtenAtMs, txid, notice, writeId }) => ({
        namespace,
        key,
        // A notice's write was never numbered: version 0 stands for "unknown".
        version: notice ? 0 : version,
        writtenAtMs,
        ...(txid ? { txid } : {}),
        ...(notice ? { possiblyNeverAcknowledged: true as const, ...(writeId === undefined ? {} : { writeId }) } : {}),
      })),
    };
  }

  /** Opens the region for writes. */
  async open(request: PromotionRequest): Promise<{ epoch: number; promotedAtMs: number }> {
    const current = (await this.deps.state.read()) ?? initialState;
    if (current.state === 'promoted') return { epoch: current.epoch, promotedAtMs: current.promotedAtMs ?? current.updatedAtMs };
    if (current.state !== 'promoting') {
      throw new RingstoreError('internal', `the promotion ${request.id} cannot open a region that was not fenced (it is ${current.state})`);
    }
    const promotedAtMs = this.deps.clock.nowMs();
    const next: DrState = { ...current, state: 'promoted', updatedAtMs: promotedAtMs, promotedAtMs, promotionId: request.id };
    if (!(await this.deps.state.save(next, current.epoch))) {
      throw new RingstoreError('throttled', 'the DR state changed while the promotion opened the region; retry', { retryable: true });
    }
    return { epoch: current.epoch, promotedAtMs };
  }

  /** Records the completed promotion with what each step found. */
  async finish(
    request: PromotionRequest,
    findings: {
      fencedAtMs: number;
      drain: PromotionReport['drain'];
      values: PromotionReport['values'];
      lost: PromotionReport['lost'];
      promotedAtMs: number;
    },
  ): Promise<PromotionReport> {
    return this.record(request, { status: 'completed', ...findings });
  }

  /** Records a failed promotion; the region stays closed to writes. */
  async fail(request: PromotionRequest, failure: string): Promise<PromotionReport> {
    return this.record(request, { status: 'failed', failure });
  }

  private async record(request: PromotionRequest, update: Partial<PromotionReport>): Promise<PromotionReport> {
    const now = this.deps.clock.nowMs();
    const latest = await this.deps.log.latest();
    const base: PromotionReport =
      latest?.id === request.id ? latest : { ...request, status: 'running', startedAtMs: now, updatedAtMs: now };
    const next = { ...base, ...update, updatedAtMs: now };
    await this.deps.log.save(next);
    return next;
  }

  async latest(): Promise<PromotionReport | undefined> {
    return this.deps.log.latest();
  }

  /** Every pending and lost entry, page by page. */
  private async entries(): Promise<PendingEntry[]> {
    const all: PendingEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.deps.pending.scan(this.deps.limits.scanPageSize, cursor);
      all.push(...page.entries);
      cursor = page.cursor;
    } while (cursor);
    return all;
  }
}

function alreadyPromoted(state: DrState): RingstoreError {
  return new RingstoreError('request.invalid', `this region was promoted already (epoch ${state.epoch}); there is nothing to promote`, {
    details: { state: state.state, epoch: state.epoch },
  });
}

/** What GET /v1/admin/dr/status shows of a backup region. */
export interface BackupDrStatus {
  role: 'backup';
  state: DrState['state'];
  epoch: number;
  promotedAt?: string;
  /** Keys waiting for their value, and keys a promotion marked lost; the oldest pending one's age. */
  pending: { count: number; lost: number; oldestAgeMs?: number; oldestKey?: string };
  queue?: { waiting: number; inFlight: number };
}

/** A backup's DR state and its pending set, read in full (a scan: an admin's question, not a request path). */
export async function describeBackup(deps: {
  state: Pick<DrStateStore, 'read'>;
  pending: Pick<PendingStore, 'scan'>;
  queue?: KeyQueueProbe;
  clock: Clock;
  scanPageSize: number;
}): Promise<BackupDrStatus> {
  const state = (await deps.state.read()) ?? initialState;
  let count = 0;
  let lost = 0;
  let oldest: PendingEntry | undefined;
  let cursor: string | undefined;
  do {
    const page = await deps.pending.scan(deps.scanPageSize, cursor);
    for (const entry of page.entries) {
      if (entry.state === 'lost') {
        lost += 1;
        continue;
      }
      count += 1;
      if (!oldest || entry.receivedAtMs < oldest.receivedAtMs) oldest = entry;
    }
    cursor = page.cursor;
  } while (cursor);
  const now = deps.clock.nowMs();
  return {
    role: 'backup',
    state: state.state,
    epoch: state.epoch,
    ...(state.promotedAtMs === undefined ? {} : { promotedAt: new Date(state.promotedAtMs).toISOString() }),
    pending: { count, lost, ...(oldest ? { oldestAgeMs: Math.max(0, now - oldest.receivedAtMs), oldestKey: oldest.key } : {}) },
    ...(deps.queue ? { queue: await deps.queue.depth() } : {}),
  };
}
