// The transaction state machine's execution (its input, the state every task receives) and the port
// that runs one: Step Functions in AWS, aws-local-stepfunctions in the local cloud.
import type { Intent } from './item';
import type { Consistency } from './consistency';

/** A write as the state carries it: the value base64-encoded (the state is JSON). */
export interface WriteJson {
  kind: Intent['kind'];
  valueBase64?: string;
  contentType: string;
  size: number;
  sha256: string;
}

export interface ParticipantKey {
  key: string;
  /** Where the key first appears in the request: the answer lists writes in this order. */
  position: number;
  token: number;
  expectVersion?: number;
  mustBeLive: boolean;
  write?: WriteJson;
}

/** The keys of one owner shard: one Map iteration of prepare, validate, commit and abort. */
export interface Participant {
  table: string;
  keys: ParticipantKey[];
}

/** The execution input of the state machine. */
export interface TxnExecution {
  txid: string;
  namespace: string;
  consistency: Consistency;
  createdAtMs: number;
  deadlineMs: number;
  kind: 'readOnly' | 'writeOnly' | 'readWrite';
  participants: Participant[];
  /** One per `get` op, in request order. */
  reads: Array<{ key: string; from: 'committed' } | { key: string; from: 'transaction'; write: WriteJson }>;
}

export type AbortReason = 'conflict' | 'precondition' | 'notFound' | 'timeout' | 'tooLarge' | 'unavailable';

export interface Abort {
  reason: AbortReason;
  key?: string;
  message: string;
}

export type TxnOutcome =
  | {
      status: 'committed';
      txid: string;
      writes: Array<{ key: string; version: number }>;
      reads: Array<{ key: string; found: boolean; version?: number; valueBase64?: string; contentType?: string }>;
    }
  | { status: 'aborted'; txid: string; reason: AbortReason; key?: string; message: string };

/** Runs an execution through the state machine (Step Functions in AWS, aws-local-stepfunctions locally). */
export interface Orchestrator {
  run(execution: TxnExecution): Promise<TxnOutcome>;
}
