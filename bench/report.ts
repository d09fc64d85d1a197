// Summarises the rounds (median per metric), compares Ringstore with the raw baseline against the
// issue's target, and prints the table. The bench reports a miss; it never fails on one.
import type { BenchCase, Layer, OperationKind } from './cases';
import { median, type RunStats } from './measure';

/** The foundation issue's target: Ringstore through HTTP costs at most this many times the raw call. */
export const targetRatioMax = 1.5;
/** The cache issue's target: an eventual GET served by a warm cache takes under half a raw GetItem. */
export const cachedGetRatioMax = 0.5;

export interface ModeSummary {
  concurrency: number;
  ops: number;
  /** Median over the rounds, each metric on its own. */
  p50Ms: number;
  p99Ms: number;
  opsPerSecond: number;
  rounds: RunStats[];
}

export interface CaseResult {
  id: string;
  label: string;
  layer: Layer;
  kind: OperationKind;
  /** Concurrency 1: one call at a time, the latency a single client sees. */
  latency: ModeSummary;
  /** Concurrency 8: how many calls per second the machine sustains. */
  throughput: ModeSummary;
}

export interface Ratio {
  name: string;
  ringstore: string;
  raw: string;
  /** Ringstore p50 / raw p50 at concurrency 1: the target's measure. */
  p50: number;
  p99: number;
  /** Raw ops/s / Ringstore ops/s at concurrency 8 (how many times slower). */
  throughput: number;
  /** Whether an issue's target applies (HTTP rows); handler rows are for attribution. */
  targeted: boolean;
  /** The p50 ratio the target allows, when targeted. */
  target?: number;
  verdict: 'PASS' | 'MISS' | '-';
}

export function summarise(benchCase: Pick<BenchCase, 'id' | 'label' | 'layer' | 'kind'>, latencyRounds: RunStats[], throughputRounds: RunStats[]): CaseResult {
  const mode = (rounds: RunStats[]): ModeSummary => ({
    concurrency: rounds[0]!.concurrency,
    ops: rounds[0]!.ops,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    opsPerSecond: median(rounds.map((r) => r.opsPerSecond)),
    rounds,
  });
  const { id, label, layer, kind } = benchCase;
  return { id, label, layer, kind, latency: mode(latencyRounds), throughput: mode(throughputRounds) };
}

/** Ringstore case against its raw baseline; HTTP pairs carry the target. */
const ratioPairs: Array<{ name: string; ringstore: string; raw: string; targeted: boolean; target?: number }> = [
  { name: 'HTTP PUT / raw PutItem', ringstore: 'http.put', raw: 'raw.put', targeted: true, target: targetRatioMax },
  { name: 'HTTP eventual GET, warm cache / raw GetItem', ringstore: 'http.get', raw: 'raw.get', targeted: true, target: cachedGetRatioMax },
  { name: 'HTTP strong GET / raw consistent GetItem', ringstore: 'http.getStrong', raw: 'raw.getStrong', targeted: true, target: targetRatioMax },
  { name: 'handler PUT / raw PutItem', ringstore: 'handler.put', raw: 'raw.put', targeted: false },
  { name: 'handler eventual GET, warm cache / raw GetItem', ringstore: 'handler.get', raw: 'raw.get', targeted: false },
  { name: 'handler strong GET / raw consistent GetItem', ringstore: 'handler.getStrong', raw: 'raw.getStrong', targeted: false },
  { name: 'HTTP PUT, fetch client / raw PutItem', ringstore: 'diag.fetchPut', raw: 'raw.put', targeted: false },
  { name: 'HTTP GET, fetch client / raw GetItem', ringstore: 'diag.fetchGet', raw: 'raw.get', targeted: false },
  { name: 'HTTP PUT / Ringstore UpdateItem replayed raw (what Ringstore adds)', ringstore: 'http.put', raw: 'diag.shardUpdate', targeted: false },
  { name: 'HTTP strong GET / Ringstore GetItem replayed raw (what Ringstore adds)', ringstore: 'http.getStrong', raw: 'diag.shardGetStrong', targeted: false },
  { name: 'HTTP PUT / handler PUT (gateway share)', ringstore: 'http.put', raw: 'handler.put', targeted: false },
  { name: 'HTTP eventual GET / handler eventual GET (gateway share)', ringstore: 'http.get', raw: 'handler.get', targeted: false },
  { name: 'handler PUT / Ringstore UpdateItem replayed raw', ringstore: 'handler.put', raw: 'diag.shardUpdate', targeted: false },
  { name: 'Ringstore UpdateItem replayed raw / raw PutItem', ringstore: 'diag.shardUpdate', raw: 'raw.put', targeted: false },
  { name: 'handler strong GET / Ringstore GetItem replayed raw', ringstore: 'handler.getStrong', raw: 'diag.shardGetStrong', targeted: false },
];

export function ratios(results: CaseResult[]): Ratio[] {
  const byId = new Map(results.map((r) => [r.id, r]));
  return ratioPairs.flatMap((pair) => {
    const ringstore = byId.get(pair.ringstore);
    const raw = byId.get(pair.raw);
    if (!ringstore || !raw) return [];
    const p50 = ringstore.latency.p50Ms / raw.latency.p50Ms;
    return [{
      ...pair,
      p50,
      p99: ringstore.latency.p99Ms / raw.latency.p99Ms,
      throughput: raw.throughput.opsPerSecond / ringstore.throughput.opsPerSecond,
      verdict: pair.target !== undefined ? (p50 <= pair.target ? 'PASS' : 'MISS') : '-',
    }];
  });
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function renderTable(header: string[], rows: string[][], rightAligned: (column: number) => boolean): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => pad(cell, widths[c]!, rightAligned(c))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const ms = (value: number) => value.toFixed(2);
const x = (value: number) => `${value.toFixed(2)}x`;

export function resultsTable(results: CaseResult[]): string {
  return renderTable(
    ['case', 'p50 ms (c=1)', 'p99 ms (c=1)', 'ops/s (c=1)', 'p50 ms (c=8)', 'p99 ms (c=8)', 'ops/s (c=8)'],
    results.map((r) => [
      r.label,
      ms(r.latency.p50Ms), ms(r.latency.p99Ms), r.latency.opsPerSecond.toFixed(0),
      ms(r.throughput.p50Ms), ms(r.throughput.p99Ms), r.throughput.opsPerSecond.toFixed(0),
    ]),
    (c) => c > 0,
  );
}

export function ratioTable(rows: Ratio[]): string {
  return renderTable(
    ['ratio', 'p50 (c=1)', 'p99 (c=1)', 'throughput (c=8)', 'target (p50)'],
    rows.map((r) => [r.name, x(r.p50), x(r.p99), x(r.throughput), r.target === undefined ? '-' : `<= ${r.target}x ${r.verdict}`]),
    (c) => c > 0 && c < 4,
  );
}

/** The same tables as Markdown, for docs/benchmarks.md. */
export function markdownTables(results: CaseResult[], rows: Ratio[]): { results: string; ratios: string } {
  const md = (header: string[], body: string[][]) =>
    [`| ${header.join(' | ')} |`, `|${header.map((_, c) => (c === 0 ? ' --- ' : ' ---: ')).join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  return {
    results: md(
      ['case', 'p50 ms (c=1)', 'p99 ms (c=1)', 'ops/s (c=1)', 'p50 ms (c=8)', 'p99 ms (c=8)', 'ops/s (c=8)'],
      results.map((r) => [
        r.label,
        ms(r.latency.p50Ms), ms(r.latency.p99Ms), r.latency.opsPerSecond.toFixed(0),
        ms(r.throughput.p50Ms), ms(r.throughput.p99Ms), r.throughput.opsPerSecond.toFixed(0),
      ]),
    ),
    ratios: md(
      ['ratio', 'p50 (c=1)', 'p99 (c=1)', 'throughput (c=8)', 'target (p50)'],
      rows.map((r) => [r.name, x(r.p50), x(r.p99), x(r.throughput), r.target === undefined ? '' : `<= ${r.target}x **${r.verdict}**`]),
    ),
  };
}
