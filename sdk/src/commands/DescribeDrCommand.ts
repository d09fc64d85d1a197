// GET /v1/admin/dr/status: a region's part in cross-region disaster recovery and what it knows.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * A region's DR role (`none`, `primary` or `backup`). A backup shows its DR state (`backup`, `promoting`,
 * `promoted`), its pending and lost keys and its key queue's depth; a primary its backup's state as its
 * lease last read it, and whether the backup could be reached.
 *
 * @example
 * ```ts
 * const status: DrStatus = { role: 'backup', state: 'backup', epoch: 0, pending: { count: 0, lost: 0 } };
 * ```
 */
export interface DrStatus {
  role: 'none' | 'primary' | 'backup';
  state?: 'backup' | 'promoting' | 'promoted';
  epoch?: number;
  promotedAt?: string;
  pending?: { count: number; lost: number; oldestAgeMs?: number; oldestKey?: string };
  queue?: { waiting: number; inFlight: number };
  backupReachable?: boolean;
  /** Primary: the initial sync of data written before DR, once one was started. */
  sync?: { status: 'running' | 'completed'; nextRange: number; ranges: number; keys: number; startedAtMs: number; updatedAtMs: number };
}

/**
 * Reader of the status (`DrStatus` in the OpenAPI document); fields the SDK does not type are kept.
 *
 * @example
 * ```ts
 * const status: DrStatusWire = readJson(response, drStatusWire);
 * ```
 */
export const drStatusWire = wire.looseObject({
  role: wire.literal('none', 'primary', 'backup'),
  state: wire.optional(wire.literal('backup', 'promoting', 'promoted')),
  epoch: wire.optional(wire.number),
  promotedAt: wire.optional(wire.string),
  pending: wire.optional(
    wire.looseObject({
      count: wire.number,
      lost: wire.number,
      oldestAgeMs: wire.optional(wire.number),
      oldestKey: wire.optional(wire.string),
    }),
  ),
  queue: wire.optional(wire.looseObject({ waiting: wire.number, inFlight: wire.number })),
  backupReachable: wire.optional(wire.boolean),
  sync: wire.optional(
    wire.looseObject({
      status: wire.literal('running', 'completed'),
      nextRange: wire.number,
      ranges: wire.number,
      keys: wire.number,
      startedAtMs: wire.number,
      updatedAtMs: wire.number,
    }),
  ),
});

/**
 * The status as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const status: DrStatusWire = { role: 'none' };
 * ```
 */
export type DrStatusWire = WireOf<typeof drStatusWire>;

/**
 * Reads this region's DR status (`GET /v1/admin/dr/status`); needs an admin key.
 *
 * @example
 * ```ts
 * const { role, pending } = await admin.send(new DescribeDrCommand());
 * ```
 */
export class DescribeDrCommand extends RingstoreCommand<Record<string, never>, DrStatus> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<DrStatus> {
    return readJson(await transport.send({ method: 'GET', path: '/v1/admin/dr/status', authenticated: true }, signal), drStatusWire);
  }
}
