// Summarises the rounds (median per metric), compares Ringstore with the raw baseline against the
// issue's target, and prints the table. The bench reports a miss; it never fails on one.
import type { BenchCase, Layer, OperationKind } from './cases';
import type { StrongGetStepCosts } from './ladder';
import { median, type RunStats } from './measure';
import type { ConvergenceReport, HintReplayReport } from './replication';

/**
 * The replication issue's targets, p50 at concurrency 1 against the raw DynamoDB Local call of the same
 * run. Eventual PUT keeps the foundation's 1.5x; the cached GET's 0.5x comes from the cache issue.
 */
export const targets = {
  /** Eventual PUT (owner UpdateItem; replicas follow from the stream) / raw PutItem: at most. */
  eventualPut: 1.5,
  /** Strong PUT, RF=3 (owner, then both replicas in parallel) / raw PutItem: at most. */
  strongPut: 2.5,
  /** Strong GET (owner, ConsistentRead, no cache) / raw ConsistentRead GetItem: at most. */
  strongGet: 1.3,
  /** Eventual GET with a warm cache / raw GetItem: below. */
  cachedGet: 0.5,
} as const;

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
  /** `below`: the ratio must be under the target; `atMost` (default): at most the target. */
  bound?: 'below' | 'atMost';
  verdict: 'PASS' | 'MISS' | '-';
}

export function summarise(
  benchCase: Pick<BenchCase, 'id' | 'label' | 'layer' | 'kind'>,
  latencyRounds: RunStats[],
  throughputRounds: RunStats[],
): CaseResult {
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

type RatioPair = Pick<Ratio, 'name' | 'ringstore' | 'raw' | 'targeted' | 'target' | 'bound'>;

/** Ringstore case against its raw baseline; the four HTTP pairs first carry the targets, the rest attribute. */
const ratioPairs: RatioPair[] = [
  { name: 'HTTP eventual PUT / raw PutItem', ringstore: 'http.put', raw: 'raw.put', targeted: true, target: targets.eventualPut },
  { name: 'HTTP strong PUT (RF=3) / raw PutItem', ringstore: 'http.putStrong', raw: 'raw.put', targeted: true, target: targets.strongPut },
  {
    name: 'HTTP strong GET / raw consistent GetItem',
    ringstore: 'http.getStrong',
    raw: 'raw.getStrong',
    targeted: true,
    target: targets.strongGet,
  },
  {
    name: 'HTTP eventual GET, warm cache / raw GetItem',
    ringstore: 'http.get',
    raw: 'raw.get',
    targeted: true,
    target: targets.cachedGet,
    bound: 'below',
  },
  { name: 'handler eventual PUT / raw PutItem', ringstore: 'handler.put', raw: 'raw.put', targeted: false },
  { name: 'handler strong PUT / raw PutItem', ringstore: 'handler.putStrong', raw: 'raw.put', targeted: false },
  { name: 'handler strong GET / raw consistent GetItem', ringstore: 'handler.getStrong', raw: 'raw.getStrong', targeted: false },
  { name: 'handler eventual GET, warm cache / raw GetItem', ringstore: 'handler.get', raw: 'raw.get', targeted: false },
  { name: 'HTTP strong PUT / HTTP eventual PUT (what strong adds)', ringstore: 'http.putStrong', raw: 'http.put', targeted: false },
  { name: 'handler strong PUT / handler eventual PUT', ringstore: 'handler.putStrong', raw: 'handler.put', targeted: false },
  {
    name: 'HTTP eventual PUT / Ringstore UpdateItem replayed raw (what Ringstore adds)',
    ringstore: 'http.put',
    raw: 'diag.shardUpdate',
    targeted: false,
  },
  {
    name: 'HTTP strong PUT / Ringstore strong write replayed raw (what Ringstore adds)',
    ringstore: 'http.putStrong',
    raw: 'diag.shardStrongWrite',
    targeted: false,
  },
  {
    name: 'HTTP strong GET / Ringstore GetItem replayed raw (what Ringstore adds)',
    ringstore: 'http.getStrong',
    raw: 'diag.shardGetStrong',
    targeted: false,
  },
  { name: 'Ringstore UpdateItem replayed raw / raw PutItem (data model)', ringstore: 'diag.shardUpdate', raw: 'raw.put', targeted: false },
  {
    name: 'Ringstore strong write replayed raw / raw PutItem (data model)',
    ringstore: 'diag.shardStrongWrite',
    raw: 'raw.put',
    targeted: false,
  },
  {
    name: 'Ringstore GetItem replayed raw / raw consistent GetItem (data model)',
    ringstore: 'diag.shardGetStrong',
    raw: 'raw.getStrong',
    targeted: false,
  },
  { name: 'HTTP eventual PUT / handler eventual PUT (gateway share)', ringstore: 'http.put', raw: 'handler.put', targeted: false },
  { name: 'HTTP strong PUT / handler strong PUT (gateway share)', ringstore: 'http.putStrong', raw: 'handler.putStrong', targeted: false },
  { name: 'HTTP strong GET / handler strong GET (gateway share)', ringstore: 'http.getStrong', raw: 'handler.getStrong', targeted: false },
  { name: 'HTTP eventual GET / handler eventual GET (gateway share)', ringstore: 'http.get', raw: 'handler.get', targeted: false },
  { name: 'handler eventual PUT / Ringstore UpdateItem replayed raw', ringstore: 'handler.put', raw: 'diag.shardUpdate', targeted: false },
  {
    name: 'handler strong PUT / Ringstore strong write replayed raw',
    ringstore: 'handler.putStrong',
    raw: 'diag.shardStrongWrite',
    targeted: false,
  },
  {
    name: 'handler strong GET / Ringstore GetItem replayed raw',
    ringstore: 'handler.getStrong',
    raw: 'diag.shardGetStrong',
    targeted: false,
  },
  {
    name: 'shard store get (toolbox) / Ringstore GetItem replayed raw',
    ringstore: 'diag.storeGetStrong',
    raw: 'diag.shardGetStrong',
    targeted: false,
  },
  {
    name: 'KvService.get strong, no cache / shard store get',
    ringstore: 'diag.kvGetStrongNoCache',
    raw: 'diag.storeGetStrong',
    targeted: false,
  },
  {
    name: 'KvService.get strong / KvService.get strong, no cache (cache refresh)',
    ringstore: 'diag.kvGetStrong',
    raw: 'diag.kvGetStrongNoCache',
    targeted: false,
  },
  {
    name: 'handler strong GET / KvService.get strong (middy, zod, response)',
    ringstore: 'handler.getStrong',
    raw: 'diag.kvGetStrong',
    targeted: false,
  },
  { name: 'HTTP PUT, fetch client / raw PutItem', ringstore: 'diag.fetchPut', raw: 'raw.put', targeted: false },
  { name: 'HTTP GET, fetch client / raw GetItem', ringstore: 'diag.fetchGet', raw: 'raw.get', targeted: false },
];

/** Whether a p50 ratio meets its pair's target. */
export function meets(p50: number, pair: Pick<Ratio, 'target' | 'bound'>): boolean {
  if (pair.target === undefined) return true;
  return pair.bound === 'below' ? p50 < pair.target : p50 <= pair.target;
}

/** How a target reads in a table: `< 0.5x` or `<= 1.3x`. */
export function targetText(pair: Pick<Ratio, 'target' | 'bound'>): string {
  return pair.target === undefined ? '' : `${pair.bound === 'below' ? '<' : '<='} ${pair.target}x`;
}

export function ratios(results: CaseResult[]): Ratio[] {
  const byId = new Map(results.map((r) => [r.id, r]));
  return ratioPairs.flatMap((pair) => {
    const ringstore = byId.get(pair.ringstore);
    const raw = byId.get(pair.raw);
    if (!ringstore || !raw) return [];
    const p50 = ringstore.latency.p50Ms / raw.latency.p50Ms;
    return [
      {
        ...pair,
        p50,
        p99: ringstore.latency.p99Ms / raw.latency.p99Ms,
        throughput: raw.throughput.opsPerSecond / ringstore.throughput.opsPerSecond,
        verdict: pair.target !== undefined ? (meets(p50, pair) ? 'PASS' : 'MISS') : '-',
      },
    ];
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
      ms(r.latency.p50Ms),
      ms(r.latency.p99Ms),
      r.latency.opsPerSecond.toFixed(0),
      ms(r.throughput.p50Ms),
      ms(r.throughput.p99Ms),
      r.throughput.opsPerSecond.toFixed(0),
    ]),
    (c) => c > 0,
  );
}

export function ratioTable(rows: Ratio[]): string {
  return renderTable(
    ['ratio', 'p50 (c=1)', 'p99 (c=1)', 'throughput (c=8)', 'target (p50)'],
    rows.map((r) => [r.name, x(r.p50), x(r.p99), x(r.throughput), r.target === undefined ? '-' : `${targetText(r)} ${r.verdict}`]),
    (c) => c > 0 && c < 4,
  );
}

/** The same tables as Markdown, for docs/benchmarks.md. */
export function markdownTables(results: CaseResult[], rows: Ratio[]): { results: string; ratios: string } {
  const md = (header: string[], body: string[][]) =>
    [
      `| ${header.join(' | ')} |`,
      `|${header.map((_, c) => (c === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
      ...body.map((r) => `| ${r.join(' | ')} |`),
    ].join('\n');
  return {
    results: md(
      ['case', 'p50 ms (c=1)', 'p99 ms (c=1)', 'ops/s (c=1)', 'p50 ms (c=8)', 'p99 ms (c=8)', 'ops/s (c=8)'],
      results.map((r) => [
        r.label,
        ms(r.latency.p50Ms),
        ms(r.latency.p99Ms),
        r.latency.opsPerSecond.toFixed(0),
        ms(r.throughput.p50Ms),
        ms(r.throughput.p99Ms),
        r.throughput.opsPerSecond.toFixed(0),
      ]),
    ),
    ratios: md(
      ['ratio', 'p50 (c=1)', 'p99 (c=1)', 'throughput (c=8)', 'target (p50)'],
      rows.map((r) => [r.name, x(r.p50), x(r.p99), x(r.throughput), r.target === undefined ? '' : `${targetText(r)} **${r.verdict}**`]),
    ),
  };
}

/** What the run measured of replication itself, beside the ratios. */
export interface ReplicationResults {
  convergence?: ConvergenceReport;
  hintReplay?: HintReplayReport & { rawPutItemOpsPerSecondAtConcurrency8?: number; hintsPerRawPutItem?: number };
  strongGetSteps?: StrongGetStepCosts;
  /** The strong write replay's replica PutItems, and those refused as already current. */
  replayReplicaPuts?: { sent: number; refusedAsCurrent: number };
}

/** The replication measurements as printed lines. */
export function replicationLines(r: ReplicationResults): string[] {
  const lines: string[] = [];
  const c = r.convergence;
  if (c) {
    lines.push(
      `convergence: ${c.writes} eventual PUTs at concurrency ${c.concurrency} (${c.burstOpsPerSecond} ops/s, ${c.burstMs} ms); ` +
        `polls of the replica tables saw a copy behind at ${c.lastSeenBehindAfterLastAckMs} ms and every copy at its version by ` +
        `${c.polledConvergedAfterLastAckMs} ms after the last ack (${c.polls.count} polls of ${c.polls.meanMs} ms), ` +
        `last replica write landed ${c.lastReplicaWriteAfterLastAckMs} ms after it`,
      `  replication lag from the owner write: per key p50 ${c.perKeyLagMs.p50} ms, p99 ${c.perKeyLagMs.p99} ms, max ${c.perKeyLagMs.max} ms ` +
        `(${c.perKeyLagMs.count} keys); per copy p50 ${c.perCopyLagMs.p50} ms, p99 ${c.perCopyLagMs.p99} ms (${c.perCopyLagMs.count} copies, ${c.copiesUnobserved} unobserved); ` +
        `ReplicationStats p50 ${c.runtimeStats.lagMs.p50} ms, p99 ${c.runtimeStats.lagMs.p99} ms over its last ${c.runtimeStats.lagMs.samples} samples`,
    );
  }
  const h = r.hintReplay;
  if (h) {
    const vsRaw =
      h.hintsPerRawPutItem === undefined
        ? ''
        : ` = ${h.hintsPerRawPutItem.toFixed(2)}x raw PutItem throughput at concurrency 8 (${h.rawPutItemOpsPerSecondAtConcurrency8} ops/s)`;
    lines.push(
      `hint replay: ${h.hintsWaiting} hints for ${h.downTable} replayed in ${h.handoffMs} ms: ${h.hintsPerSecond} hints/s${vsRaw}; ` +
        `the replay's own report: ${h.replay.hintsPerSecond} hints/s (${h.replay.applied} applied, ${h.replay.alreadyCurrent} already current, ` +
        `${h.replay.transition ?? 'no transition'}, completed ${h.replay.completed})`,
      `  while it was down: ${h.writes} strong PUTs at ${h.writesWithReplicaDownOpsPerSecond} ops/s acknowledged with copies ${h.copiesReported.join('/')}; ` +
        `after the handoff: ${h.hintsLeft} hints left, shard ${h.healthAfter} ${h.availableAfterMs} ms after the first pass began, ` +
        `${h.verifiedKeys}/${h.writes} keys read back at their version`,
    );
  }
  const steps = r.strongGetSteps;
  if (steps) {
    lines.push(
      `strong GET steps (us per call, no I/O): validateKey ${steps.validateKeyMicros}, tokenOf ${steps.tokenOfMicros}, ring.current ${steps.ringCurrentMicros}, ` +
        `replicasOf ${steps.replicasOfMicros}, L1 peek ${steps.l1PeekMicros}, L2 guarded put (Redis) ${steps.l2PutMicros}`,
    );
  }
  const replay = r.replayReplicaPuts;
  if (replay?.sent) {
    lines.push(
      `strong write replay: ${replay.refusedAsCurrent} of ${replay.sent} replica PutItems refused as already current (the replicator was first)`,
    );
  }
  return lines;
}
