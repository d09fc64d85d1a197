// GET /v1/admin/namespaces/{namespace}: the default consistency of a namespace's reads and writes, and
// how its writes reach a disaster-recovery backup region.

import { type CommandContext, type Consistency, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * How a namespace's writes reach a disaster-recovery backup region: `key-sync` (the default) acknowledges
 * a write once the backup knows of it; `async` ships it after the acknowledgement.
 *
 * @example
 * ```ts
 * const mode: DrMode = 'key-sync';
 * ```
 */
export type DrMode = 'key-sync' | 'async';

/**
 * A namespace's default consistency (what a request that names none gets) and DR mode.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettings = {
 *   namespace: 'team',
 *   readConsistency: 'eventual',
 *   writeConsistency: 'strong',
 *   drMode: 'key-sync',
 * };
 * ```
 */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
  drMode: DrMode;
}

// A level the SDK does not know promises no more than eventual.
const level = wire.fallback(wire.literal('eventual', 'strong'), 'eventual');
// A mode the SDK does not know, or none (an older server), is read as the default.
const drMode = wire.fallback(wire.literal('key-sync', 'async'), 'key-sync');

/**
 * Reader of a namespace's settings (`NamespaceSettings` in the OpenAPI document), shared with
 * {@link SetNamespaceSettingsCommand}.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettingsWire = readJson(response, namespaceSettingsWire);
 * ```
 */
export const namespaceSettingsWire = wire.object({ namespace: wire.string, readConsistency: level, writeConsistency: level, drMode });

/**
 * A namespace's settings as the SDK reads them off the wire.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettingsWire = {
 *   namespace: 'team',
 *   readConsistency: 'eventual',
 *   writeConsistency: 'strong',
 *   drMode: 'key-sync',
 * };
 * ```
 */
export type NamespaceSettingsWire = WireOf<typeof namespaceSettingsWire>;

/**
 * Input of {@link GetNamespaceSettingsCommand}.
 *
 * @example
 * ```ts
 * const input: GetNamespaceSettingsCommandInput = { namespace: 'team' };
 * ```
 */
export interface GetNamespaceSettingsCommandInput {
  namespace: string;
}

/**
 * Reads a namespace's defaults (`GET /v1/admin/namespaces/{namespace}`); needs an admin key.
 *
 * @example
 * ```ts
 * const settings = await admin.send(new GetNamespaceSettingsCommand({ namespace: 'team' }));
 * ```
 */
export class GetNamespaceSettingsCommand extends RingstoreCommand<GetNamespaceSettingsCommandInput, NamespaceSettings> {
  override async execute({ transport, signal }: CommandContext): Promise<NamespaceSettings> {
    const path = `/v1/admin/namespaces/${encodeURIComponent(this.input.namespace)}`;
    return readJson(await transport.send({ method: 'GET', path, authenticated: true }, signal), namespaceSettingsWire);
  }
}
