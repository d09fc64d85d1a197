// Typed errors with literal dotted codes; the codes are the contract's (schemas/errors.ts). Only
// lambdas/http turns an error into an HTTP response.

import type { ErrorCode } from '../../schemas/errors';

export interface RingstoreErrorOptions {
  retryable?: boolean;
  cause?: unknown;
  /** Extra machine-readable facts for the client (e.g. the field that failed). */
  details?: Record<string, unknown>;
}

/** The one error type of Ringstore: a dotted code, a message for humans, and whether a retry can help. */
export class RingstoreError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: RingstoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RingstoreError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    if (options.details) this.details = options.details;
  }
}

export function isRingstoreError(error: unknown, code?: ErrorCode): error is RingstoreError {
  return error instanceof RingstoreError && (code === undefined || error.code === code);
}

/** Fails loudly when an invariant of the domain does not hold (versions only grow, the ring covers the token space). */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new RingstoreError('internal', `invariant violated: ${message}`);
}

/** A conditional write whose condition did not hold; carries what the store holds now. */
export class PreconditionFailedError<Current = unknown> extends RingstoreError {
  readonly current: Current | undefined;

  constructor(message: string, current: Current | undefined, details?: Record<string, unknown>) {
    super('kv.preconditionFailed', message, details ? { details } : {});
    this.name = 'PreconditionFailedError';
    this.current = current;
  }
}

/** Another transaction holds an intent on the key; carries the item with that intent. */
export class IntentConflictError<Current = unknown> extends RingstoreError {
  readonly current: Current;

  constructor(message: string, current: Current) {
    super('txn.conflict', message, { retryable: true });
    this.name = 'IntentConflictError';
    this.current = current;
  }
}
