// DR reconciliation (docs/dr.md, "Reconciliation"): POST /v1/admin/dr/offer in the old primary, and
// GET /v1/admin/dr/lost and POST /v1/admin/dr/reconcile in the promoted region.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Where an offer continues in the promotion report's list of lost keys (a previous answer's `next`).
 *
 * @example
 * ```ts
 * const input: OfferLostValuesCommandInput = { from: 400 };
 * ```
 */
export interface OfferLostValuesCommandInput {
  from?: number;
}

/**
 * What the old primary offered back: values uploaded, keys it no longer holds at the lost version, lost
 * deletes and empty values (nothing to offer), failures; `next` when the call stopped at its time budget.
 *
 * @example
 * ```ts
 * const { offered, notHeld, next }: OfferReport = await oldPrimaryAdmin.send(new OfferLostValuesCommand());
 * ```
 */
export interface OfferReport {
  promotionId: string;
  lost: number;
  listed: number;
  from: number;
  next?: number;
  offered: number;
  notHeld: number;
  noValueNeeded: number;
  failed: number;
  failures: Array<{ namespace: string; key: string; version: number; reason: string }>;
}

/**
 * Reader of the answer (`OfferReport` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const report: OfferReportWire = readJson(response, offerReportWire);
 * ```
 */
export const offerReportWire = wire.looseObject({
  promotionId: wire.string,
  lost: wire.number,
  listed: wire.number,
  from: wire.number,
  next: wire.optional(wire.number),
  offered: wire.number,
  notHeld: wire.number,
  noValueNeeded: wire.number,
  failed: wire.number,
  failures: wire.array(wire.looseObject({ namespace: wire.string, key: wire.string, version: wire.number, reason: wire.string })),
});

/**
 * The answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const none = { offered: 0, notHeld: 0, noValueNeeded: 0, failed: 0, failures: [] };
 * const report: OfferReportWire = { promotionId: 'p', lost: 0, listed: 0, from: 0, ...none };
 * ```
 */
export type OfferReportWire = WireOf<typeof offerReportWire>;

/**
 * One call of the old, demoted primary's offer (`POST /v1/admin/dr/offer`): the values it holds of the
 * keys its backup's promotion marked lost go to the promoted region's bucket, never applied there by
 * themselves; needs an admin key. {@link RingstoreClient.offerLostValues} calls it until the list is done.
 *
 * @example
 * ```ts
 * const report = await oldPrimaryAdmin.send(new OfferLostValuesCommand({ from: 0 }));
 * ```
 */
export class OfferLostValuesCommand extends RingstoreCommand<OfferLostValuesCommandInput, OfferReport> {
  constructor(input: OfferLostValuesCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<OfferReport> {
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/dr/offer',
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(this.input.from === undefined ? {} : { from: this.input.from }),
      },
      signal,
    );
    return readJson(response, offerReportWire);
  }
}

/**
 * A page of lost keys: its size (1 to 100, default 50) and the cursor of the previous page.
 *
 * @example
 * ```ts
 * const input: ListLostKeysCommandInput = { limit: 100 };
 * ```
 */
export interface ListLostKeysCommandInput {
  limit?: number;
  cursor?: string;
}

/**
 * One lost write as an admin weighs it: what was lost, whether its value was offered back (deletes and
 * empty values need no offer), and the version the promoted region holds now.
 *
 * @example
 * ```ts
 * const restorable = (lost: LostKey) => !lost.superseded && (!lost.offer.needed || lost.offer.present);
 * ```
 */
export interface LostKey {
  namespace: string;
  key: string;
  version: number;
  writtenAt: string;
  writtenAtMs: number;
  txid?: string;
  size: number;
  contentType: string;
  deleted: boolean;
  offer: { needed: boolean; present: boolean; size?: number };
  currentVersion: number;
  superseded: boolean;
  /** A key-sync write whose version never reached the backup (its notice was lost): listed at version 0. */
  possiblyNeverAcknowledged?: true;
}

/**
 * A page of lost keys; it may hold fewer than asked, even none, and `cursor` is absent on the last one.
 *
 * @example
 * ```ts
 * const { entries, cursor }: ListLostKeysCommandOutput = await backupAdmin.lostKeys();
 * ```
 */
export interface ListLostKeysCommandOutput {
  entries: LostKey[];
  cursor?: string;
}

/**
 * Reader of a page (`LostKeys` in the OpenAPI document); fields the SDK does not type are kept.
 *
 * @example
 * ```ts
 * const page: LostKeysWire = readJson(response, lostKeysWire);
 * ```
 */
export const lostKeysWire = wire.looseObject({
  entries: wire.array(
    wire.looseObject({
      namespace: wire.string,
      key: wire.string,
      version: wire.number,
      writtenAt: wire.string,
      writtenAtMs: wire.number,
      txid: wire.optional(wire.string),
      size: wire.number,
      contentType: wire.string,
      deleted: wire.boolean,
      offer: wire.looseObject({ needed: wire.boolean, present: wire.boolean, size: wire.optional(wire.number) }),
      currentVersion: wire.number,
      superseded: wire.boolean,
      possiblyNeverAcknowledged: wire.optional(wire.literal(true)),
    }),
  ),
  cursor: wire.optional(wire.string),
});

/**
 * A page as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const page: LostKeysWire = { entries: [] };
 * ```
 */
export type LostKeysWire = WireOf<typeof lostKeysWire>;

/**
 * Lists the keys a promotion marked lost (`GET /v1/admin/dr/lost`), with their offers; needs an admin key.
 *
 * @example
 * ```ts
 * const { entries } = await backupAdmin.send(new ListLostKeysCommand({ limit: 100 }));
 * ```
 */
export class ListLostKeysCommand extends RingstoreCommand<ListLostKeysCommandInput, ListLostKeysCommandOutput> {
  constructor(input: ListLostKeysCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListLostKeysCommandOutput> {
    const { limit, cursor } = this.input;
    const response = await transport.send(
      { method: 'GET', path: '/v1/admin/dr/lost', query: { limit, cursor }, authenticated: true },
      signal,
    );
    const page = readJson(response, lostKeysWire);
    return page.cursor === undefined || page.cursor === '' ? { entries: page.entries } : { entries: page.entries, cursor: page.cursor };
  }
}

/**
 * A lost write to settle: `restore` writes its offered value as a new write of the key, only while the
 * key holds `expectVersion` (pass the listing's `currentVersion`; without it, any version older than the
 * lost one); `discard` forgets it, and the key reads at what the region holds.
 *
 * @example
 * ```ts
 * const input: ReconcileCommandInput = { namespace: 'app', key: 'users/42', version: 7, action: 'restore', expectVersion: 6 };
 * ```
 */
export interface ReconcileCommandInput {
  namespace: string;
  key: string;
  version: number;
  action: 'restore' | 'discard';
  expectVersion?: number;
}

/**
 * What was done, and the version the key holds now (a restore's new write, or what a discard left).
 *
 * @example
 * ```ts
 * const { currentVersion }: ReconcileCommandOutput = await backupAdmin.reconcile(input);
 * ```
 */
export interface ReconcileCommandOutput {
  namespace: string;
  key: string;
  version: number;
  action: 'restore' | 'discard';
  currentVersion: number;
}

/**
 * Reader of the answer (`ReconcileOutcome` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const outcome: ReconcileOutcomeWire = readJson(response, reconcileOutcomeWire);
 * ```
 */
export const reconcileOutcomeWire = wire.object({
  namespace: wire.string,
  key: wire.string,
  version: wire.number,
  action: wire.literal('restore', 'discard'),
  currentVersion: wire.number,
});

/**
 * The answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const outcome: ReconcileOutcomeWire = { namespace: 'app', key: 'k', version: 7, action: 'discard', currentVersion: 6 };
 * ```
 */
export type ReconcileOutcomeWire = WireOf<typeof reconcileOutcomeWire>;

/**
 * Restores or discards one lost write in the promoted region (`POST /v1/admin/dr/reconcile`); needs an
 * admin key. Refusals: `dr.notLost` (404), `dr.noOffer`, `dr.corruptOffer`, `dr.notPromoted`,
 * `dr.cannotRestore` (409), `kv.preconditionFailed` (412: the key was written since).
 *
 * @example
 * ```ts
 * await backupAdmin.send(new ReconcileCommand({ namespace: 'app', key: 'users/42', version: 7, action: 'discard' }));
 * ```
 */
export class ReconcileCommand extends RingstoreCommand<ReconcileCommandInput, ReconcileCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<ReconcileCommandOutput> {
    const { namespace, key, version, action, expectVersion } = this.input;
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/dr/reconcile',
        authenticated: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ namespace, key, version, action, ...(expectVersion === undefined ? {} : { expectVersion }) }),
      },
      signal,
    );
    return readJson(response, reconcileOutcomeWire);
  }
}
