// The history format the linearizability checker (lincheck, main.go) reads, and a recorder that
// fault tests use to build one from real client calls.

/**
 * What a client asked one key for. `cas` is a PUT with `If-Match: ifVersion`; `create` is a PUT with
 * `If-None-Match: *`; a `delete` with `ifVersion` is a DELETE with `If-Match`.
 *
 * @example
 * const input: OperationInput = { op: 'cas', value: 'x', ifVersion: 2 };
 */
export type OperationInput =
  | { op: 'read' }
  | { op: 'write'; value: string }
  | { op: 'cas'; value: string; ifVersion: number }
  | { op: 'create'; value: string }
  | { op: 'delete'; ifVersion?: number };

/**
 * A success. A read carries the value and version it saw; a write, cas, create or delete the new
 * version. A field left out constrains nothing.
 *
 * @example
 * const output: OkOutput = { status: 'ok', value: 'x', version: 3 };
 */
export interface OkOutput {
  status: 'ok';
  value?: string;
  version?: number;
}

/**
 * A definite failure: `notFound` for a read or unconditional delete of an absent key,
 * `preconditionFailed` for a cas, create or conditional delete whose condition did not hold.
 *
 * @example
 * const output: FailedOutput = { status: 'preconditionFailed' };
 */
export type FailedOutput = { status: 'notFound' } | { status: 'preconditionFailed' };

/**
 * The client cannot tell whether the operation took effect (timeout, 5xx, crash). The checker lets
 * it take effect at any point after its invocation, or never.
 *
 * @example
 * const output: UnknownOutput = { status: 'unknown' };
 */
export interface UnknownOutput {
  status: 'unknown';
}

/**
 * What the client saw.
 *
 * @example
 * const output: OperationOutput = { status: 'notFound' };
 */
export type OperationOutput = OkOutput | FailedOutput | UnknownOutput;

/**
 * One operation on one key: invoked at `invokeNs`, answered at `returnNs` (nanoseconds, integers,
 * from any fixed origin). `returnNs` is required unless the output is `unknown`, where it is ignored.
 *
 * @example
 * const op: HistoryOperation = {
 *   clientId: 0, key: 'k1', input: { op: 'write', value: 'x' }, output: { status: 'ok', version: 1 },
 *   invokeNs: 100, returnNs: 200,
 * };
 */
export interface HistoryOperation {
  clientId: number;
  key: string;
  input: OperationInput;
  output: OperationOutput;
  invokeNs: number;
  returnNs?: number;
}

/**
 * A whole history, in any order (the checker sorts by time).
 *
 * @example
 * const history: History = { operations: [] };
 */
export interface History {
  operations: HistoryOperation[];
}

/**
 * One operation on byte ranges of one volume (`key`: its name), for the checker's `ranges` model (ranges.go): the
 * range is a run of segments `[first, last]` (the caller picks the segment size); a write sets them all to its
 * `id` (positive, unique), a read answers each segment's id (0: never written). The checker finds a torn write or
 * a read of two instants.
 *
 * @example
 * const op: RangeOperation = {
 *   clientId: 1, key: 'disk', input: { op: 'rangeRead', first: 0, last: 2 }, output: { status: 'ok', ids: [0, 7, 7] },
 *   invokeNs: 100, returnNs: 200,
 * };
 */
export interface RangeOperation {
  clientId: number;
  key: string;
  input: { op: 'rangeWrite'; first: number; last: number; id: number } | { op: 'rangeRead'; first: number; last: number };
  output: { status: 'ok'; ids?: number[] } | { status: 'unknown' };
  invokeNs: number;
  returnNs?: number;
}

/**
 * A history of byte-range operations, in any order.
 *
 * @example
 * const history: RangeHistory = { operations: [] };
 */
export interface RangeHistory {
  operations: RangeOperation[];
}

/**
 * An operation in flight: complete it exactly once.
 *
 * @example
 * const op = recorder.invoke(1, 'k1', { op: 'read' });
 * op.ok({ value: 'x', version: 3 });
 */
export interface PendingOperation {
  /** The call succeeded; pass what it returned (`status` may be left out). */
  ok(output?: Omit<OkOutput, 'status'> & { status?: 'ok' }): void;
  /** The call failed definitely: the key was absent, or the precondition did not hold. */
  fail(output: FailedOutput): void;
  /** The outcome is unknown (timeout, 5xx, connection lost): it may or may not have taken effect. */
  unknown(): void;
}

/**
 * Records a history from real calls: call `invoke` just before sending a request and complete the
 * handle as soon as its answer (or failure) arrives. Times come from `process.hrtime.bigint()` and
 * are written relative to the recorder's creation, so they stay well below 2^53.
 * An operation still in flight when the history is taken counts as `unknown`.
 *
 * @example
 * const recorder = new HistoryRecorder();
 * const op = recorder.invoke(0, 'k1', { op: 'write', value: 'x' });
 * try {
 *   op.ok({ version: (await client.put('k1', 'x')).version });
 * } catch (error) {
 *   op.unknown();
 * }
 * const result = await checkLinearizable(recorder.toJSON());
 */
export class HistoryRecorder {
  private readonly startNs = process.hrtime.bigint();
  private readonly operations: HistoryOperation[] = [];
  private readonly pending = new Set<HistoryOperation>();

  /** Number of operations invoked so far. */
  get size(): number {
    return this.operations.length;
  }

  invoke(clientId: number, key: string, input: OperationInput): PendingOperation {
    const operation: HistoryOperation = { clientId, key, input, output: { status: 'unknown' }, invokeNs: this.nowNs() };
    this.operations.push(operation);
    this.pending.add(operation);
    const complete = (output: OperationOutput): void => {
      // Completing twice would hide a harness bug and rewrite history.
      if (!this.pending.delete(operation)) throw new Error(`operation ${describe(operation)} was already completed`);
      operation.output = output;
      if (output.status !== 'unknown') operation.returnNs = this.nowNs();
    };
    return {
      ok: (output = {}) => complete({ ...output, status: 'ok' }),
      fail: (output) => complete(output),
      unknown: () => complete({ status: 'unknown' }),
    };
  }

  /** The history so far, a snapshot; operations still in flight are `unknown`. */
  toJSON(): History {
    return {
      operations: this.operations.map((operation) => ({
        ...operation,
        input: { ...operation.input },
        output: { ...operation.output },
      })),
    };
  }

  private nowNs(): number {
    return Number(process.hrtime.bigint() - this.startNs);
  }
}

function describe(operation: HistoryOperation): string {
  return `${operation.input.op} of ${operation.key} by client ${operation.clientId} at ${operation.invokeNs} ns`;
}
