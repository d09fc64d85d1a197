// Multi-key ACID transactions (docs/transactions.md): two-phase commit over the shard tables, with write
// intents as locks (2PL on the write set), validation of the read set (as Silo does: versions read
// must be unchanged once every write is locked), one conditional write of the transaction record as
// the decision, and presumed commit. Each step below is one state of the Step Functions machine in
// schemas/txn-state-machine.asl.json; the state carries the plan, never more than the payload limit.
// This file holds the steps; a step's work on one key is txn-key-access.ts, the one-shard path txn-one-shard.ts,
// the sweeper's recovery txn-recovery.ts, and the content as it travels txn-content.ts.
import type { Abort, Participant, TxnExecution, TxnOutcome, Consistency, TxnRecord, DrMode, StorageQuota } from '../ports';
import { RingstoreError, isRingstoreError } from './errors';
import { isCrashInjected } from './faults';
import { forAllBounded, forEachBounded } from './bounded';
import { cacheEntryOf, IntentResolver } from './intents';
import { isLive } from './item';
import { hasStorageBound } from './quotas';
import { abortOf, committedWritesOf, participantOf, txnOutcome, withWrites, writeJsonOf } from './txn-content';
import type { Decision, Observed, PrepareResult, TxnDeps } from './txn-deps';
import { noTxnHooks } from './txn-hooks';
import { TxnKeyAccess } from './txn-key-access';
import { OneShardCommit } from './txn-one-shard';
import { planTransaction, type TxnOp } from './txn-plan';
import { TxnRecovery, type SweepReport } from './txn-recovery';

export { abortOf } from './txn-content';
export type { Decision, Observed, PrepareResult, TxnDeps, TxnServiceLimits } from './txn-deps';
export type { SweepReport } from './txn-recovery';

export class TransactionService {
  readonly intents: IntentResolver;

  private readonly keys: TxnKeyAccess;
  private readonly oneShard: OneShardCommit;
  private readonly recovery: TxnRecovery;

  constructor(private readonly deps: TxnDeps) {
    this.intents = new IntentResolver({
      shards: deps.shards,
      records: deps.records,
      clock: deps.clock,
      ...(deps.cache ? { cache: deps.cache } : {}),
    });
    this.keys = new TxnKeyAccess({ ...deps, intents: this.intents });
    this.oneShard = new OneShardCommit(deps, this.keys);
    this.recovery = new TxnRecovery(deps, this.intents);
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
   * A transaction whose keys all live on one shard, committed by one atomic write (txn-one-shard.ts); undefined
   * when it does not qualify or met another transaction, and the two-phase commit then runs it.
   */
  async commitOnOneShard(execution: TxnExecution): Promise<TxnOutcome | undefined> {
    return this.oneShard.commit(execution);
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
        result = key.write ? await this.keys.lock(execution, table, key) : await this.keys.readCommitted(execution, table, key);
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
    abort ??= await this.keys.ownerMovedAbort(table, participant.keys);
    return abort ? { table, observed, abort } : { table, observed };
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
      const version = isLive(item, this.keys.nowSeconds()) ? item.version : 0;
      if (version !== (seen?.version ?? -1)) {
        return { table, abort: { reason: 'conflict', key: key.key, message: `key ${key.key} changed while the transaction ran` } };
      }
    }
    const moved = await this.keys.ownerMovedAbort(
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
    return txnOutcome(execution, prepared, decision);
  }

  /** The recovery sweeper's pass over the deadlines in [fromMs, toMs) (txn-recovery.ts). */
  async sweep(fromMs: number, toMs: number, limit: number): Promise<SweepReport> {
    return this.recovery.sweep(fromMs, toMs, limit);
  }

  /** Finishes decided transactions' intents: rolled forward when committed, cleared when aborted (txn-recovery.ts). */
  async finishDecided(records: readonly TxnRecord[]): Promise<{ rolledForward: number; cleared: number }> {
    return this.recovery.finishDecided(records);
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
}
