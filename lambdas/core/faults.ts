// The simulated death at a named crash point (the points are in ports/faults.ts). The core only asks an injector;
// the injector exists only in test runs (RINGSTORE_FAULT_INJECTION), and production bundles refuse it.
import type { CrashPoint } from '../ports';

/**
 * A simulated process death at a crash point. It is not a RingstoreError on purpose: nothing may catch
 * it as a domain failure; it unwinds the request like a crashed Lambda (the gateway answers 502).
 */
export class CrashInjectedError extends Error {
  readonly point: CrashPoint;

  constructor(point: CrashPoint) {
    super(`crash injected at ${point}`);
    this.name = 'CrashInjectedError';
    this.point = point;
  }
}

export function isCrashInjected(error: unknown): error is CrashInjectedError {
  return error instanceof CrashInjectedError;
}
