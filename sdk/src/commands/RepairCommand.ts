// POST /v1/admin/repair: runs hinted handoff and a full anti-entropy pass now and reports what they did.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * What one repair run did: hints replayed per shard and the anti-entropy comparison.
 *
 * @example
 * ```ts
 * const { antiEntropy }: RepairCommandOutput = await admin.repair();
 * ```
 */
export interface RepairCommandOutput {
  startedAt: string;
  handoff: Array<{
    table: string;
    applied: number;
    alreadyCurrent: number;
    hintsPerSecond: number;
    completed: boolean;
    transition?: string;
  }>;
  antiEntropy: {
    rangesCompared: number;
    keysCompared: number;
    repairedCount: number;
    repairs: Array<Record<string, unknown>>;
    rangesSkipped: number;
    /** Ranges left for the next run: the run's time budget ran out (0: the whole pass was compared). */
    rangesLeft: number;
  };
}

/**
 * Reader of a repair run (`MaintenanceReport` in the OpenAPI document). The report is passed on
 * whole: fields the SDK does not type (durations, the next range) are kept.
 *
 * @example
 * ```ts
 * const report: MaintenanceReportWire = readJson(response, maintenanceReportWire);
 * ```
 */
export const maintenanceReportWire = wire.looseObject({
  startedAt: wire.string,
  handoff: wire.array(
    wire.looseObject({
      table: wire.string,
      applied: wire.number,
      alreadyCurrent: wire.number,
      hintsPerSecond: wire.number,
      completed: wire.boolean,
      transition: wire.optional(wire.string),
    }),
  ),
  antiEntropy: wire.looseObject({
    rangesCompared: wire.number,
    keysCompared: wire.number,
    repairedCount: wire.number,
    repairs: wire.array(wire.jsonObject),
    rangesSkipped: wire.number,
    rangesLeft: wire.number,
  }),
});

/**
 * A repair run as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const report: MaintenanceReportWire = {
 *   startedAt: '2030-01-01T00:00:00Z',
 *   handoff: [],
 *   antiEntropy: { rangesCompared: 0, keysCompared: 0, repairedCount: 0, repairs: [], rangesSkipped: 0, rangesLeft: 0 },
 * };
 * ```
 */
export type MaintenanceReportWire = WireOf<typeof maintenanceReportWire>;

/**
 * Runs hinted handoff and a full anti-entropy pass now (`POST /v1/admin/repair`); needs an admin key.
 *
 * @example
 * ```ts
 * const report = await admin.send(new RepairCommand());
 * ```
 */
export class RepairCommand extends RingstoreCommand<Record<string, never>, RepairCommandOutput> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<RepairCommandOutput> {
    const response = await transport.send({ method: 'POST', path: '/v1/admin/repair', authenticated: true }, signal);
    return readJson(response, maintenanceReportWire);
  }
}
