// RingstoreClient: holds the connection settings and runs commands, plus one convenience method
// per command for callers who prefer `client.get(key)` to `client.send(new GetCommand(...))`.

import {
  CreatePrincipalMappingCommand,
  type CreatePrincipalMappingCommandInput,
  DeletePrincipalMappingCommand,
  ListPrincipalMappingsCommand,
  type PrincipalMapping,
  type PrincipalMappingListWire,
  DescribeShardsCommand,
  type DescribeShardsCommandOutput,
  GetNamespaceSettingsCommand,
  type NamespaceSettings,
  RepairCommand,
  type RepairCommandOutput,
  StartFailoverCommand,
  type StartFailoverCommandInput,
  type StartFailoverCommandOutput,
  ListFailoversCommand,
  type ListFailoversCommandOutput,
  DescribeDrCommand,
  type DrStatus,
  GetPromotionReportCommand,
  PromoteCommand,
  type PromoteCommandInput,
  type PromoteCommandOutput,
  type PromotionReport,
  StartDrSyncCommand,
  type DrSyncProgress,
  ListLostKeysCommand,
  type ListLostKeysCommandInput,
  type ListLostKeysCommandOutput,
  OfferLostValuesCommand,
  type OfferReport,
  ReconcileCommand,
  type ReconcileCommandInput,
  type ReconcileCommandOutput,
  StartRebalanceCommand,
  type StartRebalanceCommandInput,
  DescribeRebalanceCommand,
  type DescribeRebalanceCommandInput,
  PauseRebalanceCommand,
  ResumeRebalanceCommand,
  CancelRebalanceCommand,
  SetRebalanceRateCommand,
  type Rebalance,
  SetNamespaceSettingsCommand,
  type SetNamespaceSettingsCommandInput,
  CreateApiKeyCommand,
  DeleteCommand,
  IncrementCommand,
  type IncrementCommandInput,
  type IncrementCommandOutput,
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  GetCommand,
  HeadCommand,
  ListApiKeysCommand,
  ListCommand,
  PutCommand,
  RevokeApiKeyCommand,
  RotateApiKeyCommand,
  ListAuditEntriesCommand,
  RingCommand,
  type CreateApiKeyCommandInput,
  type CreateApiKeyCommandOutput,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  type GetCommandInput,
  type GetCommandOutput,
  type HeadCommandInput,
  type HeadCommandOutput,
  type ListApiKeysCommandOutput,
  type ListCommandInput,
  type ListCommandOutput,
  type PutCommandInput,
  type PutCommandOutput,
  type RevokeApiKeyCommandOutput,
  type RotateApiKeyCommandInput,
  type AuditPageWire,
  type ListAuditEntriesCommandInput,
  type RotateApiKeyCommandOutput,
  type RingCommandOutput,
  type RingstoreCommand,
  TransactCommand,
  type TransactCommandInput,
  type TransactCommandOutput,
  type TransactOp,
} from './commands';
import { RingstoreError, ValidationError } from './errors';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS, LIST_ALL_PAGES_MAX, MAX_ATTEMPTS_LIMIT } from './limits';
import { type AwsCredentialProvider, type AwsCredentials, regionOfEndpoint, SigV4Signer } from './sigv4';
import { defaultSleep, Transport, type Sleep } from './transport';

/**
 * Settings of a {@link RingstoreClient}.
 *
 * @example
 * ```ts
 * const config: RingstoreClientConfig = {
 *   endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
 *   apiKey: process.env.RINGSTORE_API_KEY ?? '',
 *   maxAttempts: 5,
 *   requestTimeoutMs: 10_000,
 * };
 * ```
 */
export interface RingstoreClientConfig {
  /** Base URL of the REST API, e.g. `http://127.0.0.1:4510` or an API Gateway stage URL. */
  endpoint: string;
  /** Sent as `x-api-key` to the API (never to presigned S3 URLs). Give this or `credentials`. */
  apiKey?: string;
  /**
   * AWS credentials (or a provider of them, e.g. `fromNodeProviderChain()` of `@aws-sdk/credential-providers`)
   * instead of an API key: every request is then signed with SigV4 for an API that uses IAM authorization.
   */
  credentials?: AwsCredentials | AwsCredentialProvider;
  /** The region requests are signed for; by default the endpoint's (`*.execute-api.<region>.amazonaws.com`), else `us-east-1`. */
  region?: string;
  /** Attempts per HTTP request, first try included (1..10, default 3). */
  maxAttempts?: number;
  /** fetch implementation; defaults to `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Timeout of one attempt, body included (default 30 000 ms). */
  requestTimeoutMs?: number;
  /** Source of randomness for backoff jitter, in [0, 1); defaults to `Math.random`. For tests. */
  random?: () => number;
  /** How to wait between attempts; defaults to a timer. For tests. */
  sleep?: Sleep;
}

/**
 * Per-call options accepted by {@link RingstoreClient.send} and every convenience method.
 *
 * @example
 * ```ts
 * await client.get('k', { abortSignal: AbortSignal.timeout(1000) });
 * ```
 */
export interface SendOptions {
  /** Aborts the call (including retries and waits) with a `network.aborted` NetworkError. */
  abortSignal?: AbortSignal;
}

function invalidConfig(message: string): ValidationError {
  return new ValidationError({ code: 'client.invalidConfig', message, status: 0, retryable: false });
}

function splitSendOptions<T extends SendOptions>(options: T | undefined): [Omit<T, 'abortSignal'>, SendOptions] {
  const { abortSignal, ...rest } = options ?? ({} as T);
  return [rest, abortSignal === undefined ? {} : { abortSignal }];
}

/**
 * Client of the Ringstore REST API. Stateless apart from its settings; share one per process.
 *
 * @example
 * ```ts
 * import { RingstoreClient, GetCommand, NotFoundError } from '@ringstore/sdk';
 *
 * const client = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' });
 * await client.put('greeting', 'hello');
 * const item = await client.send(new GetCommand({ key: 'greeting' }));
 * console.log(item.text(), item.version);
 * ```
 */
export class RingstoreClient {
  /** The endpoint this client talks to, without a trailing slash. */
  readonly endpoint: string;
  private readonly transport: Transport;

  constructor(config: RingstoreClientConfig) {
    let url: URL;
    try {
      url = new URL(config.endpoint);
    } catch {
      throw invalidConfig(`endpoint "${config.endpoint}" is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidConfig('endpoint must be an http(s) URL');
    if (url.search !== '' || url.hash !== '') throw invalidConfig('endpoint must not have a query or a fragment');
    if ((config.apiKey === undefined) === (config.credentials === undefined)) {
      throw invalidConfig('give either apiKey or credentials (AWS credentials to sign requests with), not both and not neither');
    }
    if (config.apiKey !== undefined && (typeof config.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(config.apiKey))) {
      throw invalidConfig('apiKey must be a non-empty string of printable ASCII characters');
    }
    const credentials = config.credentials;
    if (credentials !== undefined && typeof credentials !== 'function' && !(credentials.accessKeyId && credentials.secretAccessKey)) {
      throw invalidConfig('credentials need an accessKeyId and a secretAccessKey (or pass a credential provider)');
    }
    const maxAttempts = config.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT) {
      throw invalidConfig(`maxAttempts must be an integer in 1..${MAX_ATTEMPTS_LIMIT}`);
    }
    const requestTimeoutMs = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (!Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) throw invalidConfig('requestTimeoutMs must be a positive number');
    const fetchImpl = config.fetch ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
    if (fetchImpl === undefined) throw invalidConfig('no fetch available: pass one in the `fetch` option');
    this.endpoint = config.endpoint.replace(/\/+$/, '');
    this.transport = new Transport({
      endpoint: this.endpoint,
      ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
      ...(credentials === undefined
        ? {}
        : { signer: new SigV4Signer({ credentials, region: config.region ?? regionOfEndpoint(config.endpoint) ?? 'us-east-1' }) }),
      maxAttempts,
      requestTimeoutMs,
      fetch: fetchImpl,
      random: config.random ?? Math.random,
      sleep: config.sleep ?? defaultSleep,
      now: Date.now,
    });
  }

  /**
   * Runs a command and resolves with its output; rejects with a {@link RingstoreError}.
   *
   * @example
   * ```ts
   * const { version } = await client.send(new PutCommand({ key: 'k', value: 'v' }));
   * ```
   */
  async send<Input extends object, Output>(command: RingstoreCommand<Input, Output>, options: SendOptions = {}): Promise<Output> {
    const context =
      options.abortSignal === undefined ? { transport: this.transport } : { transport: this.transport, signal: options.abortSignal };
    return command.execute(context);
  }

  /**
   * Reads a key. Throws {@link NotFoundError} when it does not exist.
   *
   * @example
   * ```ts
   * const item = await client.get('greeting', { consistency: 'strong' });
   * console.log(item.text(), item.contentType, item.version);
   * ```
   */
  get(key: string, options?: Omit<GetCommandInput, 'key'> & SendOptions): Promise<GetCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new GetCommand({ ...input, key }), send);
  }

  /**
   * Reads up to 100 keys in one request, in the order given; a missing key is `found: false`.
   *
   * @example
   * ```ts
   * const { items } = await client.batchGet(['users/1', 'users/2'], { consistency: 'strong' });
   * for (const item of items) console.log(item.key, item.found ? item.text() : '(not found)');
   * ```
   */
  batchGet(keys: readonly string[], options?: Omit<BatchGetCommandInput, 'keys'> & SendOptions): Promise<BatchGetCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new BatchGetCommand({ ...input, keys }), send);
  }

  /**
   * Writes a key (up to 10 MiB; large values are uploaded through S3 transparently).
   *
   * @example
   * ```ts
   * const { version } = await client.put('session/abc', JSON.stringify({ user: 42 }), {
   *   contentType: 'application/json',
   *   ttlSeconds: 3600,
   * });
   * await client.put('session/abc', '{}', { ifMatch: version }); // optimistic concurrency
   * ```
   */
  put(key: string, value: Uint8Array | string, options?: Omit<PutCommandInput, 'key' | 'value'> & SendOptions): Promise<PutCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new PutCommand({ ...input, key, value }), send);
  }

  /**
   * Adds `by` (default 1; negative to decrement) to a key's decimal counter, atomically; a missing key counts as 0.
   * Not retried after a failure that may have applied (a retry could add twice); `ifMatch` makes it conditional.
   *
   * @example
   * ```ts
   * const { value, version } = await client.increment('hits/home');
   * await client.increment('stock/42', -1, { ifMatch: version, consistency: 'strong' });
   * ```
   */
  increment(key: string, by = 1, options?: Omit<IncrementCommandInput, 'key' | 'by'> & SendOptions): Promise<IncrementCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new IncrementCommand({ ...input, key, by }), send);
  }

  /**
   * Deletes a key. Throws {@link NotFoundError} when it does not exist.
   *
   * @example
   * ```ts
   * await client.delete('session/abc', { ifMatch: 4 });
   * ```
   */
  delete(key: string, options?: Omit<DeleteCommandInput, 'key'> & SendOptions): Promise<DeleteCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new DeleteCommand({ ...input, key }), send);
  }

  /**
   * Reads a key's metadata without its value.
   *
   * @example
   * ```ts
   * const { version, size } = await client.head('video.mp4');
   * ```
   */
  head(key: string, options?: Omit<HeadCommandInput, 'key'> & SendOptions): Promise<HeadCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new HeadCommand({ ...input, key }), send);
  }

  /**
   * Lists one page of keys.
   *
   * @example
   * ```ts
   * const { items, cursor } = await client.list({ prefix: 'users/', limit: 100 });
   * ```
   */
  list(options?: ListCommandInput & SendOptions): Promise<ListCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new ListCommand(input), send);
  }

  /**
   * Walks every page of a listing, following cursors; yields pages.
   *
   * @example
   * ```ts
   * for await (const page of client.listAll({ prefix: 'users/' })) {
   *   for (const item of page.items) console.log(item.key, item.size);
   * }
   * ```
   */
  async *listAll(options?: Omit<ListCommandInput, 'cursor'> & SendOptions): AsyncGenerator<ListCommandOutput, void, undefined> {
    const [input, send] = splitSendOptions(options);
    let cursor: string | undefined;
    for (let pages = 0; pages < LIST_ALL_PAGES_MAX; pages++) {
      const page = await this.send(new ListCommand(cursor === undefined ? input : { ...input, cursor }), send);
      yield page;
      if (page.cursor === undefined) return;
      if (page.cursor === cursor) {
        throw new RingstoreError({
          code: 'response.invalid',
          message: 'the server returned the same cursor twice',
          status: 200,
          retryable: false,
        });
      }
      cursor = page.cursor;
    }
    throw new RingstoreError({
      code: 'client.tooManyPages',
      message: `listAll stopped after ${LIST_ALL_PAGES_MAX} pages`,
      status: 0,
      retryable: false,
    });
  }

  /**
   * Runs ops atomically over any keys of the namespace: all commit or none do. Resolves with the
   * version of each written key and one read per `get` op (bytes, with `text()` and `json()`).
   * Rejects with {@link TransactionAbortedError} (nothing was written; `reason`, `key`, `txid`
   * say why) or {@link TransactionOutcomeUnknownError} (it may have committed: read the keys
   * strongly before running it again). The SDK never repeats a transaction on its own, except
   * after a conflict when `conflictRetries` is given.
   *
   * @example
   * ```ts
   * const { writes, reads } = await client.transact([
   *   { op: 'check', key: 'config', ifVersion: 3 },
   *   { op: 'put', key: 'balance/a', value: '90', ifVersion: 7 },
   *   { op: 'put', key: 'balance/b', value: '110', ifVersion: 2 },
   *   { op: 'get', key: 'limits' },
   * ], { timeoutMs: 2000, conflictRetries: 3 });
   * const limits = reads[0];
   * if (limits?.found) console.log(limits.text(), writes);
   * ```
   */
  transact(ops: readonly TransactOp[], options?: Omit<TransactCommandInput, 'ops'> & SendOptions): Promise<TransactCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new TransactCommand({ ...input, ops }), send);
  }

  /**
   * Describes the ring: epoch, shards, token ranges with owners and replicas.
   *
   * @example
   * ```ts
   * const ring = await client.ring();
   * for (const range of ring.ranges) console.log(range.start, range.end, range.replicas);
   * ```
   */
  ring(options?: SendOptions): Promise<RingCommandOutput> {
    return this.send(new RingCommand(), options);
  }

  /**
   * Creates an API key; the client's key must be an admin key (else {@link ForbiddenError}).
   *
   * @example
   * ```ts
   * const { apiKey } = await admin.createApiKey({ namespace: 'team-a', role: 'user' });
   * ```
   */
  createApiKey(input: CreateApiKeyCommandInput, options?: SendOptions): Promise<CreateApiKeyCommandOutput> {
    return this.send(new CreateApiKeyCommand(input), options);
  }

  /**
   * Revokes an API key by id; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.revokeApiKey('k_123');
   * ```
   */
  revokeApiKey(keyId: string, options?: SendOptions): Promise<RevokeApiKeyCommandOutput> {
    return this.send(new RevokeApiKeyCommand({ keyId }), options);
  }

  /**
   * Reads the audit trail of admin operations, newest first, a page at a time; needs an admin key.
   *
   * @example
   * ```ts
   * const { entries, cursor } = await admin.listAuditEntries({ limit: 20 });
   * ```
   */
  listAuditEntries(input: ListAuditEntriesCommandInput = {}, options?: SendOptions): Promise<AuditPageWire> {
    return this.send(new ListAuditEntriesCommand(input), options);
  }

  /**
   * Rotates an API key: a new secret for the same key id; the current one keeps working for
   * `graceSeconds` (default an hour); needs an admin key.
   *
   * @example
   * ```ts
   * const { apiKey, previousSecretExpiresAt } = await admin.rotateApiKey('3f9c0a1b2c3d', { graceSeconds: 600 });
   * ```
   */
  rotateApiKey(
    keyId: string,
    input: Omit<RotateApiKeyCommandInput, 'keyId'> = {},
    options?: SendOptions,
  ): Promise<RotateApiKeyCommandOutput> {
    return this.send(new RotateApiKeyCommand({ keyId, ...input }), options);
  }

  /**
   * Lists all API keys (without their secrets); needs an admin key.
   *
   * @example
   * ```ts
   * const { keys } = await admin.listApiKeys();
   * ```
   */
  listApiKeys(options?: SendOptions): Promise<ListApiKeysCommandOutput> {
    return this.send(new ListApiKeysCommand(), options);
  }

  /**
   * Maps an IAM role or user to a namespace and role: its SigV4-signed requests then act as that
   * namespace; needs an admin key (or principal).
   *
   * @example
   * ```ts
   * await admin.createPrincipalMapping({ principalArn: 'arn:aws:iam::123456789012:role/app', namespace: 'team-a' });
   * ```
   */
  createPrincipalMapping(input: CreatePrincipalMappingCommandInput, options?: SendOptions): Promise<PrincipalMapping> {
    return this.send(new CreatePrincipalMappingCommand(input), options);
  }

  /**
   * Every IAM principal mapped to a namespace; needs an admin key (or principal).
   *
   * @example
   * ```ts
   * const { principals } = await admin.listPrincipalMappings();
   * ```
   */
  listPrincipalMappings(options?: SendOptions): Promise<PrincipalMappingListWire> {
    return this.send(new ListPrincipalMappingsCommand(), options);
  }

  /**
   * Deletes an IAM principal's mapping (by the ARN mapped, with or without its path); its requests are
   * refused within the cache TTL. Needs an admin key (or principal).
   *
   * @example
   * ```ts
   * await admin.deletePrincipalMapping('arn:aws:iam::123456789012:role/app');
   * ```
   */
  deletePrincipalMapping(principalArn: string, options?: SendOptions): Promise<PrincipalMapping> {
    return this.send(new DeletePrincipalMappingCommand({ principalArn }), options);
  }

  /**
   * A namespace's default read and write consistency; needs an admin key.
   *
   * @example
   * ```ts
   * const { writeConsistency } = await admin.getNamespaceSettings('team');
   * ```
   */
  getNamespaceSettings(namespace: string, options?: SendOptions): Promise<NamespaceSettings> {
    return this.send(new GetNamespaceSettingsCommand({ namespace }), options);
  }

  /**
   * Changes a namespace's defaults (the ones given); needs an admin key.
   *
   * @example
   * ```ts
   * await admin.setNamespaceSettings('team', { writeConsistency: 'strong' });
   * ```
   */
  setNamespaceSettings(
    namespace: string,
    settings: Omit<SetNamespaceSettingsCommandInput, 'namespace'>,
    options?: SendOptions,
  ): Promise<NamespaceSettings> {
    return this.send(new SetNamespaceSettingsCommand({ namespace, ...settings }), options);
  }

  /**
   * Shard health, hints waiting per shard and replication lag; needs an admin key.
   *
   * @example
   * ```ts
   * const { shards } = await admin.describeShards();
   * ```
   */
  describeShards(options?: SendOptions): Promise<DescribeShardsCommandOutput> {
    return this.send(new DescribeShardsCommand(), options);
  }

  /**
   * Replays hints and runs a full anti-entropy pass now, returning what was repaired; needs an admin key.
   *
   * @example
   * ```ts
   * const { antiEntropy } = await admin.repair();
   * ```
   */
  repair(options?: SendOptions): Promise<RepairCommandOutput> {
    return this.send(new RepairCommand(), options);
  }

  /**
   * Fails over a shard by hand: once probes confirm it is down, its token ranges get new owners among
   * their replicas. Answers at once; one failover runs per shard and ring epoch. Needs an admin key.
   *
   * @example
   * ```ts
   * const { id, started } = await admin.startFailover({ shard: 1, reason: 'table throttled' });
   * ```
   */
  startFailover(input: StartFailoverCommandInput, options?: SendOptions): Promise<StartFailoverCommandOutput> {
    return this.send(new StartFailoverCommand(input), options);
  }

  /**
   * The recent failovers, newest first, running and finished, with what each range chose and why; needs an admin key.
   *
   * @example
   * ```ts
   * const { failovers } = await admin.listFailovers();
   * ```
   */
  listFailovers(options?: SendOptions): Promise<ListFailoversCommandOutput> {
    return this.send(new ListFailoversCommand(), options);
  }

  /**
   * This region's part in cross-region disaster recovery: its role, a backup's state and pending and
   * lost keys, a primary's view of its backup; needs an admin key.
   *
   * @example
   * ```ts
   * const { role, pending } = await backupAdmin.describeDr();
   * ```
   */
  describeDr(options?: SendOptions): Promise<DrStatus> {
    return this.send(new DescribeDrCommand(), options);
  }

  /**
   * Promotes this DR backup region (fence the primary, drain, mark undelivered keys lost, open for
   * writes); needs an admin key. Follow it with {@link RingstoreClient.promotionReport}.
   *
   * @example
   * ```ts
   * const { id } = await backupAdmin.promote({ reason: 'primary region lost' });
   * ```
   */
  promote(input: PromoteCommandInput = {}, options?: SendOptions): Promise<PromoteCommandOutput> {
    return this.send(new PromoteCommand(input), options);
  }

  /**
   * The newest promotion's report: its status, each step's findings and the lost keys; needs an admin key.
   *
   * @example
   * ```ts
   * const { status, lost } = await backupAdmin.promotionReport();
   * ```
   */
  promotionReport(options?: SendOptions): Promise<PromotionReport> {
    return this.send(new GetPromotionReportCommand(), options);
  }

  /**
   * Starts a DR primary's initial sync: the data written before DR was turned on is shipped to the
   * backup by maintenance, range by range; needs an admin key. Follow it with {@link RingstoreClient.describeDr}.
   *
   * @example
   * ```ts
   * const { status, keys } = await admin.startDrSync();
   * ```
   */
  startDrSync(options?: SendOptions): Promise<DrSyncProgress> {
    return this.send(new StartDrSyncCommand(), options);
  }

  /**
   * In the old, demoted primary: offers back the values it holds of the keys its backup's promotion
   * marked lost, calling {@link OfferLostValuesCommand} until the report's list is done (each call stops
   * at a time budget); `onProgress` sees every call's answer. Returns the totals; needs an admin key.
   *
   * @example
   * ```ts
   * const { offered, notHeld } = await oldPrimaryAdmin.offerLostValues({ onProgress: (step) => console.log(step.next) });
   * ```
   */
  async offerLostValues(
    input: { from?: number; onProgress?: (step: OfferReport) => void } = {},
    options?: SendOptions,
  ): Promise<OfferReport> {
    let step = await this.send(new OfferLostValuesCommand(input.from === undefined ? {} : { from: input.from }), options);
    input.onProgress?.(step);
    const total: OfferReport = { ...step, failures: [...step.failures] };
    while (step.next !== undefined) {
      step = await this.send(new OfferLostValuesCommand({ from: step.next }), options);
      input.onProgress?.(step);
      for (const count of ['offered', 'notHeld', 'noValueNeeded', 'failed'] as const) total[count] += step[count];
      total.failures.push(...step.failures);
    }
    const { next: _next, ...done } = total;
    return done;
  }

  /**
   * In the promoted region: one page of the keys a promotion marked lost, each with its offered value
   * (if any) and the version held now; needs an admin key.
   *
   * @example
   * ```ts
   * const { entries, cursor } = await backupAdmin.lostKeys({ limit: 100 });
   * ```
   */
  lostKeys(input: ListLostKeysCommandInput = {}, options?: SendOptions): Promise<ListLostKeysCommandOutput> {
    return this.send(new ListLostKeysCommand(input), options);
  }

  /**
   * In the promoted region: restores a lost write's offered value as a new write of the key (only while
   * the key holds `expectVersion`), or discards it; needs an admin key.
   *
   * @example
   * ```ts
   * await backupAdmin.reconcile({ namespace: 'app', key: 'users/42', version: 7, action: 'restore', expectVersion: 6 });
   * ```
   */
  reconcile(input: ReconcileCommandInput, options?: SendOptions): Promise<ReconcileCommandOutput> {
    return this.send(new ReconcileCommand(input), options);
  }

  /**
   * Adds shards (`add`: how many; they get the ids after the highest) or removes shards by id, online;
   * needs an admin key. Follow it with {@link RingstoreClient.describeRebalance}.
   *
   * @example
   * ```ts
   * const { id } = await admin.startRebalance({ add: 1, rateKeysPerSecond: 5_000 });
   * ```
   */
  startRebalance(input: StartRebalanceCommandInput, options?: SendOptions): Promise<Rebalance> {
    return this.send(new StartRebalanceCommand(input), options);
  }

  /**
   * The current (or last) rebalance and its progress; every moving range too with `ranges: true`. Needs
   * an admin key; a `NotFoundError` when none ever ran.
   *
   * @example
   * ```ts
   * const { status, progress, etaSeconds } = await admin.describeRebalance();
   * ```
   */
  describeRebalance(input: DescribeRebalanceCommandInput = {}, options?: SendOptions): Promise<Rebalance> {
    return this.send(new DescribeRebalanceCommand(input), options);
  }

  /**
   * Pauses rebalance `id` after its current step; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.pauseRebalance((await admin.describeRebalance()).id);
   * ```
   */
  pauseRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new PauseRebalanceCommand({ id }), options);
  }

  /**
   * Resumes paused rebalance `id` from its checkpoint; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.resumeRebalance(id);
   * ```
   */
  resumeRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new ResumeRebalanceCommand({ id }), options);
  }

  /**
   * Cancels rebalance `id`: what had moved is moved back; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.cancelRebalance(id);
   * ```
   */
  cancelRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new CancelRebalanceCommand({ id }), options);
  }

  /**
   * Changes the copy rate of rebalance `id` (keys per second, 0: no cap); needs an admin key.
   *
   * @example
   * ```ts
   * await admin.setRebalanceRate(id, 20_000);
   * ```
   */
  setRebalanceRate(id: string, rateKeysPerSecond: number, options?: SendOptions): Promise<Rebalance> {
    return this.send(new SetRebalanceRateCommand({ id, rateKeysPerSecond }), options);
  }
}
