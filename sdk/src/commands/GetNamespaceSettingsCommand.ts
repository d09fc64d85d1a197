// GET /v1/admin/namespaces/{namespace}: the default consistency of a namespace's reads and writes, how its
// writes reach a disaster-recovery backup region, and its quotas (request rate, storage) with its usage.

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
 * A namespace's request rate: a steady rate and the burst it may take at once. Over it, requests are
 * refused with a 429 `quota.rate` ({@link ThrottledError} after the client's retries).
 *
 * @example
 * ```ts
 * const rate: RateLimit = { requestsPerSecond: 50, burst: 100 };
 * ```
 */
export interface RateLimit {
  requestsPerSecond: number;
  burst: number;
}

/**
 * A namespace's storage quota: live keys and the bytes of their values; a bound left out is not enforced.
 *
 * @example
 * ```ts
 * const quota: StorageQuota = { keysMax: 100_000, bytesMax: 1024 ** 3 };
 * ```
 */
export interface StorageQuota {
  keysMax?: number;
  bytesMax?: number;
}

/**
 * A namespace's default consistency (what a request that names none gets), DR mode and quotas; `usage`
 * (what it stores, counted exactly) with a storage quota only.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettings = {
 *   namespace: 'team',
 *   readConsistency: 'eventual',
 *   writeConsistency: 'strong',
 *   drMode: 'key-sync',
 *   rate: { requestsPerSecond: 100, burst: 200 },
 *   storage: { keysMax: 10_000 },
 *   usage: { keys: 42, bytes: 4096 },
 * };
 * ```
 */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
  drMode: DrMode;
  rate: RateLimit;
  storage?: StorageQuota;
  usage?: { keys: number; bytes: number };
  /** In the answer to a change: within how many seconds every request sees it (the authorizer cache TTL). */
  takesEffectWithinSeconds?: number;
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
export const namespaceSettingsWire = wire.object({
  namespace: wire.string,
  readConsistency: level,
  writeConsistency: level,
  drMode,
  rate: wire.object({ requestsPerSecond: wire.number, burst: wire.number }),
  storage: wire.optional(wire.object({ keysMax: wire.optional(wire.number), bytesMax: wire.optional(wire.number) })),
  usage: wire.optional(wire.object({ keys: wire.number, bytes: wire.number })),
  takesEffectWithinSeconds: wire.optional(wire.number),
});

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
 *   rate: { requestsPerSecond: 100, burst: 200 },
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
