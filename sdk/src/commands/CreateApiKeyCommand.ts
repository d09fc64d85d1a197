// POST /v1/admin/keys: creates an API key for a namespace; the answer holds the secret, once.

import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Role of an API key: `user` reaches the KV API of its namespace, `admin` also the admin API.
 *
 * @example
 * ```ts
 * const role: ApiKeyRole = 'admin';
 * ```
 */
export type ApiKeyRole = 'user' | 'admin';

/**
 * Reader of an {@link ApiKeyRole}, shared with the key listing.
 *
 * @example
 * ```ts
 * const key = wire.object({ keyId: wire.string, role: apiKeyRoleWire });
 * ```
 */
export const apiKeyRoleWire = wire.literal('user', 'admin');

/**
 * Input of {@link CreateApiKeyCommand}.
 *
 * @example
 * ```ts
 * const input: CreateApiKeyCommandInput = { namespace: 'team-a', role: 'user', description: 'CI' };
 * ```
 */
export interface CreateApiKeyCommandInput {
  namespace: string;
  role?: ApiKeyRole;
  description?: string;
  /** An ISO time in the future after which the key no longer authenticates. */
  expiresAt?: string;
}

/**
 * A new API key. `apiKey` is the secret; the server shows it only once.
 *
 * @example
 * ```ts
 * const { keyId, apiKey }: CreateApiKeyCommandOutput = await admin.createApiKey({ namespace: 'team-a' });
 * ```
 */
export interface CreateApiKeyCommandOutput {
  keyId: string;
  apiKey: string;
  namespace: string;
  role: ApiKeyRole;
  createdAt: string;
}

/**
 * Reader of a new key (`ApiKeyCreated` in the OpenAPI document), without the description and
 * revocation the caller already knows.
 *
 * @example
 * ```ts
 * const created: ApiKeyCreatedWire = readJson(response, apiKeyCreatedWire);
 * ```
 */
export const apiKeyCreatedWire = wire.object({
  keyId: wire.string,
  apiKey: wire.string,
  namespace: wire.string,
  role: apiKeyRoleWire,
  createdAt: wire.string,
});

/**
 * A new key as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const created: ApiKeyCreatedWire = { keyId: 'k1', apiKey: 'secret', namespace: 'team', role: 'user', createdAt: '2030-01-01T00:00:00Z' };
 * ```
 */
export type ApiKeyCreatedWire = WireOf<typeof apiKeyCreatedWire>;

/**
 * Creates an API key (`POST /v1/admin/keys`); needs an admin key.
 *
 * @example
 * ```ts
 * const created = await admin.send(new CreateApiKeyCommand({ namespace: 'team-a' }));
 * ```
 */
export class CreateApiKeyCommand extends RingstoreCommand<CreateApiKeyCommandInput, CreateApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<CreateApiKeyCommandOutput> {
    const { namespace, role, description, expiresAt } = this.input;
    if (typeof namespace !== 'string' || namespace === '') {
      throw invalidInput('namespace must be a non-empty string');
    }
    const body: Record<string, string> = { namespace };
    if (role !== undefined) body.role = role;
    if (description !== undefined) body.description = description;
    if (expiresAt !== undefined) body.expiresAt = expiresAt;
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/keys',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        authenticated: true,
      },
      signal,
    );
    return readJson(response, apiKeyCreatedWire);
  }
}
