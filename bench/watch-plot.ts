// The plot of `npm run bench:watch`: for each measure, the share of writes that had reached it by a given time after
// their acknowledgement (an empirical CDF), drawn with the benches' Vega-Lite renderer (bench/plot.ts). Drawn from
// what the results file holds, so `npx tsx bench/watch-render.ts` can draw it again without measuring.
import { join } from 'node:path';
import { benchPlotsDir } from './environment';
import { toSvg } from './plot';

export const watchSvgPath = join(benchPlotsDir, 'benchmarks-watch.svg');

/** What of a results file (bench/results/watch-<label>.json) the plot reads. */
export interface SavedWatchRun {
  code: { commit: string };
  settings: { BENCH_WATCH_SECONDS: number; BENCH_WATCH_WATCHERS: number };
  summary: {
    feed: { settleMs: number; pollMs: number; waitSeconds: number };
    writes: { ratePerSecond: number; valueBytes: number };
    delivery: { prefix: { prefix: string } };
    ratios: { prefixP50: number; prefixP99: number; namespaceP50: number; namespaceP99: number };
  };
  /** Per write (ms after its acknowledgement); the deliveries once per watcher. */
  lagsMs: { replication: number[]; stamped: number[]; prefix: number[]; namespace: number[] };
}

/** One line of the plot: a measure's values, one per write (ms after the acknowledgement). */
interface LagSeries {
  name: string;
  valuesMs: readonly number[];
}

/** Points of a line: the value at each percent of the writes, nearest rank, so the SVG stays small at any write count. */
function cdfPoints(series: LagSeries): Array<{ series: string; ms: number; share: number }> {
  const sorted = [...series.valuesMs].sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  return Array.from({ length: 101 }, (_, percent) => ({
    series: series.name,
    ms: sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((percent / 100) * sorted.length) - 1))]!,
    share: percent / 100,
  }));
}

/**
 * @example
 * await writeFile(watchSvgPath, await renderWatchSvg(JSON.parse(await readFile('bench/results/watch-latest.json', 'utf8'))));
 */
export async function renderWatchSvg(run: SavedWatchRun): Promise<string> {
  const { summary, lagsMs, settings } = run;
  const series: LagSeries[] = [
    { name: 'replicas hold it', valuesMs: lagsMs.replication },
    { name: 'feed entry stamped (then appended)', valuesMs: lagsMs.stamped },
    { name: `delivered, prefix ${summary.delivery.prefix.prefix}`, valuesMs: lagsMs.prefix },
    { name: 'delivered, whole namespace', valuesMs: lagsMs.namespace },
  ];
  const subtitle = [
    `${summary.writes.ratePerSecond} eventual PUTs/s of ${summary.writes.valueBytes} B for ${settings.BENCH_WATCH_SECONDS} s; ` +
      `${settings.BENCH_WATCH_WATCHERS} + ${settings.BENCH_WATCH_WATCHERS} watchers, waitSeconds=${summary.feed.waitSeconds}; ` +
      `settle ${summary.feed.settleMs} ms, poll ${summary.feed.pollMs} ms; code ${run.code.commit}`,
    `delivery / replication lag: p50 ${summary.ratios.prefixP50}x, p99 ${summary.ratios.prefixP99}x (prefix); ` +
      `p50 ${summary.ratios.namespaceP50}x, p99 ${summary.ratios.namespaceP99}x (whole namespace)`,
  ];
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Change feed: when a write had reached each point, after its acknowledgement', subtitle },
    data: { values: series.flatMap(cdfPoints) },
    width: 560,
    height: 260,
    mark: { type: 'line', interpolate: 'step-after', tooltip: true },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: 'ms after the PUT was acknowledged' },
      y: { field: 'share', type: 'quantitative', title: 'share of the writes', axis: { format: '%' } },
      color: { field: 'series', type: 'nominal', title: null, sort: series.map((line) => line.name), legend: { labelLimit: 320 } },
    },
    config: { font: 'sans-serif', background: 'white' },
  });
}
