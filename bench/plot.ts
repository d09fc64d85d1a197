// Renders p50/p99 per case as an SVG bar chart with Vega-Lite (pure JS: SVG needs no canvas).
// Vega 6 is ESM-only with top-level await, so it is loaded with import() rather than a static import.
import { join } from 'node:path';
import type { CaseResult } from './report';

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
      { case: r.label, order, layer: r.layer, metric: 'p50' as const, concurrency: `concurrency ${mode.concurrency}`, ms: round(mode.p50Ms) },
      { case: r.label, order, layer: r.layer, metric: 'p99' as const, concurrency: `concurrency ${mode.concurrency}`, ms: round(mode.p99Ms) },
    ]),
  );
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * @example
 * await writeFile('docs/benchmarks-latest.svg', await renderSvg(results, 'Ringstore foundation, 2 cores'));
 */
export async function renderSvg(results: CaseResult[], subtitle: string): Promise<string> {
  const vega = await import('vega');
  const { compile } = await import('vega-lite');
  const { spec } = compile({
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
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Where `npm run bench` writes the plot. */
export const svgPath = join(__dirname, '..', 'docs', 'benchmarks-latest.svg');

export function subtitleOf(saved: { machine: { nproc: number; node: string; dynamodbLocal: string }; settings: { valueBytes: number; rounds: number } }): string {
  const { machine, settings } = saved;
  return `${machine.nproc} cores, Node ${machine.node}, DynamoDB Local ${machine.dynamodbLocal}; ${settings.valueBytes} B values, median of ${settings.rounds} rounds`;
}
