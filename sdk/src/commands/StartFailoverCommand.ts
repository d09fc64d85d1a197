// POST /v1/admin/failovers: fail over a shard by hand; its token ranges get new owners among their replicas.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Which shard to fail over, and why (kept in the failover's record). `action: 'moveBack'` gives a
 * rejoined shard back the ranges a failover took from it.
 *
 * @example
 * ```ts
 * const input: StartFailoverCommandInput = { shard: 1, reason: 'table throttled for 10 minutes' };
 * ```
 */
export interface StartFailoverCommandInput {
  shard: number;
  reason?: string;
  /** `failOver` (the default) or `moveBack`. */
  action?: 'failOver' | 'moveBack';
}

/**
 * The failover's id (one per shard and ring epoch) and whether this call started it; `started` is
 * false when it was started before, and runs once.
 *
 * @example
 * ```ts
 * const { id, started }: StartFailoverCommandOutput = await admin.startFailover({ shard: 1 });
 * ```
 */
export interface StartFailoverCommandOutput {
  id: string;
  shard: number;
  started: boolean;
}

/**
 * Reader of the answer (`FailoverStarted` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const started: FailoverStartedWire = readJson(response, failoverStartedWire);
 * ```
 */
export const failoverStartedWire = wire.object({ id: wire.string, shard: wire.number, started: wire.boolean });

/**
 * The answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const started: FailoverStartedWire = { id: 'shard-1-epoch-3', shard: 1, started: true };
 * ```
 */
export type FailoverStartedWire = WireOf<typeof failoverStartedWire>;

/**
 * Starts the failover of a shard (`POST /v1/admin/failovers`); needs an admin key. The workflow first
 * probes the shard and calls the failover off if it answers; follow it with {@link ListFailoversCommand}.
 *
 * @example
 * ```ts
 * const { id } = await admin.send(new StartFailoverCommand({ shard: 1 }));
 * ```
 */
export class StartFailoverCommand extends RingstoreCommand<StartFailoverCommandInput, StartFailoverCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<StartFailoverCommandOutput> {
    const { shard, reason, action } = this.input;
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/failovers',
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ shard, ...(reason === undefined ? {} : { reason }), ...(action === undefined ? {} : { action }) }),
      },
      signal,
    );
    return readJson(response, failoverStartedWire);
  }
}

/**
 * One failover as its record holds it: `running`, `notDown` (the shard answered a probe), `notReady` (a
 * move-back found the shard not rejoined or nothing to move), `completed`, `lost` (another run published
 * first) or `aborted` (the fence was lifted, the owners kept).
 *
 * @example
 * ```ts
 * const [latest]: FailoverRecord[] = (await admin.listFailovers()).failovers;
 * ```
 */
export interface FailoverRecord {
  id: string;
  shard: number;
  reason: string;
  requestedAt: string;
  updatedAt: string;
  action?: 'failOver' | 'moveBack';
  status: 'running' | 'notDown' | 'notReady' | 'completed' | 'lost' | 'aborted';
  /** The confirmation, the fence, each range with its new owner and why, the publication. */
  report?: Record<string, unknown>;
}

/**
 * The recent failovers, newest first.
 *
 * @example
 * ```ts
 * const { failovers }: ListFailoversCommandOutput = await admin.listFailovers();
 * ```
 */
export interface ListFailoversCommandOutput {
  failovers: FailoverRecord[];
}

/**
 * Reader of the failover records (`Failovers` in the OpenAPI document); a record is passed on whole.
 *
 * @example
 * ```ts
 * const { failovers }: FailoversWire = readJson(response, failoversWire);
 * ```
 */
export const failoversWire = wire.object({
  failovers: wire.array(
    wire.looseObject({
      id: wire.string,
      shard: wire.number,
      reason: wire.string,
      requestedAt: wire.string,
      updatedAt: wire.string,
      action: wire.optional(wire.literal('failOver', 'moveBack')),
      status: wire.literal('running', 'notDown', 'notReady', 'completed', 'lost', 'aborted'),
      report: wire.optional(wire.jsonObject),
    }),
  ),
});

/**
 * The records as the SDK reads them off the wire.
 *
 * @example
 * ```ts
 * const records: FailoversWire = { failovers: [] };
 * ```
 */
export type FailoversWire = WireOf<typeof failoversWire>;

/**
 * Lists the recent failovers, running and finished (`GET /v1/admin/failovers`); needs an admin key.
 *
 * @example
 * ```ts
 * const { failovers } = await admin.send(new ListFailoversCommand());
 * ```
 */
export class ListFailoversCommand extends RingstoreCommand<Record<string, never>, ListFailoversCommandOutput> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListFailoversCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/failovers', authenticated: true }, signal);
    return readJson(response, failoversWire);
  }
}
