// HEAD /v1/kv/{key}: a value's metadata (version, content type, size, expiry) without its bytes.

import { encodeKey } from '../encoding';
import { assertConsistency, type CommandContext, type Consistency, RingstoreCommand } from './command';
import { readValueMetadata } from './response';

/**
 * Input of {@link HeadCommand}.
 *
 * @example
 * ```ts
 * const input: HeadCommandInput = { key: 'users/42' };
 * ```
 */
export interface HeadCommandInput {
  key: string;
  consistency?: Consistency;
}

/**
 * Metadata of a stored value, without its bytes.
 *
 * @example
 * ```ts
 * const { version, size, contentType } = await client.head('users/42');
 * ```
 */
export interface HeadCommandOutput {
  key: string;
  contentType: string;
  version: number;
  /** Size of the value in bytes, when the server reports it (`content-length`). */
  size?: number;
  expiresAt?: string;
}

/**
 * Reads a key's metadata (`HEAD /v1/kv/{key}`). Throws {@link NotFoundError} when missing.
 *
 * @example
 * ```ts
 * const { version } = await client.send(new HeadCommand({ key: 'users/42' }));
 * ```
 */
export class HeadCommand extends RingstoreCommand<HeadCommandInput, HeadCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<HeadCommandOutput> {
    const { key, consistency } = this.input;
    const path = `/v1/kv/${encodeKey(key)}`;
    assertConsistency(consistency);
    const response = await transport.send(
      { method: 'HEAD', path, query: { consistency }, authenticated: true, redirect: 'manual', notFoundCode: 'kv.notFound' },
      signal,
    );
    const output: HeadCommandOutput = { key, ...readValueMetadata(response) };
    const length = response.headers.get('content-length');
    // A 303's own content-length is that of the (empty) redirect, not of the value.
    if (response.status === 200 && length !== null && /^\d+$/.test(length)) output.size = Number(length);
    return output;
  }
}
