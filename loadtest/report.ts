// `npm run loadtest:report -- [--markdown FILE] [run folders...]`: turns recorded k6 runs (k6's summary
// export and CSV time series, written by `npm run loadtest`) into a Markdown section (a table of the runs,
// latency per operation, the scripts' own counters) and one SVG per run (throughput and latency
// percentiles over time). Without folders: the newest run of each script under .ringstore/loadtest.
// The section replaces the one between the markers in FILE (docs/loadtest.md for the run of record), or
// becomes FILE (default .ringstore/loadtest/report.md); the plots go next to FILE.
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { percentile } from '../bench/measure';
import { toSvg } from '../bench/plot';
import { resultsRoot, type RunRecord } from './run';

export const MARKER_START = '<!-- loadtest-report:start -->';
export const MARKER_END = '<!-- loadtest-report:end -->';
/** Width of a latency window in the plots: enough requests per window for a p99 at modest rates. */
const WINDOW_SECONDS = 5;

/** A metric of k6's summary export: trends carry the stats, counters count/rate, rates passes/fails/value. */
interface SummaryMetric {
  count?: number;
  rate?: number;
  value?: number;
  passes?: number;
  fails?: number;
  med?: number;
  max?: number;
  'p(95)'?: number;
  'p(99)'?: number;
  /** Threshold expression -> whether it was crossed (true: missed). */
  thresholds?: Record<string, boolean>;
}

interface Summary {
  metrics: Record<string, SummaryMetric>;
}

/** One sample of the CSV time series, of the requests made by the scenarios (tag `phase=run`). */
interface Sample {
  metric: string;
  second: number;
  value: number;
  /** The script's `op` tag, else the route (`name`). */
  op: string;
  /** large-values' `size` tag: the table shows each size, the plot each operation. */
  size: string;
}

export interface RunData {
  dir: string;
  record: RunRecord;
  summary: Summary;
  samples: Sample[];
}

/** Splits one CSV line (k6 quotes fields that hold commas or quotes). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i]!;
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      fields.push(field);
      field = '';
    } else field += char;
  }
  fields.push(field);
  return fields;
}

const KEPT_METRICS = new Set(['http_reqs', 'http_req_duration']);

/** The request samples of the scenarios (setup's loading left out), from k6's gzipped CSV output. */
async function readSamples(file: string): Promise<Sample[]> {
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  const samples: Sample[] = [];
  let columns: Record<string, number> | undefined;
  for await (const line of lines) {
    const fields = csvFields(line);
    if (!columns) {
      columns = Object.fromEntries(fields.map((name, index) => [name, index]));
      continue;
    }
    const metric = fields[columns.metric_name!]!;
    if (!KEPT_METRICS.has(metric)) continue;
    const tags = new URLSearchParams(fields[columns.extra_tags!] ?? '');
    if (tags.get('phase') !== 'run') continue;
    samples.push({
      metric,
      second: Number(fields[columns.timestamp!]),
      value: Number(fields[columns.metric_value!]),
      op: tags.get('op') ?? fields[columns.name!] ?? '',
      size: tags.get('size') ?? '',
    });
  }
  return samples;
}

/** Reads one run folder written by `npm run loadtest`. */
export async function readRun(dir: string): Promise<RunData> {
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
  const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as Summary;
  return { dir, record, summary, samples: await readSamples(join(dir, 'series.csv.gz')) };
}

/** The newest recorded run of each script (folders are named `<script>-<ISO time>`, so names sort by time). */
export function newestRuns(root: string = resultsRoot): string[] {
  if (!existsSync(root)) return [];
  const newest = new Map<string, string>();
  for (const name of readdirSync(root).sort()) {
    if (!existsSync(join(root, name, 'run.json'))) continue;
    newest.set(name.replace(/-\d{4}-\d\d-\d\dT.*$/, ''), join(root, name));
  }
  return [...newest.values()];
}

const ms = (value: number | undefined) => (value === undefined ? '–' : value >= 100 ? value.toFixed(0) : value.toFixed(1));
const percent = (value: number | undefined) => (value === undefined ? '–' : `${(value * 100).toFixed(2)} %`);

function seconds(samples: Sample[]): { first: number; span: number } {
  const requests = samples.filter((s) => s.metric === 'http_reqs');
  if (requests.length === 0) return { first: 0, span: 0 };
  let [first, last] = [Infinity, -Infinity];
  for (const s of requests) [first, last] = [Math.min(first, s.second), Math.max(last, s.second)];
  return { first, span: last - first + 1 };
}

/** Thresholds as `passed/total`, and the missed ones by name. */
function thresholdVerdict(summary: Summary): { text: string; missed: string[] } {
  const missed: string[] = [];
  let total = 0;
  for (const [metric, entry] of Object.entries(summary.metrics)) {
    for (const [expression, crossed] of Object.entries(entry.thresholds ?? {})) {
      total += 1;
      if (crossed) missed.push(`\`${metric}\` ${expression}`);
    }
  }
  return { text: missed.length === 0 ? `all ${total} met` : `**${missed.length} of ${total} missed**`, missed };
}

function runsTable(runs: RunData[]): string[] {
  const lines = [
    '| script | settings | k6 exit | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | failed | checks | thresholds |',
    '| ------ | -------- | ------: | -------: | ----: | -----: | -----: | -----: | -----: | -----: | -----: | ---------- |',
  ];
  for (const run of runs) {
    const duration = run.summary.metrics['http_req_duration{phase:run}'] ?? {};
    const failed = run.summary.metrics['http_req_failed{phase:run}'] ?? {};
    const checks = run.summary.metrics.checks ?? {};
    const { span } = seconds(run.samples);
    const requests = duration.count ?? 0;
    const settings = Object.entries(run.record.settings)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    lines.push(
      `| ${run.record.script} | ${settings || 'defaults'} | ${run.record.exitCode} | ${requests} | ${span ? (requests / span).toFixed(1) : '–'} | ` +
        `${ms(duration.med)} | ${ms(duration['p(95)'])} | ${ms(duration['p(99)'])} | ${ms(duration.max)} | ${percent(failed.value)} | ` +
        `${percent(checks.value)} | ${thresholdVerdict(run.summary).text} |`,
    );
  }
  return lines;
}

/** Latency per operation (tag `op`, else the route), nearest-rank percentiles over the CSV samples. */
function operationsTable(run: RunData): string[] {
  const byOp = new Map<string, number[]>();
  for (const s of run.samples) {
    if (s.metric !== 'http_req_duration') continue;
    const label = s.size ? `${s.op} ${s.size}` : s.op;
    const values = byOp.get(label) ?? [];
    values.push(s.value);
    byOp.set(label, values);
  }
  const lines = ['| operation | requests | p50 ms | p95 ms | p99 ms |', '| --------- | -------: | -----: | -----: | -----: |'];
  for (const [op, values] of [...byOp.entries()].sort((a, b) => b[1].length - a[1].length)) {
    const sorted = Float64Array.from(values).sort();
    lines.push(
      `| ${op} | ${values.length} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 95))} | ${ms(percentile(sorted, 99))} |`,
    );
  }
  return lines;
}

const BUILTIN = /^(http_|iteration|vus|data_|checks|group_duration|dropped_iterations)/;

/** The script's own metrics (txn-bank's audits and transfers, mixed-ycsb's per-workload latency and conflicts). */
function customMetrics(run: RunData): string[] {
  const lines: string[] = [];
  for (const [name, metric] of Object.entries(run.summary.metrics).sort()) {
    if (BUILTIN.test(name) && !name.includes('{workload:')) continue;
    if (metric['p(95)'] !== undefined) {
      lines.push(
        `- \`${name}\`: p50 ${ms(metric.med)} ms, p95 ${ms(metric['p(95)'])} ms, p99 ${ms(metric['p(99)'])} ms (${metric.count ?? 0})`,
      );
    } else if (metric.passes !== undefined) {
      lines.push(`- \`${name}\`: ${percent(metric.value)} (${metric.passes} of ${metric.passes + (metric.fails ?? 0)})`);
    } else lines.push(`- \`${name}\`: ${metric.count ?? metric.value ?? 0}`);
  }
  const dropped = run.summary.metrics.dropped_iterations?.count;
  if (dropped) lines.push(`- \`dropped_iterations\`: ${dropped} (k6 had no free VU for an arrival: the target fell behind the rate)`);
  return lines;
}

interface Point {
  second: number;
  series: string;
  value: number;
  panel: string;
}

/** Requests per second by operation, and p50/p95/p99 of every request per window, seconds since the start. */
function timeSeries(run: RunData): Point[] {
  const { first, span } = seconds(run.samples);
  const points: Point[] = [];
  // Every second of the run for every operation, so that a second without requests plots as 0, not as a line
  // drawn across the gap.
  const ops = new Set(run.samples.map((s) => s.op));
  const perSecond = new Map<string, number>();
  const windows = new Map<number, number[]>();
  for (const s of run.samples) {
    const second = s.second - first;
    if (s.metric === 'http_reqs') perSecond.set(`${second}\u0000${s.op}`, (perSecond.get(`${second}\u0000${s.op}`) ?? 0) + 1);
    else {
      const window = Math.floor(second / WINDOW_SECONDS) * WINDOW_SECONDS;
      const values = windows.get(window) ?? [];
      values.push(s.value);
      windows.set(window, values);
    }
  }
  for (const op of ops) {
    for (let second = 0; second < span; second += 1) {
      points.push({ second, series: op, value: perSecond.get(`${second}\u0000${op}`) ?? 0, panel: 'throughput' });
    }
  }
  for (const [window, values] of windows) {
    const sorted = Float64Array.from(values).sort();
    for (const p of [50, 95, 99]) {
      points.push({
        second: window + WINDOW_SECONDS / 2,
        series: `p${p}`,
        value: Math.round(percentile(sorted, p) * 100) / 100,
        panel: 'latency',
      });
    }
  }
  return points;
}

/** Throughput (requests/s by operation) above latency percentiles (per 5 s window), over the run. */
export async function renderRunSvg(run: RunData): Promise<string> {
  const points = timeSeries(run);
  const x = { field: 'second', type: 'quantitative', title: 'seconds since the first request' };
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${run.record.script}: throughput and latency over time`, subtitle: subtitleOf(run) },
    vconcat: [
      {
        width: 560,
        height: 160,
        data: { values: points.filter((p) => p.panel === 'throughput') },
        mark: { type: 'line', interpolate: 'step-after' },
        encoding: {
          x,
          y: { field: 'value', type: 'quantitative', title: 'requests/s' },
          color: { field: 'series', type: 'nominal', title: 'operation' },
        },
      },
      {
        width: 560,
        height: 160,
        data: { values: points.filter((p) => p.panel === 'latency') },
        mark: { type: 'line', point: true },
        encoding: {
          x,
          y: { field: 'value', type: 'quantitative', title: `ms (per ${WINDOW_SECONDS} s window)`, scale: { type: 'log' } },
          color: { field: 'series', type: 'nominal', title: 'percentile', scale: { range: ['#4c78a8', '#f58518', '#e45756'] } },
        },
      },
    ],
    // One time axis for both panels; each its own colours (operations above, percentiles below).
    resolve: { scale: { x: 'shared', color: 'independent' } },
    config: { font: 'sans-serif', background: 'white' },
  });
}

function subtitleOf(run: RunData): string {
  const settings = Object.entries(run.record.settings).map(([name, value]) => `${name}=${value}`);
  return [`${run.record.target}, ${run.record.k6}, code ${run.record.commit}, ${run.record.startedAt.slice(0, 16)}Z`, ...settings].join(
    '  ',
  );
}

/** The Markdown section for `runs`, with plots written next to `markdownFile` (named after it). */
export async function renderReport(runs: RunData[], markdownFile: string): Promise<string> {
  const lines = [
    MARKER_START,
    '',
    `Generated by \`npm run loadtest:report\` from ${runs.length} run(s). Latency is \`http_req_duration\` of the scenarios' requests ` +
      "(setup's loading left out); `failed` is `http_req_failed` (statuses the request did not expect); the thresholds are each script's.",
    '',
    ...runsTable(runs),
  ];
  const stem = basename(markdownFile).replace(/\.md$/, '');
  for (const run of runs) {
    const svgName = `${stem}-${run.record.script}.svg`;
    await writeFile(join(dirname(markdownFile), svgName), await renderRunSvg(run));
    const verdict = thresholdVerdict(run.summary);
    lines.push(
      '',
      `### ${run.record.script}`,
      '',
      `${run.record.startedAt.slice(0, 19)}Z to ${run.record.finishedAt.slice(11, 19)}Z against ${run.record.target}, code \`${run.record.commit}\`, ` +
        `k6 args \`${run.record.k6Args.join(' ') || 'none'}\`, recorded in \`${relative(process.cwd(), run.dir)}\`.`,
      ...(verdict.missed.length ? ['', `Missed: ${verdict.missed.join('; ')}.`] : []),
      '',
      ...operationsTable(run),
      ...(customMetrics(run).length ? ['', ...customMetrics(run)] : []),
      '',
      `![${run.record.script}: requests per second by operation, and latency percentiles per ${WINDOW_SECONDS} s window](${svgName})`,
    );
  }
  lines.push('', MARKER_END);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { markdown: { type: 'string' } }, allowPositionals: true });
  const markdownFile = values.markdown ?? join(resultsRoot, 'report.md');
  await mkdir(dirname(markdownFile), { recursive: true });
  const dirs = positionals.length ? positionals : newestRuns();
  if (dirs.length === 0) throw new Error(`no runs to report: run \`npm run loadtest -- <script>\` first (runs are kept in ${resultsRoot})`);
  const runs = await Promise.all(dirs.map(readRun));
  const section = await renderReport(runs, markdownFile);
  const existing = existsSync(markdownFile) ? await readFile(markdownFile, 'utf8') : undefined;
  const start = existing?.indexOf(MARKER_START) ?? -1;
  const end = existing?.indexOf(MARKER_END) ?? -1;
  const text =
    existing !== undefined && start >= 0 && end > start
      ? `${existing.slice(0, start)}${section}${existing.slice(end + MARKER_END.length)}`
      : `# Ringstore load test report\n\n${section}\n`;
  // Formatted as the repository's Prettier would (`npm test` checks it), so a regenerated page has no diff of its own.
  const prettier = await import('prettier');
  await writeFile(markdownFile, await prettier.format(text, { ...(await prettier.resolveConfig(markdownFile)), parser: 'markdown' }));
  console.log(`report: ${markdownFile} (${runs.map((r) => r.record.script).join(', ')})`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
