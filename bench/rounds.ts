// The measured rounds every benchmark shares: each round, the cases take turns in blocks of calls
// (alternating forward and backward order), so a burst of load from elsewhere on the machine falls on
// all cases alike instead of on whichever case happened to be running.
import { loadavg } from 'node:os';
import { type Block, measureBlock, type Operation, type RunStats, statsOf } from './measure';

export interface RoundCase {
  id: string;
  run: Operation;
}

/** One way of calling every case in a round: `ops` calls at `concurrency`, in turns of `blockOps`. */
export interface RoundMode {
  name: string;
  ops: number;
  blockOps: number;
  concurrency: number;
  /** Awaited before each call, untimed (an isolated mode: every call starts on an idle engine). */
  settle?: () => Promise<void>;
  /** The cases this mode runs (all by default). */
  caseIds?: readonly string[];
}

export interface RoundsResult {
  /** mode name -> case id -> one RunStats per round. */
  runs: Map<string, Map<string, RunStats[]>>;
  /** The 1-minute load average after each round. */
  loadPerRound: number[];
}

/** Turns alternate forward and backward, so no case always runs first or after the same neighbour. */
function orderFor<T>(turn: number, cases: readonly T[]): readonly T[] {
  return turn % 2 === 0 ? cases : [...cases].reverse();
}

/**
 * Runs `rounds` rounds of every mode over every case; round r starts its indexes at r * 100,003, so
 * successive rounds visit the keys in a different order.
 *
 * @example
 * const { runs } = await runRounds(cases, [{ name: 'latency', ops: 300, blockOps: 50, concurrency: 1 }], 5, log);
 */
export async function runRounds(
  cases: readonly RoundCase[],
  modes: readonly RoundMode[],
  rounds: number,
  log: (line: string) => void,
): Promise<RoundsResult> {
  const runs = new Map(
    modes.map((mode) => [
      mode.name,
      new Map<string, RunStats[]>(cases.filter((c) => !mode.caseIds || mode.caseIds.includes(c.id)).map((c) => [c.id, []])),
    ]),
  );
  const loadPerRound: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const roundStarted = Date.now();
    const firstIndex = round * 100_003;
    for (const mode of modes) {
      const modeCases = mode.caseIds ? cases.filter((c) => mode.caseIds!.includes(c.id)) : cases;
      const blocks = new Map<string, Block[]>(modeCases.map((c) => [c.id, []]));
      for (let done = 0, turn = 0; done < mode.ops; done += mode.blockOps, turn += 1) {
        const size = Math.min(mode.blockOps, mode.ops - done);
        for (const benchCase of orderFor(round + turn, modeCases)) {
          const settings = { ops: size, concurrency: mode.concurrency, firstIndex: firstIndex + done };
          blocks.get(benchCase.id)!.push(await measureBlock(benchCase.run, mode.settle ? { ...settings, settle: mode.settle } : settings));
        }
      }
      for (const [id, caseBlocks] of blocks) runs.get(mode.name)!.get(id)!.push(statsOf(caseBlocks));
    }
    loadPerRound.push(loadavg()[0]!);
    log(`round ${round + 1}/${rounds} done in ${((Date.now() - roundStarted) / 1000).toFixed(1)} s`);
  }
  return { runs, loadPerRound };
}
