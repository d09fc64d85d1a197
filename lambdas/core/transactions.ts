// Multi-key ACID transactions (docs/transactions.md): two-phase commit over the shard tables, with write
// intents as locks (2PL on the write set), validation of the read set (as Silo does: versions read
// must be unchanged once every write is locked), one conditional write of the transaction record as
// the decision, and presumed commit. Each step below is one state of the Step Functions machine in
// schemas/txn-state-machine.asl.json; the state carries the plan, never more than the payload limit.
import type {
  Abort,
  Participant,
  TxnExecution,
  TxnOutcome,
  WriteJson,
  ParticipantKey,
  FaultInjector,
  StoredItem,
  TxnCommittedWrite,
  Consistency,
  Clock,
  IdSource,
  ShardItemReads,
  ShardTransactions,
  TxnRecord,
  TxnRecordStore,
  ValueCache,
  DrMode,
  StorageQuota,
} from '../ports';
import { IntentConflictError, PreconditionFailedError, RingstoreError, isRingstoreError } from './errors';
import { isCrashInjected } from './faults';
import { forAllBounded, forEachBounded } from './bounded';
import { cacheEntryOf, IntentResolver } from './intents';
import { isLive, tombstoneRetentionSeconds } from './item';
import type { ReplicationService } from './replication';
import type { RingSource } from './ring-source';
import { hasStorageBound } from './quotas';
import { noTxnHooks, writeCountOf, type TxnHooks } from './txn-hooks';
import { planTransaction, type PlannedWrite, type TxnLimits, type TxnOp } from './txn-plan';

export interface TxnServiceLimits extends TxnLimits {
  txnTimeoutMsDefault: number;
  /** Bytes of values a transaction may return (they travel through the state machine's state). */
  txnReadBytesMax: number;
  /** Attempts to place one intent while resolving other transactions' intents on the key. */
  intentAttemptsMax: number;
  /** Keys of a one-shard transaction committed by one atomic write; more use two-phase commit. */
  atomicKeysMax: number;
  /** Keys of one participant worked on at once (prepare, commit, abort). */
  intentConcurrencyMax: number;
}

export interface TxnDeps {
  shards: ShardItemReads & ShardTransactions;
  records: TxnRecordStore;
  ring: RingSource;
  clock: Clock;
  ids: IdSource;
  replication: ReplicationService;
  cache?: ValueCache;
  faults?: FaultInjector;
  limits: TxnServiceLimits;
  /** What a capability adds around a transaction (txn-hooks.ts; DR's in dr-hooks.ts); none by default. */
  hooks?: TxnHooks;
}

/** What a participant saw of a key when it locked or read it. */
export interface Observed {
  key: string;
  /** The live version (0: absent, deleted or expired). */
  version: number;
  /** The stored version, which a write continues from (a deleted key's tombstone keeps counting). */
  storedVersion: number;
  found: boolean;
  valueBase64?: string;
  contentType?: string;
}

export interface PrepareResult {
  table: string;
  abort?: Abort;
  observed: Observed[];
}

export interface Decision {
  status: 'committed' | 'aborted';
  abort?: Abort;
}

export interface SweepReport {
  examined: number;
  aborted: number;
  rolledForward: number;
  cleared: number;
  /** Deadlines before this are done; the next sweep starts here. */
  sweptUntilMs: number;
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export class TransactionService {
  readonly intents: IntentResolver;

  constructor(private readonly deps: TxnDeps) {
    this.intents = new IntentResolver({
      shards: deps.shards,
      records: deps.records,
      clock: deps.clock,
      ...(deps.cache ? { cache: deps.cache } : {}),
    });
  }

  /** Validates and plans a request into the state machine's input. */
  async plan(
    namespace: string,
    ops: readonly TxnOp[],
    options: { timeoutMs?: number; consistency: Consistency; storageQuota?: StorageQuota },
  ): Promise<TxnExecution> {
    const { limits, clock, ids } = this.deps;
    await this.assertAcknowledgeable();
    const timeoutMs = options.timeoutMs ?? limits.txnTimeoutMsDefault;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > limits.txnTimeoutMsMax) {
      throw new RingstoreError('request.invalid', `timeoutMs must be an integer from 100 to ${limits.txnTimeoutMsMax}`, {
        details: { field: 'timeoutMs' },
      });
    }
    const plan = planTransaction(namespace, ops, limits);
    // A transaction's writes reach their owners through intents, which the usage counter does not see: a
    // namespace with a storage quota runs read-only transactions only, so that its count stays exact.
    if (hasStorageBound(options.storageQuota) && plan.keys.some((keyPlan) => keyPlan.write)) {
      throw new RingstoreError(
        'quota.unsupported',
        `namespace ${namespace} has a storage quota: its transactions may only read and check keys (write them with PUT and DELETE)`,
        { details: { field: 'ops' } },
      );
    }
    const ring = await this.deps.ring.current();
    const byTable = new Map<string, Participant>();
    for (const [position, keyPlan] of plan.keys.entries()) {
      const table = ring.ownerOf(keyPlan.token).table;
      const participant = byTable.get(table) ?? { table, keys: [] };
      byTable.set(table, participant);
      participant.keys.push({
        key: keyPlan.key,
        position,
        token: keyPlan.token,
        mustBeLive: keyPlan.mustBeLive,
        ...(keyPlan.expectVersion === undefined ? {} : { expectVersion: keyPlan.expectVersion }),
        ...(keyPlan.write ? { write: writeJsonOf(keyPlan.write) } : {}),
      });
    }
    await this.assertKeysServable(namespace, [...byTable.values()]);
    const createdAtMs = clock.nowMs();
    // Ids sort by start time, so age (for wound-wait) can also be read from the id.
    const txid = `${createdAtMs.toString(36).padStart(9, '0')}-${ids.newId().replace(/-/g, '')}`;
    return {
      txid,
      namespace,
      consistency: options.consistency,
      createdAtMs,
      deadlineMs: createdAtMs + timeoutMs,
      kind: plan.kind,
      participants: [...byTable.values()],
      reads: plan.reads.map((read) =>
        read.from === 'committed' ? read : { key: read.key, from: 'transaction', write: writeJsonOf(read.write) },
      ),
    };
  }

  /**
   * A planned transaction's keys, each passed through the hooks' check (a promoted DR region refuses a key
   * lost in the disaster; docs/dr.md). Lost entries only go away, so checking at the plan holds.
   */
  private async assertKeysServable(namespace: string, participants: readonly Participant[]): Promise<void> {
    const { hooks, shards, limits } = this.deps;
    const check = hooks?.assertKeyServable?.bind(hooks);
    if (!check) return;
    const keys = participants.flatMap(({ table, keys: planned }) => planned.map(({ key }) => ({ table, key })));
    await forAllBounded(keys, limits.intentConcurrencyMax, ({ table, key }) =>
      check(namespace, key, () => shards.get(table, namespace, key, { consistent: true })),
    );
  }

  /** Whether this region may run a transaction and answer its outcome now (the hooks'; always without them). */
  async assertAcknowledgeable(): Promise<void> {
    await (this.deps.hooks ?? noTxnHooks).assertAcknowledgeable();
  }

  /** After the outcome is decided, before it is answered: the hooks' work (DR key-sync: the backup told of its writes). */
  async decided(execution: TxnExecution, outcome: TxnOutcome, drMode: DrMode = 'key-sync'): Promise<void> {
    await (this.deps.hooks ?? noTxnHooks).decided(execution, outcome, { drMode });
  }

  /**
   * A transaction whose keys all live on one shard needs no coordinator: its keys are read (at one
   * instant when it only reads), then every write and every version it read is committed by one
   * atomic write on that shard, conditioned on each key being as read and free of intents. No record
   * and no intent is written, so nothing is left to recover. Undefined when the transaction does not
   * qualify (several shards, more keys than one atomic write takes) or met another transaction on the
   * way (an intent, a key changed since it was read): the two-phase commit then runs it, and nothing
   * was written. docs/transactions.md, "One shard".
   */
  async commitOnOneShard(execution: TxnExecution): Promise<TxnOutcome | undefined> {
    const [participant, ...others] = execution.participants;
    if (!participant || others.length > 0 || participant.keys.length > this.deps.limits.atomicKeysMax) return undefined;
    if (execution.kind !== 'readOnly' && (await this.spansMovingRanges(participant))) return undefined;
    const { table } = participant;
    const keys = participant.keys.map((key) => key.key);
    const items = await this.deps.shards.getMany(table, execution.namespace, keys, { atomic: execution.kind === 'readOnly' });
    if ([...items.values()].some((item) => item.intent)) return undefined;
    const observed: Observed[] = [];
    for (const key of participant.keys) {
      const item = items.get(key.key);
      let seen: Observed;
      try {
        seen = this.observe(execution, key.key, item);
      } catch (error) {
        if (!isRingstoreError(error, 'request.tooLarge')) throw error;
        return this.outcome(execution, [], { status: 'aborted', abort: { reason: 'tooLarge', key: key.key, message: error.message } });
      }
      const expected = key.expectVersion === undefined ? !key.mustBeLive || seen.found : seen.version === key.expectVersion;
      if (!expected) return this.outcome(execution, [], { status: 'aborted', abort: this.preconditionAbort(key, item) });
      observed.push(seen);
    }
    const prepared = [{ table, observed }];
    if (execution.kind === 'readOnly') return this.outcome(execution, prepared, { status: 'committed' });
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
      idempotencyToken: execution.txid,
      nowSeconds: Math.floor(nowMs / 1000),
      modifiedAtMs: nowMs,
      writtenBy: { txid: execution.txid, writes: writeCountOf(execution) },
    });
    if (!result.committed) return undefined;
    const moved = await this.ownerMovedAbort(table, participant.keys);
    if (moved) {
      // Landed on a shard a failover is taking the range from: not acknowledged (the copy is
      // reconciled away when that shard rejoins); the client retries on the new owner.
      throw new RingstoreError('shard.failingOver', moved.message, { retryable: true });
    }
    this.deps.faults?.reach('txn.afterAtomicCommit');
    await this.afterAtomicCommit(execution, participant.keys, items, nowMs);
    return this.outcome(execution, prepared, { status: 'committed' });
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

  /** State Begin: the pending record, written before any intent (read-only transactions have none). */
  async begin(execution: TxnExecution): Promise<void> {
    if (execution.kind === 'readOnly') return;
    await this.deps.records.begin({
      txid: execution.txid,
      status: 'pending',
      createdAtMs: execution.createdAtMs,
      deadlineMs: execution.deadlineMs,
      keys: execution.participants.flatMap((participant) =>
        participant.keys
          .filter((key) => key.write)
          .map((key) => ({ table: participant.table, namespace: execution.namespace, key: key.key, kind: key.write!.kind })),
      ),
    });
  }

  /**
   * State Prepare (one Map iteration per participant): locks every written key with an intent that
   * checks its expected version, and reads every key the transaction only reads or checks.
   */
  async prepare(execution: TxnExecution, table: string): Promise<PrepareResult> {
    const participant = participantOf(execution, table);
    const observed: Observed[] = [];
    let abort: Abort | undefined;
    // Keys of one shard in parallel (bounded): a large transaction would otherwise spend its deadline
    // on one round trip per key. Wound-wait needs no lock order, so the order intents land in is free.
    await forEachBounded(participant.keys, this.deps.limits.intentConcurrencyMax, async (key) => {
      if (this.deps.clock.nowMs() > execution.deadlineMs) {
        abort ??= { reason: 'timeout', key: key.key, message: 'the transaction ran past its deadline' };
        return 'stop';
      }
      this.deps.faults?.reach('txn.beforeIntent');
      let result;
      try {
        result = key.write ? await this.lock(execution, table, key) : await this.readCommitted(execution, table, key);
      } catch (error) {
        if (!isRingstoreError(error, 'request.tooLarge')) throw error;
        abort ??= { reason: 'tooLarge', key: key.key, message: error.message };
        return 'stop';
      }
      this.deps.faults?.reach('txn.afterIntent');
      if ('abort' in result) {
        abort ??= result.abort;
        return 'stop';
      }
      observed.push(result.observed);
      return 'continue';
    });
    abort ??= await this.ownerMovedAbort(table, participant.keys);
    return abort ? { table, observed, abort } : { table, observed };
  }

  /**
   * Fencing (docs/failover.md): once a step's intents are placed or its keys read, the ring leased now
   * must still give `table` every key, unfenced. A lease holds at most `ringLeaseMs`, and a failover waits
   * that and its margin after fencing before it settles transactions and reads the candidates, so a step
   * that passes landed before it; one that fails aborts the transaction (retryable), and what it
   * left on a shard that lost the range is cleared when that shard rejoins.
   */
  private async ownerMovedAbort(table: string, keys: readonly ParticipantKey[]): Promise<Abort | undefined> {
    if (keys.length === 0) return undefined;
    const { ring } = await this.deps.ring.lease();
    const moved = keys.find((key) => ring.isFenced(key.token) || ring.ownerOf(key.token).table !== table);
    if (!moved) return undefined;
    return {
      reason: 'unavailable',
      key: moved.key,
      message: `the owner of ${moved.key} is ${ring.rebalancing ? 'moving to another shard (a rebalance)' : 'being replaced by a failover'}; retry the transaction`,
    };
  }

  /**
   * State Validate (read-write and read-only transactions): every key read without a lock must still
   * be at the version prepare saw, with no other transaction's write committed or pending on it.
   * Then the reads and the writes hold at one instant: the decision.
   */
  async validate(execution: TxnExecution, table: string, prepared: PrepareResult): Promise<{ table: string; abort?: Abort }> {
    const participant = participantOf(execution, table);
    if (this.deps.faults?.isBroken('txnSkipValidation')) return { table };
    for (const key of participant.keys) {
      if (key.write) continue;
      const seen = prepared.observed.find((entry) => entry.key === key.key);
      let item = await this.deps.shards.get(table, execution.namespace, key.key, { consistent: true });
      if (item?.intent && item.intent.txid !== execution.txid) {
        // Wound-wait, as when placing an intent: a younger pending writer is aborted first. One still
        // pending (older) may already have validated its own reads, and a transaction it must precede
        // may have committed since; passing over it (even read-only) could close a cycle through that one.
        const resolution = await this.intents.resolve(table, item, execution);
        if (resolution.state === 'pending') {
          return {
            table,
            abort: { reason: 'conflict', key: key.key, message: `key ${key.key} is locked by transaction ${resolution.record.txid}` },
          };
        }
        item = resolution.item;
      }
      const version = isLive(item, this.nowSeconds()) ? item.version : 0;
      if (version !== (seen?.version ?? -1)) {
        return { table, abort: { reason: 'conflict', key: key.key, message: `key ${key.key} changed while the transaction ran` } };
      }
    }
    const moved = await this.ownerMovedAbort(
      table,
      participant.keys.filter((key) => !key.write),
    );
    return moved ? { table, abort: moved } : { table };
  }

  /** State Decide: one conditional write of the record. A read-only transaction decides without one. */
  async decide(execution: TxnExecution, results: Array<{ abort?: Abort; observed?: Observed[] }>): Promise<Decision> {
    const failed = results.find((result) => result.abort)?.abort;
    const late = this.deps.clock.nowMs() > execution.deadlineMs;
    const abort = failed ?? (late ? { reason: 'timeout' as const, message: 'the transaction ran past its deadline' } : undefined);
    if (execution.kind === 'readOnly') return abort ? { status: 'aborted', abort } : { status: 'committed' };
    const record = await this.deps.records.decide(
      execution.txid,
      abort ? 'aborted' : 'committed',
      abort
        ? { reason: abort.reason, ...(abort.key ? { conflictKey: abort.key } : {}) }
        : withWrites(
            committedWritesOf(
              execution,
              results.flatMap((result) => result.observed ?? []),
            ),
          ),
    );
    // No record: Begin never wrote it, so no intent exists either; an abort needs nothing more.
    if (!record && abort) return { status: 'aborted', abort };
    if (!record) throw new RingstoreError('internal', `transaction ${execution.txid} has no record`);
    if (record.status === 'committed') return { status: 'committed' };
    // Someone else may have decided first: an older transaction (wound) or the sweeper (deadline).
    return {
      status: 'aborted',
      abort: abort ?? {
        reason: record.reason === 'timeout' ? 'timeout' : 'conflict',
        ...(record.conflictKey ? { key: record.conflictKey } : {}),
        message: `transaction ${execution.txid} was aborted (${record.reason ?? 'by another transaction'})`,
      },
    };
  }

  /** State Commit (per participant): every intent becomes its key's value with the next version. */
  async commit(execution: TxnExecution, table: string): Promise<void> {
    const participant = participantOf(execution, table);
    const ring = await this.deps.ring.current();
    await forEachBounded(
      participant.keys.filter((key) => key.write),
      this.deps.limits.intentConcurrencyMax,
      async (key) => {
        const nowMs = this.deps.clock.nowMs();
        const applied = await this.deps.shards.applyIntent(table, {
          namespace: execution.namespace,
          key: key.key,
          txid: execution.txid,
          kind: key.write!.kind,
          nowSeconds: Math.floor(nowMs / 1000),
          modifiedAtMs: nowMs,
        });
        // Already applied (a retried step, or a reader rolled it forward): nothing left to do.
        if (!applied) return 'continue';
        await this.deps.cache?.put(execution.namespace, key.key, cacheEntryOf(applied));
        if (execution.consistency === 'strong') {
          const [, ...replicas] = ring.replicasOf(key.token);
          await this.deps.replication.fanOut(applied, replicas, ring.backfillingTablesOf(key.token), ring.incomingOwnerTableOf(key.token));
        }
        return 'continue';
      },
    );
  }

  /** State Abort (per participant): every intent of the transaction is removed. */
  async abort(execution: TxnExecution, table: string): Promise<void> {
    const participant = participantOf(execution, table);
    await forEachBounded(
      participant.keys.filter((key) => key.write),
      this.deps.limits.intentConcurrencyMax,
      async (key) => {
        await this.deps.shards.clearIntent(table, { namespace: execution.namespace, key: key.key, txid: execution.txid });
        return 'continue';
      },
    );
  }

  /** State Done: the answer, from the plan, what prepare saw, and the decision. */
  outcome(execution: TxnExecution, prepared: PrepareResult[], decision: Decision): TxnOutcome {
    if (decision.status === 'aborted') {
      const abort = decision.abort ?? { reason: 'conflict' as const, message: 'aborted' };
      return {
        status: 'aborted',
        txid: execution.txid,
        reason: abort.reason,
        ...(abort.key ? { key: abort.key } : {}),
        message: abort.message,
      };
    }
    const observed = new Map(prepared.flatMap((result) => result.observed).map((entry) => [entry.key, entry]));
    const writes = execution.participants
      .flatMap((participant) => participant.keys.filter((key) => key.write))
      .sort((a, b) => a.position - b.position)
      .map((key) => ({ key: key.key, version: (observed.get(key.key)?.storedVersion ?? 0) + 1 }));
    const reads = execution.reads.map((read) => {
      if (read.from === 'transaction') {
        if (read.write.kind === 'delete') return { key: read.key, found: false };
        // The transaction's own write: the version it committed as.
        const version = (observed.get(read.key)?.storedVersion ?? 0) + 1;
        return { key: read.key, found: true, version, valueBase64: read.write.valueBase64 ?? '', contentType: read.write.contentType };
      }
      const seen = observed.get(read.key);
      if (!seen?.found) return { key: read.key, found: false };
      return {
        key: read.key,
        found: true,
        version: seen.version,
        valueBase64: seen.valueBase64 ?? '',
        contentType: seen.contentType ?? '',
      };
    });
    return { status: 'committed', txid: execution.txid, writes, reads };
  }

  /**
   * The recovery sweeper: every transaction whose deadline fell in [fromMs, toMs) is finished. A
   * pending one (its coordinator is gone) is aborted and its intents cleared; a committed one whose
   * intents are still there is rolled forward; an aborted one has any intent left cleared.
   */
  async sweep(fromMs: number, toMs: number, limit: number): Promise<SweepReport> {
    const report: SweepReport = { examined: 0, aborted: 0, rolledForward: 0, cleared: 0, sweptUntilMs: toMs };
    const found = await this.deps.records.dueBetween(fromMs, toMs, limit);
    if (found.length === limit) report.sweptUntilMs = found[found.length - 1]!.deadlineMs;
    const records = [];
    for (const record of found) {
      report.examined += 1;
      if (record.status !== 'pending') {
        records.push(record);
        continue;
      }
      const decided = (await this.deps.records.decide(record.txid, 'aborted', { reason: 'timeout' })) ?? record;
      if (decided.status === 'aborted') report.aborted += 1;
      records.push(decided);
    }
    const finished = await this.finishDecided(records);
    report.rolledForward = finished.rolledForward;
    report.cleared = finished.cleared;
    return report;
  }

  /**
   * Finishes decided transactions: every intent a committed one still has becomes its key's value, every
   * intent an aborted one still has is removed. One batched read of all their keys comes first, so a
   * transaction already finished (by its workflow or by readers) costs a read of its keys and no write.
   * The sweeper calls it after deadlines; the applier calls it for each decision on the transaction
   * table's stream (an eventual transaction is answered at its decision and applied there).
   */
  async finishDecided(records: readonly TxnRecord[]): Promise<{ rolledForward: number; cleared: number }> {
    const counts = { rolledForward: 0, cleared: 0 };
    const decided = records.filter((record) => record.status !== 'pending');
    const refs = decided.flatMap((record) => record.keys.map((ref) => ({ record, ref })));
    if (refs.length === 0) return counts;
    const intents = await this.deps.shards.intentsOf(refs.map(({ ref }) => ref));
    const left = refs.flatMap(({ record, ref }, index) => {
      const intent = intents[index];
      return intent?.txid === record.txid ? [{ record, ref, intent }] : [];
    });
    await forAllBounded(left, this.deps.limits.intentConcurrencyMax, async ({ record, ref, intent }) => {
      if (record.status === 'committed') {
        await this.intents.rollForward(ref.table, ref, intent);
        counts.rolledForward += 1;
      } else if (await this.deps.shards.clearIntent(ref.table, { namespace: ref.namespace, key: ref.key, txid: record.txid })) {
        counts.cleared += 1;
      }
    });
    return counts;
  }

  /** Runs every state in order, as the state machine does (used by tests and by the in-process orchestrator). */
  async runInProcess(execution: TxnExecution): Promise<TxnOutcome> {
    const { faults } = this.deps;
    await this.begin(execution);
    faults?.reach('txn.afterBegin');
    let prepared: PrepareResult[] = [];
    let decision: Decision;
    try {
      prepared = await Promise.all(execution.participants.map((participant) => this.prepare(execution, participant.table)));
      faults?.reach('txn.afterPrepare');
      const needsValidation = execution.kind !== 'writeOnly' && prepared.every((result) => !result.abort);
      const validated = needsValidation ? await Promise.all(prepared.map((result) => this.validate(execution, result.table, result))) : [];
      decision = await this.decide(execution, [...prepared, ...validated]);
    } catch (error) {
      if (isCrashInjected(error)) throw error;
      decision = await this.decide(execution, [{ abort: abortOf(error) }]);
    }
    faults?.reach('txn.afterDecide');
    const step = decision.status === 'committed' ? this.commit.bind(this) : this.abort.bind(this);
    await Promise.all(execution.participants.map((participant) => step(execution, participant.table)));
    return this.outcome(execution, prepared, decision);
  }

  private async lock(execution: TxnExecution, table: string, key: ParticipantKey): Promise<{ observed: Observed } | { abort: Abort }> {
    const { limits } = this.deps;
    for (let attempt = 0; attempt < limits.intentAttemptsMax; attempt += 1) {
      try {
        const previous = await this.deps.shards.placeIntent(table, {
          namespace: execution.namespace,
          key: key.key,
          token: key.token,
          intent: {
            txid: execution.txid,
            ...intentContentOf(key.write!),
            placedAtMs: this.deps.clock.nowMs(),
            writes: writeCountOf(execution),
          },
          mustBeLive: key.mustBeLive,
          nowSeconds: this.nowSeconds(),
          ...(key.expectVersion === undefined ? {} : { expectVersion: key.expectVersion }),
        });
        return { observed: this.observe(execution, key.key, previous) };
      } catch (error) {
        if (error instanceof PreconditionFailedError)
          return { abort: this.preconditionAbort(key, error.current as StoredItem | undefined) };
        if (!(error instanceof IntentConflictError)) throw error;
        const resolution = await this.intents.resolve(table, error.current as StoredItem, execution);
        if (resolution.state === 'pending') {
          return {
            abort: {
              reason: 'conflict',
              key: key.key,
              message: `key ${key.key} is locked by an older transaction (${resolution.record.txid})`,
            },
          };
        }
      }
    }
    return {
      abort: { reason: 'conflict', key: key.key, message: `key ${key.key} stayed contended after ${limits.intentAttemptsMax} attempts` },
    };
  }

  private async readCommitted(
    execution: TxnExecution,
    table: string,
    key: ParticipantKey,
  ): Promise<{ observed: Observed } | { abort: Abort }> {
    let item = await this.deps.shards.get(table, execution.namespace, key.key, { consistent: true });
    if (item?.intent && item.intent.txid !== execution.txid) {
      const resolution = await this.intents.resolve(table, item);
      // Pending: its write is not committed, so the committed content is what this transaction reads.
      if (resolution.state === 'gone') item = resolution.item;
    }
    const observed = this.observe(execution, key.key, item);
    if (key.expectVersion !== undefined && observed.version !== key.expectVersion) {
      return { abort: this.preconditionAbort(key, item) };
    }
    return { observed };
  }

  private observe(execution: TxnExecution, key: string, item: StoredItem | undefined): Observed {
    // Read before the liveness guard, which narrows a dead item away.
    const storedVersion = item?.version ?? 0;
    if (!isLive(item, this.nowSeconds())) return { key, version: 0, storedVersion, found: false };
    // Only a key a `get` reads in its committed state needs its value carried to the answer.
    const needed = execution.reads.some((read) => read.key === key && read.from === 'committed');
    if (!needed) return { key, version: item.version, storedVersion: item.version, found: true };
    const bytes = item.value?.byteLength ?? 0;
    if (bytes > this.deps.limits.txnReadBytesMax || item.blob) {
      throw new RingstoreError(
        'request.tooLarge',
        `key ${key} holds ${item.size} bytes: a transaction reads values up to ${this.deps.limits.txnReadBytesMax} bytes`,
        {
          details: { field: 'ops', key },
        },
      );
    }
    return {
      key,
      version: item.version,
      storedVersion: item.version,
      found: true,
      valueBase64: base64(item.value ?? new Uint8Array(0)),
      contentType: item.contentType,
    };
  }

  private preconditionAbort(key: ParticipantKey, current: StoredItem | undefined): Abort {
    const live = isLive(current, this.nowSeconds());
    if (key.expectVersion === undefined && key.mustBeLive) return { reason: 'notFound', key: key.key, message: `key ${key.key} not found` };
    const actual = live ? `version ${current.version}` : 'absent';
    return {
      reason: 'precondition',
      key: key.key,
      message: `key ${key.key} is ${actual}, not ${key.expectVersion === 0 ? 'absent' : `version ${key.expectVersion}`}`,
    };
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

/** The abort a failed step stands for (a step that failed before the decision aborts the transaction). */
export function abortOf(error: unknown): Abort {
  const message = error instanceof Error ? error.message : String(error);
  if (isRingstoreError(error, 'shard.unavailable') || isRingstoreError(error, 'throttled')) return { reason: 'unavailable', message };
  return { reason: 'conflict', message };
}

function writeJsonOf(write: PlannedWrite): WriteJson {
  return {
    kind: write.kind,
    contentType: write.contentType,
    size: write.size,
    sha256: write.sha256,
    ...(write.value === undefined ? {} : { valueBase64: base64(write.value) }),
  };
}

function intentContentOf(write: WriteJson) {
  return {
    kind: write.kind,
    contentType: write.contentType,
    size: write.size,
    sha256: write.sha256,
    ...(write.kind === 'put' ? { value: Buffer.from(write.valueBase64 ?? '', 'base64') } : {}),
  };
}

const withWrites = (writes: TxnCommittedWrite[] | undefined) => (writes ? { writes } : {});

/**
 * The writes a commit decision records: each written key at the version its intent commits as (the
 * stored version prepare locked, plus one) with its content. A failover applies them on a new owner
 * when the owner holding the intents fails before applying them.
 */
function committedWritesOf(execution: TxnExecution, observed: readonly Observed[]): TxnCommittedWrite[] | undefined {
  const stored = new Map(observed.map((entry) => [entry.key, entry.storedVersion]));
  const writes: TxnCommittedWrite[] = [];
  for (const key of execution.participants.flatMap((participant) => participant.keys)) {
    if (!key.write) continue;
    const storedVersion = stored.get(key.key);
    // Not locked by this decider (a decision repeated without the prepare results): the record decides.
    if (storedVersion === undefined) return undefined;
    writes.push({
      namespace: execution.namespace,
      key: key.key,
      token: key.token,
      version: storedVersion + 1,
      ...intentContentOf(key.write),
    });
  }
  return writes;
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

function participantOf(execution: TxnExecution, table: string): Participant {
  const participant = execution.participants.find((entry) => entry.table === table);
  if (!participant) throw new RingstoreError('internal', `transaction ${execution.txid} has no participant ${table}`);
  return participant;
}
