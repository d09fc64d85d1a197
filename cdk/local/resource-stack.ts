// What a start-up function has started, each with its disposer: disposed in reverse order when the start
// fails part-way or the running whole stops (Node 20 has no AsyncDisposableStack).

/** Its result is awaited, a promise or not. */
type Disposer = () => unknown;

/**
 * A stack of started resources. `use` and `defer` push a disposer; `disposeAll` runs every disposer, last
 * pushed first, each even when an earlier one failed, and answers the same promise when called again.
 *
 * @example
 * const stack = new ResourceStack();
 * const engines = stack.use(await startEngines(options), (started) => started.stop());
 * stack.defer(() => failovers.settled());
 * await stack.disposeAll(); // failovers settled, then engines stopped
 */
export class ResourceStack {
  readonly #disposers: Disposer[] = [];
  #disposing: Promise<void> | undefined;

  /** Pushes `dispose(resource)` and answers `resource`, so a start reads `const x = stack.use(await start(), ...)`. */
  use<T>(resource: T, dispose: (resource: T) => unknown): T {
    this.defer(() => dispose(resource));
    return resource;
  }

  /** Pushes a disposer that stands for no single resource (a wait for work in flight, a timer to clear). */
  defer(dispose: Disposer): void {
    // What is pushed once disposal began would never run: a start racing its own stop is a bug to hear of.
    if (this.#disposing) throw new Error('resource stack: a disposer was added after disposal began');
    this.#disposers.push(dispose);
  }

  /**
   * Runs every disposer, last pushed first; a failing one does not stop the others. Rejects with the only
   * error, or an AggregateError of them all (in the order they happened). Idempotent: later calls answer
   * the first call's promise.
   */
  disposeAll(): Promise<void> {
    this.#disposing ??= this.#run();
    return this.#disposing;
  }

  /**
   * A failed start: disposes everything started so far, reports each disposal error through `report` (so
   * none hides the cause), and rethrows `cause`, the error the caller sees.
   */
  async unwind(cause: unknown, report: (error: unknown) => void): Promise<never> {
    try {
      await this.disposeAll();
    } catch (error) {
      for (const each of error instanceof AggregateError ? error.errors : [error]) report(each);
    }
    throw cause;
  }

  async #run(): Promise<void> {
    const errors: unknown[] = [];
    for (const dispose of this.#disposers.toReversed()) {
      try {
        await dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    this.#disposers.length = 0;
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} disposers failed`);
  }
}

/** An error as one line of a log. */
function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `start` with a fresh stack; when it throws, what it had started is disposed in reverse order, the
 * disposal errors are logged, and the start's own error is rethrown.
 *
 * @example
 * return startWithStack(log, async (stack) => {
 *   const server = stack.use(await listen(), (started) => started.close());
 *   return { stop: () => stack.disposeAll() };
 * });
 */
export async function startWithStack<T>(log: (line: string) => void, start: (stack: ResourceStack) => Promise<T>): Promise<T> {
  const stack = new ResourceStack();
  try {
    return await start(stack);
  } catch (error) {
    return stack.unwind(error, (failure) => log(`while stopping what had started: ${describe(failure)}`));
  }
}
