// Keeps every key on its RF shards (docs/consistency.md). Strong writes fan out from the owner; the stream path
// catches replicas up after eventual writes; a replica that cannot be reached gets a hint. Versions
// make every step idempotent: a replica applies only a strictly newer version, so duplicated,
// reordered and replayed copies are harmless.
import { forAllBounded } from './bounded';
import { isRingstoreError, type RingstoreError } from './errors';
import { isCrashInjected } from './faults';
import type {
  StoredItem,
  FaultInjector,
  RingShard,
  Clock,
  HintStore,
  ReplicationMetrics,
  ShardHealth,
  ShardHealthStore,
  ShardCopies,
} from '../ports';
import { inHistory, retryFrom, type OwnershipWeighing } from './stream-ownership';

export interface ReplicationDeps {
  shards: ShardCopies;
  hints: HintStore;
  health: ShardHealthStore;
  clock: Clock;
  faults?: FaultInjector;
  metrics?: ReplicationMetrics;
}

/**
 * What became of one replica copy: `applied` (stored now), `current` (it already held this version or
 * newer), `hinted` (unreachable: the failure log holds it), `missed` (unreachable and the hint could not
 * be written either: the stream path and anti-entropy still converge it, but it is not counted).
 */
export type ReplicaOutcome = 'applied' | 'current' | 'hinted' | 'missed';

export interface FanOutResult {
  /** Shards holding the version when the fan-out ended, the owner included. */
  holders: number;
  outcomes: Record<string, ReplicaOutcome>;
}

/** One write seen on a shard table's stream: an owner's write, or a copy (a replica's, a move's, a repair's). */
export interface OwnerChange {
  /** The table whose stream carried the record. */
  sourceTable: string;
  item: StoredItem;
  /** The version before the change, when the record carries the old image. */
  previousVersion?: number;
  /** The image is a copy: an echo of replication, never replicated again. */
  copied?: boolean;
}

/** Whether a stream record is an owner's write a replica may lack, to weigh for replication (StreamOwnership). */
export function isReplicable(change: OwnerChange): boolean {
  return change.copied !== true && carriesCommittedChange(change);
}

/**
 * Whether a change carries committed content a replica may lack. Placing or clearing a transaction's
 * intent leaves the version alone (the replicas got that version from its own record, and never hold
 * intents), and version 0 is the tombstone that holds an intent on a new key: "absent", as a replica
 * without the key already is. Copying them would cost two refused or useless replica writes each.
 */
export function carriesCommittedChange(change: Pick<OwnerChange, 'item' | 'previousVersion'>): boolean {
  return change.item.version > 0 && change.previousVersion !== change.item.version;
}

export interface StreamApplyResult {
  applied: number;
  current: number;
  hinted: number;
  /** Records of replica writes (echoes of replication), of intents only, and older versions of a key in the batch. */
  ignored: number;
  /** Writes a table made of a key whose range it no longer owned, which never reached the range's owner (StreamOwnership). */
  notInEffect: number;
  /** Index of the first change that could not be replicated; the stream retries from there. */
  firstFailedIndex?: number;
  /** Set when that change lies in a range under a fence: it is weighed again once the fence lifts. */
  awaitingFence?: true;
}

const noTables: ReadonlySet<string> = new Set();

/** Concurrent keys per stream batch: bounded so a batch cannot exhaust the handler's sockets. */
export const streamApplyConcurrency = 8;

/** Shard errors that mean "this replica is unreachable now", as opposed to bugs. */
export function isShardFailure(error: unknown): error is RingstoreError {
  return isRingstoreError(error, 'shard.unavailable') || isRingstoreError(error, 'throttled');
}

export function isReadable(health: ReadonlyMap<string, ShardHealth>, table: string): boolean {
  return (health.get(table)?.status ?? 'available') === 'available';
}

export class ReplicationService {
  private rotation = 0;

  constructor(private readonly deps: ReplicationDeps) {}

  /**
   * Strong write, second phase: the owner holds `item`; copy it to every other replica in parallel.
   * Replicas in `uncounted` (added ones still being backfilled) take it but do not count as holders.
   * `listedOn`: the table a rebalance is moving the key's range to, as its owner (Ring.incomingOwnerTableOf):
   * its copy joins the listing index, so that the key shows there once it owns the range.
   */
  async fanOut(
    item: StoredItem,
    replicas: readonly RingShard[],
    uncounted: ReadonlySet<string> = noTables,
    listedOn?: string,
  ): Promise<FanOutResult> {
    const health = await this.deps.health.all();
    let firstDone = false;
    const outcomes = await Promise.all(
      replicas.map(async (replica) => {
        const outcome = await this.copyTo(replica.table, item, health, replica.table === listedOn);
        if (!firstDone) {
          firstDone = true;
          this.deps.faults?.reach('write.afterFirstReplica');
        }
        return [replica.table, outcome] as const;
      }),
    );
    const held = outcomes.filter(([table, outcome]) => (outcome === 'applied' || outcome === 'current') && !uncounted.has(table)).length;
    return { holders: 1 + held, outcomes: Object.fromEntries(outcomes) };
  }

  /**
   * The shards an eventual read may use, in the order to try them: only available shards (a shard
   * that is down or still replaying its hints does not serve), starting at a rotating offset so reads
   * spread over the replicas.
   */
  async readOrder(replicas: readonly RingShard[]): Promise<RingShard[]> {
    const health = await this.deps.health.all();
    const readable = replicas.filter((replica) => isReadable(health, replica.table));
    if (readable.length <= 1) return readable;
    const start = this.rotation % readable.length;
    this.rotation = (this.rotation + 1) % 1_000_000;
    return [...readable.slice(start), ...readable.slice(0, start)];
  }

  /**
   * The stream path (eventual writes, and the safety net of strong ones): copies each write in its key's history to
   * the key's other replicas, as `weighing` stands them (StreamOwnership). An owner's write goes to the other
   * replicas; a former owner's write the owner carries (a move or failover took the range before the stream
   * replicated it) goes to those other than the owner and the former owner. Echoes of replication, intent-only
   * changes (carriesCommittedChange) and a former owner's write never carried (refused to its client) are not
   * copied. Within a batch only the newest version per key is copied.
   */
  async applyOwnerChanges(changes: readonly OwnerChange[], weighing: OwnershipWeighing): Promise<StreamApplyResult> {
    const result: StreamApplyResult = { applied: 0, current: 0, hinted: 0, ignored: 0, notInEffect: 0 };
    const { ring } = weighing;
    const newest = new Map<string, { index: number; change: OwnerChange; replicas: RingShard[]; listedOn?: string }>();
    weighing.standings.forEach((standing, index) => {
      const change = changes[index]!;
      if (standing === 'notInEffect') result.notInEffect += 1;
      if (!inHistory(standing) || !carriesCommittedChange(change)) {
        if (standing !== 'notInEffect') result.ignored += 1;
        return;
      }
      const [owner, ...others] = ring.replicasOf(change.item.token);
      const replicas = standing === 'owner' ? others : others.filter(({ table }) => table !== owner?.table && table !== change.sourceTable);
      const id = `${change.item.namespace}#${change.item.key}`;
      const seen = newest.get(id);
      if (seen && seen.change.item.version >= change.item.version) return;
      const listedOn = ring.incomingOwnerTableOf(change.item.token);
      newest.set(id, { index, change, replicas, ...(listedOn ? { listedOn } : {}) });
    });
    const health = await this.deps.health.all();
    const failedIndexes: number[] = [];
    await forAllBounded([...newest.values()], streamApplyConcurrency, async ({ index, change, replicas, listedOn }) => {
      this.deps.faults?.reach('replicator.beforeApply');
      const outcomes = await Promise.all(
        replicas.map((replica) => this.copyTo(replica.table, change.item, health, replica.table === listedOn)),
      );
      this.deps.faults?.reach('replicator.afterApply');
      for (const outcome of outcomes) {
        if (outcome === 'missed') failedIndexes.push(index);
        else result[outcome] += 1;
      }
    });
    const firstFailed = failedIndexes.length ? Math.min(...failedIndexes) : undefined;
    const { stoppedAt } = weighing;
    if (stoppedAt && (firstFailed === undefined || stoppedAt.index < firstFailed)) {
      return { ...result, ...retryFrom(stoppedAt) };
    }
    return firstFailed === undefined ? result : { ...result, firstFailedIndex: firstFailed };
  }

  /** Copies `item` to one replica, or records a hint when the replica cannot take it now. */
  async copyTo(table: string, item: StoredItem, health: ReadonlyMap<string, ShardHealth>, listed = false): Promise<ReplicaOutcome> {
    // A shard known to be down is not tried: the write would only wait for its timeout.
    if (health.get(table)?.status === 'unavailable') return this.hint(table, item, 'marked unavailable');
    const nowMs = this.deps.clock.nowMs();
    try {
      // Fan-out and the stream path copy to the replicas after the owner: their copies are not listed, but
      // for the owner a rebalance is moving the range to.
      const applied = await this.deps.shards.applyReplica(table, item, { nowSeconds: Math.floor(nowMs / 1000), listed });
      if (applied && item.modifiedAtMs !== undefined) {
        this.deps.metrics?.replicaApplied(Math.max(0, this.deps.clock.nowMs() - item.modifiedAtMs));
      }
      return applied ? 'applied' : 'current';
    } catch (error) {
      if (isCrashInjected(error) || !isShardFailure(error)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      const outcome = await this.hint(table, item, reason);
      // Marked after the hint: whichever order a concurrent replay sees them in, the hint is replayed.
      await this.deps.health.markUnavailable(table, reason, nowMs).catch(() => undefined);
      return outcome;
    }
  }

  private async hint(table: string, item: StoredItem, _reason: string): Promise<ReplicaOutcome> {
    this.deps.faults?.reach('write.beforeHint');
    try {
      await this.deps.hints.add({ target: table, item, createdAtMs: this.deps.clock.nowMs() });
      this.deps.metrics?.hintWritten(table);
      return 'hinted';
    } catch (error) {
      if (isCrashInjected(error)) throw error;
      return 'missed';
    }
  }
}
