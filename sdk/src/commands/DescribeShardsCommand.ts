// GET /v1/admin/shards: shard health, hints waiting, the last maintenance report and replication lag.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Shard health, hints waiting, the last maintenance report and replication lag, as the server
 * reports them (see the `Shards` schema in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { shards }: DescribeShardsCommandOutput = await admin.describeShards();
 * ```
 */
export interface DescribeShardsCommandOutput {
  epoch: number;
  shards: Array<{
    id: number;
    table: string;
    health: 'available' | 'unavailable' | 'recovering';
    since?: string;
    reason?: string;
    pendingHints: number;
  }>;
  lastMaintenance?: Record<string, unknown>;
  replication: { replicasApplied: number; hintsWritten: number; lagMs: { p50: number; p99: number; max: number; samples: number } };
}

/**
 * Reader of the shard report (`Shards` in the OpenAPI document). The answer is an operator's view
 * passed on whole: fields the SDK does not type are kept, and the last maintenance report is left
 * as the server wrote it.
 *
 * @example
 * ```ts
 * const report: ShardsWire = readJson(response, shardsWire);
 * ```
 */
export const shardsWire = wire.looseObject({
  epoch: wire.number,
  shards: wire.array(
    wire.looseObject({
      id: wire.number,
      table: wire.string,
      health: wire.literal('available', 'unavailable', 'recovering'),
      since: wire.optional(wire.string),
      reason: wire.optional(wire.string),
      pendingHints: wire.number,
    }),
  ),
  lastMaintenance: wire.optional(wire.jsonObject),
  replication: wire.looseObject({
    replicasApplied: wire.number,
    hintsWritten: wire.number,
    lagMs: wire.looseObject({ p50: wire.number, p99: wire.number, max: wire.number, samples: wire.number }),
  }),
});

/**
 * The shard report as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const report: ShardsWire = {
 *   epoch: 1,
 *   shards: [],
 *   replication: { replicasApplied: 0, hintsWritten: 0, lagMs: { p50: 0, p99: 0, max: 0, samples: 0 } },
 * };
 * ```
 */
export type ShardsWire = WireOf<typeof shardsWire>;

/**
 * Describes shard health (`GET /v1/admin/shards`); needs an admin key.
 *
 * @example
 * ```ts
 * const status = await admin.send(new DescribeShardsCommand());
 * ```
 */
export class DescribeShardsCommand extends RingstoreCommand<Record<string, never>, DescribeShardsCommandOutput> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<DescribeShardsCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/shards', authenticated: true }, signal);
    return readJson(response, shardsWire);
  }
}
