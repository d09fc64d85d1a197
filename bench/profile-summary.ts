// Summarises .cpuprofile files: self time by area (gateway, handlers, SDK, ...) and the top functions.
// Usage: npx tsx bench/profile-summary.ts [--ops=N] bench/profiles/http.put.cpuprofile [more...]
// With --ops (the calls profiled per file) it also prints microseconds per call, which compare across files.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** First match wins: the areas a request's CPU time can be spent in, most specific first. */
const areas: Array<[string, RegExp]> = [
  ['idle (waiting on I/O)', /^\(idle\)$/],
  ['garbage collection', /^\(garbage collector\)$/],
  ['bench client (fetch/undici)', /node:internal\/deps\/undici|undici/],
  ['local gateway (cdk/local)', /cdk\/local\//],
  ['bench harness', /\/bench\//],
  ['dynamodb-toolbox', /dynamodb-toolbox/],
  ['AWS SDK: lib-dynamodb / util-dynamodb', /@aws-sdk\/(lib|util)-dynamodb/],
  ['AWS SDK: signing (sigv4)', /signature-v4|@smithy\/signature|credential/],
  ['AWS SDK + smithy (other)', /@aws-sdk|@smithy|@aws-crypto/],
  ['middy', /@middy/],
  ['zod', /\/zod\//],
  ['powertools logger', /powertools/],
  ['lru-cache', /lru-cache/],
  ['Ringstore lambdas', /\/lambdas\//],
  ['schemas', /\/schemas\//],
  ['tsx loader', /\/tsx\//],
  ['node: http/net/streams', /node:(_http|http|net|internal\/(http|streams|stream_base|js_stream|net))/],
  ['node: other', /^node:/],
  ['native / program', /^$/],
];

function areaOf(node: ProfileNode): string {
  const name = node.callFrame.functionName;
  if (name === '(idle)' || name === '(garbage collector)') return areas.find(([, re]) => re.test(name))![0];
  const url = node.callFrame.url;
  return areas.find(([, re]) => re.test(url))?.[0] ?? 'other';
}

function summarise(path: string, ops: number | undefined): void {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id)!;
    const area = areaOf(node);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/main\//, '');
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  }
  const pct = (micros: number) =>
    `${((micros / total) * 100).toFixed(1).padStart(5)}%` + (ops ? `  ${(micros / ops).toFixed(0).padStart(5)} us/call` : '');
  console.log(
    `\n${basename(path)}: ${(total / 1000).toFixed(0)} ms profiled${ops ? `, ${(total / ops / 1000).toFixed(2)} ms per call` : ''}`,
  );
  for (const [area, micros] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(micros)}  ${area}`);
  console.log('  top functions (self time):');
  for (const [fn, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`    ${pct(micros)}  ${fn}`);
}

const args = process.argv.slice(2);
const opsArg = args.find((a) => a.startsWith('--ops='));
const ops = opsArg ? Number(opsArg.slice('--ops='.length)) : undefined;
if (ops !== undefined && !(Number.isInteger(ops) && ops > 0)) throw new Error(`--ops must be a positive integer, got ${opsArg}`);
const files = args.filter((a) => !a.startsWith('--'));
if (files.length === 0) {
  console.error('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile...');
  process.exitCode = 2;
}
for (const file of files) summarise(file, ops);
