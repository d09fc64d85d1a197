// Fault injection for tests (docs/architecture.md, "Fault injection"): armed crash points, shard outages and broken modes, driven by a
// plan. It exists only when RINGSTORE_FAULT_INJECTION=1, and a production bundle refuses to start with it.
import * as z from 'zod';
import { RingstoreError } from '../core/errors';
import { CrashInjectedError } from '../core/faults';
import { brokenModes, crashPoints, type ShardStore, type BrokenMode, type CrashPoint, type FaultInjector } from '../ports';

/** What a test asks for: replaces the whole current plan. */
export const FaultPlan = z
  .object({
    /** Crash at `point` on its (after+1)-th reach, `times` times in a row (default once). */
    crashes: z
      .array(
        z
          .object({ point: z.enum(crashPoints), after: z.number().int().min(0).default(0), times: z.number().int().min(1).default(1) })
          .strict(),
      )
      .default([]),
    /** Shard tables that answer every call with shard.unavailable. */
    downShards: z.array(z.string().min(1)).default([]),
    broken: z.array(z.enum(brokenModes)).default([]),
  })
  .strict();

export type FaultPlanInput = z.input<typeof FaultPlan>;

interface ArmedCrash {
  skip: number;
  remaining: number;
}

export class FaultController implements FaultInjector {
  private crashes = new Map<CrashPoint, ArmedCrash>();
  private down = new Set<string>();
  private brokenModes = new Set<BrokenMode>();
  private readonly reachedCounts = new Map<CrashPoint, number>();
  private readonly crashedCounts = new Map<CrashPoint, number>();

  apply(input: unknown): void {
    const plan = FaultPlan.parse(input);
    this.crashes = new Map(plan.crashes.map((crash) => [crash.point, { skip: crash.after, remaining: crash.times }]));
    this.down = new Set(plan.downShards);
    this.brokenModes = new Set(plan.broken);
  }

  reach(point: CrashPoint): void {
    this.reachedCounts.set(point, (this.reachedCounts.get(point) ?? 0) + 1);
    const armed = this.crashes.get(point);
    if (!armed) return;
    if (armed.skip > 0) {
      armed.skip -= 1;
      return;
    }
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.crashes.delete(point);
    this.crashedCounts.set(point, (this.crashedCounts.get(point) ?? 0) + 1);
    throw new CrashInjectedError(point);
  }

  isBroken(mode: BrokenMode): boolean {
    return this.brokenModes.has(mode);
  }

  isDown(table: string): boolean {
    return this.down.has(table);
  }

  /** What is armed now and what has happened, for the test that drives it. */
  status() {
    return {
      crashes: [...this.crashes].map(([point, armed]) => ({ point, after: armed.skip, times: armed.remaining })),
      downShards: [...this.down],
      broken: [...this.brokenModes],
      reached: Object.fromEntries(this.reachedCounts),
      crashed: Object.fromEntries(this.crashedCounts),
    };
  }
}

/** A ShardStore whose tables can be taken down: every call to a down table fails as an outage would. */
export class FaultyShardStore implements ShardStore {
  constructor(
    private readonly inner: ShardStore,
    private readonly faults: FaultController,
  ) {}

  private check(table: string): void {
    if (this.faults.isDown(table)) {
      throw new RingstoreError('shard.unavailable', `shard ${table} is unavailable (injected outage)`, { retryable: true });
    }
  }

  get: ShardStore['get'] = async (table, ...rest) => (this.check(table), this.inner.get(table, ...rest));
  heldVersion: ShardStore['heldVersion'] = async (table, ...rest) => (this.check(table), this.inner.heldVersion(table, ...rest));
  write: ShardStore['write'] = async (table, ...rest) => (this.check(table), this.inner.write(table, ...rest));
  applyReplica: ShardStore['applyReplica'] = async (table, ...rest) => (this.check(table), this.inner.applyReplica(table, ...rest));
  listAsOwner: ShardStore['listAsOwner'] = async (table, ...rest) => (this.check(table), this.inner.listAsOwner(table, ...rest));
  resetCopy: ShardStore['resetCopy'] = async (table, ...rest) => (this.check(table), this.inner.resetCopy(table, ...rest));
  list: ShardStore['list'] = async (table, ...rest) => (this.check(table), this.inner.list(table, ...rest));
  getMany: ShardStore['getMany'] = async (table, ...rest) => (this.check(table), this.inner.getMany(table, ...rest));
  writeAtomically: ShardStore['writeAtomically'] = async (table, ...rest) => (
    this.check(table),
    this.inner.writeAtomically(table, ...rest)
  );
  versionsInRange: ShardStore['versionsInRange'] = async (table, ...rest) => (
    this.check(table),
    this.inner.versionsInRange(table, ...rest)
  );
  placeIntent: ShardStore['placeIntent'] = async (table, ...rest) => (this.check(table), this.inner.placeIntent(table, ...rest));
  applyIntent: ShardStore['applyIntent'] = async (table, ...rest) => (this.check(table), this.inner.applyIntent(table, ...rest));
  clearIntent: ShardStore['clearIntent'] = async (table, ...rest) => (this.check(table), this.inner.clearIntent(table, ...rest));
  intentsOf: ShardStore['intentsOf'] = async (keys) => {
    for (const { table } of keys) this.check(table);
    return this.inner.intentsOf(keys);
  };
}
