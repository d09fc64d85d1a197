// How much load and of which shape: every script's scenarios come from here, so one set of variables
// moves all of them. RS_SCENARIO=arrival (default): constant arrival rate, RS_RATE iterations a second
// for RS_DURATION; RS_SCENARIO=ramping: RS_VUS virtual users ramped up over a quarter of RS_DURATION,
// held, and ramped down over the last quarter. The per-script values are the defaults.
import type { Options, Scenario } from 'k6/options';
import { env, numberEnv, secondsEnv } from './env.ts';

export type Shape = 'arrival' | 'ramping';

export interface Load {
  /** Iterations a second (arrival). */
  rate: number;
  /** Seconds of load. */
  durationSeconds: number;
  /** Virtual users: pre-allocated (arrival), or held (ramping). */
  vus: number;
}

/** The shape asked for by RS_SCENARIO. */
export function shape(): Shape {
  const value = env('RS_SCENARIO') ?? 'arrival';
  if (value !== 'arrival' && value !== 'ramping') throw new Error(`RS_SCENARIO must be arrival or ramping, not ${value}`);
  return value;
}

/** The script's defaults, overridden by RS_RATE, RS_DURATION and RS_VUS. */
export function load(defaults: Load): Load {
  return {
    rate: numberEnv('RS_RATE', defaults.rate),
    durationSeconds: secondsEnv('RS_DURATION', defaults.durationSeconds),
    vus: Math.ceil(numberEnv('RS_VUS', defaults.vus)),
  };
}

/** Every request a scenario makes carries `phase:run`, which the thresholds select (setup's loading does not). */
export const RUN_TAGS = { phase: 'run' } as const;

/**
 * One scenario of the asked shape. `share` scales rate and VUs for a scenario that runs beside others
 * (txn-bank's audits); `startSeconds` places scenarios one after another (mixed-ycsb's workloads).
 */
export function scenario(
  loadOf: Load,
  options: { exec?: string; share?: number; startSeconds?: number; tags?: Record<string, string> } = {},
): Scenario {
  const share = options.share ?? 1;
  const vus = Math.max(1, Math.ceil(loadOf.vus * share));
  const common = {
    ...(options.exec === undefined ? {} : { exec: options.exec }),
    ...(options.startSeconds ? { startTime: `${options.startSeconds}s` } : {}),
    tags: { ...RUN_TAGS, ...options.tags },
  };
  if (shape() === 'ramping') {
    const ramp = Math.max(1, Math.round(loadOf.durationSeconds / 4));
    return {
      ...common,
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: `${ramp}s`, target: vus },
        { duration: `${Math.max(1, loadOf.durationSeconds - 2 * ramp)}s`, target: vus },
        { duration: `${ramp}s`, target: 0 },
      ],
      gracefulRampDown: '10s',
    };
  }
  return {
    ...common,
    executor: 'constant-arrival-rate',
    rate: Math.max(1, Math.round(loadOf.rate * share)),
    timeUnit: '1s',
    duration: `${loadOf.durationSeconds}s`,
    preAllocatedVUs: vus,
    // Room to absorb a slow patch without dropping iterations; beyond it k6 counts dropped_iterations.
    maxVUs: vus * 4,
  };
}

/** Time for `setup` to load the key space (a few thousand writes on a slow deployment). */
export const SETUP_TIMEOUT = '5m';

/** The summary's trend columns: the percentiles the thresholds and the report use. */
export const SUMMARY_TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

/** Options every load script shares. */
export function baseOptions(): Pick<Options, 'setupTimeout' | 'summaryTrendStats'> {
  return { setupTimeout: SETUP_TIMEOUT, summaryTrendStats: SUMMARY_TREND_STATS };
}
