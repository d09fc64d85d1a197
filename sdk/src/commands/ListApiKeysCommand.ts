// GET /v1/admin/keys: every API key of the deployment, never with its secret.

import { type CommandContext, RingstoreCommand } from './command';
import { apiKeyRoleWire, type ApiKeyRole } from './CreateApiKeyCommand';
import { readJson, wire, type WireOf } from './response';

/**
 * An API key as the admin listing shows it (never the secret).
 *
 * @example
 * ```ts
 * const active = (await admin.listApiKeys()).keys.filter((k: ApiKeyDescription) => !k.revokedAt);
 * ```
 */
export interface ApiKeyDescription {
  keyId: string;
  namespace: string;
  role: ApiKeyRole;
  createdAt: string;
  revokedAt?: string;
  description?: string;
  /** After it the key no longer authenticates. */
  expiresAt?: string;
  /** The last time the key was accepted, to the minute (the authorizer writes it at most once a minute). */
  lastUsedAt?: string;
  rotatedAt?: string;
  /** Until then the secret before the last rotation works too. */
  previousSecretExpiresAt?: string;
}

/**
 * Input of {@link ListApiKeysCommand}: none.
 *
 * @example
 * ```ts
 * const input: ListApiKeysCommandInput = {};
 * ```
 */
export type ListApiKeysCommandInput = Record<string, never>;

/**
 * Every API key of the deployment.
 *
 * @example
 * ```ts
 * const { keys }: ListApiKeysCommandOutput = await admin.listApiKeys();
 * ```
 */
export interface ListApiKeysCommandOutput {
  keys: ApiKeyDescription[];
}

/**
 * Reader of the key listing (`ApiKeyList` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { keys }: ApiKeyListWire = readJson(response, apiKeyListWire);
 * ```
 */
export const apiKeyListWire = wire.object({
  keys: wire.array(
    wire.object({
      keyId: wire.string,
      namespace: wire.string,
      role: apiKeyRoleWire,
      createdAt: wire.string,
      revokedAt: wire.optional(wire.string),
      description: wire.optional(wire.string),
      expiresAt: wire.optional(wire.string),
      lastUsedAt: wire.optional(wire.string),
      rotatedAt: wire.optional(wire.string),
      previousSecretExpiresAt: wire.optional(wire.string),
    }),
  ),
});

/**
 * The key listing as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const listing: ApiKeyListWire = { keys: [{ keyId: 'k1', namespace: 'team', role: 'user', createdAt: '2030-01-01T00:00:00Z' }] };
 * ```
 */
export type ApiKeyListWire = WireOf<typeof apiKeyListWire>;

/**
 * Lists API keys (`GET /v1/admin/keys`); needs an admin key.
 *
 * @example
 * ```ts
 * const { keys } = await admin.send(new ListApiKeysCommand());
 * ```
 */
export class ListApiKeysCommand extends RingstoreCommand<ListApiKeysCommandInput, ListApiKeysCommandOutput> {
  constructor(input: ListApiKeysCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListApiKeysCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/keys', authenticated: true }, signal);
    return readJson(response, apiKeyListWire);
  }
}
