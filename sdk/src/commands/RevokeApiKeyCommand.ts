// DELETE /v1/admin/keys/{keyId}: revokes an API key; it stops working within the authorizer cache TTL.

import { type CommandContext, keyIdOfInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Input of {@link RevokeApiKeyCommand}: the key's id (a whole key is taken for its id, and only the id is sent).
 *
 * @example
 * ```ts
 * const input: RevokeApiKeyCommandInput = { keyId: '3f9c0a1b2c3d' };
 * ```
 */
export interface RevokeApiKeyCommandInput {
  keyId: string;
}

/**
 * Result of revoking a key.
 *
 * @example
 * ```ts
 * const { revokedAt }: RevokeApiKeyCommandOutput = await admin.revokeApiKey('3f9c0a1b2c3d');
 * ```
 */
export interface RevokeApiKeyCommandOutput {
  keyId: string;
  revokedAt: string;
}

/**
 * Reader of a revocation (`RevokedApiKey` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const revoked: RevokedApiKeyWire = readJson(response, revokedApiKeyWire);
 * ```
 */
export const revokedApiKeyWire = wire.object({ keyId: wire.string, revokedAt: wire.string });

/**
 * A revocation as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const revoked: RevokedApiKeyWire = { keyId: '3f9c0a1b2c3d', revokedAt: '2030-01-01T00:00:00Z' };
 * ```
 */
export type RevokedApiKeyWire = WireOf<typeof revokedApiKeyWire>;

/**
 * Revokes an API key (`DELETE /v1/admin/keys/{keyId}`); needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new RevokeApiKeyCommand({ keyId: '3f9c0a1b2c3d' }));
 * ```
 */
export class RevokeApiKeyCommand extends RingstoreCommand<RevokeApiKeyCommandInput, RevokeApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<RevokeApiKeyCommandOutput> {
    const keyId = keyIdOfInput(this.input.keyId);
    const response = await transport.send(
      { method: 'DELETE', path: `/v1/admin/keys/${encodeURIComponent(keyId)}`, authenticated: true },
      signal,
    );
    return readJson(response, revokedApiKeyWire);
  }
}
