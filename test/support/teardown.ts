// What a test file starts (a local cloud, a background load, a child process) is registered here and
// stopped after the file however its tests ended: a failed expectation mid-test leaves nothing running,
// so jest can exit (docs/testing.md, "A failure never becomes a hang").

/** How long one registered stop may take before the teardown names it and goes on with the others. */
export const stopBoundMs = 30_000;

interface Running {
  what: string;
  stop: () => Promise<void>;
}

const running = new Map<number, Running>();
let nextId = 0;

/**
 * Registers `stop` to run after this test file; answers a function that runs it now (once) and
 * unregisters it. Things are stopped in reverse order of registration: a load before the cloud it loads.
 *
 * @example
 * const stopLoad = stopAfterFile('the mixed load', () => load.stop());
 * ...
 * await stopLoad(); // or leave it to the file's end
 */
export function stopAfterFile(what: string, stop: () => Promise<void>): () => Promise<void> {
  const id = nextId;
  nextId += 1;
  let stopping: Promise<void> | undefined;
  const once = () => {
    running.delete(id);
    stopping ??= stop();
    return stopping;
  };
  running.set(id, { what, stop: once });
  return once;
}

/** What is registered and not yet stopped, oldest first. */
export function stillRunning(): string[] {
  return [...running.values()].map((entry) => entry.what);
}

/**
 * Stops everything registered, newest first, each bounded by `stopBoundMs`. Answers the stops that
 * failed or did not finish in time, by name (the caller reports them; a leak is a bug to fix).
 */
export async function stopEverything(): Promise<string[]> {
  const problems: string[] = [];
  for (const [, entry] of [...running.entries()].reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), stopBoundMs)));
    try {
      const outcome = await Promise.race([entry.stop().then(() => 'stopped' as const), bound]);
      if (outcome === 'timeout') problems.push(`${entry.what}: still stopping after ${stopBoundMs} ms`);
    } catch (error) {
      problems.push(`${entry.what}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
  return problems;
}

const reports = new Map<string, () => string[]>();

/**
 * Registers what a running thing logged that a failure would need (a local cloud's ERROR lines): printed
 * after the test file when there is any, so the cause of a 500 is in the test's output.
 *
 * @example
 * reportAfterFile('the local cloud in /tmp/x', () => errorLines);
 */
export function reportAfterFile(what: string, lines: () => string[]): void {
  reports.set(what, lines);
}

/** The registered reports that have lines, one block each; clears the registry. */
export function takeReports(): string[] {
  const blocks = [...reports].flatMap(([what, lines]) => {
    const taken = lines();
    return taken.length === 0 ? [] : [`${what} logged at ERROR (the latest ${taken.length}):\n${taken.join('\n')}`];
  });
  reports.clear();
  return blocks;
}
