// Requests to the Ringstore REST API (docs/api.md): the API key header, URLs with percent-encoded keys,
// and a `name` tag per route so that k6 aggregates by route, not by the thousands of distinct URLs.
import { check } from 'k6';
import http, { type Params, type RequestBody, type Response } from 'k6/http';
import { target } from './env.ts';

export type Consistency = 'eventual' | 'strong';

/** The header every authenticated route needs. */
export function auth(key: string = target.key): Record<string, string> {
  return { 'x-api-key': key };
}

/** A query string from the defined entries (`?a=1&b=2`, or empty). */
function query(entries: Record<string, string | number | undefined>): string {
  const parts = Object.entries(entries)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** `<RS_URL><path><query>`. */
export function url(path: string, entries: Record<string, string | number | undefined> = {}): string {
  return `${target.url}${path}${query(entries)}`;
}

/** `/v1/kv/{key}`: a key is one path segment, so it is percent-encoded. */
export const kvPath = (key: string): string => `/v1/kv/${encodeURIComponent(key)}`;

export interface CallOptions {
  /** The route, as the `name` tag of the request's metrics (`GET /v1/kv/{key}`). */
  name: string;
  headers?: Record<string, string>;
  /** Statuses that are not failures for `http_req_failed` (default: 2xx and 3xx). */
  expected?: number[];
  /** Extra tags (`op`) for per-operation metrics and thresholds. */
  tags?: Record<string, string>;
  binary?: boolean;
  /** `false`: do not follow redirects (a large value's `303`). */
  follow?: boolean;
  /** `null`: send no API key (presigned S3 URLs, public routes). */
  key?: string | null;
  timeout?: string;
}

function paramsOf(options: CallOptions): Params {
  const params: Params = {
    headers: { ...(options.key === null ? {} : auth(options.key)), ...options.headers },
    tags: { name: options.name, ...options.tags },
  };
  if (options.expected) params.responseCallback = http.expectedStatuses(...options.expected);
  if (options.binary) params.responseType = 'binary';
  if (options.follow === false) params.redirects = 0;
  if (options.timeout !== undefined) params.timeout = options.timeout;
  return params;
}

/** One request; `target` is a path on the API (`/v1/kv/a`) or a whole URL (a presigned one). */
export function call(method: string, path: string, body: RequestBody | null, options: CallOptions): Response {
  const address = /^https?:\/\//.test(path) ? path : url(path);
  return http.request(method, address, body, paramsOf(options));
}

/** The batch form of {@link call}, for loading data in `setup`. */
export function callBatch(requests: { method: string; path: string; body: RequestBody | null; options: CallOptions }[]): Response[] {
  return http.batch(requests.map((r) => ({ method: r.method, url: url(r.path), body: r.body, params: paramsOf(r.options) })));
}

/** A header of a response, whatever its case on the wire (k6 canonicalises names: `Etag`). */
export function header(response: Response, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(response.headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** The version in an `ETag` (`"3"`), or undefined. */
export function versionOf(response: Response): number | undefined {
  const match = /^"(\d+)"$/.exec(header(response, 'etag') ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The body as text, for messages (empty when it is binary or absent). */
export const bodyText = (response: Response): string => (typeof response.body === 'string' ? response.body : '');

/** The JSON body as `T`, or undefined when it is not JSON. */
export function jsonOf<T>(response: Response): T | undefined {
  try {
    return response.json() as T;
  } catch {
    return undefined;
  }
}

/**
 * A check that the status is one of `statuses`, named `<label> <statuses>` so that the summary shows which
 * operation failed it; returns whether it held.
 */
export function checkStatus(response: Response, label: string, ...statuses: number[]): boolean {
  return check(response, { [`${label} ${statuses.join('|')}`]: (r) => statuses.includes(r.status) });
}
