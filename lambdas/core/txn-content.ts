// The transaction's content as it travels: planned writes as the state machine carries them, as intents
// hold them and as a commit decision records them, and the answer the transaction gives.
import type { Abort, Participant, TxnCommittedWrite, TxnExecution, TxnOutcome, WriteJson } from '../ports';
import { isRingstoreError, RingstoreError } from './errors';
import type { Decision, Observed, PrepareResult } from './txn-deps';
import type { PlannedWrite } from './txn-plan';

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** State Done: the answer, from the plan, what prepare saw, and the decision. */
export function txnOutcome(execution: TxnExecution, prepared: PrepareResult[], decision: Decision): TxnOutcome {
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

/** The abort a failed step stands for (a step that failed before the decision aborts the transaction). */
export function abortOf(error: unknown): Abort {
  const message = error instanceof Error ? error.message : String(error);
  if (isRingstoreError(error, 'shard.unavailable') || isRingstoreError(error, 'throttled')) return { reason: 'unavailable', message };
  return { reason: 'conflict', message };
}

export function writeJsonOf(write: PlannedWrite): WriteJson {
  return {
    kind: write.kind,
    contentType: write.contentType,
    size: write.size,
    sha256: write.sha256,
    ...(write.value === undefined ? {} : { valueBase64: base64(write.value) }),
  };
}

export function intentContentOf(write: WriteJson) {
  return {
    kind: write.kind,
    contentType: write.contentType,
    size: write.size,
    sha256: write.sha256,
    ...(write.kind === 'put' ? { value: Buffer.from(write.valueBase64 ?? '', 'base64') } : {}),
  };
}

export const withWrites = (writes: TxnCommittedWrite[] | undefined) => (writes ? { writes } : {});

/**
 * The writes a commit decision records: each written key at the version its intent commits as (the
 * stored version prepare locked, plus one) with its content. A failover applies them on a new owner
 * when the owner holding the intents fails before applying them.
 */
export function committedWritesOf(execution: TxnExecution, observed: readonly Observed[]): TxnCommittedWrite[] | undefined {
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

export function participantOf(execution: TxnExecution, table: string): Participant {
  const participant = execution.participants.find((entry) => entry.table === table);
  if (!participant) throw new RingstoreError('internal', `transaction ${execution.txid} has no participant ${table}`);
  return participant;
}
