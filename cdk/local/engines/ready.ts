// Waits until an engine answers a real request, failing fast when its process dies and quoting
// its output when it never becomes ready.
import { describeExit, type ManagedChild } from './child';

/** Default bound on an engine's start-up (a cold JVM on a busy 2-core machine takes a few seconds). */
export const READY_TIMEOUT_MS = 60_000;
/** Pause between readiness probes. */
export const READY_POLL_MS = 100;
/** Bound on one probe: a socket that accepts but never answers must not stall the wait. */
export const PROBE_TIMEOUT_MS = 3_000;

/** Thrown when an engine does not come up; `message` carries the tail of the engine's output. */
export class EngineStartError extends Error {
  override readonly name = 'EngineStartError';
  readonly code = 'engine.startFailed';
  constructor(
    message: string,
    /** True when the process exited before answering (e.g. port taken), false on timeout. */
    readonly exitedEarly: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface WaitReadyOptions {
  name: string;
  child?: ManagedChild;
  /** One readiness request; should honour `signal` (SDK: `send(cmd, { abortSignal: signal })`). */
  probe: (signal: AbortSignal) => Promise<unknown>;
  timeoutMs?: number;
}

const DIED: unique symbol = Symbol('died');

/**
 * An engine that could not bind its port but keeps running (ElasticMQ's actor system logs the BindException
 * and stays up): a port taken between our probe for a free one and the engine's bind. Read from its output.
 */
const BIND_FAILURE = /java\.net\.BindException|Address already in use|EADDRINUSE/;

/** Lines of the engine's output searched for a bind failure (a JVM stack trace runs to dozens of lines). */
const BIND_FAILURE_LINES = 400;

/** Throws the port race (`exitedEarly`: the caller retries on another port) when the output shows a failed bind. */
function assertBound(name: string, child: ManagedChild | undefined): void {
  if (!child || !BIND_FAILURE.test(child.outputTail(BIND_FAILURE_LINES))) return;
  throw new EngineStartError(withOutput(`${name} could not bind its port (taken since it was picked)`, child), true);
}

function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

function withOutput(message: string, child: ManagedChild | undefined): string {
  const tail = child?.outputTail();
  return tail ? `${message}\n--- last output of ${child?.name} ---\n${tail}` : message;
}

/**
 * Polls `probe` until it resolves. Rejects with {@link EngineStartError} when the child exits first
 * or `timeoutMs` passes.
 *
 * @example
 * await waitReady({ name: 'DynamoDB Local', child, probe: (signal) => ddb.send(new ListTablesCommand({}), { abortSignal: signal }) });
 */
export async function waitReady({ name, child, probe, timeoutMs = READY_TIMEOUT_MS }: WaitReadyOptions): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const exit = child?.exitInfo();
    if (exit) {
      throw new EngineStartError(withOutput(`${name} ${describeExit(exit)} before it was ready`, child), true);
    }
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const ms = Math.max(1, Math.min(PROBE_TIMEOUT_MS, deadline - Date.now()));
      timer = setTimeout(() => {
        const error = new Error(`probe timed out after ${ms} ms`);
        abort.abort(error);
        reject(error);
      }, ms);
    });
    try {
      // Raced as well as aborted: the wait stays bounded even if a probe ignores its signal.
      // Also stop waiting on a probe as soon as the process dies (a socket squatter may never answer).
      const died = child ? child.exited.then(() => DIED) : new Promise<never>(() => {});
      if ((await Promise.race([probe(abort.signal), timeout, died])) === DIED) {
        abort.abort();
        continue;
      }
      // An answer on the port while this engine failed to bind it is another process's: not ours.
      assertBound(name, child);
      return;
    } catch (e) {
      if (e instanceof EngineStartError) throw e;
      lastError = e;
    } finally {
      clearTimeout(timer);
    }
    assertBound(name, child);
    if (Date.now() >= deadline) {
      throw new EngineStartError(
        withOutput(`${name} did not answer within ${timeoutMs} ms (last probe error: ${errorText(lastError)})`, child),
        false,
        { cause: lastError },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
}
