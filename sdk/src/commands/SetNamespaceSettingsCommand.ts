// PUT /v1/admin/namespaces/{namespace}: changes a namespace's default consistency, DR mode or quotas.

import { assertConsistency, type CommandContext, type Consistency, RingstoreCommand } from './command';
import {
  type DrMode,
  namespaceSettingsWire,
  type NamespaceSettings,
  type RateLimit,
  type StorageQuota,
} from './GetNamespaceSettingsCommand';
import { readJson } from './response';

/**
 * Input of {@link SetNamespaceSettingsCommand}: the settings to change (the others stay). `rate: null`
 * returns the namespace to the deployment's default rate; `storage: null` removes its storage quota.
 * A storage quota set on a namespace without one counts what it stores first (a 400 if it is already over).
 *
 * @example
 * ```ts
 * const input: SetNamespaceSettingsCommandInput = { namespace: 'team', rate: { requestsPerSecond: 50, burst: 100 } };
 * ```
 */
export interface SetNamespaceSettingsCommandInput {
  namespace: string;
  readConsistency?: Consistency;
  writeConsistency?: Consistency;
  drMode?: DrMode;
  rate?: RateLimit | null;
  storage?: StorageQuota | null;
}

/**
 * Sets a namespace's defaults (`PUT /v1/admin/namespaces/{namespace}`); needs an admin key. Requests
 * see the change within the authorizer cache TTL (60 s by default).
 *
 * @example
 * ```ts
 * await admin.send(new SetNamespaceSettingsCommand({ namespace: 'team', readConsistency: 'strong' }));
 * ```
 */
export class SetNamespaceSettingsCommand extends RingstoreCommand<SetNamespaceSettingsCommandInput, NamespaceSettings> {
  override async execute({ transport, signal }: CommandContext): Promise<NamespaceSettings> {
    const { namespace, ...patch } = this.input;
    assertConsistency(patch.readConsistency);
    assertConsistency(patch.writeConsistency);
    if (patch.drMode !== undefined && patch.drMode !== 'key-sync' && patch.drMode !== 'async') {
      throw new TypeError(`drMode must be 'key-sync' or 'async' (got ${String(patch.drMode)})`);
    }
    const path = `/v1/admin/namespaces/${encodeURIComponent(namespace)}`;
    const body = new TextEncoder().encode(JSON.stringify(patch));
    const headers = { 'content-type': 'application/json' };
    return readJson(await transport.send({ method: 'PUT', path, headers, body, authenticated: true }, signal), namespaceSettingsWire);
  }
}
