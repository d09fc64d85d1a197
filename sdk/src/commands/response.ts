// Reads what the server answers: typed readers the commands compose into one per JSON response, so
// a body is checked field by field before a caller sees it; and the value metadata headers.
// No schema library: the SDK keeps no runtime dependency to bundle (it runs in browsers too), and its
// few leniencies towards servers (a fallback, an optional field dropped) are one line each here.

import { parseVersion, utf8Decode } from '../encoding';
import { RingstoreError } from '../errors';
import type { HttpResponse } from '../transport';

/** What a reader throws; {@link readJson} turns it into a `response.invalid` error carrying the status. */
class WireShapeError extends Error {
  constructor(
    readonly path: string,
    readonly expected: string,
  ) {
    super(`response field "${path}" is missing or not ${expected}`);
  }
}

/**
 * Reads one JSON value of a response, throwing when it does not have the expected shape. `T` is
 * the wire-level type: the JSON the SDK expects from the server, once fallbacks are applied.
 *
 * @example
 * ```ts
 * const ack: Reader<{ key: string; version: number }> = wire.object({ key: wire.string, version: wire.number });
 * ```
 */
export interface Reader<T> {
  /** Returns the value read; `path` names it in error messages (`items[3].key`). */
  read(value: unknown, path: string): T;
}

/**
 * A reader of a field that may be absent: {@link wire.object} leaves the key out of its result.
 *
 * @example
 * ```ts
 * const expiresAt: OptionalReader<string> = wire.optional(wire.string);
 * ```
 */
export interface OptionalReader<T> extends Reader<T | undefined> {
  readonly optional: true;
}

/**
 * The wire-level type a reader produces.
 *
 * @example
 * ```ts
 * type Ack = WireOf<typeof writeAckWire>; // { key: string; version: number; ... }
 * ```
 */
export type WireOf<R> = R extends Reader<infer T> ? T : never;

type Shape = Record<string, Reader<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends OptionalReader<unknown> ? K : never }[keyof S];
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * The object a {@link wire.object} reader of shape `S` produces: optional readers give optional keys.
 *
 * @example
 * ```ts
 * type Item = ObjectOf<{ key: Reader<string>; expiresAt: OptionalReader<string> }>; // { key: string; expiresAt?: string }
 * ```
 */
export type ObjectOf<S extends Shape> = Simplify<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: WireOf<S[K]> } & {
    [K in OptionalKeys<S>]?: S[K] extends OptionalReader<infer T> ? T : never;
  }
>;

/**
 * Whether a value is a JSON object (not null, not an array).
 *
 * @example
 * ```ts
 * isJsonObject(JSON.parse('{"a":1}')); // true
 * isJsonObject([]);                    // false
 * ```
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function childPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function guarded<T>(expected: string, accepts: (value: unknown) => value is T): Reader<T> {
  return {
    read(value, path) {
      if (!accepts(value)) throw new WireShapeError(path, expected);
      return value;
    },
  };
}

function literal<const Values extends readonly (string | number | boolean)[]>(...values: Values): Reader<Values[number]> {
  const expected = values.map((allowed) => JSON.stringify(allowed)).join(' or ');
  return guarded(expected, (value): value is Values[number] => values.some((allowed) => allowed === value));
}

function array<T>(item: Reader<T>): Reader<T[]> {
  return {
    read(value, path) {
      if (!Array.isArray(value)) throw new WireShapeError(path, 'an array');
      const items: readonly unknown[] = value;
      return items.map((entry, index) => item.read(entry, `${path}[${index}]`));
    },
  };
}

function objectOf<S extends Shape>(shape: S, keepUnknownKeys: boolean): Reader<ObjectOf<S>> {
  return {
    read(value, path) {
      if (!isJsonObject(value)) throw new WireShapeError(path, 'an object');
      // Unknown keys pass through untouched when asked; the shape's keys are read (and checked) below.
      const result: Record<string, unknown> = keepUnknownKeys
        ? Object.fromEntries(Object.entries(value).filter(([name]) => !Object.hasOwn(shape, name)))
        : {};
      for (const [name, field] of Object.entries(shape)) {
        const read = field.read(value[name], childPath(path, name));
        // Only optional readers return undefined; the key is left out, as JSON would have it.
        if (read !== undefined) result[name] = read;
      }
      // Built key by key from `shape` just above, so it has the type ObjectOf<S> describes.
      return result as ObjectOf<S>;
    },
  };
}

function record<T>(entry: Reader<T>): Reader<Record<string, T>> {
  return {
    read(value, path) {
      if (!isJsonObject(value)) throw new WireShapeError(path, 'an object');
      const entries: Array<[string, T]> = [];
      for (const [name, raw] of Object.entries(value)) {
        try {
          entries.push([name, entry.read(raw, childPath(path, name))]);
        } catch (error) {
          // An entry the SDK cannot read is skipped (a header it could not send anyway).
          if (!(error instanceof WireShapeError)) throw error;
        }
      }
      // fromEntries defines each key, so one named `__proto__` stays an entry, not a prototype.
      return Object.fromEntries(entries);
    },
  };
}

function optional<T>(inner: Reader<T>): OptionalReader<T> {
  return {
    optional: true,
    read(value, path) {
      if (value === undefined) return undefined;
      try {
        return inner.read(value, path);
      } catch (error) {
        // An optional field carries an extra (a TTL, a copy count) that callers already do without:
        // one the SDK cannot read is left out rather than failing a call whose answer arrived.
        if (error instanceof WireShapeError) return undefined;
        throw error;
      }
    },
  };
}

function fallback<T>(inner: Reader<T>, otherwise: T): Reader<T> {
  return {
    read(value, path) {
      if (value === undefined) return otherwise;
      try {
        return inner.read(value, path);
      } catch (error) {
        if (error instanceof WireShapeError) return otherwise;
        throw error;
      }
    },
  };
}

/**
 * The readers commands build their response readers from, zod-like. `object` keeps only the
 * fields of its shape; `looseObject` also keeps the others (answers passed on whole); `optional`
 * drops a field that is absent or unreadable; `fallback` uses a value instead (it is shared by
 * every read: give a primitive or something no one mutates).
 *
 * @example
 * ```ts
 * const listing = wire.object({
 *   items: wire.array(wire.object({ key: wire.string, version: wire.number, expiresAt: wire.optional(wire.string) })),
 *   cursor: wire.optional(wire.string),
 * });
 * const page = readJson(response, listing);
 * ```
 */
export const wire = {
  string: guarded('a string', (value): value is string => typeof value === 'string'),
  number: guarded('a number', (value): value is number => typeof value === 'number' && Number.isFinite(value)),
  boolean: guarded('a boolean', (value): value is boolean => typeof value === 'boolean'),
  /** Any JSON object, returned as it is. */
  jsonObject: guarded('an object', isJsonObject),
  literal,
  array,
  record,
  object: <S extends Shape>(shape: S): Reader<ObjectOf<S>> => objectOf(shape, false),
  looseObject: <S extends Shape>(shape: S): Reader<ObjectOf<S>> => objectOf(shape, true),
  optional,
  fallback,
};

/**
 * The error for an answer that breaks the contract (`response.invalid`, not retried).
 *
 * @example
 * ```ts
 * throw invalidResponse(response, 'a 303 answer without a Location header');
 * ```
 */
export function invalidResponse(response: HttpResponse, message: string, cause?: unknown): RingstoreError {
  return new RingstoreError({
    code: 'response.invalid',
    message,
    status: response.status,
    retryable: false,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Parses a response body as JSON and reads it; throws a `response.invalid` {@link RingstoreError}
 * naming the first field that does not fit.
 *
 * @example
 * ```ts
 * const { keyId, revokedAt } = readJson(response, wire.object({ keyId: wire.string, revokedAt: wire.string }));
 * ```
 */
export function readJson<T>(response: HttpResponse, reader: Reader<T>): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decode(response.body));
  } catch (cause) {
    throw invalidResponse(response, 'the server answered with a body that is not JSON', cause);
  }
  try {
    return reader.read(parsed, '');
  } catch (error) {
    if (!(error instanceof WireShapeError)) throw error;
    throw invalidResponse(response, error.path === '' ? `the server answered with JSON that is not ${error.expected}` : error.message);
  }
}

/**
 * The value metadata headers of GET, HEAD and the 303 of a large value.
 *
 * @example
 * ```ts
 * const metadata: ValueMetadata = { contentType: 'text/plain', version: 3 };
 * ```
 */
export interface ValueMetadata {
  contentType: string;
  version: number;
  expiresAt?: string;
}

/**
 * Reads {@link ValueMetadata} from the headers; the version comes from `x-ringstore-version` or,
 * failing that, a numeric ETag.
 *
 * @example
 * ```ts
 * const { version, contentType } = readValueMetadata(response);
 * ```
 */
export function readValueMetadata(response: HttpResponse): ValueMetadata {
  const version = parseVersion(response.headers.get('x-ringstore-version'), response.headers.get('etag'));
  if (version === undefined) throw invalidResponse(response, 'the response has neither x-ringstore-version nor a numeric ETag');
  const metadata: ValueMetadata = {
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    version,
  };
  const expiresAt = response.headers.get('x-ringstore-expires-at');
  if (expiresAt !== null && expiresAt !== '') metadata.expiresAt = expiresAt;
  return metadata;
}
