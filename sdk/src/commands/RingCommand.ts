// GET /v1/ring: the ring's epoch, shards and token ranges with their owners and replicas.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * A shard of the ring: one DynamoDB table.
 *
 * @example
 * ```ts
 * const shard: RingShard = { id: 0, table: 'ringstore-local-shard-0', status: 'active' };
 * ```
 */
export interface RingShard {
  id: number;
  table: string;
  status: string;
}

/**
 * A token range `(start, end]` with its owner and replicas (owner first). The first range of
 * the ring wraps around: its `start` is greater than its `end`.
 *
 * @example
 * ```ts
 * const range: RingRange = { start: 4026531840, end: 268435455, owner: 0, replicas: [0, 1, 2] };
 * ```
 */
export interface RingRange {
  start: number;
  end: number;
  owner: number;
  replicas: number[];
  /** Present while a failover replaces the owner: writes and strong reads of the range answer a retryable 503. */
  fenced?: true;
  /** Replicas a failover added that are still being backfilled: they take writes and serve no reads. */
  backfilling?: number[];
}

/**
 * A shard that lost ranges to a failover and serves no reads until it is reconciled with their new owners.
 *
 * @example
 * ```ts
 * const entry: RingRejoining = { shard: 1, failover: 'shard-1-epoch-3', ends: [268435455] };
 * ```
 */
export interface RingRejoining {
  shard: number;
  failover: string;
  ends: number[];
}

/**
 * The ring as `GET /v1/ring` describes it.
 *
 * @example
 * ```ts
 * const ring: RingCommandOutput = await client.ring();
 * console.log(ring.epoch, ring.shards.length, ring.ranges.length);
 * ```
 */
export interface RingCommandOutput {
  epoch: number;
  replicationFactor: number;
  vnodesPerShard: number;
  tokenBits: number;
  shards: RingShard[];
  ranges: RingRange[];
  rejoining?: RingRejoining[];
}

/**
 * Input of {@link RingCommand}: none.
 *
 * @example
 * ```ts
 * const input: RingCommandInput = {};
 * ```
 */
export type RingCommandInput = Record<string, never>;

/**
 * Reader of the ring (`Ring` in the OpenAPI document). `tokenBits` is any number, not only
 * today's 32, so that a ring with wider tokens still reads.
 *
 * @example
 * ```ts
 * const ring: RingWire = readJson(response, ringWire);
 * ```
 */
export const ringWire = wire.object({
  epoch: wire.number,
  replicationFactor: wire.number,
  vnodesPerShard: wire.number,
  // Only 32-bit tokens exist today: an answer that leaves the width out means them.
  tokenBits: wire.fallback(wire.number, 32),
  shards: wire.array(wire.object({ id: wire.number, table: wire.string, status: wire.string })),
  ranges: wire.array(
    wire.object({
      start: wire.number,
      end: wire.number,
      owner: wire.number,
      replicas: wire.array(wire.number),
      fenced: wire.optional(wire.literal(true)),
      backfilling: wire.optional(wire.array(wire.number)),
    }),
  ),
  rejoining: wire.optional(wire.array(wire.object({ shard: wire.number, failover: wire.string, ends: wire.array(wire.number) }))),
});

/**
 * The ring as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const ring: RingWire = { epoch: 1, replicationFactor: 3, vnodesPerShard: 16, tokenBits: 32, shards: [], ranges: [] };
 * ```
 */
export type RingWire = WireOf<typeof ringWire>;

/**
 * Describes the ring (`GET /v1/ring`): epoch, shards, token ranges, owners and replicas.
 *
 * @example
 * ```ts
 * const { epoch, ranges } = await client.send(new RingCommand());
 * ```
 */
export class RingCommand extends RingstoreCommand<RingCommandInput, RingCommandOutput> {
  constructor(input: RingCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<RingCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/ring', authenticated: true }, signal);
    return readJson(response, ringWire);
  }
}
