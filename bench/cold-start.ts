// `npm run bench:cold-start`: what a Lambda cold start pays, per topology handler. Each handler is
// bundled exactly as the CDK bundles it (cdk/constructs/handler-function.ts), then loaded in fresh node
// processes with the environment a deployed function sees, against a baseline bundle that only builds a
// DynamoDBClient (the floor every handler pays). No engine runs: the endpoints point at a closed port.
// Writes bench/results/cold-start-<BENCH_LABEL>.json.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile, version as esbuildVersion } from 'esbuild';
import * as z from 'zod';
import { envVars, handlers, type HandlerName, namesFor, productionBuildDefine } from '../schemas/topology';
import { benchRoot, codeVersion, machineFacts, benchResultsDir } from './environment';
import { median, percentile } from './measure';
import { coldStartSvgPath, renderColdStartSvg } from './plot';

const settings = z
  .object({
    /** Fresh processes per bundle; each one is a cold start. */
    BENCH_COLD_SAMPLES: z.coerce.number().int().min(1).max(200).default(15),
    /** Names the results file, so a before/after pair can sit side by side. */
    BENCH_LABEL: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/i)
      .default('latest'),
    /**
     * `1`: ship the source map and start node with --enable-source-maps, as the CDK deploys the functions.
     * Node then reads and parses the map while it loads the bundle, which adds to the init (about 15% for a
     * 2.4 MB map on the bench machine). Off by default: the default run measures the code's own init.
     */
    BENCH_SOURCE_MAPS: z.enum(['0', '1']).default('0'),
    /**
     * `cjs`: one CommonJS file per handler, as the CDK bundles today. `esm-split` (a design, measured beside it): ES
     * modules with esbuild's code splitting, so that what a handler imports dynamically (the S3, SQS and Step
     * Functions clients, the transaction and DR code) is a chunk of its own, read and parsed only when first used.
     */
    BENCH_BUNDLE_FORMAT: z.enum(['cjs', 'esm-split']).default('cjs'),
  })
  .parse(process.env);

/** A child that takes longer than this is stuck (e.g. an init that blocks): the run fails rather than hangs. */
const childTimeoutMs = 30_000;
/** Inputs and packages listed per bundle in the JSON: where the bytes (and so most of the init) come from. */
const topInputsCount = 3;
const topPackagesCount = 8;
const stage = 'local';
const resultsDir = benchResultsDir;

const log = (line: string) => console.error(`[bench:cold-start] ${line}`);

const withSourceMaps = settings.BENCH_SOURCE_MAPS === '1';
const split = settings.BENCH_BUNDLE_FORMAT === 'esm-split';

/**
 * The CDK's bundling options (handler-function.ts). The source map is a file beside the bundle, so it
 * changes no byte of the bundle; it only matters to the init under --enable-source-maps (BENCH_SOURCE_MAPS).
 * absWorkingDir: the CDK runs esbuild from the project root.
 */
const cdkBundling: BuildOptions & { metafile: true } = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node22',
  minify: true,
  external: [],
  define: { ...productionBuildDefine },
  tsconfig: join(benchRoot, 'tsconfig.json'),
  absWorkingDir: benchRoot,
  metafile: true,
  write: true,
  logLevel: 'warning',
  ...(withSourceMaps ? { sourcemap: true, sourcesContent: false } : {}),
};

/**
 * The `esm-split` design: the same options as ES modules with code splitting, into a folder per handler (entry
 * `index.mjs` and its chunks). The banner gives the bundled CommonJS code the `require`, `__filename` and
 * `__dirname` an ES module lacks, as the CDK's documented ESM setup does.
 */
const splitBundling: BuildOptions & { metafile: true } = {
  ...cdkBundling,
  format: 'esm',
  splitting: true,
  outExtension: { '.js': '.mjs' },
  banner: {
    js: [
      "import { createRequire as __benchCreateRequire } from 'node:module';",
      "import { fileURLToPath as __benchFileUrlToPath } from 'node:url';",
      'const require = __benchCreateRequire(import.meta.url);',
      'const __filename = __benchFileUrlToPath(import.meta.url);',
      "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
    ].join(' '),
  },
};

/**
 * The floor: the one client every data handler constructs, with the options the wiring gives it (lambdas/wiring/clients.ts). Exported
 * as `handler` so the child checks it the same way as a real handler.
 */
const baselineClient = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
const client = new DynamoDBClient({ region: process.env.AWS_REGION, endpoint: process.env.${envVars.dynamodbEndpoint}, maxAttempts: 3 });
export const handler = async () => client.config.maxAttempts;
`;
const baselineName = 'baseline';

/**
 * What stands between a handler and the floor: the bare client plus one of the things a handler loads at
 * init, each in a bundle of its own, measured in the same run. The sum of a handler's probes (less the
 * floor each repeats) accounts for most of its init; what is left is our own modules.
 */
const probes = {
  'zod (one schema)': `import * as z from 'zod'; export const schema = z.object({ a: z.string() });`,
  'API schemas (schemas/api, every route)': `import * as api from './schemas/api'; export const schemas = api;`,
  'config (zod parse of the env)': `import { loadConfig } from './lambdas/config'; export const config = loadConfig(process.env);`,
  'Powertools Logger': `import { Logger } from '@aws-lambda-powertools/logger'; export const logger = new Logger();`,
  'Powertools Metrics': `import { Metrics } from '@aws-lambda-powertools/metrics'; export const metrics = new Metrics();`,
  // The X-Ray tracer the wiring builds (wiring/xray.ts): aws-xray-sdk-core, cls-hooked and semver.
  'Powertools Tracer': `import { Tracer } from '@aws-lambda-powertools/tracer'; export const tracer = new Tracer();`,
  middy: `import middy from '@middy/core'; export const wrapped = middy();`,
  'shard store (dynamodb-toolbox, lib-dynamodb)': `import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoShardStore } from './lambdas/adapters/dynamodb-shard-store';
export const store = new DynamoShardStore(DynamoDBDocumentClient.from(client));`,
  // The two Redis clients side by side: the library the L2 cache used before, and the one it uses (resp-client.ts).
  'ioredis (client, not connecting)': `import Redis from 'ioredis'; export const redis = new Redis('redis://127.0.0.1:9', { lazyConnect: true });`,
  'RESP client (ours, not connecting)': `import { RespClient } from './lambdas/adapters/resp-client';
export const redis = new RespClient('redis://127.0.0.1:9', { lazyConnect: true, connectTimeoutMs: 500, commandTimeoutMs: 50, retryDelayMs: () => 50 });`,
  'S3 client (evaluated at init)': `import { S3Client } from '@aws-sdk/client-s3'; export const s3 = new S3Client({ region: process.env.AWS_REGION });`,
  'Step Functions client': `import { SFNClient } from '@aws-sdk/client-sfn'; export const sfn = new SFNClient({ region: process.env.AWS_REGION });`,
} as const;
type ProbeName = keyof typeof probes;
const probeNames = Object.keys(probes) as ProbeName[];
const isProbe = (name: string): name is ProbeName => name in probes;

/**
 * The child's whole program. It times only the require (module-scope init, which is what Lambda's init
 * phase runs for a handler), not node's own start, which every runtime pays alike; the time since the
 * process started is reported beside it. What init leaves pending (the Redis connect attempt, which
 * fails later on the closed port) is not init: Lambda's init phase ends when the module is evaluated, so
 * the child exits right after writing its line. stdout to a pipe is synchronous on Linux: the line is out
 * before exit.
 */
const childProgram = `'use strict';
const { performance } = require('node:perf_hooks');
const { pathToFileURL } = require('node:url');
const file = process.argv[2];
const started = performance.now();
const loading = file.endsWith('.mjs') ? import(pathToFileURL(file).href) : Promise.resolve(require(file));
loading.then((loaded) => {
  const initMs = performance.now() - started;
  if (typeof loaded.handler !== 'function') {
    process.stderr.write('the bundle exports no handler function\\n');
    process.exit(3);
  }
  process.stdout.write(JSON.stringify({ initMs, sinceProcessStartMs: performance.now(), rssBytes: process.memoryUsage().rss }) + '\\n');
  process.exit(0);
});
`;

const ChildSample = z.object({ initMs: z.number(), sinceProcessStartMs: z.number(), rssBytes: z.number() });
type ChildSample = z.infer<typeof ChildSample>;

/**
 * What the CDK stack (cdk/stacks/api-stack.ts) and Lambda itself put in a function's environment, with
 * the local endpoints on a closed port. Built from nothing rather than from this process's environment,
 * so npm's and tsx's variables (NODE_OPTIONS above all) cannot change what is measured.
 * AWS_LAMBDA_FUNCTION_NAME matters: with it the wiring builds its Powertools metrics, as in Lambda.
 */
function lambdaEnvironment(bundleName: BundleName): Record<string, string> {
  const names = namesFor(stage);
  // A probe runs as the baseline does (the config probe reads the same RINGSTORE_* variables).
  const name = isProbe(bundleName) ? baselineName : bundleName;
  const functionName = name === baselineName ? `${names.prefix}-${baselineName}` : names.functionName(name);
  return {
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_SESSION_TOKEN: 'bench-cold-start',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(name === baselineName ? 256 : handlers[name].memoryMb),
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    TZ: ':UTC',
    POWERTOOLS_SERVICE_NAME: names.prefix,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    ...(withSourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
    [envVars.stage]: stage,
    [envVars.dynamodbEndpoint]: 'http://127.0.0.1:9',
    [envVars.s3Endpoint]: 'http://127.0.0.1:9',
    [envVars.redisUrl]: 'redis://127.0.0.1:9',
    ...(name === baselineName ? {} : drRoleEnvironment(name)),
    // The CDK sets the state machine's ARN only on the handlers that start transactions (useWorkflows);
    // with it the txn handler builds an SFN client at init.
    ...(name !== baselineName && handlers[name].startsTransactions
      ? { [envVars.txnStateMachineArn]: `arn:aws:states:us-east-1:000000000000:stateMachine:${names.transactionStateMachine}` }
      : {}),
  };
}

interface InputShare {
  path: string;
  bytes: number;
}

interface PackageShare extends InputShare {
  /** The shortest chain of our own modules from the entry to the first one importing the package. */
  via: string[];
}

const inNodeModules = (inputPath: string) => inputPath.includes('node_modules/');

/** Where an input's bytes belong: its npm package (the innermost node_modules), or our own top two folders. */
function ownerOf(inputPath: string): string {
  const parts = inputPath.split('/');
  const lastModules = parts.lastIndexOf('node_modules');
  if (lastModules < 0) return parts.slice(0, Math.min(2, parts.length - 1)).join('/') || inputPath;
  const first = parts[lastModules + 1] ?? inputPath;
  return first.startsWith('@') ? `${first}/${parts[lastModules + 2] ?? ''}` : first;
}

/**
 * Import chains from the entry (breadth first, so each is a shortest one), cut where they enter
 * node_modules: what making a handler's wiring lazy has to cut is which of our modules pulls a package in.
 */
function importChains(metafile: Metafile, entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const chain = chains.get(next)!;
    for (const imported of metafile.inputs[next]?.imports ?? []) {
      if (imported.external || chains.has(imported.path)) continue;
      chains.set(imported.path, inNodeModules(next) ? chain : [...chain, imported.path]);
      queue.push(imported.path);
    }
  }
  return chains;
}

/**
 * What a DR handler (one with a `drRole`: it exists only in a DR region) is given where it is deployed, as
 * drEnvironment (cdk/stacks/api-stack.ts) gives it: the link to the backup in a primary, the role in a
 * backup. A handler that only may use the link (kvWrite) is measured as in a region without DR.
 */
function drRoleEnvironment(name: HandlerName): Record<string, string> {
  const spec = handlers[name];
  const keyQueueUrl = `http://127.0.0.1:9/000000000000/${namesFor(stage).prefix}-dr-keys.fifo`;
  if (spec.drRole === 'primary') {
    return {
      [envVars.drRole]: 'primary',
      [envVars.drKeyQueueUrl]: keyQueueUrl,
      [envVars.drBucket]: `${namesFor(stage).prefix}-dr-values`,
      [envVars.drRegion]: 'eu-west-1',
    };
  }
  if (spec.drRole === 'backup')
    return { [envVars.drRole]: 'backup', ...(spec.drKeyQueueDepth ? { [envVars.drKeyQueueUrl]: keyQueueUrl } : {}) };
  return {};
}

/** A split bundle's entry and every chunk it reaches by static imports: what its init loads (paths from the root). */
function staticallyLoaded(metafile: Metafile): string[] {
  const entry = Object.keys(metafile.outputs).find((file) => file.endsWith('/index.mjs'));
  if (!entry) throw new Error("no entry in esbuild's metafile");
  const loaded = new Set<string>([entry]);
  for (const file of loaded) {
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) loaded.add(imported.path);
    }
  }
  return [...loaded];
}

/** The largest inputs of the bundle, by bytes they left in the minified output, and the same summed per package. */
function attribution(metafile: Metafile) {
  // One entry, so one bundle; a source map is an output too, without an entry point.
  // A split bundle's dynamic imports are entry points too: the handler's own is the `index` output.
  const bundles = Object.entries(metafile.outputs)
    .filter(([file, output]) => output.entryPoint !== undefined && /\/index\.m?js$/.test(file))
    .map(([, output]) => output);
  const output = bundles[0];
  if (bundles.length !== 1 || !output?.entryPoint) throw new Error(`expected one bundle in esbuild's metafile, found ${bundles.length}`);
  const inputs: InputShare[] = Object.entries(output.inputs)
    .map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  const chains = importChains(metafile, output.entryPoint);
  const perPackage = new Map<string, PackageShare>();
  for (const { path, bytes } of inputs) {
    const owner = ownerOf(path);
    const share = perPackage.get(owner) ?? { path: owner, bytes: 0, via: [] };
    share.bytes += bytes;
    // Our modules lead to a package through the chain of its first-reached file (the shortest chain).
    const chain = (chains.get(path) ?? []).filter((step) => !inNodeModules(step));
    if (inNodeModules(path) && chain.length && (!share.via.length || chain.length < share.via.length)) share.via = chain;
    perPackage.set(owner, share);
  }
  const packages = [...perPackage.values()].sort((a, b) => b.bytes - a.bytes);
  return {
    moduleCount: inputs.length,
    topInputs: inputs.slice(0, topInputsCount),
    topPackages: packages.slice(0, topPackagesCount),
  };
}

type BundleName = HandlerName | typeof baselineName | ProbeName;

interface Bundle {
  name: BundleName;
  entry: string;
  file: string;
  bytes: number;
  gzipBytes: number;
  /** The .map beside the bundle, when BENCH_SOURCE_MAPS builds one. */
  sourceMapBytes?: number;
  warnings: number;
  attribution: ReturnType<typeof attribution>;
}

async function bundle(name: Bundle['name'], entry: string, workDir: string): Promise<Bundle> {
  // index.js in a folder of its own, as the CDK lays out each function's asset.
  const outfile = join(workDir, name.replace(/[^A-Za-z0-9]+/g, '-'), 'index.js');
  const source = name === baselineName ? baselineClient : isProbe(name) ? `${baselineClient}\n${probes[name]}\n` : undefined;
  const entryOptions: Pick<BuildOptions, 'stdin' | 'entryPoints'> =
    source === undefined
      ? { entryPoints: [join(benchRoot, entry)] }
      : {
          stdin: {
            contents: source,
            resolveDir: benchRoot,
            sourcefile: `${name === baselineName ? 'baseline' : 'probe'}.ts`,
            loader: 'ts',
          },
        };
  const result = split
    ? await build({ ...splitBundling, ...entryOptions, outdir: dirname(outfile), entryNames: 'index' })
    : await build({ ...cdkBundling, ...entryOptions, outfile });
  const entryFile = split ? outfile.replace(/\.js$/, '.mjs') : outfile;
  // The files the spec lists lie beside the bundle, as the CDK's afterBundling hook places them (copyBundledFiles).
  const bundledFiles = name in handlers ? (handlers[name as HandlerName].bundledFiles ?? []) : [];
  for (const file of bundledFiles) copyFileSync(join(benchRoot, file), join(dirname(outfile), basename(file)));
  // What the init reads: the bundle, or a split bundle's entry and the chunks it imports statically (the
  // dynamically imported ones load on first use, after the init).
  const code = split
    ? Buffer.concat(staticallyLoaded(result.metafile).map((file) => readFileSync(join(benchRoot, file))))
    : readFileSync(entryFile);
  return {
    name,
    entry,
    file: entryFile,
    bytes: code.length,
    // What travels compressed (the deployment zip deflates it alike); the level is zlib's default.
    gzipBytes: gzipSync(code, { level: zlibConstants.Z_DEFAULT_COMPRESSION }).length,
    ...(withSourceMaps ? { sourceMapBytes: statSync(`${outfile}.map`).size } : {}),
    warnings: result.warnings.length,
    attribution: attribution(result.metafile),
  };
}

/** One cold start: a new node process requires the bundle and reports how long that took. */
function coldStart(target: Bundle, runnerFile: string): ChildSample {
  const child = spawnSync(process.execPath, [runnerFile, target.file], {
    cwd: tmpdir(),
    env: lambdaEnvironment(target.name),
    encoding: 'utf8',
    timeout: childTimeoutMs,
  });
  const lastLine = child.stdout.trim().split('\n').pop() ?? '';
  if (child.error || child.status !== 0 || !lastLine.startsWith('{')) {
    const why = child.error?.message ?? `exit ${child.status ?? child.signal}`;
    throw new Error(`cold start of ${target.name} failed (${why}): ${child.stderr.trim().slice(-2000)}`);
  }
  return ChildSample.parse(JSON.parse(lastLine));
}

/** Hundredths of a millisecond: finer is timer noise, and it keeps the JSON readable. */
const round2 = (value: number) => Math.round(value * 100) / 100;

function summary(values: number[]) {
  const sorted = Float64Array.from(values).sort();
  const p = { p50: median(values), p90: percentile(sorted, 90), min: sorted[0]!, max: sorted[sorted.length - 1]! };
  return { p50: round2(p.p50), p90: round2(p.p90), min: round2(p.min), max: round2(p.max) };
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(1);

async function main(): Promise<void> {
  const started = Date.now();
  const code = codeVersion();
  const loadBefore = loadavg();
  const workDir = mkdtempSync(join(tmpdir(), 'ringstore-cold-start-'));
  try {
    const runnerFile = join(workDir, 'cold-start-child.cjs');
    writeFileSync(runnerFile, childProgram);

    const handlerNames = Object.keys(handlers) as HandlerName[];
    const targets: Bundle[] = [await bundle(baselineName, '(stdin) new DynamoDBClient()', workDir)];
    for (const name of handlerNames) {
      targets.push(await bundle(name, handlers[name].entry, workDir));
      log(`bundled ${name}: ${kib(targets.at(-1)!.bytes)} KiB`);
    }
    for (const name of probeNames) targets.push(await bundle(name, '(stdin) new DynamoDBClient() + probe', workDir));

    // One discarded start per bundle first, so the first timed sample does not also pay for reading the
    // file into the page cache. Then the samples go round the bundles in turn, one child at a time: a
    // machine that slows down during the run (2 cores, other work) slows every bundle alike, not the last ones.
    for (const target of targets) coldStart(target, runnerFile);
    const samples = new Map<Bundle['name'], ChildSample[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < settings.BENCH_COLD_SAMPLES; round += 1) {
      for (const target of targets) samples.get(target.name)!.push(coldStart(target, runnerFile));
      log(`round ${round + 1}/${settings.BENCH_COLD_SAMPLES} done`);
    }

    const measured = targets.map((target) => {
      const own = samples.get(target.name)!;
      return {
        ...target,
        initMs: summary(own.map((s) => s.initMs)),
        sinceProcessStartMs: summary(own.map((s) => s.sinceProcessStartMs)),
        rssMb: round2(median(own.map((s) => s.rssBytes / 2 ** 20))),
        initSamplesMs: own.map((s) => round2(s.initMs)),
      };
    });
    const [baseline, ...others] = measured;
    const handlerResults = others.filter((m) => !isProbe(m.name));
    const probeResults = others.filter((m) => isProbe(m.name));
    const ratio = (p50: number) => p50 / baseline!.initMs.p50;

    const rows = [baseline!, ...handlerResults].map((m) => {
      const label = m.name === baselineName ? `${baselineName} (DynamoDBClient only)` : m.name;
      return `| ${label} | ${kib(m.bytes)} | ${kib(m.gzipBytes)} | ${ms(m.initMs.p50)} | ${ms(m.initMs.p90)} | ${ratio(m.initMs.p50).toFixed(2)} |`;
    });
    console.log(
      `\nRingstore cold start: ${settings.BENCH_COLD_SAMPLES} fresh processes per bundle, node ${process.version}, ` +
        `${withSourceMaps ? 'with' : 'without'} source maps, bundled as ${settings.BENCH_BUNDLE_FORMAT}, ` +
        `code ${code.commit}${code.uncommitted.length ? ` + uncommitted ${code.uncommitted.join(' ')}` : ''}\n`,
    );
    console.log('| handler | bundle KiB | gzip KiB | init ms p50 | init ms p90 | init / baseline (p50) |');
    console.log('|---|---:|---:|---:|---:|---:|');
    console.log(rows.join('\n'));
    console.log('\nWhat stands in the way: the bare client plus one thing a handler loads at init (same run)\n');
    console.log('| bare client + | bundle KiB | init ms p50 | added ms (p50) | init / baseline (p50) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const m of probeResults) {
      const added = m.initMs.p50 - baseline!.initMs.p50;
      console.log(`| ${m.name} | ${kib(m.bytes)} | ${ms(m.initMs.p50)} | ${ms(added)} | ${ratio(m.initMs.p50).toFixed(2)} |`);
    }

    // The machine facts other benches record, less the DynamoDB Local ones: no engine runs here.
    const { dynamodbLocal: _engine, dynamodbLocalQuickStartJvmFlags: _jvm, ...machine } = machineFacts();
    const entryOf = ({ file: _file, ...rest }: (typeof measured)[number]) => rest;
    const output = {
      label: settings.BENCH_LABEL,
      finishedAt: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: { ...machine, loadAverageBefore: loadBefore, loadAverageAfter: loadavg(), code },
      settings: {
        samples: settings.BENCH_COLD_SAMPLES,
        discardedWarmupsPerBundle: 1,
        measures: 'require() of the bundle in a fresh node process: module-scope init until `handler` is exported',
        esbuild: {
          version: esbuildVersion,
          ...(split ? splitBundling : cdkBundling),
          tsconfig: 'tsconfig.json',
          absWorkingDir: '.',
          sourcemap: withSourceMaps,
        },
        gzip: 'node:zlib gzipSync, default level',
        // As kvRead sees it; txn also gets RINGSTORE_TXN_STATE_MACHINE_ARN (it starts transactions).
        environment: Object.fromEntries(
          Object.entries(lambdaEnvironment('kvRead')).filter(([name]) => !/SECRET|SESSION|ACCESS_KEY/.test(name)),
        ),
      },
      baseline: entryOf(baseline!),
      handlers: handlerResults.map((m) => ({ ...entryOf(m), initRatioToBaseline: round2(ratio(m.initMs.p50)) })),
      probes: probeResults.map((m) => ({
        ...entryOf(m),
        source: probes[m.name as ProbeName],
        addedMs: round2(m.initMs.p50 - baseline!.initMs.p50),
        initRatioToBaseline: round2(ratio(m.initMs.p50)),
      })),
    };
    mkdirSync(resultsDir, { recursive: true });
    const resultsFile = join(resultsDir, `cold-start-${settings.BENCH_LABEL}.json`);
    writeFileSync(resultsFile, `${JSON.stringify(output, null, 2)}\n`);
    log(`wrote ${relative(benchRoot, resultsFile)} in ${output.durationSeconds} s`);
    await plotAgainstBefore(output);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The file of a run as this bench writes it, read back for the comparison plot. */
const SavedRun = z.object({
  label: z.string(),
  handlers: z.array(z.object({ name: z.string(), bytes: z.number(), initRatioToBaseline: z.number() })),
});

/**
 * Plots this run against the committed `before` run (bench/results/cold-start-before.json) when this run
 * is not that one: the picture of what a change did to every handler's cold start.
 */
async function plotAgainstBefore(run: z.infer<typeof SavedRun>): Promise<void> {
  const beforeFile = join(resultsDir, 'cold-start-before.json');
  if (run.label === 'before' || !existsSync(beforeFile)) return;
  const before = SavedRun.parse(JSON.parse(readFileSync(beforeFile, 'utf8')));
  const points = [
    ...before.handlers.map((h) => ({
      handler: h.name,
      run: 'before',
      bundleKiB: Math.round(h.bytes / 1024),
      initRatio: h.initRatioToBaseline,
    })),
    ...run.handlers.map((h) => ({
      handler: h.name,
      run: 'after',
      bundleKiB: Math.round(h.bytes / 1024),
      initRatio: h.initRatioToBaseline,
    })),
  ];
  writeFileSync(
    coldStartSvgPath,
    await renderColdStartSvg(points, `before: ${before.label} run, after: ${run.label} run; ${settings.BENCH_COLD_SAMPLES} samples each`),
  );
  log(`wrote ${relative(benchRoot, coldStartSvgPath)}`);
}

main().catch((error: unknown) => {
  console.error(`[bench:cold-start] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
