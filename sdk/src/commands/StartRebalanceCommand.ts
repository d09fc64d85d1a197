// /v1/admin/rebalance: add or remove shards online, follow the rebalance, pause, resume or cancel it,
// change its copy rate. One rebalance runs at a time; its id names the one an action is for.

import { assertInteger } from '../encoding';
import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * What a rebalance changes: `add` shards (they get the ids after the highest on the ring), `remove`
 * shards by id, or both; `rateKeysPerSecond` caps the copy (0: no cap; the server's default when absent).
 *
 * @example
 * ```ts
 * const input: StartRebalanceCommandInput = { add: 1, rateKeysPerSecond: 5_000 };
 * ```
 */
export interface StartRebalanceCommandInput {
  add?: number;
  remove?: number[];
  rateKeysPerSecond?: number;
}

/**
 * How far a rebalance is: `running`, `paused` (asked for, or stopped on an error `message` gives),
 * `cancelling` (the ranges that had moved are moved back), `cancelled` or `done`.
 *
 * @example
 * ```ts
 * const ended = (status: RebalanceStatus) => status === 'done' || status === 'cancelled';
 * ```
 */
export type RebalanceStatus = 'running' | 'paused' | 'cancelling' | 'cancelled' | 'done';

/**
 * One range whose replicas the rebalance changes (`from` and `to`, owner first), at its stage.
 *
 * @example
 * ```ts
 * const copying = (rebalance.rangeDetail ?? []).filter((range: RebalanceRange) => range.stage === 'copying');
 * ```
 */
export interface RebalanceRange {
  start: number;
  end: number;
  from: number[];
  to: number[];
  stage: 'planned' | 'backfilled' | 'copying' | 'cutover' | 'moved' | 'cleaned';
  keysCopied: number;
  keysVerified?: number;
  keysCleaned?: number;
}

/**
 * A rebalance and its progress: ranges by stage, keys copied, keys per second since the start, the
 * share of the moving token space moved (`progress`, 0 to 1) and, while it runs, `etaSeconds`.
 * `rangeDetail` is there only when asked for ({@link DescribeRebalanceCommand} with `ranges: true`).
 *
 * @example
 * ```ts
 * const { id, status, progress, etaSeconds }: Rebalance = await admin.describeRebalance();
 * ```
 */
export interface Rebalance {
  id: string;
  status: RebalanceStatus;
  /** A pause or cancel asked for, until the workflow acts on it. */
  requested?: 'pause' | 'cancel';
  /** Why the workflow stopped, when it paused on an error. */
  message?: string;
  change: { join: number[]; leave: number[] };
  rateKeysPerSecond: number;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
  ranges: { total: number; planned: number; moving: number; moved: number; cleaned: number };
  keysCopied: number;
  keysPerSecond: number;
  progress: number;
  etaSeconds?: number;
  /** Once cancelled: the ranges it had and how many had moved (`ranges` then counts the moves back). */
  cancelledFrom?: { ranges: number; moved: number };
  revision: number;
  rangeDetail?: RebalanceRange[];
}

const numbers = wire.array(wire.number);

/**
 * Reader of a rebalance (`Rebalance` in the OpenAPI document); fields the SDK does not type are kept.
 *
 * @example
 * ```ts
 * const rebalance: RebalanceWire = readJson(response, rebalanceWire);
 * ```
 */
export const rebalanceWire = wire.looseObject({
  id: wire.string,
  status: wire.literal('running', 'paused', 'cancelling', 'cancelled', 'done'),
  requested: wire.optional(wire.literal('pause', 'cancel')),
  message: wire.optional(wire.string),
  change: wire.looseObject({ join: numbers, leave: numbers }),
  rateKeysPerSecond: wire.number,
  startedAt: wire.string,
  updatedAt: wire.string,
  finishedAt: wire.optional(wire.string),
  ranges: wire.looseObject({ total: wire.number, planned: wire.number, moving: wire.number, moved: wire.number, cleaned: wire.number }),
  keysCopied: wire.number,
  keysPerSecond: wire.number,
  progress: wire.number,
  etaSeconds: wire.optional(wire.number),
  cancelledFrom: wire.optional(wire.looseObject({ ranges: wire.number, moved: wire.number })),
  revision: wire.number,
  rangeDetail: wire.optional(
    wire.array(
      wire.looseObject({
        start: wire.number,
        end: wire.number,
        from: numbers,
        to: numbers,
        stage: wire.literal('planned', 'backfilled', 'copying', 'cutover', 'moved', 'cleaned'),
        keysCopied: wire.number,
        keysVerified: wire.optional(wire.number),
        keysCleaned: wire.optional(wire.number),
      }),
    ),
  ),
});

/**
 * A rebalance as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const ranges: RebalanceWire['ranges'] = { total: 12, planned: 12, moving: 0, moved: 0, cleaned: 0 };
 * ```
 */
export type RebalanceWire = WireOf<typeof rebalanceWire>;

/** The path of an action on rebalance `id`, which must be a non-empty string. */
function actionPath(id: string, action: string): string {
  if (typeof id !== 'string' || id === '') throw invalidInput('a rebalance id is needed (describeRebalance() shows the current one)');
  return `/v1/admin/rebalance/${encodeURIComponent(id)}/${action}`;
}

/**
 * Starts a rebalance (`POST /v1/admin/rebalance`); needs an admin key. The ranges are copied at the
 * rate and cut over one at a time while reads and writes go on; follow it with {@link DescribeRebalanceCommand}.
 *
 * @example
 * ```ts
 * const { id, ranges } = await admin.send(new StartRebalanceCommand({ add: 1 }));
 * ```
 */
export class StartRebalanceCommand extends RingstoreCommand<StartRebalanceCommandInput, Rebalance> {
  override async execute({ transport, signal }: CommandContext): Promise<Rebalance> {
    const { add, remove, rateKeysPerSecond } = this.input;
    if (add === undefined && remove === undefined) throw invalidInput('a rebalance needs add (a number of shards) or remove (shard ids)');
    if (add !== undefined) assertInteger('add', add, 1);
    if (remove !== undefined) {
      if (!Array.isArray(remove)) throw invalidInput('remove must be an array of shard ids');
      remove.forEach((shard, index) => assertInteger(`remove[${index}]`, shard, 0));
    }
    if (rateKeysPerSecond !== undefined) assertInteger('rateKeysPerSecond', rateKeysPerSecond, 0);
    const body = {
      ...(add === undefined ? {} : { add }),
      ...(remove === undefined ? {} : { remove }),
      ...(rateKeysPerSecond === undefined ? {} : { rateKeysPerSecond }),
    };
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/rebalance',
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      signal,
    );
    return readJson(response, rebalanceWire);
  }
}

/**
 * `ranges: true` lists every moving range with its stage and counts (there can be hundreds).
 *
 * @example
 * ```ts
 * const input: DescribeRebalanceCommandInput = { ranges: true };
 * ```
 */
export interface DescribeRebalanceCommandInput {
  ranges?: boolean;
}

/**
 * Reads the current (or last) rebalance (`GET /v1/admin/rebalance`); needs an admin key. A
 * `NotFoundError` (`rebalance.notFound`) when none ever ran.
 *
 * @example
 * ```ts
 * const { status, progress } = await admin.send(new DescribeRebalanceCommand());
 * ```
 */
export class DescribeRebalanceCommand extends RingstoreCommand<DescribeRebalanceCommandInput, Rebalance> {
  constructor(input: DescribeRebalanceCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<Rebalance> {
    const query = this.input.ranges === true ? { ranges: 'true' } : {};
    return readJson(
      await transport.send({ method: 'GET', path: '/v1/admin/rebalance', query, authenticated: true }, signal),
      rebalanceWire,
    );
  }
}

/**
 * The rebalance an action is for: its `id` (the current one's, from {@link DescribeRebalanceCommand}).
 *
 * @example
 * ```ts
 * const input: RebalanceActionInput = { id: 'rebalance-1764066162000-3f2a9c1e' };
 * ```
 */
export interface RebalanceActionInput {
  id: string;
}

/** One POST action on a rebalance, answered with the rebalance. */
abstract class RebalanceActionCommand extends RingstoreCommand<RebalanceActionInput, Rebalance> {
  protected abstract readonly action: 'pause' | 'resume' | 'cancel';

  override async execute({ transport, signal }: CommandContext): Promise<Rebalance> {
    const path = actionPath(this.input.id, this.action);
    return readJson(await transport.send({ method: 'POST', path, authenticated: true }, signal), rebalanceWire);
  }
}

/**
 * Pauses a rebalance after its current step (`POST /v1/admin/rebalance/{id}/pause`): `requested` is
 * `pause` until the workflow stops; every stage resumes from its checkpoint. Needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new PauseRebalanceCommand({ id }));
 * ```
 */
export class PauseRebalanceCommand extends RebalanceActionCommand {
  protected readonly action = 'pause';
}

/**
 * Resumes a paused rebalance with a new run of its workflow (`POST /v1/admin/rebalance/{id}/resume`);
 * needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new ResumeRebalanceCommand({ id }));
 * ```
 */
export class ResumeRebalanceCommand extends RebalanceActionCommand {
  protected readonly action = 'resume';
}

/**
 * Cancels a rebalance (`POST /v1/admin/rebalance/{id}/cancel`): the ranges that had moved are moved
 * back (`cancelling`), then the ring is as it began (`cancelled`). Needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new CancelRebalanceCommand({ id }));
 * ```
 */
export class CancelRebalanceCommand extends RebalanceActionCommand {
  protected readonly action = 'cancel';
}

/**
 * The rebalance and its new copy rate, keys per second over the whole rebalance (0: no cap).
 *
 * @example
 * ```ts
 * const input: SetRebalanceRateCommandInput = { id, rateKeysPerSecond: 20_000 };
 * ```
 */
export interface SetRebalanceRateCommandInput {
  id: string;
  rateKeysPerSecond: number;
}

/**
 * Changes the copy rate of a rebalance that has not ended (`PUT /v1/admin/rebalance/{id}/rate`); it
 * applies from the next page copied. Needs an admin key.
 *
 * @example
 * ```ts
 * const { rateKeysPerSecond } = await admin.send(new SetRebalanceRateCommand({ id, rateKeysPerSecond: 20_000 }));
 * ```
 */
export class SetRebalanceRateCommand extends RingstoreCommand<SetRebalanceRateCommandInput, Rebalance> {
  override async execute({ transport, signal }: CommandContext): Promise<Rebalance> {
    const { id, rateKeysPerSecond } = this.input;
    assertInteger('rateKeysPerSecond', rateKeysPerSecond, 0);
    const response = await transport.send(
      {
        method: 'PUT',
        path: actionPath(id, 'rate'),
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rateKeysPerSecond }),
      },
      signal,
    );
    return readJson(response, rebalanceWire);
  }
}
