// Shared by the fault suites (and reusable by bench/): a fault-enabled local cloud per suite, a small
// HTTP client that reports statuses instead of throwing, seeded randomness, and direct reads of every
// replica table in DynamoDB Local to judge convergence.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import type { BrokenMode, CrashPoint, RingState } from '../../lambdas/ports';
import { Ring, tokenOf } from '../../lambdas/core/ring';
import { type LocalCloudProcess, startLocalCloudProcess } from '../support/local-cloud-process';
import { sharedEngines, sharingEngines } from '../support/shared-engines';
import { stopAfterFile } from '../support/teardown';
import type { LocalRegions, LocalRegionsOptions } from '../../cdk/local/regions';

/** The namespace of the API key the local cloud prints. */
export const localNamespace = 'local';

/** Bound on one HTTP call: a hung request must fail the run, not hang it. */
const requestTimeoutMs = 15_000;
/** Keys per BatchGetItem (DynamoDB's limit). */
const batchGetKeysMax = 100;
/** Rounds of UnprocessedKeys retries per batch before giving up. */
const batchGetRoundsMax = 10;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------
// Seeds

/**
 * The run's base seed: `RINGSTORE_FAULT_SEED` to replay a failure, else one derived from the clock.
 *
 * @example
 * const seed = baseSeed(); // RINGSTORE_FAULT_SEED=12345 replays a run
 */
export function baseSeed(): number {
  const fromEnv = process.env.RINGSTORE_FAULT_SEED;
  if (fromEnv !== undefined && fromEnv !== '') {
    const seed = Number(fromEnv);
    if (!Number.isInteger(seed) || seed < 0) throw new Error(`RINGSTORE_FAULT_SEED must be a non-negative integer (got ${fromEnv})`);
    return seed;
  }
  return Date.now() % 2 ** 31;
}

/** A per-test seed from the base seed and a label, so one printed base seed replays every test. */
export function deriveSeed(base: number, label: string): number {
  let hash = base >>> 0;
  for (const char of label) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return hash;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same workload. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/**
 * The command that runs the current test alone with `seed`: its file and its full name, anchored, as jest's
 * `-t` reads a regular expression. No `--selectProjects` before the path (it takes several names and
 * would read the path as one); the path alone selects the fault project, whose setup runs only then.
 *
 * @example
 * replayCommand(42); // RINGSTORE_FAULT_SEED=42 npx jest test/fault/txn-bank.test.ts -t '^bank invariant …$'
 */
export function replayCommand(seed: number, test: { testPath?: string; currentTestName?: string } = expect.getState()): string {
  const file = test.testPath ? relative(repositoryRoot, test.testPath) : 'test/fault';
  const name = test.currentTestName ? ` -t ${shellQuote(`^${escapeRegExp(test.currentTestName)}$`)}` : '';
  return `RINGSTORE_FAULT_SEED=${seed} npx jest ${file}${name}`;
}

const repositoryRoot = join(__dirname, '..', '..');
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `body`; a failure is rethrown with the seed and the command that replays this test in front of its
 * message, so every failing run can be reproduced (`npm test` repeats these lines in its summary).
 */
export async function withSeed<T>(seed: number, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const prefix = `[seed ${seed}] replay: ${replayCommand(seed)}\n`;
    if (error instanceof Error) {
      error.message = `${prefix}${error.message}`;
      throw error;
    }
    throw new Error(`${prefix}${String(error)}`, { cause: error });
  }
}

// ---------------------------------------------------------------------------------------------------
// Events a suite must see, made to happen (docs/testing.md, "Not vacuous by construction")

/** A suite waited for an event it drives, and the event never came: the message names it. */
export class NeverHappenedError extends Error {
  constructor(what: string, detail: string) {
    super(`${what} never happened: ${detail}`);
    this.name = 'NeverHappenedError';
  }
}

/**
 * Runs `step` until `happened()` holds, at most `stepsMax` steps and `boundMs`; answers how many steps it
 * took (0: it had happened already). A suite that must see an event (a crash fired, an outage felt, an
 * operation acknowledged) calls this to drive the workload to it instead of hoping timing puts it there.
 *
 * @example
 * const crashed = async () => crashesIn(await api.faults()) >= 1;
 * await driveUntil('a coordinator crash', crashed, () => transferOnce(), { stepsMax: 20, boundMs: 60_000 });
 */
export async function driveUntil(
  what: string,
  happened: () => Promise<boolean>,
  step: (attempt: number) => Promise<void>,
  bound: { stepsMax: number; boundMs: number; /** What the run saw instead, for the error. */ explain?: () => Promise<string> },
): Promise<number> {
  const started = Date.now();
  for (let steps = 0; ; steps += 1) {
    if (await happened()) return steps;
    const elapsedMs = Date.now() - started;
    if (steps >= bound.stepsMax || elapsedMs > bound.boundMs) {
      const seen = bound.explain ? `; ${await bound.explain()}` : '';
      throw new NeverHappenedError(what, `${steps} steps in ${elapsedMs} ms (bounds: ${bound.stepsMax} steps, ${bound.boundMs} ms)${seen}`);
    }
    await step(steps);
  }
}

/**
 * Polls `probe` until it answers a value `done` accepts, bounded; answers that value, or fails naming what
 * never happened and the last value seen.
 *
 * @example
 * await eventually('the shard serving again', () => api.shards(), (s) => s.shards[1]!.health === 'available', { boundMs: 60_000 });
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  options: { boundMs: number; pollMs?: number },
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    const elapsedMs = Date.now() - started;
    if (elapsedMs > options.boundMs)
      throw new NeverHappenedError(what, `not within ${options.boundMs} ms; last seen ${JSON.stringify(value)?.slice(0, 500)}`);
    await sleep(options.pollMs ?? 200);
  }
}

// ---------------------------------------------------------------------------------------------------
// The cloud

export interface FaultCloud extends LocalCloudProcess {
  api: KvApi;
  ring: Ring;
  readonly ddb: DynamoDBDocumentClient;
  home: string;
  /**
   * Stops the cloud's process and starts it again on the same home, engines and stage: every handler restarts, the
   * data and the stream pollers' checkpoints stay. The cloud's URL and keys are updated in place.
   */
  restart(): Promise<void>;
  /** Stops the cloud and removes its home. */
  close(): Promise<void>;
}

/**
 * Starts a local cloud of its own (own temp home) with fault injection on.
 *
 * @example
 * beforeAll(async () => (cloud = await startFaultCloud('crash', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' })));
 */
export async function startFaultCloud(name: string, env: Record<string, string> = {}): Promise<FaultCloud> {
  // Jars are shared with `npm start` so a machine fetches them once.
  process.env.RINGSTORE_VENDOR_DIR ??= join(__dirname, '..', '..', '.ringstore', 'vendor');
  const home = mkdtempSync(join(tmpdir(), `ringstore-fault-${name}-`));
  let cloud: LocalCloudProcess;
  let cloudEnv: Record<string, string>;
  try {
    // The worker's shared DynamoDB Local, the cloud's tables under a stage of its own.
    const engines = sharingEngines() ? await sharedEngines() : undefined;
    const onShared: Record<string, string> = engines
      ? {
          RINGSTORE_DYNAMODB_ENDPOINT: engines.dynamodb,
          RINGSTORE_STAGE: `t-${name
            .toLowerCase()
            .replace(/[^a-z0-9]/g, '')
            .slice(0, 10)}-${randomBytes(3).toString('hex')}`,
        }
      : {};
    // Automatic failover off unless a suite asks for it: most suites study an outage itself (hints, replay).
    cloudEnv = { RINGSTORE_FAULT_INJECTION: '1', RINGSTORE_AUTO_FAILOVER: '0', ...onShared, ...env };
    cloud = await startLocalCloudProcess({ home, env: cloudEnv });
  } catch (error) {
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  // The process behind the cloud: a restart replaces it, and the cloud's facts follow it.
  let current = cloud;
  let ddb = documentClientFor(cloud.dynamodbEndpoint);
  const faultCloud: FaultCloud = {
    get url() {
      return current.url;
    },
    get apiKey() {
      return current.apiKey;
    },
    get adminKey() {
      return current.adminKey;
    },
    get dynamodbEndpoint() {
      return current.dynamodbEndpoint;
    },
    get redisUrl() {
      return current.redisUrl;
    },
    get faultsUrl() {
      return current.faultsUrl;
    },
    get pid() {
      return current.pid;
    },
    get ddb() {
      return ddb;
    },
    stop: () => current.stop(),
    api: undefined as unknown as KvApi,
    ring: undefined as unknown as Ring,
    home,
    restart: async () => {
      await current.stop();
      ddb.destroy();
      current = await startLocalCloudProcess({ home, env: cloudEnv });
      ddb = documentClientFor(current.dynamodbEndpoint);
    },
    close: stopAfterFile(`the fault cloud ${name}`, async () => {
      ddb.destroy();
      await current.stop();
      rmSync(home, { recursive: true, force: true });
    }),
  };
  faultCloud.api = new KvApi(faultCloud);
  try {
    faultCloud.ring = await faultCloud.api.ring();
  } catch (error) {
    // A cloud that started but cannot answer is stopped here: no caller holds it to close.
    await faultCloud.close();
    throw error;
  }
  return faultCloud;
}

/** A document client on the cloud's DynamoDB Local, as the handlers see it. */
export function documentClientFor(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: localRegion, credentials: { ...localCredentials } }));
}

// ---------------------------------------------------------------------------------------------------
// HTTP

export type Consistency = 'eventual' | 'strong';

/**
 * What one call answered. `status` 0 means no HTTP answer (connection error or timeout). `version` is
 * the written version (writes) or the read version (reads); `value` the body of a successful read.
 */
export interface Reply {
  status: number;
  version?: number;
  value?: string;
  code?: string;
  message?: string;
}

export interface WriteOptions {
  consistency: Consistency;
  ifMatch?: number;
  ifNoneMatch?: boolean;
}

export interface FaultPlan {
  crashes?: Array<{ point: CrashPoint; after?: number; times?: number }>;
  downShards?: string[];
  broken?: BrokenMode[];
}

export interface FaultStatus {
  crashes: Array<{ point: CrashPoint; after: number; times: number }>;
  downShards: string[];
  broken: string[];
  reached: Partial<Record<CrashPoint, number>>;
  crashed: Partial<Record<CrashPoint, number>>;
}

/** What the crash points saw (reached, crashed, still armed), for a drive's error: `driveUntil`'s `explain`. */
export function describeFaults(status: FaultStatus): string {
  return `reached ${JSON.stringify(status.reached)}, crashed ${JSON.stringify(status.crashed)}, armed ${JSON.stringify(status.crashes)}`;
}

/** One op of POST /v1/txn (schemas/api.ts TxnOp), values as text. */
export type TxnOpInput =
  | { op: 'get'; key: string }
  | { op: 'put'; key: string; value: string; ifVersion?: number }
  | { op: 'delete'; key: string; ifVersion?: number }
  | { op: 'check'; key: string; ifVersion: number };

/** What POST /v1/txn answered: the committed outcome (200), or the error's code and the txid it names. */
export interface TxnReply {
  status: number;
  code?: string;
  message?: string;
  txid?: string;
  writes?: Array<{ key: string; version: number }>;
  /** One per get op, in request order; `value` decoded from base64. */
  reads?: Array<{ key: string; found: boolean; version?: number; value?: string }>;
}

export interface ShardStatus {
  shards: Array<{ id: number; table: string; health: string; pendingHints: number }>;
}

/** The Ringstore HTTP API as the fault suites use it: every outcome is a Reply, nothing throws. */
export class KvApi {
  constructor(private readonly cloud: Pick<LocalCloudProcess, 'url' | 'apiKey' | 'adminKey' | 'faultsUrl'>) {}

  put(key: string, value: string, options: WriteOptions): Promise<Reply> {
    return this.write('PUT', key, options, value);
  }

  delete(key: string, options: Omit<WriteOptions, 'ifNoneMatch'>): Promise<Reply> {
    return this.write('DELETE', key, options);
  }

  async get(key: string, consistency: Consistency): Promise<Reply> {
    return this.call(`/v1/kv/${encodeURIComponent(key)}?consistency=${consistency}`, { method: 'GET' }, async (response) => {
      const version = Number(response.headers.get('x-ringstore-version'));
      return { version, value: await response.text() };
    });
  }

  /** POST /v1/txn; every outcome (committed, aborted, unknown, no answer) is a TxnReply. */
  async txn(ops: readonly TxnOpInput[], options: { timeoutMs?: number; consistency?: Consistency } = {}): Promise<TxnReply> {
    const query = options.consistency ? `?consistency=${options.consistency}` : '';
    let response: Response;
    try {
      response = await fetch(`${this.cloud.url}/v1/txn${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.cloud.apiKey },
        body: JSON.stringify({ ops, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) }),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      return { status: 0, message: error instanceof Error ? error.message : String(error) };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return { status: 0, message: error instanceof Error ? error.message : String(error) };
    }
    const parsed = safeJson(text) as
      | {
          txid?: string;
          writes?: TxnReply['writes'];
          reads?: Array<{ key: string; found: boolean; version?: number; value?: string }>;
          error?: { code?: string; message?: string; details?: { txid?: string } };
        }
      | undefined;
    if (response.status === 200 && parsed?.writes && parsed.reads) {
      return {
        status: 200,
        ...(parsed.txid ? { txid: parsed.txid } : {}),
        writes: parsed.writes,
        reads: parsed.reads.map((read) => ({
          ...read,
          ...(read.value === undefined ? {} : { value: Buffer.from(read.value, 'base64').toString('utf8') }),
        })),
      };
    }
    return {
      status: response.status === 200 ? 0 : response.status,
      ...(parsed?.error?.code ? { code: parsed.error.code } : {}),
      ...(parsed?.error?.details?.txid ? { txid: parsed.error.details.txid } : {}),
      message: parsed?.error?.message ?? text.slice(0, 200),
    };
  }

  async setFaults(plan: FaultPlan): Promise<FaultStatus> {
    return this.faultCall({ method: 'PUT', body: JSON.stringify(plan), headers: { 'content-type': 'application/json' } });
  }

  async faults(): Promise<FaultStatus> {
    return this.faultCall({ method: 'GET' });
  }

  /** POST /v1/admin/repair: a crashed run answers 502. */
  async repair(): Promise<Reply> {
    return this.call('/v1/admin/repair', { method: 'POST', key: this.cloud.adminKey }, async () => ({}));
  }

  async shards(): Promise<ShardStatus> {
    const response = await fetch(`${this.cloud.url}/v1/admin/shards`, {
      headers: { 'x-api-key': this.cloud.adminKey },
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    if (response.status !== 200) throw new Error(`GET /v1/admin/shards answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as ShardStatus;
  }

  /** The ring as GET /v1/ring describes it, checked against the ranges it lists. */
  async ring(): Promise<Ring> {
    const response = await fetch(`${this.cloud.url}/v1/ring`, {
      headers: { 'x-api-key': this.cloud.apiKey },
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    if (response.status !== 200) throw new Error(`GET /v1/ring answered ${response.status}`);
    const body = (await response.json()) as RingState & {
      ranges: Array<{ end: number; owner: number; replicas: number[]; fenced?: true; backfilling?: number[] }>;
    };
    const walk = new Ring({
      epoch: body.epoch,
      replicationFactor: body.replicationFactor,
      vnodesPerShard: body.vnodesPerShard,
      shards: body.shards,
    });
    // What failovers changed: ranges owned by another replica than the vnode walk's, and fenced ranges.
    // And replicas a failover added beyond the walk's RF (re-replication), backfilled or not.
    const ring = new Ring({
      ...walk.state,
      owners: body.ranges.filter((range) => walk.ownerOf(range.end).id !== range.owner).map(({ end, owner }) => ({ end, owner })),
      fenced: body.ranges.filter((range) => range.fenced).map((range) => range.end),
      addedReplicas: body.ranges.flatMap((range) => {
        const own = walk.replicasOf(range.end).map((shard) => shard.id);
        return range.replicas
          .filter((shard) => !own.includes(shard))
          .map((shard) => ({ end: range.end, shard, failover: '', ready: !range.backfilling?.includes(shard) }));
      }),
      ...(body.rejoining ? { rejoining: body.rejoining } : {}),
    });
    for (const range of body.ranges) {
      const computed = ring.replicasOf(range.end).map((shard) => shard.id);
      if (computed.join() !== range.replicas.join()) {
        throw new Error(
          `ring mismatch at token ${range.end}: API says ${range.replicas.join(',')}, the ring code says ${computed.join(',')}`,
        );
      }
    }
    return ring;
  }

  private async faultCall(init: RequestInit): Promise<FaultStatus> {
    if (!this.cloud.faultsUrl) throw new Error('the cloud runs without fault injection (no Faults: line)');
    const response = await fetch(this.cloud.faultsUrl, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) });
    if (response.status !== 200) throw new Error(`${init.method} /_faults answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as FaultStatus;
  }

  private write(method: 'PUT' | 'DELETE', key: string, options: WriteOptions, body?: string): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (options.ifMatch !== undefined) headers['if-match'] = `"${options.ifMatch}"`;
    if (options.ifNoneMatch) headers['if-none-match'] = '*';
    if (body !== undefined) headers['content-type'] = 'text/plain';
    return this.call(
      `/v1/kv/${encodeURIComponent(key)}?consistency=${options.consistency}`,
      { method, headers, ...(body === undefined ? {} : { body }) },
      async (response) => ({ version: ((await response.json()) as { version: number }).version }),
    );
  }

  private async call(
    path: string,
    init: RequestInit & { key?: string; headers?: Record<string, string> },
    onOk: (response: Response) => Promise<Omit<Reply, 'status'>>,
  ): Promise<Reply> {
    const { key, ...rest } = init;
    let response: Response;
    try {
      response = await fetch(`${this.cloud.url}${path}`, {
        ...rest,
        headers: { ...Object.fromEntries(new Headers(init.headers)), 'x-api-key': key ?? this.cloud.apiKey },
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      return { status: 0, message: error instanceof Error ? error.message : String(error) };
    }
    try {
      if (response.status === 200) return { status: 200, ...(await onOk(response)) };
      const text = await response.text();
      const parsed = safeJson(text) as { error?: { code?: string; message?: string }; message?: string } | undefined;
      return {
        status: response.status,
        ...(parsed?.error?.code ? { code: parsed.error.code } : {}),
        message: parsed?.error?.message ?? parsed?.message ?? text.slice(0, 200),
      };
    } catch (error) {
      // The answer was cut off: as unknown as a lost connection.
      return { status: 0, message: error instanceof Error ? error.message : String(error) };
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// Replicas, read directly from DynamoDB Local

/** The attributes of a shard item the checks compare (see lambdas/adapters/dynamodb-item-codec.ts). */
export interface ShardItem {
  pk: string;
  v: number;
  tomb: boolean;
  sha: string;
  val?: Uint8Array;
  blob?: string;
}

export interface ReplicaView {
  table: string;
  /** Undefined: the table holds no item for the key. */
  item?: ShardItem;
}

/** The key's shard tables, owner first. */
export function replicaTablesOf(ring: Ring, namespace: string, key: string): string[] {
  return ring.replicasOf(tokenOf(namespace, key)).map((shard) => shard.table);
}

/**
 * Every replica's copy of every key (consistent reads), owner first per key.
 *
 * @example
 * const views = await readReplicas(ddb, ring, 'local', ['k1']);
 * views.get('k1')![0]!.item?.v; // the owner's version
 */
export async function readReplicas(
  ddb: DynamoDBDocumentClient,
  ring: Ring,
  namespace: string,
  keys: readonly string[],
): Promise<Map<string, ReplicaView[]>> {
  const wanted = keys.flatMap((key) => replicaTablesOf(ring, namespace, key).map((table) => ({ key, table, pk: `${namespace}#${key}` })));
  const found = new Map<string, ShardItem>();
  for (let start = 0; start < wanted.length; start += batchGetKeysMax) {
    let requestItems: Record<string, { Keys: Array<{ pk: string }>; ConsistentRead: boolean }> = {};
    for (const { table, pk } of wanted.slice(start, start + batchGetKeysMax)) {
      (requestItems[table] ??= { Keys: [], ConsistentRead: true }).Keys.push({ pk });
    }
    for (let round = 0; Object.keys(requestItems).length > 0; round += 1) {
      if (round >= batchGetRoundsMax) throw new Error(`BatchGetItem left keys unprocessed after ${batchGetRoundsMax} rounds`);
      const { Responses = {}, UnprocessedKeys = {} } = await ddb.send(new BatchGetCommand({ RequestItems: requestItems }));
      for (const [table, items] of Object.entries(Responses)) {
        for (const item of items) found.set(`${table}|${String(item.pk)}`, item as ShardItem);
      }
      requestItems = UnprocessedKeys as typeof requestItems;
      if (Object.keys(requestItems).length > 0) await sleep(50 * (round + 1));
    }
  }
  const views = new Map<string, ReplicaView[]>();
  for (const { key, table, pk } of wanted) {
    const item = found.get(`${table}|${pk}`);
    views.set(key, [...(views.get(key) ?? []), item ? { table, item } : { table }]);
  }
  return views;
}

/** Same version and content (value bytes, digest, tombstone, blob), or both absent. */
export function sameItem(a: ShardItem | undefined, b: ShardItem | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.v === b.v &&
    a.tomb === b.tomb &&
    a.sha === b.sha &&
    a.blob === b.blob &&
    (a.val === undefined ? b.val === undefined : b.val !== undefined && Buffer.from(a.val).equals(Buffer.from(b.val)))
  );
}

export function describeItem(item: ShardItem | undefined): string {
  if (!item) return 'absent';
  if (item.tomb) return `tombstone@v${item.v}`;
  return `${JSON.stringify(item.val === undefined ? `<blob ${item.blob}>` : Buffer.from(item.val).toString('utf8'))}@v${item.v}`;
}

/** Keys whose replicas do not all hold exactly the owner's item, each with what every table holds. */
export function divergence(views: ReadonlyMap<string, ReplicaView[]>): string[] {
  const problems: string[] = [];
  for (const [key, [owner, ...others]] of views) {
    if (others.every((view) => sameItem(owner!.item, view.item))) continue;
    problems.push(`${key}: ${[owner!, ...others].map((view) => `${view.table}=${describeItem(view.item)}`).join(', ')}`);
  }
  return problems;
}

export interface ConvergenceResult {
  converged: boolean;
  elapsedMs: number;
  polls: number;
  /** What still differed at the last poll (empty once converged). */
  divergent: string[];
}

/**
 * Polls DynamoDB until every replica of every key holds the owner's item, or `boundMs` passes.
 * `between` runs after each poll that found divergence (e.g. to ask for a repair).
 */
export async function waitForConvergence(options: {
  ddb: DynamoDBDocumentClient;
  ring: Ring;
  namespace?: string;
  keys: readonly string[];
  boundMs: number;
  pollMs?: number;
  between?: (elapsedMs: number) => Promise<void>;
}): Promise<ConvergenceResult> {
  const started = performance.now();
  const namespace = options.namespace ?? localNamespace;
  let polls = 0;
  for (;;) {
    polls += 1;
    const divergent = divergence(await readReplicas(options.ddb, options.ring, namespace, options.keys));
    const elapsedMs = Math.round(performance.now() - started);
    if (divergent.length === 0) return { converged: true, elapsedMs, polls, divergent };
    if (elapsedMs > options.boundMs) return { converged: false, elapsedMs, polls, divergent };
    await options.between?.(elapsedMs);
    await sleep(options.pollMs ?? 50);
  }
}

// ---------------------------------------------------------------------------------------------------
// Convergence after a burst (the test reports it; bench/ can run the same measurement)

export interface BurstOptions {
  /** A running cloud: its API, a user key of `namespace`, and its DynamoDB Local endpoint. */
  url: string;
  apiKey: string;
  dynamodbEndpoint: string;
  namespace?: string;
  /** Eventual writes in the burst (default 300), spread round-robin over `keys` keys (default 30). */
  writes?: number;
  keys?: number;
  /** Writes in flight at once (default 16). */
  concurrency?: number;
  /** Keys are `<keyPrefix><n>`; default a unique prefix per call. */
  keyPrefix?: string;
  /** Give up waiting for convergence after this long (default 60 s). */
  boundMs?: number;
}

export interface BurstConvergence {
  writes: number;
  keys: number;
  /** Writes acknowledged (200); the others failed and are reported, not retried. */
  acknowledged: number;
  failures: string[];
  /** From the first write sent to the last acknowledgement. */
  burstMs: number;
  /** From the last acknowledgement until every replica of every key held the owner's item. */
  convergenceMs: number;
  converged: boolean;
  /** What still differed when the bound passed (empty when converged). */
  divergent: string[];
}

/**
 * Sends a burst of eventual writes, then measures how long the stream path takes to bring every
 * replica to the owner's version (polling DynamoDB directly, about every 20 ms).
 *
 * @example
 * const result = await measureBurstConvergence({ url, apiKey, dynamodbEndpoint, writes: 300, keys: 30 });
 * console.log(`convergence after burst of ${result.writes} writes: ${result.convergenceMs} ms`);
 */
export async function measureBurstConvergence(options: BurstOptions): Promise<BurstConvergence> {
  const writes = options.writes ?? 300;
  const keyCount = options.keys ?? 30;
  const concurrency = options.concurrency ?? 16;
  const namespace = options.namespace ?? localNamespace;
  const prefix = options.keyPrefix ?? `burst-${Date.now().toString(36)}-`;
  const keys = Array.from({ length: keyCount }, (_, n) => `${prefix}${n}`);
  const api = new KvApi({ url: options.url, apiKey: options.apiKey, adminKey: '', faultsUrl: undefined });
  const ring = await api.ring();
  const ddb = documentClientFor(options.dynamodbEndpoint);
  try {
    const failures: string[] = [];
    let acknowledged = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(concurrency, writes) }, async () => {
        while (next < writes) {
          const n = next;
          next += 1;
          const key = keys[n % keyCount]!;
          const reply = await api.put(key, `burst value ${n}`, { consistency: 'eventual' });
          if (reply.status === 200) acknowledged += 1;
          else failures.push(`write ${n} of ${key}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`.trim());
        }
      }),
    );
    const burstMs = Math.round(performance.now() - started);
    const result = await waitForConvergence({ ddb, ring, namespace, keys, boundMs: options.boundMs ?? 60_000, pollMs: 20 });
    return {
      writes,
      keys: keyCount,
      acknowledged,
      failures,
      burstMs,
      convergenceMs: result.elapsedMs,
      converged: result.converged,
      divergent: result.divergent,
    };
  } finally {
    ddb.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------
// Transactions, judged in DynamoDB directly

/** `count` keys `<prefix><n>` per shard, chosen by ring owner, so a set of them spans every shard. */
export function keysOwnedByEachShard(ring: Ring, prefix: string, count: number, namespace = localNamespace): Map<string, string[]> {
  const byShard = new Map(ring.shards.map((shard) => [shard.table, [] as string[]]));
  for (let n = 0; [...byShard.values()].some((keys) => keys.length < count); n += 1) {
    if (n > 100_000) throw new Error('could not find keys for every shard');
    const key = `${prefix}${n}`;
    const owned = byShard.get(ring.ownerOf(tokenOf(namespace, key)).table)!;
    if (owned.length < count) owned.push(key);
  }
  return byShard;
}

/** Every item of the shard tables that still holds an intent (the `itx` attribute). */
export async function intentsLeft(ddb: DynamoDBDocumentClient, ring: Ring): Promise<Array<{ table: string; pk: string; txid: string }>> {
  const found: Array<{ table: string; pk: string; txid: string }> = [];
  for (const { table } of ring.shards) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await ddb.send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          FilterExpression: 'attribute_exists(itx)',
          ProjectionExpression: 'pk, itx',
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) found.push({ table, pk: String(item.pk), txid: String(item.itx) });
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return found;
}

/** The transaction table of the cloud whose shard tables the ring names (schemas/topology.ts namesFor). */
export function txnTableOf(ring: Ring): string {
  return ring.shards[0]!.table.replace(/-shard-[^-]+$/, '-txn');
}

/** The status of each transaction record (consistent reads); absent: no record. */
export async function txnStatuses(
  ddb: DynamoDBDocumentClient,
  ring: Ring,
  txids: readonly string[],
): Promise<Map<string, string | undefined>> {
  const table = txnTableOf(ring);
  const statuses = new Map<string, string | undefined>(txids.map((txid) => [txid, undefined]));
  const unique = [...statuses.keys()];
  for (let start = 0; start < unique.length; start += batchGetKeysMax) {
    let requestItems: Record<
      string,
      {
        Keys: Array<{ txid: string }>;
        ConsistentRead: boolean;
        ProjectionExpression: string;
        ExpressionAttributeNames: Record<string, string>;
      }
    > = {
      [table]: {
        Keys: unique.slice(start, start + batchGetKeysMax).map((txid) => ({ txid })),
        ConsistentRead: true,
        ProjectionExpression: 'txid, #s',
        ExpressionAttributeNames: { '#s': 'status' },
      },
    };
    for (let round = 0; Object.keys(requestItems).length > 0; round += 1) {
      if (round >= batchGetRoundsMax) throw new Error(`BatchGetItem left keys unprocessed after ${batchGetRoundsMax} rounds`);
      const { Responses = {}, UnprocessedKeys = {} } = await ddb.send(new BatchGetCommand({ RequestItems: requestItems }));
      for (const item of Responses[table] ?? []) statuses.set(String(item.txid), String(item.status));
      requestItems = UnprocessedKeys as typeof requestItems;
      if (Object.keys(requestItems).length > 0) await sleep(50 * (round + 1));
    }
  }
  return statuses;
}

/**
 * Waits (bounded) until the recovery sweeper and readers have finished every transaction: no intent
 * in any shard table and no listed record still pending. Answers what was left when the bound passed.
 */
export async function waitForTxnRecovery(options: {
  ddb: DynamoDBDocumentClient;
  ring: Ring;
  txids: readonly string[];
  boundMs: number;
  pollMs?: number;
}) {
  const started = Date.now();
  for (;;) {
    const intents = await intentsLeft(options.ddb, options.ring);
    const statuses = await txnStatuses(options.ddb, options.ring, options.txids);
    const pending = [...statuses].filter(([, status]) => status === 'pending').map(([txid]) => txid);
    const elapsedMs = Date.now() - started;
    if ((intents.length === 0 && pending.length === 0) || elapsedMs > options.boundMs) {
      return { recovered: intents.length === 0 && pending.length === 0, elapsedMs, intents, pending, statuses };
    }
    await sleep(options.pollMs ?? 250);
  }
}

/** The homes of the DR suites' regions, removed by `removeDrHomes` after each suite. */
const drHomes: string[] = [];

/**
 * Two local regions for a DR fault suite (linked through Toxiproxy when `link` is given) (docs/dr.md), in a fresh home: no
 * background maintenance, sweeper or automatic failover, and a short value wait for promotions.
 */
export async function startDrRegions(
  name: string,
  options: { link?: LocalRegionsOptions['link']; faultInjection?: boolean } = {},
): Promise<LocalRegions> {
  const home = mkdtempSync(join(tmpdir(), `ringstore-${name}-`));
  drHomes.push(home);
  // Loaded here: the local cloud's own code is most of what a fault suite would import otherwise (0.9 CPU-s in
  // each test file), and only the DR suites run regions in the test process.
  const { startLocalRegions } = await import('../../cdk/local/regions');
  const regions = await startLocalRegions({
    home,
    vendorDir: process.env.RINGSTORE_VENDOR_DIR ?? join(__dirname, '..', '..', '.ringstore', 'vendor'),
    port: 0,
    maintenanceIntervalMs: 0,
    sweeperIntervalMs: 0,
    autoFailover: false,
    valueWaitMs: 500,
    // The suites cut the link on purpose: the shipper's WARN on every retry of a batch it could not ship is
    // expected here, and filled the test log. Errors are still printed.
    logLevel: 'ERROR',
    ...(options.link ? { link: options.link } : {}),
    ...(options.faultInjection ? { faultInjection: true } : {}),
  });
  // Each part on its own: a test may have stopped the primary (a disaster) or the link already.
  stopAfterFile(`the local regions in ${home}`, async () => {
    await regions.primary.stop().catch(() => undefined);
    await regions.link?.stop().catch(() => undefined);
    await regions.backup.stop();
  });
  return regions;
}

export function removeDrHomes(): void {
  for (const home of drHomes.splice(0)) rmSync(home, { recursive: true, force: true });
}
