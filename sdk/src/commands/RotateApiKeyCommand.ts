// POST /v1/admin/keys/{keyId}/rotate: a new secret for an API key; the current one keeps working for a
// grace period, so clients can switch without a gap.

import { type CommandContext, keyIdOfInput, RingstoreCommand } from './command';
import { apiKeyRoleWire, type ApiKeyRole } from './CreateApiKeyCommand';
import { readJson, wire, type WireOf } from './response';

/**
 * Input of {@link RotateApiKeyCommand}: the key's id (a whole key is taken for its id, and only the id is
 * sent), how long the current secret keeps working (seconds, default an hour, at most a week) and,
 * optionally, a new expiry for the key.
 *
 * @example
 * ```ts
 * const input: RotateApiKeyCommandInput = { keyId: '3f9c0a1b2c3d', graceSeconds: 86_400 };
 * ```
 */
export interface RotateApiKeyCommandInput {
  keyId: string;
  graceSeconds?: number;
  expiresAt?: string;
}

/**
 * A rotated key: the new secret (shown only here) and until when the previous one still works.
 *
 * @example
 * ```ts
 * const { apiKey, previousSecretExpiresAt }: RotateApiKeyCommandOutput = await admin.rotateApiKey('3f9c0a1b2c3d');
 * ```
 */
export interface RotateApiKeyCommandOutput {
  keyId: string;
  apiKey: string;
  namespace: string;
  role: ApiKeyRole;
  createdAt: string;
  rotatedAt: string;
  previousSecretExpiresAt: string;
}

/**
 * Reader of a rotation's answer (`ApiKeyCreated` in the OpenAPI document, with the rotation's times).
 *
 * @example
 * ```ts
 * const rotated: ApiKeyRotatedWire = readJson(response, apiKeyRotatedWire);
 * ```
 */
export const apiKeyRotatedWire = wire.object({
  keyId: wire.string,
  apiKey: wire.string,
  namespace: wire.string,
  role: apiKeyRoleWire,
  createdAt: wire.string,
  rotatedAt: wire.string,
  previousSecretExpiresAt: wire.string,
});

/**
 * A rotation's answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const rotated: ApiKeyRotatedWire = {
 *   keyId: '3f9c0a1b2c3d',
 *   apiKey: 'rs_3f9c0a1b2c3d_…',
 *   namespace: 'team',
 *   role: 'user',
 *   createdAt: '2030-01-01T00:00:00.000Z',
 *   rotatedAt: '2030-02-01T00:00:00.000Z',
 *   previousSecretExpiresAt: '2030-02-01T01:00:00.000Z',
 * };
 * ```
 */
export type ApiKeyRotatedWire = WireOf<typeof apiKeyRotatedWire>;

/**
 * Rotates an API key (`POST /v1/admin/keys/{keyId}/rotate`); needs an admin key. The key id, namespace
 * and role stay; a key rotated twice loses the oldest secret at once.
 *
 * @example
 * ```ts
 * const { apiKey } = await admin.send(new RotateApiKeyCommand({ keyId: '3f9c0a1b2c3d', graceSeconds: 600 }));
 * ```
 */
export class RotateApiKeyCommand extends RingstoreCommand<RotateApiKeyCommandInput, RotateApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<RotateApiKeyCommandOutput> {
    const { graceSeconds, expiresAt } = this.input;
    const keyId = keyIdOfInput(this.input.keyId);
    const body = { ...(graceSeconds === undefined ? {} : { graceSeconds }), ...(expiresAt === undefined ? {} : { expiresAt }) };
    const response = await transport.send(
      {
        method: 'POST',
        path: `/v1/admin/keys/${encodeURIComponent(keyId)}/rotate`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        authenticated: true,
      },
      signal,
    );
    return readJson(response, apiKeyRotatedWire);
  }
}
