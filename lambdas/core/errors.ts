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

/**
 * A client's conditional write whose condition did not hold (412): the answer the HTTP layer gives. The store
 * reports a failed condition as an outcome with the current item; the core builds this from it.
 */
export class PreconditionFailedError extends RingstoreError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('kv.preconditionFailed', message, details ? { details } : {});
    this.name = 'PreconditionFailedError';
  }
}

/**
 * The default branch of a switch over a union that the compiler proves exhaustive: `value` is `never` there,
 * so a new member no case names fails to compile; reached at run time only through an untyped value.
 */
export function unexpected(value: never, what: string): never {
  throw new RingstoreError('internal', `unexpected ${what}: ${JSON.stringify(value)}`);
}
