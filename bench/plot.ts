// Renders p50/p99 per case, and the targeted ratios against their targets, as SVG charts with
// Vega-Lite (pure JS: SVG needs no canvas).
// Vega 6 is ESM-only with top-level await, so it is loaded with import() rather than a static import.
import { join } from 'node:path';
import { benchPlotsDir } from './environment';
import type { CaseResult, Ratio } from './report';

interface Datum {
  case: string;
  order: number;
  layer: string;
  metric: 'p50' | 'p99';
  concurrency: string;
  ms: number;
}

function data(results: CaseResult[]): Datum[] {
  return results.flatMap((r, order) =>
    [r.latency, r.throughput].flatMap((mode) => [
      {
        case: r.label,
        order,
        layer: r.layer,
        metric: 'p50' as const,
        concurrency: `concurrency ${mode.concurrency}`,
        ms: round(mode.p50Ms),
      },
      {
        case: r.label,
        order,
        layer: r.layer,
        metric: 'p99' as const,
        concurrency: `concurrency ${mode.concurrency}`,
        ms: round(mode.p99Ms),
      },
    ]),
  );
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * @example
 * await writeFile('docs/benchmarks-latest.svg', await renderSvg(results, 'Ringstore foundation, 2 cores'));
 */
export async function renderSvg(results: CaseResult[], subtitle: string): Promise<string> {
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Latency per case: p50 and p99 (ms, lower is better)', subtitle },
    data: { values: data(results) as unknown as Record<string, unknown>[] },
    facet: { column: { field: 'concurrency', type: 'nominal', title: null } },
    spec: {
      width: 320,
      height: { step: 11 },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'case', type: 'nominal', sort: { field: 'order', op: 'min' }, title: null, axis: { labelLimit: 400 } },
        yOffset: { field: 'metric', type: 'nominal' },
        x: { field: 'ms', type: 'quantitative', title: 'ms' },
        color: { field: 'metric', type: 'nominal', title: 'percentile', scale: { range: ['#4c78a8', '#f58518'] } },
      },
    },
    resolve: { scale: { x: 'independent' } },
    config: { font: 'sans-serif', background: 'white' },
  });
}

/**
 * Any Vega-Lite spec as SVG (also the load-test report's plots, loadtest/report.ts).
 *
 * @example
 * const svg = await toSvg({ mark: 'line', data: { values }, encoding: { x: { field: 't' }, y: { field: 'ms' } } });
 */
export async function toSvg(spec: Record<string, unknown>): Promise<string> {
  const vega = await import('vega');
  const { compile } = await import('vega-lite');
  const view = new vega.View(vega.parse(compile(spec as never).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * The targeted ratios against their targets: p50 bar (coloured by verdict), the target as a black tick.
 *
 * @example
 * await writeFile(replicationSvgPath, await renderReplicationSvg(ratios(results), ['2 cores, Node v20']));
 */
export async function renderReplicationSvg(rows: Ratio[], subtitle: string[]): Promise<string> {
  const values = rows
    .filter((r) => r.targeted && r.target !== undefined)
    .map((r, order) => ({
      ratio: r.name,
      order,
      p50: round(r.p50),
      p99: round(r.p99),
      target: r.target!,
      verdict: r.verdict,
      label: `${r.p50.toFixed(2)}x (target ${r.bound === 'below' ? '<' : '<='} ${r.target}x)`,
    }));
  const y = { field: 'ratio', type: 'nominal', sort: { field: 'order', op: 'min' }, title: null, axis: { labelLimit: 400 } };
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Ringstore / raw DynamoDB Local, p50 at concurrency 1 (bar), target (black tick), p99 (grey dot)', subtitle },
    data: { values },
    width: 420,
    height: { step: 34 },
    layer: [
      {
        mark: { type: 'bar', tooltip: true, height: 18 },
        encoding: {
          y,
          x: { field: 'p50', type: 'quantitative', title: 'times the raw call (lower is better)', scale: { domainMin: 0 } },
          color: {
            field: 'verdict',
            type: 'nominal',
            title: 'verdict',
            scale: { domain: ['PASS', 'MISS'], range: ['#54a24b', '#e45756'] },
          },
        },
      },
      { mark: { type: 'point', filled: true, color: '#888888', size: 40 }, encoding: { y, x: { field: 'p99', type: 'quantitative' } } },
      { mark: { type: 'tick', color: 'black', thickness: 3, size: 30 }, encoding: { y, x: { field: 'target', type: 'quantitative' } } },
      {
        mark: { type: 'text', align: 'left', dx: 6, dy: -14, fontSize: 10 },
        encoding: { y, x: { field: 'target', type: 'quantitative' }, text: { field: 'label' } },
      },
    ],
    config: { font: 'sans-serif', background: 'white' },
  });
}

/** Where `npm run bench` writes the plots. */
export const svgPath = join(benchPlotsDir, 'benchmarks-latest.svg');
export const replicationSvgPath = join(benchPlotsDir, 'benchmarks-replication.svg');

export function subtitleOf(saved: {
  machine: { nproc: number; node: string; dynamodbLocal: string };
  settings: { valueBytes: number; rounds: number };
}): string {
  const { machine, settings } = saved;
  return `${machine.nproc} cores, Node ${machine.node}, DynamoDB Local ${machine.dynamodbLocal}; ${settings.valueBytes} B values, median of ${settings.rounds} rounds`;
}

/** The replication plot's subtitle: the machine, then the replication measurements that have no ratio bar. */
export function replicationSubtitleOf(
  saved: Parameters<typeof subtitleOf>[0] & {
    replication?: {
      convergence?: { writes: number; polledConvergedAfterLastAckMs: number; perKeyLagMs: { p50: number; p99: number } };
      hintReplay?: { hintsPerSecond: number; hintsPerRawPutItem?: number };
    };
  },
): string[] {
  const lines = [subtitleOf(saved)];
  const { convergence: c, hintReplay: h } = saved.replication ?? {};
  if (h)
    lines.push(
      `hint replay ${h.hintsPerSecond} hints/s${h.hintsPerRawPutItem === undefined ? '' : ` (${h.hintsPerRawPutItem.toFixed(2)}x raw PutItem ops/s at concurrency 8)`}`,
    );
  if (c)
    lines.push(
      `${c.writes} eventual PUTs: replicas converged ${c.polledConvergedAfterLastAckMs} ms after the last ack; per-key lag p50 ${c.perKeyLagMs.p50} ms, p99 ${c.perKeyLagMs.p99} ms`,
    );
  return lines;
}

/** One handler's cold start as the comparison plot shows it. */
export interface ColdStartPoint {
  handler: string;
  run: string;
  bundleKiB: number;
  initRatio: number;
}

export const coldStartSvgPath = join(benchPlotsDir, 'benchmarks-cold-start.svg');

/**
 * Bundle size and init time (as a ratio to the bare DynamoDB client measured in the same run) per
 * handler, one bar per run (before and after a change).
 *
 * @example
 * await writeFile(coldStartSvgPath, await renderColdStartSvg(points, 'node v20, 2 cores, 15 samples'));
 */
export async function renderColdStartSvg(points: ColdStartPoint[], subtitle: string): Promise<string> {
  const values = points.flatMap((p) => [
    { handler: p.handler, run: p.run, measure: 'bundle (KiB, minified)', value: p.bundleKiB },
    { handler: p.handler, run: p.run, measure: 'init p50 / bare DynamoDB client', value: p.initRatio },
  ]);
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Cold start per handler (lower is better)', subtitle },
    data: { values },
    facet: { column: { field: 'measure', type: 'nominal', title: null } },
    spec: {
      width: 300,
      height: { step: 9 },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'handler', type: 'nominal', title: null, sort: null },
        yOffset: { field: 'run', type: 'nominal', sort: ['before', 'after'] },
        x: { field: 'value', type: 'quantitative', title: null },
        color: { field: 'run', type: 'nominal', title: 'run', sort: ['before', 'after'], scale: { range: ['#bab0ac', '#4c78a8'] } },
      },
    },
    resolve: { scale: { x: 'independent' } },
    config: { font: 'sans-serif', background: 'white' },
  });
}

export const drSvgPath = join(benchPlotsDir, 'benchmarks-dr.svg');

/**
 * Undetected inconsistencies after a disaster, by value size, for each shipping pipeline, next to the
 * reduction the reference (004) measured for its key-first method against key-and-value-together.
 *
 * @example
 * await writeFile(drSvgPath, await renderDrSvg(runs, reference, '5 ms each way, 12500 KB/s'));
 */
export async function renderDrSvg(
  runs: Array<{ pipeline: string; valueBytes: number; undetectedPercent: number; detectedPercent: number }>,
  reference: Array<{ valueBytes: number; reductionPercent: number }>,
  subtitle: string,
): Promise<string> {
  const size = (bytes: number) => (bytes >= 1_000_000 ? `${bytes / 1_000_000} MB` : `${bytes / 1_000} KB`);
  const order = reference.map((point) => size(point.valueBytes));
  const together = new Map(runs.filter((run) => run.pipeline === 'together').map((run) => [run.valueBytes, run.undetectedPercent]));
  const reductions = runs
    .filter((run) => run.pipeline !== 'together' && (together.get(run.valueBytes) ?? 0) > 0)
    .map((run) => ({
      size: size(run.valueBytes),
      series: `Ringstore ${run.pipeline}`,
      value: 100 * (1 - run.undetectedPercent / together.get(run.valueBytes)!),
    }));
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'After a disaster: keys served older than their latest acknowledged write', subtitle },
    config: { font: 'sans-serif', background: 'white' },
    hconcat: [
      {
        title: 'undetected inconsistencies (% of keys; lower is better)',
        width: 320,
        height: 220,
        data: { values: runs.map((run) => ({ size: size(run.valueBytes), pipeline: run.pipeline, value: run.undetectedPercent })) },
        mark: { type: 'bar', tooltip: true },
        encoding: {
          x: { field: 'size', type: 'nominal', sort: order, title: 'value size' },
          xOffset: { field: 'pipeline', type: 'nominal' },
          y: { field: 'value', type: 'quantitative', title: '% of keys' },
          color: { field: 'pipeline', type: 'nominal' },
        },
      },
      {
        title: 'fewer inconsistencies than key-and-value-together (%)',
        width: 320,
        height: 220,
        data: {
          values: [
            ...reference.map((point) => ({ size: size(point.valueBytes), series: 'reference 004', value: point.reductionPercent })),
            ...reductions,
          ],
        },
        mark: { type: 'bar', tooltip: true },
        encoding: {
          x: { field: 'size', type: 'nominal', sort: order, title: 'value size' },
          xOffset: { field: 'series', type: 'nominal' },
          y: { field: 'value', type: 'quantitative', title: 'reduction (%)', scale: { domain: [0, 100] } },
          color: { field: 'series', type: 'nominal' },
        },
      },
    ],
  });
}
