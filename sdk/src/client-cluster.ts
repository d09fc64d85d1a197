// Where the data lives: the convenience methods over shard health and repair, failover, cross-region
// disaster recovery and rebalancing, each one command sent over the connection (offerLostValues a loop of
// them). All of them need an admin key.

import {
  CancelRebalanceCommand,
  DescribeDrCommand,
  DescribeRebalanceCommand,
  type DescribeRebalanceCommandInput,
  DescribeShardsCommand,
  type DescribeShardsCommandOutput,
  type DrStatus,
  type DrSyncProgress,
  GetPromotionReportCommand,
  ListFailoversCommand,
  type ListFailoversCommandOutput,
  ListLostKeysCommand,
  type ListLostKeysCommandInput,
  type ListLostKeysCommandOutput,
  OfferLostValuesCommand,
  type OfferReport,
  PauseRebalanceCommand,
  PromoteCommand,
  type PromoteCommandInput,
  type PromoteCommandOutput,
  type PromotionReport,
  type Rebalance,
  ReconcileCommand,
  type ReconcileCommandInput,
  type ReconcileCommandOutput,
  RepairCommand,
  type RepairCommandOutput,
  ResumeRebalanceCommand,
  SetRebalanceRateCommand,
  StartDrSyncCommand,
  StartFailoverCommand,
  type StartFailoverCommandInput,
  type StartFailoverCommandOutput,
  StartRebalanceCommand,
  type StartRebalanceCommandInput,
} from './commands';
import { RingstoreAccessClient } from './client-access';
import type { SendOptions } from './client-connection';

/**
 * The cluster-operations methods of a {@link RingstoreClient}: shards and repair, failover, disaster
 * recovery and rebalancing. Construct a `RingstoreClient`, which has them all.
 *
 * @example
 * ```ts
 * const admin = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: process.env.RINGSTORE_ADMIN_KEY ?? '' });
 * const { shards } = await admin.describeShards();
 * ```
 */
export class RingstoreClusterClient extends RingstoreAccessClient {
  /**
   * Shard health, hints waiting per shard and replication lag; needs an admin key.
   *
   * @example
   * ```ts
   * const { shards } = await admin.describeShards();
   * ```
   */
  describeShards(options?: SendOptions): Promise<DescribeShardsCommandOutput> {
    return this.send(new DescribeShardsCommand(), options);
  }

  /**
   * Replays hints and runs a full anti-entropy pass now, returning what was repaired; needs an admin key.
   *
   * @example
   * ```ts
   * const { antiEntropy } = await admin.repair();
   * ```
   */
  repair(options?: SendOptions): Promise<RepairCommandOutput> {
    return this.send(new RepairCommand(), options);
  }

  /**
   * Fails over a shard by hand: once probes confirm it is down, its token ranges get new owners among
   * their replicas. Answers at once; one failover runs per shard and ring epoch. Needs an admin key.
   *
   * @example
   * ```ts
   * const { id, started } = await admin.startFailover({ shard: 1, reason: 'table throttled' });
   * ```
   */
  startFailover(input: StartFailoverCommandInput, options?: SendOptions): Promise<StartFailoverCommandOutput> {
    return this.send(new StartFailoverCommand(input), options);
  }

  /**
   * The recent failovers, newest first, running and finished, with what each range chose and why; needs an admin key.
   *
   * @example
   * ```ts
   * const { failovers } = await admin.listFailovers();
   * ```
   */
  listFailovers(options?: SendOptions): Promise<ListFailoversCommandOutput> {
    return this.send(new ListFailoversCommand(), options);
  }

  /**
   * This region's part in cross-region disaster recovery: its role, a backup's state and pending and
   * lost keys, a primary's view of its backup; needs an admin key.
   *
   * @example
   * ```ts
   * const { role, pending } = await backupAdmin.describeDr();
   * ```
   */
  describeDr(options?: SendOptions): Promise<DrStatus> {
    return this.send(new DescribeDrCommand(), options);
  }

  /**
   * Promotes this DR backup region (fence the primary, drain, mark undelivered keys lost, open for
   * writes); needs an admin key. Follow it with {@link RingstoreClusterClient.promotionReport | RingstoreClient.promotionReport}.
   *
   * @example
   * ```ts
   * const { id } = await backupAdmin.promote({ reason: 'primary region lost' });
   * ```
   */
  promote(input: PromoteCommandInput = {}, options?: SendOptions): Promise<PromoteCommandOutput> {
    return this.send(new PromoteCommand(input), options);
  }

  /**
   * The newest promotion's report: its status, each step's findings and the lost keys; needs an admin key.
   *
   * @example
   * ```ts
   * const { status, lost } = await backupAdmin.promotionReport();
   * ```
   */
  promotionReport(options?: SendOptions): Promise<PromotionReport> {
    return this.send(new GetPromotionReportCommand(), options);
  }

  /**
   * Starts a DR primary's initial sync: the data written before DR was turned on is shipped to the
   * backup by maintenance, range by range; needs an admin key. Follow it with
   * {@link RingstoreClusterClient.describeDr | RingstoreClient.describeDr}.
   *
   * @example
   * ```ts
   * const { status, keys } = await admin.startDrSync();
   * ```
   */
  startDrSync(options?: SendOptions): Promise<DrSyncProgress> {
    return this.send(new StartDrSyncCommand(), options);
  }

  /**
   * In the old, demoted primary: offers back the values it holds of the keys its backup's promotion
   * marked lost, calling {@link OfferLostValuesCommand} until the report's list is done (each call stops
   * at a time budget); `onProgress` sees every call's answer. Returns the totals; needs an admin key.
   *
   * @example
   * ```ts
   * const { offered, notHeld } = await oldPrimaryAdmin.offerLostValues({ onProgress: (step) => console.log(step.next) });
   * ```
   */
  async offerLostValues(
    input: { from?: number; onProgress?: (step: OfferReport) => void } = {},
    options?: SendOptions,
  ): Promise<OfferReport> {
    let step = await this.send(new OfferLostValuesCommand(input.from === undefined ? {} : { from: input.from }), options);
    input.onProgress?.(step);
    const total: OfferReport = { ...step, failures: [...step.failures] };
    while (step.next !== undefined) {
      step = await this.send(new OfferLostValuesCommand({ from: step.next }), options);
      input.onProgress?.(step);
      for (const count of ['offered', 'notHeld', 'noValueNeeded', 'failed'] as const) total[count] += step[count];
      total.failures.push(...step.failures);
    }
    const { next: _next, ...done } = total;
    return done;
  }

  /**
   * In the promoted region: one page of the keys a promotion marked lost, each with its offered value
   * (if any) and the version held now; needs an admin key.
   *
   * @example
   * ```ts
   * const { entries, cursor } = await backupAdmin.lostKeys({ limit: 100 });
   * ```
   */
  lostKeys(input: ListLostKeysCommandInput = {}, options?: SendOptions): Promise<ListLostKeysCommandOutput> {
    return this.send(new ListLostKeysCommand(input), options);
  }

  /**
   * In the promoted region: restores a lost write's offered value as a new write of the key (only while
   * the key holds `expectVersion`), or discards it; needs an admin key.
   *
   * @example
   * ```ts
   * await backupAdmin.reconcile({ namespace: 'app', key: 'users/42', version: 7, action: 'restore', expectVersion: 6 });
   * ```
   */
  reconcile(input: ReconcileCommandInput, options?: SendOptions): Promise<ReconcileCommandOutput> {
    return this.send(new ReconcileCommand(input), options);
  }

  /**
   * Adds shards (`add`: how many; they get the ids after the highest) or removes shards by id, online;
   * needs an admin key. Follow it with {@link RingstoreClusterClient.describeRebalance | RingstoreClient.describeRebalance}.
   *
   * @example
   * ```ts
   * const { id } = await admin.startRebalance({ add: 1, rateKeysPerSecond: 5_000 });
   * ```
   */
  startRebalance(input: StartRebalanceCommandInput, options?: SendOptions): Promise<Rebalance> {
    return this.send(new StartRebalanceCommand(input), options);
  }

  /**
   * The current (or last) rebalance and its progress; every moving range too with `ranges: true`. Needs
   * an admin key; a `NotFoundError` when none ever ran.
   *
   * @example
   * ```ts
   * const { status, progress, etaSeconds } = await admin.describeRebalance();
   * ```
   */
  describeRebalance(input: DescribeRebalanceCommandInput = {}, options?: SendOptions): Promise<Rebalance> {
    return this.send(new DescribeRebalanceCommand(input), options);
  }

  /**
   * Pauses rebalance `id` after its current step; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.pauseRebalance((await admin.describeRebalance()).id);
   * ```
   */
  pauseRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new PauseRebalanceCommand({ id }), options);
  }

  /**
   * Resumes paused rebalance `id` from its checkpoint; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.resumeRebalance(id);
   * ```
   */
  resumeRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new ResumeRebalanceCommand({ id }), options);
  }

  /**
   * Cancels rebalance `id`: what had moved is moved back; needs an admin key.
   *
   * @example
   * ```ts
   * await admin.cancelRebalance(id);
   * ```
   */
  cancelRebalance(id: string, options?: SendOptions): Promise<Rebalance> {
    return this.send(new CancelRebalanceCommand({ id }), options);
  }

  /**
   * Changes the copy rate of rebalance `id` (keys per second, 0: no cap); needs an admin key.
   *
   * @example
   * ```ts
   * await admin.setRebalanceRate(id, 20_000);
   * ```
   */
  setRebalanceRate(id: string, rateKeysPerSecond: number, options?: SendOptions): Promise<Rebalance> {
    return this.send(new SetRebalanceRateCommand({ id, rateKeysPerSecond }), options);
  }
}
