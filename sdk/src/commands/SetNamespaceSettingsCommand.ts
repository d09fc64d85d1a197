// PUT /v1/admin/namespaces/{namespace}: changes the default consistency of a namespace's reads or writes.

import { assertConsistency, type CommandContext, type Consistency, RingstoreCommand } from './command';
import { type DrMode, namespaceSettingsWire, type NamespaceSettings } from './GetNamespaceSettingsCommand';
import { readJson } from './response';

/**
 * Input of {@link SetNamespaceSettingsCommand}: the defaults to change (the others stay).
 *
 * @example
 * ```ts
 * const input: SetNamespaceSettingsCommandInput = { namespace: 'team', writeConsistency: 'strong' };
 * ```
 */
export interface SetNamespaceSettingsCommandInput {
  namespace: string;
  readConsistency?: Consistency;
  writeConsistency?: Consistency;
  drMode?: DrMode;
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
