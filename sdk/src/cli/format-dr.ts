// Text the CLI prints about cross-region DR: a region's status, a promotion's report, an offer, lost keys.

import type { DrStatus, LostKey, OfferReport, PromotionReport } from '../commands';
import { oneLine, showKey, table } from './format';

/**
 * A region's DR status in a few lines: its role, a backup's state, pending and lost keys and queue.
 *
 * @example
 * ```ts
 * console.log(formatDrStatus(await admin.describeDr()));
 * ```
 */
export function formatDrStatus(status: DrStatus): string {
  if (status.role === 'none') return 'this region has no disaster-recovery role';
  if (status.role === 'primary') {
    const backup =
      status.backupReachable === false
        ? 'primary; its backup region cannot be reached (writes are acknowledged only while its lease holds)'
        : `primary; its backup is ${status.state ?? 'backup'} (epoch ${status.epoch ?? 0})`;
    const sync = status.sync
      ? `\ninitial sync ${status.sync.status}: ${status.sync.nextRange} of ${status.sync.ranges} ranges, ${status.sync.keys} keys shipped`
      : '';
    return `${backup}${sync}`;
  }
  const lines = [
    `backup; ${status.state ?? 'backup'} (epoch ${status.epoch ?? 0})${status.promotedAt ? `, promoted at ${status.promotedAt}` : ''}`,
  ];
  if (status.pending) {
    const oldest =
      status.pending.oldestKey === undefined ? '' : `, oldest ${status.pending.oldestKey} (${status.pending.oldestAgeMs ?? 0} ms)`;
    lines.push(`pending keys: ${status.pending.count}${oldest}; lost keys: ${status.pending.lost}`);
  }
  if (status.queue) lines.push(`key queue: ${status.queue.waiting} waiting, ${status.queue.inFlight} being applied`);
  return lines.join('\n');
}

/**
 * A promotion's report: its status and steps, then the lost keys as a table.
 *
 * @example
 * ```ts
 * console.log(formatPromotionReport(await admin.promotionReport()));
 * ```
 */
export function formatPromotionReport(report: PromotionReport): string {
  const lines = [`promotion ${report.id}: ${report.status} (${report.reason})`];
  if (report.drain) lines.push(`key queue drained in ${report.drain.waitedMs} ms`);
  if (report.values) lines.push(`waited ${report.values.waitedMs} ms for values in transit; ${report.values.pending} never came`);
  if (report.promotedAtMs !== undefined) lines.push(`open for writes since ${new Date(report.promotedAtMs).toISOString()}`);
  if (report.failure) lines.push(`failed: ${report.failure}`);
  if (report.lost) {
    lines.push(
      `lost keys: ${report.lost.count}${report.lost.count > report.lost.keys.length ? ` (the first ${report.lost.keys.length} listed)` : ''}`,
    );
    if (report.lost.keys.length > 0) {
      const rows = [['NAMESPACE', 'KEY', 'VERSION', 'WRITTEN', 'TXID']];
      for (const lost of report.lost.keys) {
        rows.push([lost.namespace, showKey(lost.key), String(lost.version), new Date(lost.writtenAtMs).toISOString(), lost.txid ?? '-']);
      }
      lines.push(table(rows));
    }
  }
  return lines.join('\n');
}

/**
 * One step of the old primary's offer of lost values, as a progress line.
 *
 * @example
 * ```ts
 * await oldPrimaryAdmin.offerLostValues({ onProgress: (step) => console.log(formatOfferStep(step)) });
 * ```
 */
export function formatOfferStep(step: OfferReport): string {
  const through = step.next ?? step.listed;
  const unlisted = step.lost > step.listed ? ` (${step.lost} lost, the first ${step.listed} listed)` : '';
  return (
    `keys ${step.from} to ${through} of ${step.listed}${unlisted}: ${step.offered} offered, ${step.notHeld} not held here, ` +
    `${step.noValueNeeded} need no value, ${step.failed} failed`
  );
}

/**
 * The offer's totals, with its failures.
 *
 * @example
 * ```ts
 * console.log(formatOffer(await oldPrimaryAdmin.offerLostValues()));
 * ```
 */
export function formatOffer(report: OfferReport): string {
  const lines = [
    `promotion ${report.promotionId}: ${report.offered} values offered back, ${report.notHeld} keys not held at the lost version here, ` +
      `${report.noValueNeeded} need no value, ${report.failed} failed`,
  ];
  if (report.lost > report.listed) lines.push(`${report.lost - report.listed} lost keys are not in the report's list and were not offered`);
  for (const failure of report.failures)
    lines.push(`  ${failure.namespace} ${showKey(failure.key)} ${failure.version}: ${oneLine(failure.reason)}`);
  if (report.offered > 0) lines.push('in the promoted region: ringstore dr lost, then dr restore or dr discard each key');
  return lines.join('\n');
}

/**
 * A page of lost keys as a table: the lost version, whether its value was offered back, the version held now.
 *
 * @example
 * ```ts
 * console.log(formatLostKeys((await backupAdmin.lostKeys()).entries));
 * ```
 */
export function formatLostKeys(entries: readonly LostKey[]): string {
  if (entries.length === 0) return 'no lost keys';
  const rows = [['NAMESPACE', 'KEY', 'LOST', 'WRITTEN', 'OFFER', 'NOW', 'TXID']];
  for (const lost of entries) {
    const offer = lost.deleted ? 'delete' : !lost.offer.needed ? 'empty' : lost.offer.present ? `${lost.offer.size ?? 0} B` : 'none';
    const now = `${lost.currentVersion}${lost.superseded ? ' (superseded)' : ''}`;
    // A lost notice: a key-sync write whose version never reached the backup (restored or discarded as version 0).
    const version = lost.possiblyNeverAcknowledged ? '0 (notice)' : String(lost.version);
    rows.push([lost.namespace, showKey(lost.key), version, lost.writtenAt, offer, now, lost.txid ?? '-']);
  }
  return table(rows);
}
