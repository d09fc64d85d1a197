// DELETE /v1/admin/keys/{keyId}: revokes an API key; it stops working within the authorizer cache TTL.

import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Input of {@link RevokeApiKeyCommand}.
 *
 * @example
 * ```ts
 * const input: RevokeApiKeyCommandInput = { keyId: 'k_123' };
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
 * const { revokedAt }: RevokeApiKeyCommandOutput = await admin.revokeApiKey('k_123');
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
 * const revoked: RevokedApiKeyWire = { keyId: 'k1', revokedAt: '2030-01-01T00:00:00Z' };
 * ```
 */
export type RevokedApiKeyWire = WireOf<typeof revokedApiKeyWire>;

/**
 * Revokes an API key (`DELETE /v1/admin/keys/{keyId}`); needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new RevokeApiKeyCommand({ keyId: 'k_123' }));
 * ```
 */
export class RevokeApiKeyCommand extends RingstoreCommand<RevokeApiKeyCommandInput, RevokeApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<RevokeApiKeyCommandOutput> {
    const { keyId } = this.input;
    if (typeof keyId !== 'string' || keyId === '') {
      throw invalidInput('keyId must be a non-empty string');
    }
    const response = await transport.send(
      { method: 'DELETE', path: `/v1/admin/keys/${encodeURIComponent(keyId)}`, authenticated: true },
      signal,
    );
    return readJson(response, revokedApiKeyWire);
  }
}
