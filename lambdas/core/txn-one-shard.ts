// A transaction whose keys all live on one shard: committed by one atomic write there, with no record and
// no intent (docs/transactions.md, "One shard").
import type { Participant, ParticipantKey, StoredItem, TxnExecution, TxnOutcome } from '../ports';
import { forEachBounded } from './bounded';
import { isRingstoreError, RingstoreError } from './errors';
import { cacheEntryOf, itemOfCacheEntry } from './intents';
import { isLive, tombstoneRetentionSeconds } from './item';
import { intentContentOf, txnOutcome } from './txn-content';
import type { Observed, TxnDeps } from './txn-deps';
import { writeCountOf } from './txn-hooks';
import type { TxnKeyAccess } from './txn-key-access';

export class OneShardCommit {
  constructor(
    private readonly deps: TxnDeps,
    private readonly keys: TxnKeyAccess,
  ) {}

  /**
   * A transaction whose keys all live on one shard needs no coordinator: its keys are taken from the cache
   * when it has them all and the transaction writes (one request), else read (at one instant when it only
   * reads), then every write and every version it read is committed by one
   * atomic write on that shard, conditioned on each key being as read and free of intents. No record
   * and no intent is written, so nothing is left to recover. Undefined when the transaction does not
   * qualify (several shards, more keys than one atomic write takes) or met another transaction on the
   * way (a pending transaction's intent, a key changed since it was read; a read-only one: any intent):
   * the two-phase commit then runs it, and nothing was written. docs/transactions.md, "One shard".
   */
  async commit(execution: TxnExecution): Promise<TxnOutcome | undefined> {
    const [participant, ...others] = execution.participants;
    if (!participant || others.length > 0 || participant.keys.length > this.deps.limits.atomicKeysMax) return undefined;
    if (execution.kind !== 'readOnly' && (await this.spansMovingRanges(participant))) return undefined;
    const cached = await this.asCached(execution, participant);
    if (cached) {
      const outcome = await this.commitAsSeen(execution, participant, cached, 'cache');
      if (outcome) return outcome;
    }
    const { table } = participant;
    const keys = participant.keys.map((key) => key.key);
    // A read-only transaction reads its keys at one instant (TransactGetItems, at twice the read units); one item is
    // read at one instant by any consistent read.
    const atomic = execution.kind === 'readOnly' && keys.length > 1;
    const read = await this.deps.shards.getMany(table, execution.namespace, keys, { atomic });
    // Another transaction's intent. A read-only transaction leaves it to 2PC: resolving it would read that key
    // at another instant than the rest. A writer resolves a decided one as a reader would: a two-phase commit
    // is answered at its decision and leaves its intents to the applier, so without this the next transaction
    // on those keys, sent at once, would go to 2PC as well and leave intents of its own, and so on.
    // A pending one holds its key: 2PC resolves it (wound-wait).
    if (execution.kind === 'readOnly' && [...read.values()].some((item) => item.intent)) return undefined;
    const items = await this.keys.withDecidedIntentsResolved(table, read);
    if (!items) return undefined;
    return this.commitAsSeen(execution, participant, items, 'read');
  }

  /**
   * The keys of a transaction that writes as the cache has them, when it has every one (and the value of each
   * key the transaction reads): the versions the atomic write is conditioned on, so that one request commits
   * it. The cache is only eventually consistent, and that is enough: the atomic write checks each key's
   * version on the shard, so a stale entry makes it write nothing, and the keys are read then. Undefined
   * without a cache, for a read-only transaction (it writes nothing that would check what it read), or when
   * an entry is missing.
   */
  private async asCached(execution: TxnExecution, participant: Participant): Promise<Map<string, StoredItem> | undefined> {
    const { cache } = this.deps;
    if (!cache || execution.kind === 'readOnly') return undefined;
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    const entries = await Promise.all(participant.keys.map(({ key }) => cache.get(execution.namespace, key)));
    const items = new Map<string, StoredItem>();
    for (const [index, { key }] of participant.keys.entries()) {
      const entry = entries[index];
      if (!entry) return undefined;
      const item = itemOfCacheEntry(execution.namespace, key, entry);
      const valueRead = execution.reads.some((read) => read.key === key && read.from === 'committed');
      if (valueRead && item.value === undefined && isLive(item, nowSeconds)) return undefined;
      items.set(key, item);
    }
    return items;
  }

  /**
   * Commits the transaction by one atomic write conditioned on each key being as `items` has it; `items` as
   * read from the shard (`read`: a failed expectation is the transaction's abort) or from the cache (`cache`:
   * anything but a commit leaves it to the read). Undefined when the write found a key otherwise.
   */
  private async commitAsSeen(
    execution: TxnExecution,
    participant: Participant,
    items: ReadonlyMap<string, StoredItem>,
    seenIn: 'read' | 'cache',
  ): Promise<TxnOutcome | undefined> {
    const { table } = participant;
    const observed: Observed[] = [];
    for (const key of participant.keys) {
      const item = items.get(key.key);
      let seen: Observed;
      try {
        seen = this.keys.observe(execution, key.key, item);
      } catch (error) {
        if (!isRingstoreError(error, 'request.tooLarge')) throw error;
        if (seenIn === 'cache') return undefined;
        return txnOutcome(execution, [], { status: 'aborted', abort: { reason: 'tooLarge', key: key.key, message: error.message } });
      }
      const expected = key.expectVersion === undefined ? !key.mustBeLive || seen.found : seen.version === key.expectVersion;
      if (!expected) {
        if (seenIn === 'cache') return undefined;
        return txnOutcome(execution, [], { status: 'aborted', abort: this.keys.preconditionAbort(key, item) });
      }
      observed.push(seen);
    }
    const prepared = [{ table, observed }];
    if (execution.kind === 'readOnly') return txnOutcome(execution, prepared, { status: 'committed' });
    // The deliberately broken mode the serializability suites must catch: keys only read are not checked.
    const skipChecks = this.deps.faults?.isBroken('txnSkipValidation') ?? false;
    const nowMs = this.deps.clock.nowMs();
    const entries = participant.keys
      .filter((key) => key.write !== undefined || !skipChecks)
      .map((key) => ({
        key: key.key,
        token: key.token,
        seenVersion: items.get(key.key)?.version,
        ...(key.write ? { write: intentContentOf(key.write) } : {}),
      }));
    const result = await this.deps.shards.writeAtomically(table, {
      namespace: execution.namespace,
      entries,
      // The two attempts differ in what they expect: each has its own token, so the second is no replay of the first.
      idempotencyToken: seenIn === 'cache' ? `${execution.txid}/as-cached` : execution.txid,
      nowSeconds: Math.floor(nowMs / 1000),
      modifiedAtMs: nowMs,
      writtenBy: { txid: execution.txid, writes: writeCountOf(execution) },
    });
    if (!result.committed) return undefined;
    const moved = await this.keys.ownerMovedAbort(table, participant.keys);
    if (moved) {
      // Landed on a shard a failover is taking the range from: not acknowledged (the copy is
      // reconciled away when that shard rejoins); the client retries on the new owner.
      throw new RingstoreError('shard.failingOver', moved.message, { retryable: true });
    }
    this.deps.faults?.reach('txn.afterAtomicCommit');
    await this.afterAtomicCommit(execution, participant.keys, items, nowMs);
    return txnOutcome(execution, prepared, { status: 'committed' });
  }

  /**
   * Whether a one-shard write would span several token ranges while a rebalance runs; then it goes
   * through the two-phase commit instead. The one-shard write has no decision record: when it lands late
   * on a shard that a cut-over has since fenced, ownerMovedAbort refuses it, but what it wrote stays. Within
   * one range that is all or nothing (the fenced catch-up copies all of it or none; the cleanup removes
   * it), but across two ranges of which only one is cut over, the other's half would stay in force: a
   * transfer half applied. The two-phase commit aborts such a transaction as a whole (its decision
   * record), so it is safe whatever moves (docs/rebalancing.md, "Transactions").
   */
  private async spansMovingRanges(participant: Participant): Promise<boolean> {
    const { ring } = await this.deps.ring.lease();
    if (!ring.rebalancing) return false;
    return new Set(participant.keys.map((key) => ring.rangeOf(key.token).end)).size > 1;
  }

  /** What a commit does after its writes: the caches, and the replicas at once when the request asked for strong. */
  private async afterAtomicCommit(
    execution: TxnExecution,
    keys: readonly ParticipantKey[],
    before: ReadonlyMap<string, StoredItem>,
    nowMs: number,
  ): Promise<void> {
    const ring = await this.deps.ring.current();
    await forEachBounded(
      keys.filter((key) => key.write),
      this.deps.limits.intentConcurrencyMax,
      async (key) => {
        const applied = committedItemOf(execution.namespace, key, (before.get(key.key)?.version ?? 0) + 1, nowMs);
        await this.deps.cache?.put(execution.namespace, key.key, cacheEntryOf(applied));
        if (execution.consistency === 'strong') {
          const [, ...replicas] = ring.replicasOf(key.token);
          await this.deps.replication.fanOut(applied, replicas, ring.backfillingTablesOf(key.token), ring.incomingOwnerTableOf(key.token));
        }
        return 'continue';
      },
    );
  }
}

/** The item an atomic commit left on a key, as the shard store wrote it. */
function committedItemOf(namespace: string, key: ParticipantKey, version: number, nowMs: number): StoredItem {
  const write = key.write!;
  const base = { namespace, key: key.key, token: key.token, version, modifiedAtMs: nowMs };
  if (write.kind === 'delete') {
    return {
      ...base,
      contentType: '',
      size: 0,
      sha256: '',
      tombstone: true,
      expiresAtSeconds: Math.floor(nowMs / 1000) + tombstoneRetentionSeconds,
    };
  }
  const value = new Uint8Array(Buffer.from(write.valueBase64 ?? '', 'base64'));
  return { ...base, contentType: write.contentType, size: write.size, sha256: write.sha256, tombstone: false, value };
}
