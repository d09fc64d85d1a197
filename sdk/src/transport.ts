// One HTTP exchange with bounded, jittered retries. Commands describe requests; this file sends
// them, applies the timeout, maps failures to typed errors and decides whether to try again.

import { overArrayBuffer } from './encoding';
import { errorFromResponse, NetworkError, RingstoreError, ValidationError } from './errors';
import { RETRY_AFTER_MAX_MS, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS } from './limits';
import type { RequestSigner } from './sigv4';

/**
 * Waits `ms` milliseconds; rejects early when `signal` aborts. Injectable for tests.
 *
 * @example
 * ```ts
 * const instant: Sleep = async () => {};
 * new RingstoreClient({ endpoint, apiKey, sleep: instant });
 * ```
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * The default {@link Sleep}: a timer that an abort signal cancels.
 *
 * @example
 * ```ts
 * await defaultSleep(100);
 * ```
 */
/** Why a signal aborted, as an Error: AbortSignal.reason is whatever was passed to abort(). */
function abortReasonOf(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('the operation was aborted', 'AbortError');
}

export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReasonOf(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReasonOf(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Full-jitter exponential backoff: a uniform wait in [0, min(cap, base * 2^(retry-1))), where
 * `retry` is 1 for the first retry. `random` returns a number in [0, 1) like `Math.random`.
 *
 * @example
 * ```ts
 * backoffDelayMs(1, () => 0.5); // 25  (half of the 50 ms base)
 * backoffDelayMs(9, () => 0.5); // 1000 (half of the 2 s cap)
 * ```
 */
export function backoffDelayMs(retry: number, random: () => number): number {
  const ceilingMs = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.max(0, retry - 1));
  const draw = Math.min(Math.max(random(), 0), 1);
  // floor keeps the wait strictly under the ceiling even if random() returned exactly 1
  return Math.min(Math.floor(draw * ceilingMs), ceilingMs - 1);
}

/**
 * An HTTP request as a command describes it.
 *
 * @example
 * ```ts
 * const req: HttpRequest = { method: 'GET', path: '/v1/ring', authenticated: true };
 * ```
 */
export interface HttpRequest {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** Encoded path under the endpoint (`/v1/kv/a%2Fb`); ignored when `url` is given. */
  path?: string;
  /** Absolute URL (presigned S3 URLs); such requests must set `authenticated: false`. */
  url?: string;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** Whether to send `x-api-key`. False for presigned URLs: the key never leaves for S3. */
  authenticated: boolean;
  /** `manual` to receive a 303 instead of following it. Default `follow`. */
  redirect?: 'manual' | 'follow';
  /** Error code prefix for a non-JSON error body, e.g. `blob` gives `blob.accessDenied`. */
  errorCodePrefix?: string;
  /** Code of a 404 whose body carries none (a HEAD answer has no body). */
  notFoundCode?: string;
  /**
   * False for a request that must not run twice (a transaction): only a 429, which the server
   * answers before doing anything, is retried; every other failure is thrown at once.
   */
  idempotent?: boolean;
  /**
   * How long the server may hold the request before it answers (a watch's long poll): added to the attempt's
   * timeout, which otherwise would end a long poll that is only waiting for a change.
   */
  holdMs?: number;
}

/**
 * A response with its body fully read (empty for HEAD).
 *
 * @example
 * ```ts
 * const res: HttpResponse = await transport.send({ method: 'GET', path: '/v1/ring', authenticated: true });
 * JSON.parse(new TextDecoder().decode(res.body));
 * ```
 */
export interface HttpResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** The URL that was requested, to resolve a relative `Location` against. */
  url: string;
}

/**
 * Settings of a {@link Transport}; the client fills them from its own options.
 *
 * @example
 * ```ts
 * const options: TransportOptions = {
 *   endpoint: 'http://127.0.0.1:4510', apiKey: 'k', maxAttempts: 3, requestTimeoutMs: 30_000,
 *   fetch: globalThis.fetch, random: Math.random, sleep: defaultSleep, now: Date.now,
 * };
 * ```
 */
export interface TransportOptions {
  endpoint: string;
  /** Sent as `x-api-key` on authenticated requests, unless a `signer` signs them instead. */
  apiKey?: string;
  /** Signs authenticated requests (SigV4 with AWS credentials), every attempt anew. */
  signer?: RequestSigner;
  maxAttempts: number;
  requestTimeoutMs: number;
  fetch: typeof fetch;
  random: () => number;
  sleep: Sleep;
  now: () => number;
}

function aborted(cause: unknown): NetworkError {
  return new NetworkError({ code: 'network.aborted', message: 'request aborted by the caller', status: 0, retryable: false, cause });
}

function s3ErrorCode(prefix: string, body: Uint8Array): string | undefined {
  const match = /<Code>([A-Za-z0-9]+)<\/Code>/.exec(new TextDecoder().decode(body.subarray(0, 4096)));
  if (match?.[1] === undefined) return undefined;
  return `${prefix}.${match[1].charAt(0).toLowerCase()}${match[1].slice(1)}`;
}

/**
 * Sends {@link HttpRequest}s with the retry policy: network failures, 429, 503 and transient 5xx
 * are retried up to `maxAttempts` attempts in all, waiting {@link backoffDelayMs} or the
 * server's `Retry-After`, whichever is longer; every other error is thrown at once.
 *
 * @example
 * ```ts
 * const transport = new Transport(options);
 * const res = await transport.send({ method: 'GET', path: '/v1/ring', authenticated: true });
 * ```
 */
export class Transport {
  private readonly baseUrl: string;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.endpoint.replace(/\/+$/, '');
  }

  /**
   * Sends the request, retrying transient failures; resolves with a 2xx (or a manual 303) and
   * rejects with the typed error of the last attempt.
   *
   * @example
   * ```ts
   * const res = await transport.send({ method: 'HEAD', path: '/v1/kv/k', authenticated: true }, AbortSignal.timeout(5000));
   * ```
   */
  async send(request: HttpRequest, signal?: AbortSignal): Promise<HttpResponse> {
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw aborted(signal.reason);
      let error: RingstoreError;
      try {
        const response = await this.attempt(request, signal);
        if (this.isSuccess(response.status, request)) return response;
        error = this.toError(response, request);
      } catch (caught) {
        if (!(caught instanceof RingstoreError)) throw caught;
        error = caught;
      }
      if (!error.retryable || attempt >= this.options.maxAttempts) throw error;
      if (request.idempotent === false && error.status !== 429) throw error;
      const delayMs = this.retryDelayMs(attempt, error);
      if (delayMs === undefined) throw error;
      try {
        await this.options.sleep(delayMs, signal);
      } catch (cause) {
        throw aborted(cause);
      }
    }
  }

  /**
   * Waits the jittered backoff of the `retry`-th retry (1 for the first), or `atLeastMs` when that is longer
   * (a server's Retry-After), for callers that retry a whole operation themselves; rejects with
   * `network.aborted` when `signal` aborts.
   *
   * @example
   * ```ts
   * await transport.backoff(1, signal); // up to RETRY_BASE_DELAY_MS
   * ```
   */
  async backoff(retry: number, signal?: AbortSignal, atLeastMs = 0): Promise<void> {
    try {
      await this.options.sleep(Math.max(backoffDelayMs(retry, this.options.random), atLeastMs), signal);
    } catch (cause) {
      throw aborted(cause);
    }
  }

  private retryDelayMs(attempt: number, error: RingstoreError): number | undefined {
    const backoffMs = backoffDelayMs(attempt, this.options.random);
    if (error.retryAfterSeconds === undefined) return backoffMs;
    const retryAfterMs = Math.ceil(error.retryAfterSeconds * 1000);
    // A long Retry-After goes back to the caller rather than blocking it (bounded waits).
    if (retryAfterMs > RETRY_AFTER_MAX_MS) return undefined;
    return Math.max(backoffMs, retryAfterMs);
  }

  private isSuccess(status: number, request: HttpRequest): boolean {
    return (status >= 200 && status < 300) || (status === 303 && request.redirect === 'manual');
  }

  private toError(response: HttpResponse, request: HttpRequest): RingstoreError {
    const parts = { status: response.status, body: response.body, headers: response.headers, nowMs: this.options.now() };
    if (request.errorCodePrefix !== undefined) {
      const fallbackCode = s3ErrorCode(request.errorCodePrefix, response.body) ?? `${request.errorCodePrefix}.http${response.status}`;
      return errorFromResponse({ ...parts, fallbackCode });
    }
    if (response.status === 404 && request.notFoundCode !== undefined) {
      return errorFromResponse({ ...parts, fallbackCode: request.notFoundCode });
    }
    return errorFromResponse(parts);
  }

  private buildUrl(request: HttpRequest): string {
    const base = request.url ?? `${this.baseUrl}${request.path ?? ''}`;
    const pairs = Object.entries(request.query ?? {})
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
      // encodeURIComponent, not URLSearchParams: a space must travel as %20, not '+'
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
    if (pairs.length === 0) return base;
    return `${base}${base.includes('?') ? '&' : '?'}${pairs.join('&')}`;
  }

  private async authenticate(request: HttpRequest, url: string, headers: Record<string, string>): Promise<Record<string, string>> {
    const { signer, apiKey } = this.options;
    if (!signer) return { ...headers, 'x-api-key': apiKey ?? '' };
    try {
      return await signer.sign({ method: request.method, url, headers, ...(request.body === undefined ? {} : { body: request.body }) });
    } catch (cause) {
      const why = cause instanceof Error ? cause.message : String(cause);
      throw new ValidationError({
        code: 'client.credentials',
        message: `could not sign the request: ${why}`,
        status: 0,
        retryable: false,
        cause,
      });
    }
  }

  private async attempt(request: HttpRequest, signal: AbortSignal | undefined): Promise<HttpResponse> {
    const url = this.buildUrl(request);
    // Messages leave out the query: a presigned URL's signature is a credential.
    const shownUrl = url.split('?')[0] ?? url;
    let headers: Record<string, string> = { ...request.headers };
    if (request.authenticated) headers = await this.authenticate(request, url, headers);
    const controller = new AbortController();
    const timeoutMs = this.options.requestTimeoutMs + (request.holdMs ?? 0);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = (): void => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const init: RequestInit = {
        method: request.method,
        headers,
        redirect: request.redirect ?? 'follow',
        signal: controller.signal,
      };
      if (request.body !== undefined) init.body = typeof request.body === 'string' ? request.body : overArrayBuffer(request.body);
      const response = await this.options.fetch(url, init);
      // The body is read inside the attempt so the timeout also bounds a slow download.
      const body = request.method === 'HEAD' ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
      return { status: response.status, headers: response.headers, body, url };
    } catch (cause) {
      if (signal?.aborted) throw aborted(cause);
      if (timedOut) {
        throw new NetworkError({
          code: 'network.timeout',
          message: `${request.method} ${shownUrl} timed out after ${timeoutMs} ms`,
          status: 0,
          retryable: true,
          cause,
        });
      }
      const detail = cause instanceof Error && cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
      throw new NetworkError({
        code: 'network.failed',
        message: `${request.method} ${shownUrl} failed${detail}`,
        status: 0,
        retryable: true,
        cause,
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
