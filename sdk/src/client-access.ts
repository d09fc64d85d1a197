// Who may do what: the convenience methods over API keys, the audit trail, IAM principal mappings and
// namespace settings, each one command sent over the connection. All of them need an admin key.

import {
  type AuditPageWire,
  CreateApiKeyCommand,
  type CreateApiKeyCommandInput,
  type CreateApiKeyCommandOutput,
  CreatePrincipalMappingCommand,
  type CreatePrincipalMappingCommandInput,
  DeletePrincipalMappingCommand,
  GetNamespaceSettingsCommand,
  ListApiKeysCommand,
  type ListApiKeysCommandOutput,
  ListAuditEntriesCommand,
  type ListAuditEntriesCommandInput,
  ListPrincipalMappingsCommand,
  type NamespaceSettings,
  type PrincipalMapping,
  type PrincipalMappingListWire,
  RevokeApiKeyCommand,
  type RevokeApiKeyCommandOutput,
  RotateApiKeyCommand,
  type RotateApiKeyCommandInput,
  type RotateApiKeyCommandOutput,
  SetNamespaceSettingsCommand,
  type SetNamespaceSettingsCommandInput,
} from './commands';
import { RingstoreConnection, type SendOptions } from './client-connection';

/**
 * The access-control methods of a {@link RingstoreClient}: API keys, audit trail, IAM principal mappings
 * and namespace settings. Construct a `RingstoreClient`, which has them all.
 *
 * @example
 * ```ts
 * const admin = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: process.env.RINGSTORE_ADMIN_KEY ?? '' });
 * const { keys } = await admin.listApiKeys();
 * ```
 */
export class RingstoreAccessClient extends RingstoreConnection {
  /**
   * Creates an API key; the client's key must be an admin key (else {@link ForbiddenError}).
   *
   * @example
   * ```ts
   * const { apiKey } = await admin.createApiKey({ namespace: 'team-a', role: 'user' });
   * ```
   */
  createApiKey(input: CreateApiKeyCommandInput, options?: SendOptions): Promise<CreateApiKeyCommandOutput> {
    return this.send(new CreateApiKeyCommand(input), options);
  }

  /**
   * Revokes an API key by id; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.revokeApiKey('k_123');
   * ```
   */
  revokeApiKey(keyId: string, options?: SendOptions): Promise<RevokeApiKeyCommandOutput> {
    return this.send(new RevokeApiKeyCommand({ keyId }), options);
  }

  /**
   * Reads the audit trail of admin operations, newest first, a page at a time; needs an admin key.
   *
   * @example
   * ```ts
   * const { entries, cursor } = await admin.listAuditEntries({ limit: 20 });
   * ```
   */
  listAuditEntries(input: ListAuditEntriesCommandInput = {}, options?: SendOptions): Promise<AuditPageWire> {
    return this.send(new ListAuditEntriesCommand(input), options);
  }

  /**
   * Rotates an API key: a new secret for the same key id; the current one keeps working for
   * `graceSeconds` (default an hour); needs an admin key.
   *
   * @example
   * ```ts
   * const { apiKey, previousSecretExpiresAt } = await admin.rotateApiKey('3f9c0a1b2c3d', { graceSeconds: 600 });
   * ```
   */
  rotateApiKey(
    keyId: string,
    input: Omit<RotateApiKeyCommandInput, 'keyId'> = {},
    options?: SendOptions,
  ): Promise<RotateApiKeyCommandOutput> {
    return this.send(new RotateApiKeyCommand({ keyId, ...input }), options);
  }

  /**
   * Lists all API keys (without their secrets); needs an admin key.
   *
   * @example
   * ```ts
   * const { keys } = await admin.listApiKeys();
   * ```
   */
  listApiKeys(options?: SendOptions): Promise<ListApiKeysCommandOutput> {
    return this.send(new ListApiKeysCommand(), options);
  }

  /**
   * Maps an IAM role or user to a namespace and role: its SigV4-signed requests then act as that
   * namespace; needs an admin key (or principal).
   *
   * @example
   * ```ts
   * await admin.createPrincipalMapping({ principalArn: 'arn:aws:iam::123456789012:role/app', namespace: 'team-a' });
   * ```
   */
  createPrincipalMapping(input: CreatePrincipalMappingCommandInput, options?: SendOptions): Promise<PrincipalMapping> {
    return this.send(new CreatePrincipalMappingCommand(input), options);
  }

  /**
   * Every IAM principal mapped to a namespace; needs an admin key (or principal).
   *
   * @example
   * ```ts
   * const { principals } = await admin.listPrincipalMappings();
   * ```
   */
  listPrincipalMappings(options?: SendOptions): Promise<PrincipalMappingListWire> {
    return this.send(new ListPrincipalMappingsCommand(), options);
  }

  /**
   * Deletes an IAM principal's mapping (by the ARN mapped, with or without its path); its requests are
   * refused within the cache TTL. Needs an admin key (or principal).
   *
   * @example
   * ```ts
   * await admin.deletePrincipalMapping('arn:aws:iam::123456789012:role/app');
   * ```
   */
  deletePrincipalMapping(principalArn: string, options?: SendOptions): Promise<PrincipalMapping> {
    return this.send(new DeletePrincipalMappingCommand({ principalArn }), options);
  }

  /**
   * A namespace's default read and write consistency; needs an admin key.
   *
   * @example
   * ```ts
   * const { writeConsistency } = await admin.getNamespaceSettings('team');
   * ```
   */
  getNamespaceSettings(namespace: string, options?: SendOptions): Promise<NamespaceSettings> {
    return this.send(new GetNamespaceSettingsCommand({ namespace }), options);
  }

  /**
   * Changes a namespace's defaults (the ones given); needs an admin key.
   *
   * @example
   * ```ts
   * await admin.setNamespaceSettings('team', { writeConsistency: 'strong' });
   * ```
   */
  setNamespaceSettings(
    namespace: string,
    settings: Omit<SetNamespaceSettingsCommandInput, 'namespace'>,
    options?: SendOptions,
  ): Promise<NamespaceSettings> {
    return this.send(new SetNamespaceSettingsCommand({ namespace, ...settings }), options);
  }
}
