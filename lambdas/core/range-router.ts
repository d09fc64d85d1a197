// Routing a key's write or strong read to the shard that owns its token range, under failovers and a
// rebalance's cut-overs (docs/failover.md "Fencing", docs/rebalancing.md "Cut-over"): a leased ring, a wait
// for a fence to lift, the check that the shard still owned the range once the request returned, and what
// became of a write that landed while the range changed owner. Any service that writes keys on the ring
// routes through it; what it writes is the caller's.
import { RingstoreError } from './errors';
import type { FailoverMetrics, FaultInjector, ItemWrite, RingShard, StoredItem, WriteResult, ShardItemReads } from '../ports';
import { isShardFailure } from './replication';
import type { Ring } from './ring';
import { cutoverFenceWaitMs, fencePollMs, fenceWaitMs, type RingLease, type RingSource } from './ring-source';

/** A write or strong read that finds its ring outdated on return is routed again, this many times in all. */
export const ringRouteAttemptsMax = 3;

export interface RangeRouterDeps {
  ring: RingSource;
  /** Only the consistent reads of a key's copies that a cut-over or a moved write is checked with. */
  items: Pick<ShardItemReads, 'get'>;
  clock: { monotonicMs(): number };
  /** With it, a request meeting a fence waits for it to lift (up to its bound); without, it is refused at once. */
  sleep?: (ms: number) => Promise<void>;
  /** The broken modes `staleRingWrites` and `strongReadFromReplica` (tests only). */
  faults?: FaultInjector;
  /** Counts the requests a fenced or moved range refused. */
  failoverMetrics?: FailoverMetrics;
}

/** Where a routed write's copies go besides its owner. */
export interface WriteRoute {
  /** The key's other replicas. */
  replicas: RingShard[];
  /** Replicas still being backfilled: they take the write but do not count as copies of it. */
  backfilling: ReadonlySet<string>;
  /** The table of the range's incoming owner during a move, which lists the key too. */
  listedOn: string | undefined;
}

/** The owner's answer to a routed write, where it is in effect, and the write as finally sent. */
export interface RoutedWrite extends WriteRoute {
  result: WriteResult;
  write: ItemWrite;
}

export class RangeRouter {
  /** The broken mode `staleRingWrites` only (tests): the ring writes keep routing by. */
  private firstLease?: RingLease;

  constructor(private readonly deps: RangeRouterDeps) {}

  /**
   * The owner's write, routed by a leased ring and acknowledged only if that shard still owned the key once
   * the write returned: one that landed on a shard the range was taken from is sent again (`retimed`) to the
   * new owner, unless it was carried there already (the stray copy is reconciled when the old owner rejoins:
   * docs/failover.md). `writeTo` sends it to a table; what it throws is the caller's answer.
   */
  async ownerWrite(
    first: ItemWrite,
    retimed: () => ItemWrite,
    writeTo: (table: string, write: ItemWrite) => Promise<WriteResult>,
  ): Promise<RoutedWrite> {
    const { token, key } = first;
    for (let attempt = 1, write = first; ; attempt += 1, write = retimed()) {
      const lease = await this.writeLease(token, key);
      const [owner, ...replicas] = lease.ring.replicasOf(token);
      const result = await writeTo(owner!.table, write);
      if (await this.stillOwner(lease, token)) {
        return { result, write, ...routeOf(lease.ring, token, replicas) };
      }
      // Sent again, it would be a second application of a write the owner's range may have carried.
      const carried = await this.carriedTo(token, owner!.table, write, result.version);
      if (carried) return { result, write, ...carried };
      if (attempt >= ringRouteAttemptsMax) throw ownerMoving(key, token, lease.ring);
    }
  }

  /**
   * A strong read of the key's owner with ConsistentRead (linearizable per key): routed by a leased ring and
   * answered only if that shard still owned the key once the read returned. The table read is returned with
   * the item, for the caller to resolve what it finds there (a transaction's intent).
   */
  async ownerRead(namespace: string, key: string, token: number): Promise<{ table: string; item: StoredItem | undefined }> {
    for (let attempt = 1; ; attempt += 1) {
      const lease = await this.strongReadLease(token, key);
      const [owner, ...others] = lease.ring.replicasOf(token);
      // The deliberately broken mode the linearizability checker must catch (tests only).
      const broken = this.deps.faults?.isBroken('strongReadFromReplica') && others.length > 0;
      const shard = broken ? others[others.length - 1]! : owner!;
      const cutOver = lease.ring.isFenced(token);
      let item: StoredItem | undefined | typeof notCarriedYet;
      try {
        item = cutOver
          ? await this.readUnderCutOver(lease.ring, token, shard.table, namespace, key)
          : await this.deps.items.get(shard.table, namespace, key, { consistent: !broken });
      } catch (error) {
        // The owner of a range being cut over did not answer: wait for the cut-over like a write.
        if (!cutOver || !isShardFailure(error)) throw error;
        await this.ownedRange(token, key);
        continue;
      }
      if (item === notCarriedYet) {
        // The copies differ: wait for the cut-over (or see it published already), then read the owner.
        await this.ownedRange(token, key, 'fresh');
        continue;
      }
      const owned = cutOver ? await this.deps.ring.ownerUnchangedSince(lease, token) : await this.deps.ring.stillOwner(lease, token);
      if (owned) return { table: shard.table, item };
      this.deps.failoverMetrics?.routeRefused('stale');
      if (attempt >= ringRouteAttemptsMax) throw ownerMoving(key, token, lease.ring);
    }
  }

  /**
   * A strong read of a range fenced for its cut-over: the old owner's item, if its new owner holds the same
   * version (or neither holds the key); else notCarriedYet, and the read waits for the cut-over. A write routed
   * before the fence can land on the old owner after the fenced catch-up read the range, unacknowledged and
   * never carried (its handler sends it again, to the new owner): answered, a later read of the new owner would
   * go back a version. What the new owner holds under the fence stays (copies are version-guarded). Both are
   * read at once: one read's time, not two.
   */
  private async readUnderCutOver(
    ring: Ring,
    token: number,
    ownerTable: string,
    namespace: string,
    key: string,
  ): Promise<StoredItem | undefined | typeof notCarriedYet> {
    const incoming = ring.incomingOwnerTableOf(token);
    const [owned, carried] = await Promise.all([
      this.deps.items.get(ownerTable, namespace, key, { consistent: true }),
      incoming && incoming !== ownerTable ? this.deps.items.get(incoming, namespace, key, { consistent: true }) : undefined,
    ]);
    if (!incoming || incoming === ownerTable || sameVersion(owned, carried)) return owned;
    return notCarriedYet;
  }

  /**
   * The leased ring a strong read routes by. A range fenced for a cut-over is read from its owner still, and
   * confirmed by a fresh ring read after it (ownerUnchangedSince): under that fence no write is acknowledged
   * anywhere new. A failover's fence (the owner is thought down) is waited for, as a write waits for either.
   */
  private async strongReadLease(token: number, key: string): Promise<RingLease> {
    const lease = await this.deps.ring.lease();
    return !lease.ring.isFenced(token) || lease.ring.rangeOf(token).move ? lease : this.ownedRange(token, key);
  }

  /**
   * A leased ring to route a write or strong read of `token` with; a fenced range answers a retryable 503
   * once its wait is over. `fresh`: the first look too is a fresh ring read (the caller saw its lease outrun).
   */
  private async ownedRange(token: number, key: string, firstLook: 'leased' | 'fresh' = 'leased'): Promise<RingLease> {
    const { clock, sleep } = this.deps;
    const startedMs = clock.monotonicMs();
    for (let polls = 0; ; polls += 1) {
      // While it waits, each look is a fresh ring read: the request goes on as soon as the fence is lifted,
      // not when its cached lease runs out (up to a lease later).
      const lease = polls === 0 && firstLook === 'leased' ? await this.deps.ring.lease() : await this.deps.ring.fresh();
      if (!lease.ring.isFenced(token)) return lease;
      const waitMs = lease.ring.rangeOf(token).move ? cutoverFenceWaitMs : fenceWaitMs;
      if (!sleep || clock.monotonicMs() - startedMs >= waitMs) {
        this.deps.failoverMetrics?.routeRefused('fenced');
        throw ownerMoving(key, token, lease.ring);
      }
      await sleep(fencePollMs);
    }
  }

  /** Whether the shard a write was routed to by `lease` still owned the key once the write returned. */
  private async stillOwner(lease: RingLease, token: number): Promise<boolean> {
    // The deliberately broken mode the failover suite must catch (tests only): no fencing at all.
    if (this.deps.faults?.isBroken('staleRingWrites')) return true;
    const owner = await this.deps.ring.stillOwner(lease, token);
    if (!owner) this.deps.failoverMetrics?.routeRefused('stale');
    return owner;
  }

  /** The ring lease a write routes by: the current one, or in the broken mode the first one ever held. */
  private async writeLease(token: number, key: string): Promise<RingLease> {
    if (this.deps.faults?.isBroken('staleRingWrites')) return (this.firstLease ??= await this.deps.ring.lease());
    return this.ownedRange(token, key);
  }

  /**
   * A write landed on `table` while the key's range changed owner or was fenced: its route in the ring once
   * no fence holds the range, or undefined when it must be sent again. It is in effect when `table` still owns
   * the range (a cut-over that gave up, a fence lifted), or when the owner now holds exactly this write (a
   * cut-over's fenced catch-up copies versions as they are). One that landed after the catch-up, or that a
   * failover's new owner never saw, is sent again: no strong read answered it meanwhile (readUnderCutOver). If
   * the new owner is past its version, it may have been carried and overwritten since: a 503 whose outcome
   * the client reads before it retries (docs/rebalancing.md, "Limits").
   */
  private async carriedTo(token: number, table: string, write: ItemWrite, version: number): Promise<WriteRoute | undefined> {
    const lease = await this.ownedRange(token, write.key);
    const [owner, ...replicas] = lease.ring.replicasOf(token);
    const route = routeOf(lease.ring, token, replicas);
    if (owner!.table === table) return route;
    const held = await this.deps.items.get(owner!.table, write.namespace, write.key, { consistent: true });
    const isThisWrite =
      held?.version === version &&
      held.modifiedAtMs === write.modifiedAtMs &&
      held.tombstone === (write.content === undefined) &&
      (write.content === undefined || held.sha256 === write.content.sha256);
    if (isThisWrite) return (await this.stillOwner(lease, token)) ? route : undefined;
    // Past this version: the new owner took other writes, and whether this one came before them (carried)
    // or not cannot be told. Sent again it might apply twice; answered, it might be lost: neither.
    if ((held?.version ?? 0) > version) throw outcomeUnknown(write.key, version, table);
    return undefined;
  }
}

function routeOf(ring: Ring, token: number, replicas: RingShard[]): WriteRoute {
  return { replicas, backfilling: ring.backfillingTablesOf(token), listedOn: ring.incomingOwnerTableOf(token) };
}

/** A strong read under a cut-over's fence found a version on the old owner its new owner does not hold yet. */
const notCarriedYet = Symbol('notCarriedYet');

/** Whether two copies of a key hold the same version, as a copy carries it (or neither holds the key). */
function sameVersion(a: StoredItem | undefined, b: StoredItem | undefined): boolean {
  if (!a || !b) return a === b;
  return a.version === b.version && a.modifiedAtMs === b.modifiedAtMs && a.tombstone === b.tombstone;
}

/** A key whose range is changing owner (a failover or a rebalance's cut-over): retry after the ring moves on. */
function ownerMoving(key: string, token: number, ring: Ring): RingstoreError {
  const why = ring.rangeOf(token).move || ring.rebalancing ? 'moving to another shard (a rebalance)' : 'being replaced by a failover';
  return new RingstoreError('shard.failingOver', `the owner of ${key} is ${why}; retry in a moment`, {
    retryable: true,
  });
}

function outcomeUnknown(key: string, version: number, table: string): RingstoreError {
  return new RingstoreError(
    'shard.failingOver',
    `version ${version} of ${key} was written on ${table} while its range changed owner, and the new owner has taken later ` +
      'writes since: whether this one is among them cannot be told, so it is not acknowledged; read strongly to see whether it applied',
    // Not retryable: sent again blindly, a write that is in effect would be applied twice (as a transaction's unknown outcome).
    { retryable: false, details: { version } },
  );
}
