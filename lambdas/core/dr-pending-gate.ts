// Reads in the backup region (docs/dr.md): a key with a write ahead of its copy is answered "pending" (after a
// bounded wait for the value), a key lost in a disaster is refused, and any other key is served.
import { keyHashOf } from './dr-messages';
import { RingstoreError } from './errors';
import type { Clock, FaultInjector, PendingEntry, PendingStore, StoredItem } from '../ports';

/** `version` undefined: a write notice's, whose version was never known here (docs/dr.md). */
export type GateVerdict =
  | { kind: 'serve' }
  | { kind: 'pending'; version?: number; writtenAtMs: number }
  | { kind: 'lost'; version?: number; txid?: string; writtenAtMs: number };

/**
 * Whether the copy a backup read found may be served, given the key's pending entries read before it.
 * The newest entry ahead of the copy decides: still pending, the read waits for it; lost, the key is
 * refused. Entries the copy has caught up with (applied, or superseded by a newer write) are no bar. A write
 * notice is ahead of any copy and newer than any numbered entry: its version is not known yet.
 */
export function gateVerdict(
  entries: readonly PendingEntry[],
  item: StoredItem | undefined,
  options: { promoted?: boolean } = {},
): GateVerdict {
  const held = item?.version ?? 0;
  // In a promoted region only lost entries count: a pending one is a shipment of a write the old primary
  // never acknowledged, which the sweep drops.
  const counted = options.promoted ? entries.filter((entry) => entry.state === 'lost') : entries;
  let newest: PendingEntry | undefined;
  for (const entry of counted) {
    if (!entry.notice && entry.version <= held) continue;
    if (!newest || (!newest.notice && (entry.notice || entry.version > newest.version))) newest = entry;
  }
  if (!newest) return { kind: 'serve' };
  const version = newest.notice ? {} : { version: newest.version };
  if (newest.state === 'lost') {
    return { kind: 'lost', ...version, writtenAtMs: newest.writtenAtMs, ...(newest.txid ? { txid: newest.txid } : {}) };
  }
  return { kind: 'pending', ...version, writtenAtMs: newest.writtenAtMs };
}

/** How a verdict names the write it waits for or lost: by version, or as announced (a notice's). */
function writeNamed(verdict: { version?: number }): string {
  return verdict.version === undefined ? 'written (announced, its version not yet known)' : `written at version ${verdict.version}`;
}

function lostKeyError(key: string, verdict: Extract<GateVerdict, { kind: 'lost' }>): RingstoreError {
  return new RingstoreError(
    'dr.lost',
    `key ${key} was ${writeNamed(verdict)} in the primary region, and that write was lost in the disaster: ` +
      'this region refuses the key until it is written again (see GET /v1/admin/dr/report)',
    {
      details: {
        key,
        // 0: a write announced but never numbered, possibly never acknowledged (as the promotion report lists it).
        version: verdict.version ?? 0,
        ...(verdict.version === undefined ? { possiblyNeverAcknowledged: true } : {}),
        writtenAt: new Date(verdict.writtenAtMs).toISOString(),
        ...(verdict.txid ? { txid: verdict.txid } : {}),
      },
    },
  );
}

export interface PendingGateDeps {
  pending: PendingStore;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  faults?: FaultInjector;
  limits: { pendingWaitMs: number; pendingPollMs: number };
  /** Whether this region has been promoted (a cached read is fine: the state only moves forward). */
  promoted?: () => Promise<boolean>;
}

/** The backup region's read gate: every read of a key checks the key's pending entries first. */
export class PendingGate {
  constructor(private readonly deps: PendingGateDeps) {}

  /**
   * `read` (the key's copy in this region) if no write the backup knows of is ahead of it; else waits
   * up to the bounded time for the value, then answers 503 `replication.pending`. A lost key is 410.
   * The entries are read before the copy: a value applied in between clears its entry only after the
   * copy holds it, so a copy read later is at least as new as every entry that was missing.
   */
  async read(namespace: string, key: string, read: () => Promise<StoredItem | undefined>): Promise<StoredItem | undefined> {
    const { pending, clock, limits } = this.deps;
    const keyHash = keyHashOf(namespace, key);
    const started = clock.nowMs();
    for (;;) {
      // The deliberately broken mode the disaster suite must catch (tests only): no pending check.
      const entries = this.deps.faults?.isBroken('drServeWithoutPendingCheck') ? [] : await pending.entriesOf(keyHash);
      const item = await read();
      const verdict = gateVerdict(entries, item, { promoted: (await this.deps.promoted?.()) ?? false });
      if (verdict.kind === 'serve') return item;
      if (verdict.kind === 'lost') throw lostKeyError(key, verdict);
      const waitedMs = clock.nowMs() - started;
      if (waitedMs >= limits.pendingWaitMs) {
        throw new RingstoreError(
          'replication.pending',
          `key ${key} was ${writeNamed(verdict)} in the primary region and its value has not reached this region yet; retry`,
          { retryable: true, details: { key, ...(verdict.version === undefined ? {} : { version: verdict.version }), waitedMs } },
        );
      }
      await this.deps.sleep(Math.min(limits.pendingPollMs, limits.pendingWaitMs - waitedMs));
    }
  }

  /**
   * A promoted region's check of a key a transaction touches (its reads do not pass `read`): 410 if a
   * write lost in the disaster is ahead of the key's copy. `read` is called only when the key has lost entries.
   */
  async assertNotLost(namespace: string, key: string, read: () => Promise<StoredItem | undefined>): Promise<void> {
    const lost = (await this.deps.pending.entriesOf(keyHashOf(namespace, key))).filter((entry) => entry.state === 'lost');
    if (lost.length === 0) return;
    const verdict = gateVerdict(lost, await read(), { promoted: true });
    if (verdict.kind === 'lost') throw lostKeyError(key, verdict);
  }
}
