// The measured cases: raw DynamoDB Local calls (the baseline), Ringstore's handlers called in-process,
// and Ringstore through the local API Gateway over HTTP; plus diagnostics that split the difference.
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import {
  type AttributeValue,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  type GetItemCommandInput,
  PutItemCommand,
  type PutItemCommandInput,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { localCredentials, localRegion } from '../cdk/local/engines';
import { kvEvent, lambdaContext, type Caller } from './events';
import type { Operation } from './measure';
import type { Workload } from './workload';

/** The baseline's own table on the same DynamoDB Local: a plain hash key, no indexes, no stream. */
export const rawTableName = 'ringstore-bench-raw';
/**
 * Bound on any one call, so a stuck engine ends the bench instead of hanging it: far above any latency a
 * bench reports, also on a 2-core machine with other work (a transaction once took over 10 s there).
 */
export const callTimeoutMs = 30_000;

export type Layer = 'raw' | 'handler' | 'http' | 'diagnostic';
export type OperationKind = 'put' | 'putStrong' | 'get' | 'getStrong' | 'conditionalPut' | 'atomic' | 'txn';

export interface BenchCase {
  id: string;
  label: string;
  layer: Layer;
  kind: OperationKind;
  run: Operation;
}

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface CaseDeps {
  workload: Workload;
  dynamodbEndpoint: string;
  url: string;
  apiKey: string;
  caller: Caller;
  readHandler: ProxyHandler;
  writeHandler: ProxyHandler;
}

/** The low-level client every raw case uses: the settings the local cloud gives the handlers. */
export function rawClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ region: localRegion, credentials: { ...localCredentials }, endpoint, maxAttempts: 3 });
}

export async function createRawTable(client: DynamoDBClient): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: rawTableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
}

/**
 * The raw item carries the same attributes as a Ringstore shard item (docs/architecture.md, "Tables") with the same
 * 1 KiB value, so both sides move the same bytes per call.
 */
function rawItem(workload: Workload, namespace: string, i: number, sha256: string): Record<string, AttributeValue> {
  const key = workload.keyOf(i);
  return {
    pk: { S: `${namespace}#${key}` },
    ns: { S: namespace },
    k: { S: key },
    v: { N: '1' },
    tok: { N: '2147483647' },
    tb: { N: '127' },
    ct: { S: 'application/octet-stream' },
    size: { N: String(workload.valueOf(i).length) },
    sha: { S: sha256 },
    tomb: { BOOL: false },
    val: { B: workload.valueOf(i) },
  };
}

function shaOf(value: Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

export async function preloadRaw(client: DynamoDBClient, workload: Workload, namespace: string): Promise<void> {
  const shas = workload.values.map(shaOf);
  for (let i = 0; i < workload.keys.length; i += 1) {
    await client.send(new PutItemCommand({ TableName: rawTableName, Item: rawItem(workload, namespace, i, shas[i % shas.length]!) }));
  }
}

export function rawCases(client: DynamoDBClient, workload: Workload, namespace: string): BenchCase[] {
  const shas = workload.values.map(shaOf);
  const options = () => ({ abortSignal: AbortSignal.timeout(callTimeoutMs) });
  const get =
    (consistent: boolean): Operation =>
    async (i) => {
      const key = { pk: { S: `${namespace}#${workload.keyOf(i)}` } };
      const { Item } = await client.send(new GetItemCommand({ TableName: rawTableName, Key: key, ConsistentRead: consistent }), options());
      if (!Item?.val?.B || Item.val.B.length !== workload.valueOf(0).length)
        throw new Error(`raw GetItem of ${workload.keyOf(i)} found no value`);
    };
  return [
    {
      id: 'raw.put',
      label: 'raw PutItem',
      layer: 'raw',
      kind: 'put',
      run: async (i) => {
        await client.send(
          new PutItemCommand({ TableName: rawTableName, Item: rawItem(workload, namespace, i, shas[i % shas.length]!) }),
          options(),
        );
      },
    },
    { id: 'raw.get', label: 'raw GetItem', layer: 'raw', kind: 'get', run: get(false) },
    { id: 'raw.getStrong', label: 'raw GetItem ConsistentRead', layer: 'raw', kind: 'getStrong', run: get(true) },
  ];
}

function expectStatus(result: { statusCode: number; body?: string }, expected: number, what: string): void {
  if (result.statusCode !== expected) throw new Error(`${what} answered ${result.statusCode}: ${result.body ?? ''}`.slice(0, 500));
}

/**
 * What a write acknowledgement must say, so a PUT that silently degraded (a strong write acknowledged
 * with fewer than RF copies, an eventual write taken as strong) fails the bench instead of being timed.
 */
export function expectAck(body: string, strong: boolean, what: string): void {
  const expected = strong ? '"copies":3' : '"consistency":"eventual"';
  if (!body.includes(expected)) throw new Error(`${what} acknowledged ${body.slice(0, 300)}, expected ${expected}`);
}

export function handlerCases(deps: CaseDeps): BenchCase[] {
  const { workload, caller, readHandler, writeHandler } = deps;
  const get =
    (strong: boolean): Operation =>
    async (i) => {
      const event = kvEvent({ method: 'GET', key: workload.keyOf(i), caller, ...(strong ? { query: { consistency: 'strong' } } : {}) });
      const result = await readHandler(event, lambdaContext('kvRead'));
      expectStatus(result, 200, `handler GET ${workload.keyOf(i)}`);
    };
  const put =
    (strong: boolean): Operation =>
    async (i) => {
      const what = `handler PUT ${workload.keyOf(i)}`;
      const event = kvEvent({
        method: 'PUT',
        key: workload.keyOf(i),
        caller,
        bodyBase64: workload.valueBase64Of(i),
        ...(strong ? { query: { consistency: 'strong' } } : {}),
      });
      const result = await writeHandler(event, lambdaContext('kvWrite'));
      expectStatus(result, 200, what);
      expectAck(result.body, strong, what);
    };
  return [
    { id: 'handler.put', label: 'handler PUT (eventual)', layer: 'handler', kind: 'put', run: put(false) },
    { id: 'handler.putStrong', label: 'handler PUT strong (RF=3)', layer: 'handler', kind: 'putStrong', run: put(true) },
    { id: 'handler.get', label: 'handler GET (eventual, warm cache)', layer: 'handler', kind: 'get', run: get(false) },
    { id: 'handler.getStrong', label: 'handler GET strong', layer: 'handler', kind: 'getStrong', run: get(true) },
  ];
}

/**
 * The HTTP cases with fetch (undici) as the client: how much a heavier client adds. Diagnostics only;
 * the measured HTTP cases use node:http, the transport the AWS SDK uses for the raw baseline.
 */
export function fetchCases(deps: CaseDeps): BenchCase[] {
  const { workload, url, apiKey } = deps;
  const keyUrls = workload.keys.map((key) => `${url}/v1/kv/${encodeURIComponent(key)}`);
  const urlOf = (i: number) => keyUrls[workload.keyIndexOf(i)]!;
  const get =
    (strong: boolean): Operation =>
    async (i) => {
      const response = await fetch(strong ? `${urlOf(i)}?consistency=strong` : urlOf(i), {
        headers: { 'x-api-key': apiKey },
        signal: AbortSignal.timeout(callTimeoutMs),
      });
      const body = await response.arrayBuffer();
      if (response.status !== 200 || body.byteLength !== workload.valueOf(0).length) {
        throw new Error(`HTTP GET ${urlOf(i)} answered ${response.status} with ${body.byteLength} bytes`);
      }
    };
  return [
    {
      id: 'diag.fetchPut',
      label: 'HTTP PUT, fetch client',
      layer: 'diagnostic',
      kind: 'put',
      run: async (i) => {
        const response = await fetch(urlOf(i), {
          method: 'PUT',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/octet-stream' },
          body: workload.valueOf(i),
          signal: AbortSignal.timeout(callTimeoutMs),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`HTTP PUT ${urlOf(i)} answered ${response.status}: ${text.slice(0, 300)}`);
      },
    },
    { id: 'diag.fetchGet', label: 'HTTP GET, fetch client', layer: 'diagnostic', kind: 'get', run: get(false) },
    { id: 'diag.fetchGetStrong', label: 'HTTP GET strong, fetch client', layer: 'diagnostic', kind: 'getStrong', run: get(true) },
  ];
}

/** One keep-alive request with node:http: the lightest HTTP client Node has. */
export function nodeHttpRequest(agent: Agent, url: string, init: { method: string; headers: Record<string, string>; body?: Buffer }) {
  return new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    const req = request(url, { agent, method: init.method, headers: init.headers, timeout: callTimeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${init.method} ${url} timed out after ${callTimeoutMs} ms`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Ringstore through its REST API, with node:http keep-alive as the client: the same transport the
 * AWS SDK's NodeHttpHandler gives the raw baseline, so the comparison is server against server.
 */
export function httpCases(deps: CaseDeps, agent: Agent): BenchCase[] {
  const { workload, url, apiKey } = deps;
  const keyUrls = workload.keys.map((key) => `${url}/v1/kv/${encodeURIComponent(key)}`);
  const urlOf = (i: number) => keyUrls[workload.keyIndexOf(i)]!;
  const get =
    (strong: boolean): Operation =>
    async (i) => {
      const target = strong ? `${urlOf(i)}?consistency=strong` : urlOf(i);
      const response = await nodeHttpRequest(agent, target, { method: 'GET', headers: { 'x-api-key': apiKey } });
      if (response.status !== 200 || response.body.length !== workload.valueOf(0).length) {
        throw new Error(`HTTP GET ${target} answered ${response.status} with ${response.body.length} bytes`);
      }
    };
  const put =
    (strong: boolean): Operation =>
    async (i) => {
      const body = workload.valueOf(i);
      const target = strong ? `${urlOf(i)}?consistency=strong` : urlOf(i);
      const response = await nodeHttpRequest(agent, target, {
        method: 'PUT',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/octet-stream', 'content-length': String(body.length) },
        body,
      });
      if (response.status !== 200)
        throw new Error(`HTTP PUT ${target} answered ${response.status}: ${response.body.toString().slice(0, 300)}`);
      expectAck(response.body.toString(), strong, `HTTP PUT ${target}`);
    };
  return [
    // Eventual is the namespace's default: the PUT sends no consistency parameter, as most clients would.
    { id: 'http.put', label: 'HTTP PUT (eventual)', layer: 'http', kind: 'put', run: put(false) },
    { id: 'http.putStrong', label: 'HTTP PUT strong (RF=3)', layer: 'http', kind: 'putStrong', run: put(true) },
    { id: 'http.get', label: 'HTTP GET (eventual, warm cache)', layer: 'http', kind: 'get', run: get(false) },
    { id: 'http.getStrong', label: 'HTTP GET strong', layer: 'http', kind: 'getStrong', run: get(true) },
  ];
}

/** PUT through HTTP with node:http, for the replication measurements (ack body returned). */
export async function httpPut(
  agent: Agent,
  url: string,
  apiKey: string,
  value: Buffer,
  strong: boolean,
): Promise<{ version: number; copies?: number }> {
  const target = strong ? `${url}?consistency=strong` : url;
  const response = await nodeHttpRequest(agent, target, {
    method: 'PUT',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/octet-stream', 'content-length': String(value.length) },
    body: value,
  });
  if (response.status !== 200) throw new Error(`HTTP PUT ${target} answered ${response.status}: ${response.body.toString().slice(0, 300)}`);
  return JSON.parse(response.body.toString()) as { version: number; copies?: number };
}

/** Ringstore's own DynamoDB requests, captured while preloading (see capture.ts), per key. */
export interface CapturedRequests {
  /** The owner's versioning UpdateItem. */
  updates: Map<string, UpdateItemCommandInput>;
  /** The owner's GetItem of a strong read. */
  gets: Map<string, GetItemCommandInput>;
  /** The conditional PutItems a strong write sends to the key's other replicas, one per replica table. */
  replicaPuts: Map<string, PutItemCommandInput[]>;
}

/** The key the write replays use instead of `key`: beside Ringstore's item on the same shard tables. */
export function replayKeyOf(key: string): string {
  return `${key}~replay`;
}

/** The expression placeholder that `name` is compared with or set to in `expression` (`#n < :x`, `#n = :x`). */
function placeholderOf(
  input: { ExpressionAttributeNames?: Record<string, string> },
  expression: string | undefined,
  name: string,
  operator: '<' | '=',
): string {
  const alias = Object.entries(input.ExpressionAttributeNames ?? {}).find(([, attribute]) => attribute === name)?.[0];
  const escaped = alias?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = escaped === undefined ? null : new RegExp(`${escaped}\\s*${operator}\\s*(:[A-Za-z0-9_]+)`).exec(expression ?? '');
  if (!match) throw new Error(`the captured request has no "${name} ${operator} :value" in ${expression ?? '(no expression)'}`);
  return match[1]!;
}

interface ReplayRequests {
  update: UpdateItemCommandInput;
  get: GetItemCommandInput;
  /** Replica PutItems and the placeholder of their version condition. */
  replicas: Array<{ input: PutItemCommandInput; versionPlaceholder: string }>;
}

/**
 * The captured requests of `key`, rewritten for its replay key: the partition key and the `k` attribute
 * change, nothing else. The GetItem stays on Ringstore's own item (a read changes nothing).
 */
function replayRequestsOf(captured: CapturedRequests, key: string): ReplayRequests {
  const update = captured.updates.get(key);
  const get = captured.gets.get(key);
  const puts = captured.replicaPuts.get(key) ?? [];
  if (!update || !get || puts.length !== 2) throw new Error(`incomplete capture for ${key}: ${puts.length} replica PutItems`);
  const pkOf = (pk: AttributeValue | undefined) => ({ S: replayKeyOf(pk!.S!) });
  const replayKey = { S: replayKeyOf(key) };
  return {
    update: {
      ...update,
      Key: { ...update.Key, pk: pkOf(update.Key?.pk) },
      ExpressionAttributeValues: {
        ...update.ExpressionAttributeValues,
        [placeholderOf(update, update.UpdateExpression, 'k', '=')]: replayKey,
      },
    },
    get: { ...get, ConsistentRead: true },
    replicas: puts.map((input) => ({
      input: { ...input, Item: { ...input.Item, pk: pkOf(input.Item?.pk), k: replayKey } },
      versionPlaceholder: placeholderOf(input, input.ConditionExpression, 'v', '<'),
    })),
  };
}

/**
 * Replica PutItems the strong write replays sent, and how many a replica refused because it already
 * held the version (the replicator copied the replayed owner write first): a refused PutItem is cheaper
 * than a write, so many refusals would flatter the replay. Reported with the results.
 */
export const replayReplicaPuts = { sent: 0, refusedAsCurrent: 0 };

/** The owner UpdateItem, then the replica PutItems in parallel carrying the version it assigned. */
async function replayStrongWrite(
  client: DynamoDBClient,
  requests: ReplayRequests,
  signal: () => { abortSignal: AbortSignal },
): Promise<void> {
  const { Attributes } = await client.send(new UpdateItemCommand(requests.update), signal());
  const version = { N: String(Number(Attributes?.v?.N ?? '0') + 1) };
  await Promise.all(
    requests.replicas.map(async ({ input, versionPlaceholder }) => {
      replayReplicaPuts.sent += 1;
      try {
        await client.send(
          new PutItemCommand({
            ...input,
            Item: { ...input.Item, v: version },
            ExpressionAttributeValues: { ...input.ExpressionAttributeValues, [versionPlaceholder]: version },
          }),
          signal(),
        );
      } catch (error) {
        // As in Ringstore's fan-out, a replica that already holds the version counts as holding it.
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
        replayReplicaPuts.refusedAsCurrent += 1;
      }
    }),
  );
}

/**
 * Writes every captured key's replay key once, so the replays below find an item as Ringstore's writes
 * do. The write replays use replay keys on Ringstore's own shard tables: the same tables (same size,
 * streams read by the replicator, which replicates the replayed owner writes as it does Ringstore's),
 * but they never move a key Ringstore's cases use behind Ringstore's cache (after which the next strong
 * read would refresh Redis). Tables of the same shape created for the bench are no substitute: on this
 * DynamoDB Local, GetItem on such a table (its stream read by nobody) measured 1.3x to 2x slower than on
 * Ringstore's shard tables (the cause was not pinned down).
 */
export async function prepareReplayKeys(client: DynamoDBClient, captured: CapturedRequests): Promise<void> {
  const signal = () => ({ abortSignal: AbortSignal.timeout(callTimeoutMs) });
  for (const key of captured.updates.keys()) await replayStrongWrite(client, replayRequestsOf(captured, key), signal);
}

/**
 * Replays the exact UpdateItem / GetItem / replica PutItem requests Ringstore's adapter sends, on its
 * shard tables, through the raw client: the time of Ringstore's data model on DynamoDB Local without any
 * of Ringstore's code (gateway, middy, zod, dynamodb-toolbox, document marshalling).
 */
export function diagnosticCases(client: DynamoDBClient, workload: Workload, captured: CapturedRequests): BenchCase[] {
  const options = () => ({ abortSignal: AbortSignal.timeout(callTimeoutMs) });
  const requests = new Map(workload.keys.map((key) => [key, replayRequestsOf(captured, key)]));
  const requestsOf = (i: number): ReplayRequests => requests.get(workload.keyOf(i))!;
  return [
    {
      id: 'diag.shardUpdate',
      label: 'raw UpdateItem as Ringstore sends it',
      layer: 'diagnostic',
      kind: 'put',
      run: async (i) => {
        await client.send(new UpdateItemCommand(requestsOf(i).update), options());
      },
    },
    {
      id: 'diag.shardStrongWrite',
      label: 'raw UpdateItem + 2 replica PutItems as Ringstore sends them',
      layer: 'diagnostic',
      kind: 'putStrong',
      run: (i) => replayStrongWrite(client, requestsOf(i), options),
    },
    {
      id: 'diag.shardGetStrong',
      label: 'raw GetItem as Ringstore sends it (strong)',
      layer: 'diagnostic',
      kind: 'getStrong',
      run: async (i) => {
        const { Item } = await client.send(new GetItemCommand(requestsOf(i).get), options());
        if (!Item) throw new Error(`shard GetItem of ${workload.keyOf(i)} found nothing`);
      },
    },
  ];
}
