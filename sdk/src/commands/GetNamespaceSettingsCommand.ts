// GET /v1/admin/namespaces/{namespace}: the default consistency of a namespace's reads and writes.

import { type CommandContext, type Consistency, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * A namespace's default consistency: what a request that names none gets.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettings = { namespace: 'team', readConsistency: 'eventual', writeConsistency: 'strong' };
 * ```
 */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
}

// A level the SDK does not know promises no more than eventual.
const level = wire.fallback(wire.literal('eventual', 'strong'), 'eventual');

/**
 * Reader of a namespace's settings (`NamespaceSettings` in the OpenAPI document), shared with
 * {@link SetNamespaceSettingsCommand}.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettingsWire = readJson(response, namespaceSettingsWire);
 * ```
 */
export const namespaceSettingsWire = wire.object({ namespace: wire.string, readConsistency: level, writeConsistency: level });

/**
 * A namespace's settings as the SDK reads them off the wire.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettingsWire = { namespace: 'team', readConsistency: 'eventual', writeConsistency: 'strong' };
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
