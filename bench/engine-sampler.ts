// Where DynamoDB Local's time goes, from outside it: its one SQLite thread ("SQLiteQueue[...]") runs every
// read and write of every table, a job at a time, each job between a BEGIN and a COMMIT (and a
// BatchWriteItem is a job per item: read, then put, each committed on its own). This samples that thread's
// stack with the JDK's `jstack` every few hundred milliseconds and sorts each sample:
// - commit: in `SQLiteConnection.exec` (BEGIN or COMMIT; on the rollback journal a commit syncs the disk);
// - sqlite: in another SQLite call (a statement stepping: reading or writing rows);
// - java: the engine's own work on the thread (JSON, item conversion, schema lookups);
// - idle: waiting for a job; blocked: waiting for a table's lock (a BatchWriteItem holds its table's).
// Each sample pauses the engine briefly (a safepoint), so a sampled run is a diagnosis, not a run of record.
// The samples are grouped by the phase marked when they were taken (bench:rebalance, BENCH_ENGINE_SAMPLES=1).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pause between two samples (jstack itself takes 100 to 200 ms). */
const sampleGapMs = 100;

export type EngineThreadState = 'commit' | 'sqlite' | 'java' | 'idle' | 'blocked';

export interface PhaseShares {
  samples: number;
  /** Share of the phase's samples in each state, 0 to 1. */
  shares: Record<EngineThreadState, number>;
}

export interface EngineSampler {
  /** Samples from now on count for `phase` (undefined: for none). */
  mark(phase: string | undefined): void;
  /** Stops sampling; each phase's shares. */
  stop(): Promise<Record<string, PhaseShares>>;
}

/** The pid of the DynamoDB Local whose command line names `home` (the bench's throwaway home). */
export function dynamoDbLocalPid(home: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (commandLine.includes('dynamodbv2.local') && commandLine.includes(home)) return Number(entry);
  }
  throw new Error(`no DynamoDB Local of ${home} is running`);
}

/** One jstack sample's state of the SQLite thread, or undefined when the dump has no such thread. */
export function sqliteThreadState(dump: string): EngineThreadState | undefined {
  const block = dump.split('\n\n').find((candidate) => candidate.startsWith('"SQLiteQueue'));
  if (!block) return undefined;
  const state = /java\.lang\.Thread\.State: (\w+)/.exec(block)?.[1];
  if (state === 'BLOCKED') return 'blocked';
  if (state !== 'RUNNABLE') return 'idle';
  const top = /^\s+at (\S+)\(/m.exec(block)?.[1] ?? '';
  if (top.endsWith('sqlite3_exec')) return 'commit';
  if (top.startsWith('com.almworks.sqlite4java._SQLite')) return 'sqlite';
  return 'java';
}

/** Starts sampling the DynamoDB Local of `home`; nothing counts until the first mark. */
export function startEngineSampler(home: string): EngineSampler {
  const pid = String(dynamoDbLocalPid(home));
  const counts = new Map<string, Record<EngineThreadState, number>>();
  let phase: string | undefined;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const sampledPhase = phase;
      const { stdout } = await run('jstack', [pid], { timeout: 10_000, maxBuffer: 16 * 1024 * 1024 });
      const state = sqliteThreadState(stdout);
      if (state && sampledPhase !== undefined && sampledPhase === phase) {
        const phaseCounts = counts.get(sampledPhase) ?? { commit: 0, sqlite: 0, java: 0, idle: 0, blocked: 0 };
        phaseCounts[state] += 1;
        counts.set(sampledPhase, phaseCounts);
      }
      await new Promise((resolve) => setTimeout(resolve, sampleGapMs));
    }
  })();
  return {
    mark: (next) => void (phase = next),
    async stop() {
      stopped = true;
      await loop;
      return Object.fromEntries(
        [...counts].map(([name, phaseCounts]) => {
          const samples = Object.values(phaseCounts).reduce((sum, count) => sum + count, 0);
          const shares = Object.fromEntries(
            Object.entries(phaseCounts).map(([state, count]) => [state, Math.round((count / samples) * 100) / 100]),
          ) as Record<EngineThreadState, number>;
          return [name, { samples, shares }];
        }),
      );
    },
  };
}
