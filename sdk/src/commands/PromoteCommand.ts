// POST /v1/admin/dr/promote and GET /v1/admin/dr/report: promote a DR backup region, and follow it.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Why the region is promoted (kept in the report).
 *
 * @example
 * ```ts
 * const input: PromoteCommandInput = { reason: 'primary region lost' };
 * ```
 */
export interface PromoteCommandInput {
  reason?: string;
}

/**
 * The promotion's id and whether this call started it (false: it was started before).
 *
 * @example
 * ```ts
 * const { id, started }: PromoteCommandOutput = await admin.promote({ reason: 'primary region lost' });
 * ```
 */
export interface PromoteCommandOutput {
  id: string;
  started: boolean;
}

/**
 * Reader of the answer (`PromotionStarted` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const started: PromotionStartedWire = readJson(response, promotionStartedWire);
 * ```
 */
export const promotionStartedWire = wire.object({ id: wire.string, started: wire.boolean });

/**
 * The answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const started: PromotionStartedWire = { id: 'promotion-epoch-0', started: true };
 * ```
 */
export type PromotionStartedWire = WireOf<typeof promotionStartedWire>;

/**
 * Promotes this DR backup region (`POST /v1/admin/dr/promote`); needs an admin key. The workflow fences
 * the primary, drains the key queue, marks keys whose value never arrived lost and opens the region for
 * writes; follow it with {@link GetPromotionReportCommand}.
 *
 * @example
 * ```ts
 * const { id } = await backupAdmin.send(new PromoteCommand({ reason: 'primary region lost' }));
 * ```
 */
export class PromoteCommand extends RingstoreCommand<PromoteCommandInput, PromoteCommandOutput> {
  constructor(input: PromoteCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<PromoteCommandOutput> {
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/dr/promote',
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(this.input.reason === undefined ? {} : { reason: this.input.reason }),
      },
      signal,
    );
    return readJson(response, promotionStartedWire);
  }
}

/**
 * A promotion's report: `running`, `completed` or `failed`, each step's findings, and the keys whose
 * value never arrived (oldest write first; the list is bounded, the count is not).
 *
 * @example
 * ```ts
 * const report: PromotionReport = await admin.promotionReport();
 * ```
 */
export interface PromotionReport {
  id: string;
  reason: string;
  status: 'running' | 'completed' | 'failed';
  startedAtMs: number;
  updatedAtMs: number;
  fencedAtMs?: number;
  drain?: { waitedMs: number; remaining: number };
  values?: { waitedMs: number; pending: number };
  /** `possiblyNeverAcknowledged`: of `count`, key-sync writes whose notice was lost (listed at version 0, with their write id). */
  lost?: {
    count: number;
    possiblyNeverAcknowledged?: number;
    keys: Array<{
      namespace: string;
      key: string;
      version: number;
      writtenAtMs: number;
      txid?: string;
      writeId?: string;
      possiblyNeverAcknowledged?: true;
    }>;
  };
  promotedAtMs?: number;
  failure?: string;
}

/**
 * Reader of the report (`PromotionReport` in the OpenAPI document); fields the SDK does not type are kept.
 *
 * @example
 * ```ts
 * const report: PromotionReportWire = readJson(response, promotionReportWire);
 * ```
 */
export const promotionReportWire = wire.looseObject({
  id: wire.string,
  reason: wire.string,
  status: wire.literal('running', 'completed', 'failed'),
  startedAtMs: wire.number,
  updatedAtMs: wire.number,
  fencedAtMs: wire.optional(wire.number),
  drain: wire.optional(wire.looseObject({ waitedMs: wire.number, remaining: wire.number })),
  values: wire.optional(wire.looseObject({ waitedMs: wire.number, pending: wire.number })),
  lost: wire.optional(
    wire.looseObject({
      count: wire.number,
      possiblyNeverAcknowledged: wire.optional(wire.number),
      keys: wire.array(
        wire.looseObject({
          namespace: wire.string,
          key: wire.string,
          version: wire.number,
          writtenAtMs: wire.number,
          txid: wire.optional(wire.string),
          writeId: wire.optional(wire.string),
          possiblyNeverAcknowledged: wire.optional(wire.literal(true)),
        }),
      ),
    }),
  ),
  promotedAtMs: wire.optional(wire.number),
  failure: wire.optional(wire.string),
});

/**
 * The report as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const report: PromotionReportWire = { id: 'p', reason: 'r', status: 'running', startedAtMs: 0, updatedAtMs: 0 };
 * ```
 */
export type PromotionReportWire = WireOf<typeof promotionReportWire>;

/**
 * Reads the newest promotion's report (`GET /v1/admin/dr/report`); needs an admin key. A region never
 * promoted answers `404 dr.noPromotion`.
 *
 * @example
 * ```ts
 * const { status, lost } = await admin.send(new GetPromotionReportCommand());
 * ```
 */
export class GetPromotionReportCommand extends RingstoreCommand<Record<string, never>, PromotionReport> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<PromotionReport> {
    return readJson(await transport.send({ method: 'GET', path: '/v1/admin/dr/report', authenticated: true }, signal), promotionReportWire);
  }
}

/**
 * A DR primary's initial sync: every key shipped once to the backup, range by range, by maintenance.
 *
 * @example
 * ```ts
 * const { status, keys }: DrSyncProgress = await admin.startDrSync();
 * ```
 */
export interface DrSyncProgress {
  status: 'running' | 'completed';
  nextRange: number;
  ranges: number;
  keys: number;
  startedAtMs: number;
  updatedAtMs: number;
}

/**
 * Reader of the progress (`DrSync` in the OpenAPI document); fields the SDK does not type are kept.
 *
 * @example
 * ```ts
 * const progress: DrSyncWire = readJson(response, drSyncWire);
 * ```
 */
export const drSyncWire = wire.looseObject({
  status: wire.literal('running', 'completed'),
  nextRange: wire.number,
  ranges: wire.number,
  keys: wire.number,
  startedAtMs: wire.number,
  updatedAtMs: wire.number,
});

/**
 * The progress as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const progress: DrSyncWire = { status: 'running', nextRange: 0, ranges: 64, keys: 0, startedAtMs: 0, updatedAtMs: 0 };
 * ```
 */
export type DrSyncWire = WireOf<typeof drSyncWire>;

/**
 * Starts the initial sync of a DR primary (`POST /v1/admin/dr/sync`): data written before DR was turned
 * on is shipped to the backup; needs an admin key. A sync already running goes on; follow it with
 * {@link DescribeDrCommand}.
 *
 * @example
 * ```ts
 * const progress = await admin.send(new StartDrSyncCommand());
 * ```
 */
export class StartDrSyncCommand extends RingstoreCommand<Record<string, never>, DrSyncProgress> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<DrSyncProgress> {
    return readJson(await transport.send({ method: 'POST', path: '/v1/admin/dr/sync', authenticated: true }, signal), drSyncWire);
  }
}
