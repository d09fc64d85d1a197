// GET /v1/kv/{key}: reads a value, following the server's 303 to S3 itself for a large one.

import { encodeKey, utf8Decode } from '../encoding';
import { assertConsistency, type CommandContext, type Consistency, RingstoreCommand } from './command';
import { invalidResponse, readValueMetadata, type ValueMetadata } from './response';

/**
 * Input of {@link GetCommand}.
 *
 * @example
 * ```ts
 * const input: GetCommandInput = { key: 'users/42', consistency: 'strong' };
 * ```
 */
export interface GetCommandInput {
  key: string;
  consistency?: Consistency;
}

/**
 * A stored value. `value` holds the bytes; `text()` decodes them as UTF-8 and `json()` parses
 * that text. Large values (over 4 MiB) are fetched from S3 transparently.
 *
 * @example
 * ```ts
 * const item = await client.get('config');
 * item.version;     // 3
 * item.text();      // '{"debug":true}'
 * item.json<{ debug: boolean }>().debug; // true
 * ```
 */
export interface GetCommandOutput {
  key: string;
  value: Uint8Array;
  contentType: string;
  version: number;
  /** ISO-8601 time after which the key expires, when it has a TTL. */
  expiresAt?: string;
  /** The value decoded as UTF-8. */
  text(): string;
  /** The value decoded as UTF-8 and parsed as JSON. */
  json<T = unknown>(): T;
}

/**
 * Reads a key (`GET /v1/kv/{key}`). Throws {@link NotFoundError} when it does not exist.
 *
 * @example
 * ```ts
 * const { value, version } = await client.send(new GetCommand({ key: 'greeting' }));
 * ```
 */
export class GetCommand extends RingstoreCommand<GetCommandInput, GetCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<GetCommandOutput> {
    const { key, consistency } = this.input;
    const path = `/v1/kv/${encodeKey(key)}`;
    assertConsistency(consistency);
    const response = await transport.send({ method: 'GET', path, query: { consistency }, authenticated: true, redirect: 'manual' }, signal);
    const metadata = readValueMetadata(response);
    let value = response.body;
    if (response.status === 303) {
      const location = response.headers.get('location');
      if (location === null) throw invalidResponse(response, 'a 303 answer without a Location header');
      // The presigned URL carries its own authorization; the API key is not sent to S3.
      const blob = await transport.send(
        { method: 'GET', url: new URL(location, response.url).toString(), authenticated: false, errorCodePrefix: 'blob' },
        signal,
      );
      value = blob.body;
    }
    return valueOutput(key, value, metadata);
  }
}

/**
 * A value read, as {@link GetCommand} returns it: the bytes, their metadata, and `text()` / `json()` over them.
 *
 * @example
 * ```ts
 * const item = valueOutput('k', new TextEncoder().encode('{"a":1}'), { contentType: 'application/json', version: 2 });
 * item.json<{ a: number }>().a; // 1
 * ```
 */
export function valueOutput(key: string, value: Uint8Array, metadata: ValueMetadata): GetCommandOutput {
  return {
    key,
    value,
    ...metadata,
    text: () => utf8Decode(value),
    // The caller names the type it expects, as with fetch's `response.json()`.
    json: <T>() => JSON.parse(utf8Decode(value)) as T,
  };
}
