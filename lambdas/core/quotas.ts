// Per-namespace quotas (docs/security.md, "Quotas"): a request rate shared by every instance, and what a
// write changes in its namespace's stored keys and bytes.
import { isRingstoreError, RingstoreError, unexpected } from './errors';
import type {
  Clock,
  ItemWrite,
  ItemWriteOutcome,
  RateLimit,
  RateLimitStore,
  StorageCharge,
  StorageChargeRule,
  StorageQuota,
  StorageUsage,
  StoredItem,
  ShardItemReads,
  ShardItemWrites,
} from '../ports';
import { type OwnerWriter, plainOwnerWriter, type WriteSettings } from './write-hooks';

/**
 * How often, at most, one namespace at its full rate takes tokens from the shared bucket, whatever the
 * number of instances: each take is a lease of rate / this many tokens. The bucket is one DynamoDB item
 * per namespace, so this bounds its writes (and their cost) far below a partition's 1,000 per second.
 */
export const rateLeasesPerSecond = 20;

/** Tokens a lease holds at most, however high the rate: an idle instance strands no more than this. */
export const rateLeaseTokensMax = 100;

/**
 * How long an instance may spend a lease's tokens. Tokens left after it are dropped rather than spent
 * later, so that instances which took tokens and went idle cannot add their leftovers to a later burst.
 */
export const rateLeaseLifetimeMs = 1_000;

/** Namespaces one instance keeps leases and refusals for; the least recently added is forgotten first. */
export const rateNamespacesTrackedMax = 10_000;

interface Lease {
  tokens: number;
  expiresAtMs: number;
}

/** Tokens one lease takes for a rate: a twentieth of a second's worth, at least one, never more than the burst. */
export function leaseTokensOf(rate: RateLimit): number {
  return Math.max(1, Math.min(Math.floor(rate.requestsPerSecond / rateLeasesPerSecond), rateLeaseTokensMax, rate.burst));
}

/**
 * Admits a namespace's requests at its rate across every instance. The bucket lives in a shared store
 * (DynamoDB): an instance's own memory sees only its share of the traffic, and Lambda runs as many
 * instances as the load asks for, so a per-instance limit would grow with the load it should bound. The
 * L2 cache is not used for it: it is optional (a deployment without it, or a cache outage, would lose
 * the limit) and fails open by design. A refusal is remembered until the bucket can grant again, so a
 * namespace hammering the API costs the store nothing more while it is refused.
 */
export class NamespaceRateLimiter {
  private readonly leases = new Map<string, Lease>();
  private readonly refusedUntilMs = new Map<string, number>();
  /** One take in flight per namespace: concurrent requests of one instance wait for it, then share its lease. */
  private readonly taking = new Map<string, Promise<void>>();

  constructor(private readonly deps: { store: RateLimitStore; clock: Clock }) {}

  /**
   * Admits `count` requests of `namespace` (a batch of reads counts as that many), one token each, or throws
   * `quota.rate` (429) with how long to wait; tokens taken before a refusal stay spent, as the requests' would.
   */
  async admit(namespace: string, rate: RateLimit, count = 1): Promise<void> {
    for (let admitted = 0; admitted < count; admitted += 1) await this.admitOne(namespace, rate);
  }

  private async admitOne(namespace: string, rate: RateLimit): Promise<void> {
    for (;;) {
      const nowMs = this.deps.clock.nowMs();
      const refusedUntil = this.refusedUntilMs.get(namespace);
      if (refusedUntil !== undefined && nowMs < refusedUntil) throw this.refusal(namespace, rate, refusedUntil - nowMs);
      const lease = this.leases.get(namespace);
      if (lease && lease.tokens > 0 && nowMs < lease.expiresAtMs) {
        lease.tokens -= 1;
        return;
      }
      const inFlight = this.taking.get(namespace);
      if (inFlight) {
        await inFlight;
        continue;
      }
      const take = this.takeLease(namespace, rate).finally(() => this.taking.delete(namespace));
      // Waiters only need it settled; the failure itself is this caller's (an unobserved rejection would end the process).
      this.taking.set(
        namespace,
        take.then(
          () => undefined,
          () => undefined,
        ),
      );
      // Refused by the bucket: answered now, not by another turn of the loop (the wait may round to nothing).
      if (!(await take)) throw this.refusal(namespace, rate, (this.refusedUntilMs.get(namespace) ?? nowMs) - nowMs);
    }
  }

  /** Takes a lease from the shared bucket; false when the bucket refuses (the refusal is remembered). */
  private async takeLease(namespace: string, rate: RateLimit): Promise<boolean> {
    const intervalMs = 1000 / rate.requestsPerSecond;
    const tokens = leaseTokensOf(rate);
    const costMs = tokens * intervalMs;
    const nowMs = this.deps.clock.nowMs();
    let taken: Awaited<ReturnType<typeof this.deps.store.take>>;
    try {
      taken = await this.deps.store.take(namespace, { nowMs, costMs, toleranceMs: rate.burst * intervalMs });
    } catch (error) {
      // The bucket's table does not answer (its region down, a throttled partition): the request is admitted
      // on a local lease rather than refused, so an outage of the limiter's store never becomes the API's.
      if (!isRingstoreError(error) || !error.retryable) throw error;
      remember(this.leases, namespace, { tokens, expiresAtMs: nowMs + rateLeaseLifetimeMs });
      return true;
    }
    if (taken.granted) {
      remember(this.leases, namespace, { tokens, expiresAtMs: nowMs + rateLeaseLifetimeMs });
      this.refusedUntilMs.delete(namespace);
      return true;
    }
    // The bucket grants `costMs` again once its TAT is within the tolerance of the cost.
    remember(this.refusedUntilMs, namespace, taken.tatMs - rate.burst * intervalMs + costMs);
    this.leases.delete(namespace);
    return false;
  }

  private refusal(namespace: string, rate: RateLimit, waitMs: number): RingstoreError {
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new RingstoreError(
      'quota.rate',
      `namespace ${namespace} is over its request rate (${rate.requestsPerSecond}/s, burst ${rate.burst}); retry after ${retryAfterSeconds} s`,
      { retryable: true, details: { limit: 'rate', requestsPerSecond: rate.requestsPerSecond, burst: rate.burst, retryAfterSeconds } },
    );
  }
}

/** Sets an entry of a bounded map, forgetting the oldest entry when it is full. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= rateNamespacesTrackedMax) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

/** A storage quota that bounds something (a quota with neither bound is no quota). */
export function hasStorageBound(quota: StorageQuota | undefined): quota is StorageQuota {
  return quota?.keysMax !== undefined || quota?.bytesMax !== undefined;
}

/**
 * What a write changes in its namespace's usage, judged against the owner's item as read: a key counts
 * while its owner holds a non-tombstone item (an expired one too, until it is overwritten, deleted or
 * removed), with its value's size. Under a `rule`, the item counts as no key and for the bytes the rule
 * gives its value, in the rule's namespace (a volume's record: its size, docs/volumes.md).
 */
export function storageChargeOf(
  previous: StoredItem | undefined,
  content: ItemWrite['content'],
  quota: StorageQuota,
  rule?: StorageChargeRule,
): StorageCharge {
  const counted = previous !== undefined && !previous.tombstone;
  const judged = { expectVersion: previous?.version, quota };
  if (rule) {
    const bytesDelta = (content ? rule.bytesOf(content.value) : 0) - (counted ? rule.bytesOf(previous.value) : 0);
    return { ...judged, keysDelta: 0, bytesDelta, namespace: rule.namespace };
  }
  return {
    ...judged,
    keysDelta: (content ? 1 : 0) - (counted ? 1 : 0),
    bytesDelta: (content?.size ?? 0) - (counted ? previous.size : 0),
  };
}

/** The refusal of a write that would take its namespace over a storage bound. */
export function storageQuotaExceeded(namespace: string, limit: 'keys' | 'bytes', quota: StorageQuota): RingstoreError {
  const bound = limit === 'keys' ? quota.keysMax : quota.bytesMax;
  return new RingstoreError(
    limit === 'keys' ? 'quota.keys' : 'quota.bytes',
    `namespace ${namespace} is at its storage quota (${bound} ${limit}): delete keys or ask an admin for a larger quota`,
    // Not retryable: only a delete (or a larger quota) frees room, and nothing the client retries makes one;
    // a retry would be refused the same way until its attempts run out.
    { retryable: false, details: { limit, [limit === 'keys' ? 'keysMax' : 'bytesMax']: bound } },
  );
}

/** Keys one page of the count reads: the listing's largest page. */
const countPageKeys = 1000;

/**
 * What a namespace stores now, counted through its listing (live keys and their sizes), page after page;
 * stops once past `keysMax` (the caller refuses then), so the count is bounded.
 */
export async function countStorage(
  list: (input: { prefix: string; limit: number; cursor?: string }) => Promise<{ items: Array<{ size: number }>; cursor?: string }>,
  keysMax: number,
): Promise<StorageUsage> {
  const usage = { keys: 0, bytes: 0 };
  let cursor: string | undefined;
  do {
    const page = await list({ prefix: '', limit: countPageKeys, ...(cursor === undefined ? {} : { cursor }) });
    for (const item of page.items) {
      usage.keys += 1;
      usage.bytes += item.size;
    }
    cursor = page.cursor;
  } while (cursor !== undefined && usage.keys <= keysMax);
  return usage;
}

/**
 * A write counted against a storage quota that finds its key changed since it read it (or met another
 * writer's transaction on it) reads it again, this many times in all: each round one of the key's
 * concurrent writers wins, so this many writers of one key at once all get through.
 */
export const chargedWriteAttemptsMax = 10;

/** The longest pause before a counted write's next attempt: its writers meet at one counter item. */
export const chargedWriteBackoffMsMax = 20;

/**
 * The owner's write of a namespace with a storage bound, counted against it exactly: the owner's item is read
 * strongly, and the write and the usage counter's change go in one transaction that holds only if the item is
 * still as read (docs/security.md, "Quotas"). A writer that lost a race to another reads again. A namespace
 * without a bound is written plainly.
 */
export class StorageChargingWriter implements OwnerWriter {
  private readonly plain: OwnerWriter;

  constructor(private readonly deps: { shards: Pick<ShardItemReads, 'get'> & ShardItemWrites; sleep?: (ms: number) => Promise<void> }) {
    this.plain = plainOwnerWriter(deps.shards);
  }

  async write(table: string, write: ItemWrite, settings: WriteSettings): Promise<ItemWriteOutcome> {
    const quota = settings.storageQuota;
    if (!hasStorageBound(quota)) return this.plain.write(table, write, settings);
    for (let attempt = 1; ; attempt += 1) {
      const previous = await this.deps.shards.get(table, write.namespace, write.key, { consistent: true });
      const outcome = await this.chargedWrite(table, write, storageChargeOf(previous, write.content, quota, settings.storageCharge));
      // DynamoDB's transaction returns no old image: the item replaced is the one read, as the write was conditioned on
      // its version. The caller needs it to delete a replaced value's object.
      if (outcome && isAnswer(outcome, previous)) return outcome.outcome === 'written' ? { previous, ...outcome } : outcome;
      if (attempt >= chargedWriteAttemptsMax) {
        throw new RingstoreError('txn.conflict', `key ${write.key} is being written by others at the same time; retry`, {
          retryable: true,
          details: { key: write.key },
        });
      }
      // Writers of different keys pause for different times (their tokens differ, and so do the bits each
      // attempt takes), so those that met at the counter spread out instead of meeting again.
      await this.deps.sleep?.(((write.token >>> attempt) % chargedWriteBackoffMsMax) + 1);
    }
  }

  /**
   * One counted write; undefined when another writer's transaction on the item or the counter met it at the
   * same instant (DynamoDB cancelled it: nothing was written).
   */
  private async chargedWrite(table: string, write: ItemWrite, charge: StorageCharge): Promise<ItemWriteOutcome | undefined> {
    try {
      return await this.deps.shards.write(table, write, charge);
    } catch (error) {
      if (isRingstoreError(error, 'txn.conflict')) return undefined;
      throw error;
    }
  }
}

/** Whether a counted write's outcome is the answer, or a race lost to a writer since the item was read (read it again). */
function isAnswer(outcome: ItemWriteOutcome, previous: StoredItem | undefined): boolean {
  switch (outcome.outcome) {
    case 'written':
    case 'locked':
      return true;
    case 'preconditionFailed':
      // The write's own precondition failed against the item as read: that is the answer.
      return outcome.current?.version === previous?.version;
    default:
      return unexpected(outcome, 'write outcome');
  }
}
