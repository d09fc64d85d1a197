// The connection under every RingstoreClient: its settings, checked once when it is built, and `send`,
// which runs any command over the transport; the convenience methods live in the subclasses.

import type { RingstoreCommand } from './commands';
import { ValidationError } from './errors';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS, MAX_ATTEMPTS_LIMIT } from './limits';
import { type AwsCredentialProvider, type AwsCredentials, regionOfEndpoint, SigV4Signer } from './sigv4';
import { defaultSleep, Transport, type Sleep } from './transport';

/**
 * Settings of a {@link RingstoreConnection | RingstoreClient}.
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
 * Per-call options accepted by {@link RingstoreConnection.send | RingstoreClient.send} and every convenience method.
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

/**
 * The connection a {@link RingstoreClient} is built on: settings checked once, and {@link RingstoreConnection.send}.
 * Construct a `RingstoreClient`, which adds one convenience method per command on top.
 *
 * @example
 * ```ts
 * const client = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' });
 * console.log(client.endpoint);
 * ```
 */
export class RingstoreConnection {
  /** The endpoint this client talks to, without a trailing slash. */
  readonly endpoint: string;
  /** Protected, not private: `watch` waits the transport's backoff between its own tries (its sleep, its jitter). */
  protected readonly transport: Transport;

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
}
