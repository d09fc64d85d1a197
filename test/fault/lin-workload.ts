// The linearizability workload shared by the fault suites: concurrent clients read, write,
// compare-and-set, create and delete a few keys strongly while an outage schedule runs, and every call is
// recorded in a history for Porcupine (test/linearizability).
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkLinearizable, type LinearizabilityResult } from '../linearizability/check';
import { type History, HistoryRecorder, type OperationInput, type PendingOperation } from '../linearizability/history';
import { type Consistency, type FaultCloud, type FaultPlan, type Reply, Rng, sleep } from './support';

export const clientCount = 8;
export const keyCount = 3;
/** How long the clients run; the outage schedule is in fractions of it. */
export const workloadMs = 6_000;
/** The broken-mode workload is shorter: a stale read shows up within a few write-then-read pairs. */
export const brokenWorkloadMs = 2_500;
export const brokenAttemptsMax = 3;
/** A client that saw a 5xx backs off, so an outage does not fill the history with unknown outcomes. */
const backoffAfterFailureMs = 100;
export const checkTimeoutSeconds = 60;
/** How long a run may go on past its duration to reach its minimums. */
export const minimumsExtraMsMax = 30_000;

/**
 * Waits (bounded) until `counts` show an operation of unknown outcome: an outage step's condition, so a
 * shard comes back only once a client has felt it down.
 *
 * @example
 * outages: [[0.45, [owner]], [0.6, [], (counts) => untilOutageFelt(counts)]]
 */
export async function untilOutageFelt(counts: Readonly<Record<string, number>>, boundMs = 30_000): Promise<boolean> {
  for (const deadline = Date.now() + boundMs; Date.now() < deadline;) {
    if (unknownsIn(counts) > 0) return true;
    await sleep(50);
  }
  return false;
}

/** Operations of unknown outcome in a run's counts. */
export function unknownsIn(counts: Readonly<Record<string, number>>): number {
  return Object.entries(counts)
    .filter(([name]) => /^\w+\.unknown$/.test(name))
    .reduce((sum, [, n]) => sum + n, 0);
}

export interface Workload {
  /** Label of the run, for keys and values. */
  name: string;
  durationMs: number;
  writeConsistency: Consistency;
  /** After every acknowledged write, the same client reads the key strongly at once. */
  readAfterWrite: boolean;
  /** Broken modes for the whole run (plus the outage schedule). */
  broken: NonNullable<FaultPlan['broken']>;
  /**
   * At each fraction of the run, the shard tables down from then on, once the step's condition (if any) has
   * resolved; it is given the run's live counts (e.g. to wait until an outage was felt).
   */
  outages: ReadonlyArray<
    readonly [number, string[]] | readonly [number, string[], (counts: Readonly<Record<string, number>>) => Promise<unknown>]
  >;
  /**
   * Counts the run must reach (`read.ok`, `cas.ok`, …): the clients go on past `durationMs`, for at most
   * `minimumsExtraMsMax` more, until they are, so a run on a busy machine still judges enough operations.
   */
  minimums?: Readonly<Record<string, number>>;
  /** Concurrent clients (default clientCount). */
  clients?: number;
  /**
   * Once the schedule's last step has run (its condition included, however long that takes on a loaded
   * machine), the clients go on until `untilOk` answers of each kind were acknowledged after it, for at
   * least `minMs` and at most `maxMs`. A run then always has a stretch after its outages to check.
   */
  afterSchedule?: { minMs: number; maxMs: number; untilOk: Readonly<Record<string, number>> };
}

export interface WorkloadRun {
  history: History;
  historyPath: string;
  keys: string[];
  /** Answers no history status covers (4xx other than 404/412, 500): each is a bug of its own. */
  unexpected: string[];
  counts: Record<string, number>;
  /** The counts of the calls made after the schedule's last step. */
  countsAfterSchedule: Record<string, number>;
}

/**
 * Runs `clients` (default `clientCount`) clients on `keys` for `durationMs` while the outage schedule runs (at each fraction
 * of the run, the shards down from then on). Records every call in a history.
 */
export async function runWorkload(cloud: FaultCloud, rng: Rng, workload: Workload, keys: readonly string[]): Promise<WorkloadRun> {
  const { api } = cloud;
  const recorder = new HistoryRecorder();
  const unexpected: string[] = [];
  const counts: Record<string, number> = {};
  const countsAfterSchedule: Record<string, number> = {};
  /** When the schedule's last step ran; a call invoked after it counts in countsAfterSchedule too. */
  let scheduleDoneAt: number | undefined;
  const count = (name: string, invokedAt: number) => {
    counts[name] = (counts[name] ?? 0) + 1;
    if (scheduleDoneAt !== undefined && invokedAt >= scheduleDoneAt) countsAfterSchedule[name] = (countsAfterSchedule[name] ?? 0) + 1;
  };
  const { broken } = workload;
  const plan = (downShards: string[]) => api.setFaults({ broken, downShards });

  await plan([]);
  const started = Date.now();
  const elapsed = () => (Date.now() - started) / workload.durationMs;
  const schedule = (async () => {
    for (const [at, down, condition] of workload.outages) {
      await sleep(Math.max(0, at * workload.durationMs - (Date.now() - started)));
      await condition?.(counts);
      await plan(down);
    }
    scheduleDoneAt = Date.now();
  })();
  let minimumsUntil: number | undefined;
  const done = (): boolean => {
    if (elapsed() < 1) return false;
    const minimumsMet = Object.entries(workload.minimums ?? {}).every(([name, wanted]) => (counts[name] ?? 0) >= wanted);
    minimumsUntil ??= Date.now() + minimumsExtraMsMax;
    if (!minimumsMet && Date.now() < minimumsUntil) return false;
    const after = workload.afterSchedule;
    if (!after) return true;
    if (scheduleDoneAt === undefined) return false;
    const since = Date.now() - scheduleDoneAt;
    if (since < after.minMs) return false;
    const enough = Object.entries(after.untilOk).every(([name, wanted]) => (countsAfterSchedule[name] ?? 0) >= wanted);
    return enough || since >= after.maxMs;
  };

  const client = async (clientId: number, clientRng: Rng): Promise<void> => {
    /** The newest version this client saw per key: the version its compare-and-sets expect. */
    const seen = new Map<string, number>();
    /**
     * Keys whose last call failed with an unknown outcome: the client reads them strongly until a read
     * answers (as the API advises: "read strongly to see whether it applied"). This keeps outages from
     * filling the history with unknown writes, each of which the checker may place anywhere after it.
     */
    const probing = new Set<string>();
    let sequence = 0;
    while (!done()) {
      const key = clientRng.pick(keys);
      const value = `c${clientId}-${sequence}`;
      sequence += 1;
      const roll = clientRng.next();
      let input: OperationInput;
      if (probing.has(key)) input = { op: 'read' };
      else if (workload.readAfterWrite) input = roll < 0.6 ? { op: 'write', value } : { op: 'read' };
      else if (roll < 0.4) input = { op: 'read' };
      else if (roll < 0.65) input = { op: 'write', value };
      else if (roll < 0.85) input = { op: 'cas', value, ifVersion: seen.get(key) ?? 1 };
      else if (roll < 0.95) input = { op: 'create', value };
      else input = { op: 'delete', ifVersion: seen.get(key) ?? 1 };

      const reply = await perform(clientId, key, input);
      if (reply.status >= 500 || reply.status === 0) probing.add(key);
      else if (input.op === 'read') probing.delete(key);
      if (reply.status === 200 && reply.version !== undefined) seen.set(key, Math.max(seen.get(key) ?? 0, reply.version));
      if (reply.status === 200 && input.op !== 'read' && workload.readAfterWrite) {
        const read = await perform(clientId, key, { op: 'read' });
        if (read.status === 200) seen.set(key, Math.max(seen.get(key) ?? 0, read.version!));
      }
      if (reply.status >= 500 || reply.status === 0) await sleep(backoffAfterFailureMs);
      else await sleep(clientRng.int(0, 5));
    }
  };

  /** One call, recorded: 200 ok, 404 notFound, 412 preconditionFailed, anything else unknown. */
  const perform = async (clientId: number, key: string, input: OperationInput): Promise<Reply> => {
    const invokedAt = Date.now();
    const pending: PendingOperation = recorder.invoke(clientId, key, input);
    const consistency = input.op === 'read' ? 'strong' : workload.writeConsistency;
    let reply: Reply;
    switch (input.op) {
      case 'read':
        reply = await api.get(key, 'strong');
        break;
      case 'write':
        reply = await api.put(key, input.value, { consistency });
        break;
      case 'cas':
        reply = await api.put(key, input.value, { consistency, ifMatch: input.ifVersion });
        break;
      case 'create':
        reply = await api.put(key, input.value, { consistency, ifNoneMatch: true });
        break;
      case 'delete':
        reply = await api.delete(key, { consistency, ...(input.ifVersion === undefined ? {} : { ifMatch: input.ifVersion }) });
        break;
    }
    if (reply.status === 200) {
      pending.ok(input.op === 'read' ? { value: reply.value!, version: reply.version! } : { version: reply.version! });
      count(`${input.op}.ok`, invokedAt);
    } else if (reply.status === 404) {
      pending.fail({ status: 'notFound' });
      count(`${input.op}.notFound`, invokedAt);
    } else if (reply.status === 412) {
      pending.fail({ status: 'preconditionFailed' });
      count(`${input.op}.preconditionFailed`, invokedAt);
    } else {
      pending.unknown();
      count(`${input.op}.unknown`, invokedAt);
      count(`${input.op}.unknown.${reply.status}${reply.code ? `.${reply.code}` : ''}`, invokedAt);
      if (reply.status !== 0 && reply.status !== 502 && reply.status !== 503) {
        unexpected.push(`${input.op} of ${key} by client ${clientId}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`);
      }
    }
    return reply;
  };

  await Promise.all(
    Array.from({ length: workload.clients ?? clientCount }, (_, clientId) => client(clientId, new Rng(rng.int(0, 2 ** 31)))),
  );
  await schedule;
  await api.setFaults({});
  // A read whose answer never came changes nothing and constrains nothing: leaving it out keeps the
  // check small (the checker would otherwise try it at every point after its invocation).
  const recorded = recorder.toJSON();
  const history: History = {
    operations: recorded.operations.filter((operation) => !(operation.input.op === 'read' && operation.output.status === 'unknown')),
  };
  const historyPath = join(tmpdir(), `ringstore-lin-${workload.name}-${process.pid}-${Date.now()}.json`);
  writeFileSync(historyPath, JSON.stringify(history));
  if (process.env.RINGSTORE_FAULT_VERBOSE === '1') {
    console.log(
      `${workload.name}: keys ${keys.join(', ')}; outages ${JSON.stringify(workload.outages)}; ` +
        `${history.operations.length} operations in ${historyPath}; ${JSON.stringify(counts)}; after the schedule ${JSON.stringify(countsAfterSchedule)}`,
    );
  }
  return { history, historyPath, keys: [...keys], unexpected, counts, countsAfterSchedule };
}

/**
 * Runs a broken-mode workload up to `brokenAttemptsMax` times, until Porcupine finds a history that does
 * not linearize, and asserts that it did (and that no attempt met an answer outside the history's
 * vocabulary). The histories are removed once the assertions pass.
 */
export async function expectBrokenModeCaught(runAttempt: (attempt: number) => Promise<WorkloadRun>): Promise<LinearizabilityResult> {
  const attempts: Array<{ historyPath: string; result: LinearizabilityResult }> = [];
  for (let attempt = 0; attempt < brokenAttemptsMax; attempt += 1) {
    const run = await runAttempt(attempt);
    expect({ historyPath: run.historyPath, unexpected: run.unexpected }).toEqual({ historyPath: run.historyPath, unexpected: [] });
    const result = await checkLinearizable(run.history, { timeoutSeconds: checkTimeoutSeconds });
    attempts.push({ historyPath: run.historyPath, result });
    if (result.linearizable === false) break;
  }
  const last = attempts.at(-1)!;
  expect({ attempts, linearizable: last.result.linearizable }).toEqual({ attempts, linearizable: false });
  expect(last.result.failingKeys.length).toBeGreaterThan(0);
  for (const { historyPath } of attempts) rmSync(historyPath, { force: true });
  return last.result;
}
