// Reconciliation after a disaster (docs/dr.md, "Reconciliation"): the old primary, once it returns, offers
// back the values it holds of the keys the promotion marked lost; an admin of the promoted region then
// restores each one as a new write of the key, or discards it. An offered value is never applied by
// itself: the value applier ignores a lost entry's value, and a restore is a write through the KV path,
// conditioned on the version the key holds, so it never lands silently over a newer write.
import { createHash } from 'node:crypto';
import { forAllBounded, forEachBounded } from './bounded';
import { keyHashOf, noticeValueObjectKeyOf, needsNoValue, valueObjectKeyOf } from './dr-messages';
import { PreconditionFailedError, RingstoreError } from './errors';
import { isLive } from './item';
import type { KvService } from './kv';
import { uploadKey } from './kv-uploads';
import type { BlobStore, Clock, IdSource, PendingEntry, PendingStore, PromotionLog, PromotionReport, StoredItem } from '../ports';

/** A key's copy in this region, read strongly from its owner (never through the read gate). */
export type OwnCopyReader = (namespace: string, key: string) => Promise<StoredItem | undefined>;

// ---------------------------------------------------------------------------------------------------
// The old primary: offering values back

export interface OfferDeps {
  /** The backup region's promotion log, read across the link: its report names the lost keys. */
  promotions: Pick<PromotionLog, 'latest'>;
  readOwn: OwnCopyReader;
  /** This region's blob bucket, where values over the inline limit live. */
  blobs: Pick<BlobStore, 'get'>;
  /** The backup region's bucket: offered values go where their shipment would have gone. */
  backupValues: Pick<BlobStore, 'put'>;
  clock: Clock;
  limits: {
    /** Keys read and uploaded at once. */
    concurrency: number;
    /** One call stops starting keys after this long (below the API's timeout); the caller continues from `next`. */
    timeBudgetMs: number;
    failuresReportedMax: number;
  };
}

export interface OfferRequest {
  /** Index in the report's list of lost keys to start from (a previous answer's `next`). */
  from?: number;
}

export interface OfferReport {
  promotionId: string;
  /** Keys the promotion marked lost, and how many of them its report lists (the offer works from the list). */
  lost: number;
  listed: number;
  from: number;
  /** Where the next call continues in the list, when this one stopped at its time budget. */
  next?: number;
  /** Values uploaded to the backup region's bucket. */
  offered: number;
  /** Keys this region no longer holds at the lost version (written since, or gone). */
  notHeld: number;
  /** Lost deletes and empty values: a restore applies them from the lost entry alone. */
  noValueNeeded: number;
  failed: number;
  failures: Array<{ namespace: string; key: string; version: number; reason: string }>;
}

type LostKey = NonNullable<PromotionReport['lost']>['keys'][number];
type OfferOutcome = 'offered' | 'notHeld' | 'noValueNeeded';

/** The demoted primary's side: uploads its copies of the lost keys to the promoted region's bucket. */
export class LostValueOffer {
  constructor(private readonly deps: OfferDeps) {}

  /**
   * Offers the value of each lost key this region holds at exactly the lost version, from `from` on,
   * until the list ends or the time budget is spent. Idempotent: an offered value goes to the same
   * object again. Works in a demoted region: it writes nothing here.
   */
  async offer(request: OfferRequest = {}): Promise<OfferReport> {
    const report = await this.deps.promotions.latest();
    if (!report) {
      throw new RingstoreError('dr.noPromotion', 'the backup region has not been promoted: no key was lost, there is nothing to offer');
    }
    if (report.status !== 'completed') {
      throw new RingstoreError(
        'dr.notPromoted',
        `the backup region's promotion ${report.id} is ${report.status}: the lost keys are known once it has completed`,
        { details: { promotion: report.id, status: report.status } },
      );
    }
    const keys = report.lost?.keys ?? [];
    const from = request.from ?? 0;
    if (!Number.isInteger(from) || from < 0 || from > keys.length) {
      throw new RingstoreError(
        'request.invalid',
        `from must be an integer from 0 to ${keys.length} (the report lists ${keys.length} lost keys)`,
        {
          details: { field: 'from' },
        },
      );
    }
    const result: OfferReport = {
      promotionId: report.id,
      lost: report.lost?.count ?? 0,
      listed: keys.length,
      from,
      offered: 0,
      notHeld: 0,
      noValueNeeded: 0,
      failed: 0,
      failures: [],
    };
    const { clock, limits } = this.deps;
    const deadline = clock.monotonicMs() + limits.timeBudgetMs;
    let next: number | undefined;
    await forEachBounded(keys.slice(from), limits.concurrency, async (lost, index) => {
      // Keys start in list order and the clock only moves on, so the keys offered are a prefix of the list.
      if (clock.monotonicMs() >= deadline) {
        next = Math.min(next ?? Infinity, from + index);
        return 'stop';
      }
      try {
        result[await this.offerOne(lost)] += 1;
      } catch (error) {
        result.failed += 1;
        if (result.failures.length < limits.failuresReportedMax) {
          const reason = error instanceof Error ? error.message : String(error);
          result.failures.push({ namespace: lost.namespace, key: lost.key, version: lost.version, reason });
        }
      }
      return 'continue';
    });
    return next === undefined ? result : { ...result, next };
  }

  /**
   * A lost version is offered when this region holds exactly it; a lost notice (its version never reached the
   * backup) when this region's copy carries its write id, i.e. is that write (docs/dr.md).
   */
  private async offerOne(lost: LostKey): Promise<OfferOutcome> {
    const item = await this.deps.readOwn(lost.namespace, lost.key);
    const notice = lost.possiblyNeverAcknowledged ? lost.writeId : undefined;
    if (!item || (notice === undefined ? item.version !== lost.version : item.writeId !== notice)) return 'notHeld';
    if (item.tombstone || item.size === 0) return 'noValueNeeded';
    const bytes = item.value ?? (item.blob ? await this.deps.blobs.get(item.blob.objectKey) : undefined);
    if (!bytes) throw new RingstoreError('internal', `version ${item.version} of ${item.key} has neither a value nor a blob`);
    // Named by this copy's sha256 (or a notice's write id): a copy that differs from the lost write (a stray
    // write at that version) lands beside it, where the promoted region does not look for it.
    const objectKey = notice === undefined ? valueObjectKeyOf(item) : noticeValueObjectKeyOf({ ...item, writeId: notice });
    await this.deps.backupValues.put(objectKey, bytes, item.contentType);
    return 'offered';
  }
}

// ---------------------------------------------------------------------------------------------------
// The promoted region: listing, restoring, discarding

export interface ReconcileDeps {
  pending: Pick<PendingStore, 'find' | 'entriesOf' | 'removeLost' | 'scanLost'>;
  /** This region's blob bucket: offered values arrive in it. */
  values: Pick<BlobStore, 'size' | 'get' | 'sha256' | 'copy' | 'delete'>;
  /** The KV write path: a restore is a write like any other (replicas, cache, listing). */
  kv: Pick<KvService, 'put' | 'delete' | 'commitUpload'>;
  readCurrent: OwnCopyReader;
  /** Whether this region has been promoted (read fresh). */
  promoted: () => Promise<boolean>;
  clock: Clock;
  ids: IdSource;
  limits: { directBodyBytesMax: number; listLimitMax: number; readConcurrency: number };
}

/** One lost write as an admin weighs it: what was lost, whether its value was offered back, what the key holds now. */
export interface LostKeyView {
  namespace: string;
  key: string;
  version: number;
  writtenAt: string;
  writtenAtMs: number;
  txid?: string;
  size: number;
  contentType: string;
  deleted: boolean;
  /** Whether a restore needs an offered value (deletes and empty values do not), and whether one is here. */
  offer: { needed: boolean; present: boolean; size?: number };
  /** The version this region holds (0: none). */
  currentVersion: number;
  /** The key was written at or past the lost version here: it reads at that write, and a restore would overwrite it. */
  superseded: boolean;
  /**
   * A key-sync write announced but never numbered (docs/dr.md): its owner write may have failed, and it has no
   * value to restore. Its `version` is 0; discard it, or write the key.
   */
  possiblyNeverAcknowledged?: true;
}

export interface ReconcileTarget {
  namespace: string;
  key: string;
  version: number;
}

export interface RestoreRequest extends ReconcileTarget {
  /** The version the key must hold now (a listing's `currentVersion`); default: any older than the lost one. */
  expectVersion?: number;
}

export interface ReconcileOutcome extends ReconcileTarget {
  action: 'restore' | 'discard';
  /** The version the key holds afterwards: a restore's new write, or what a discard left. */
  currentVersion: number;
}

/** Removes a key's lost entries and the values offered for them: the key was written in the promoted region. */
export async function settleLostKey(
  deps: { pending: Pick<PendingStore, 'entriesOf' | 'removeLost'>; values: Pick<BlobStore, 'delete'> },
  namespace: string,
  key: string,
): Promise<number> {
  const lost = (await deps.pending.entriesOf(keyHashOf(namespace, key))).filter((entry) => entry.state === 'lost');
  let removed = 0;
  for (const entry of lost) {
    if (await deps.pending.removeLost(entry.keyHash, entry.version)) removed += 1;
    // Best effort: an offered value left behind costs storage, never correctness (it is never applied).
    await deps.values.delete(valueObjectKeyOf(entry)).catch(() => undefined);
  }
  return removed;
}

/** The promoted region's side: lost keys listed with their offers, restored as new writes or discarded. */
export class LostKeyReconciler {
  constructor(private readonly deps: ReconcileDeps) {}

  /** One page of lost entries; a page may hold fewer than `limit` (a filtered scan), `cursor` continues. */
  async list(input: { limit: number; cursor?: string }): Promise<{ entries: LostKeyView[]; cursor?: string }> {
    const { limit } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > this.deps.limits.listLimitMax) {
      throw new RingstoreError('request.invalid', `limit must be an integer from 1 to ${this.deps.limits.listLimitMax}`, {
        details: { field: 'limit' },
      });
    }
    let page: Awaited<ReturnType<ReconcileDeps['pending']['scanLost']>>;
    try {
      page = await this.deps.pending.scanLost(limit, input.cursor);
    } catch (error) {
      if (input.cursor !== undefined && error instanceof SyntaxError) {
        throw new RingstoreError('request.invalid', 'cursor is not one this API returned', { details: { field: 'cursor' } });
      }
      throw error;
    }
    const views: LostKeyView[] = new Array<LostKeyView>(page.entries.length);
    const indexed = page.entries.map((entry, index) => ({ entry, index }));
    await forAllBounded(indexed, this.deps.limits.readConcurrency, async ({ entry, index }) => {
      views[index] = await this.view(entry);
    });
    return { entries: views, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) };
  }

  /**
   * Writes the offered value as a new write of the key (the next version here), only while the key
   * holds `expectVersion` (default: a version older than the lost one, i.e. nobody wrote it since);
   * then the lost entry is gone and the key reads at the restored value.
   */
  async restore(request: RestoreRequest): Promise<ReconcileOutcome> {
    await this.assertPromoted();
    const entry = await this.lostEntry(request);
    const newer = (await this.deps.pending.entriesOf(entry.keyHash)).find(
      (other) =>
        other.state === 'lost' && other.version !== entry.version && (other.notice ? !entry.notice : other.version > entry.version),
    );
    if (newer) {
      const newest = newer.notice ? 0 : newer.version;
      throw new RingstoreError(
        'dr.cannotRestore',
        `version ${entry.version} of ${entry.key} is not the newest lost write of the key (` +
          (newer.notice ? 'a write announced after it, never numbered, is: discard that one (version 0) first' : `version ${newest} is`) +
          '): restore that one, or discard this',
        { details: { newest } },
      );
    }
    const current = await this.deps.readCurrent(entry.namespace, entry.key);
    const held = current?.version ?? 0;
    // A lost notice still here means nobody wrote the key since the promotion (a write settles it): any version held.
    const writtenSince = entry.notice ? false : held >= entry.version;
    if (request.expectVersion === undefined ? writtenSince : held !== request.expectVersion) {
      throw new PreconditionFailedError(
        `${entry.key} holds version ${held} here` +
          (request.expectVersion === undefined
            ? `, written at or past the lost version ${entry.version} since the promotion: pass expectVersion ${held} to restore over it`
            : `, not ${request.expectVersion}: list the lost keys again`),
        { currentVersion: held, ...(request.expectVersion === undefined ? {} : { expectVersion: request.expectVersion }) },
      );
    }
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    // The condition the write holds to: nobody writes the key between this read and the write.
    const conditions = isLive(current, nowSeconds) ? { ifMatch: [held] } : { ifNoneMatch: '*' as const };
    const currentVersion = await this.write(entry, conditions, current, nowSeconds);
    await settleLostKey(this.deps, entry.namespace, entry.key);
    return { namespace: entry.namespace, key: entry.key, version: versionNamed(entry), action: 'restore', currentVersion };
  }

  /** Forgets a lost write: the key is then served at whatever this region holds. */
  async discard(target: ReconcileTarget): Promise<ReconcileOutcome> {
    await this.assertPromoted();
    const entry = await this.lostEntry(target);
    if (!(await this.deps.pending.removeLost(entry.keyHash, entry.version))) throw notLost(target);
    await this.deps.values.delete(offeredObjectKeyOf(entry)).catch(() => undefined);
    const current = await this.deps.readCurrent(entry.namespace, entry.key);
    return {
      namespace: entry.namespace,
      key: entry.key,
      version: target.version,
      action: 'discard',
      currentVersion: current?.version ?? 0,
    };
  }

  private async write(
    entry: PendingEntry,
    conditions: { ifMatch: number[] } | { ifNoneMatch: '*' },
    current: StoredItem | undefined,
    nowSeconds: number,
  ): Promise<number> {
    const { kv, values } = this.deps;
    const { namespace, key } = entry;
    if (entry.deleted) {
      // A lost delete: the key is absent here already, or it is deleted now.
      if (!isLive(current, nowSeconds)) return held(current);
      return (await kv.delete(namespace, key, { ...conditions, consistency: 'strong' })).version;
    }
    const ttl = this.ttlOf(entry, nowSeconds);
    const options = { contentType: entry.contentType, ...ttl, ...conditions, consistency: 'strong' as const };
    if (needsNoValue(entry)) return (await kv.put(namespace, key, { ...options, value: new Uint8Array() })).version;
    const objectKey = offeredObjectKeyOf(entry);
    const size = await values.size(objectKey);
    if (size === undefined) {
      throw new RingstoreError(
        'dr.noOffer',
        `no value of ${key} at ${entry.notice ? 'its lost notice' : `version ${entry.version}`} was offered back: ` +
          'run POST /v1/admin/dr/offer in the old primary region, or discard it',
        { details: { objectKey } },
      );
    }
    if (size <= this.deps.limits.directBodyBytesMax) {
      // Checked on the very bytes written: an object replaced between a check and a read cannot slip through.
      const bytes = await values.get(objectKey);
      this.assertIntact(entry, bytes.byteLength, createHash('sha256').update(bytes).digest('hex'));
      return (await kv.put(namespace, key, { ...options, value: bytes })).version;
    }
    this.assertIntact(entry, size, await values.sha256(objectKey));
    // The large-value path: the offered object becomes an upload, which the commit verifies (sha256) again.
    const uploadId = this.deps.ids.newId();
    await values.copy(objectKey, uploadKey(namespace, key, uploadId));
    try {
      return (await kv.commitUpload(namespace, key, uploadId, { ...options, sha256: entry.sha256 })).version;
    } catch (error) {
      await values.delete(uploadKey(namespace, key, uploadId)).catch(() => undefined);
      throw error;
    }
  }

  private ttlOf(entry: PendingEntry, nowSeconds: number): { ttlSeconds?: number } {
    if (entry.expiresAtSeconds === undefined) return {};
    const ttlSeconds = entry.expiresAtSeconds - nowSeconds;
    if (ttlSeconds < 1) {
      throw new RingstoreError(
        'dr.cannotRestore',
        `version ${entry.version} of ${entry.key} expired at ${new Date(entry.expiresAtSeconds * 1000).toISOString()}: discard it`,
        { details: { expiresAtSeconds: entry.expiresAtSeconds } },
      );
    }
    return { ttlSeconds };
  }

  private assertIntact(entry: PendingEntry, size: number, sha256: string): void {
    if (size === entry.size && sha256 === entry.sha256) return;
    throw new RingstoreError(
      'dr.corruptOffer',
      `the value offered for ${entry.key} at version ${entry.version} does not match the lost write (sha256 ${sha256}, ${size} bytes; ` +
        `expected ${entry.sha256}, ${entry.size} bytes): nothing was written; offer it again, or discard it`,
      { details: { expected: entry.sha256, actual: sha256, expectedSize: entry.size, actualSize: size } },
    );
  }

  private async view(entry: PendingEntry): Promise<LostKeyView> {
    const needed = !needsNoValue(entry);
    const [offeredSize, current] = await Promise.all([
      needed ? this.deps.values.size(offeredObjectKeyOf(entry)) : Promise.resolve(undefined),
      this.deps.readCurrent(entry.namespace, entry.key),
    ]);
    const currentVersion = current?.version ?? 0;
    return {
      namespace: entry.namespace,
      key: entry.key,
      version: versionNamed(entry),
      writtenAt: new Date(entry.writtenAtMs).toISOString(),
      writtenAtMs: entry.writtenAtMs,
      ...(entry.txid === undefined ? {} : { txid: entry.txid }),
      size: entry.size,
      contentType: entry.contentType,
      deleted: entry.deleted,
      offer: { needed, present: offeredSize !== undefined, ...(offeredSize === undefined ? {} : { size: offeredSize }) },
      currentVersion,
      // A notice's version is unknown: any write here since the promotion settled it already.
      superseded: !entry.notice && currentVersion >= entry.version,
      ...(entry.notice ? { possiblyNeverAcknowledged: true as const } : {}),
    };
  }

  /** The lost entry a target names; version 0 names the key's lost write notice (a write never numbered). */
  private async lostEntry(target: ReconcileTarget): Promise<PendingEntry> {
    const keyHash = keyHashOf(target.namespace, target.key);
    if (target.version === 0) {
      const notice = (await this.deps.pending.entriesOf(keyHash)).find(
        (entry) => entry.notice && entry.state === 'lost' && entry.namespace === target.namespace && entry.key === target.key,
      );
      if (!notice) throw notLost(target);
      return notice;
    }
    const entry = await this.deps.pending.find(keyHash, target.version);
    // The key hash is a prefix of sha256: the names are compared too.
    if (entry?.state !== 'lost' || entry.namespace !== target.namespace || entry.key !== target.key) throw notLost(target);
    return entry;
  }

  private async assertPromoted(): Promise<void> {
    if (await this.deps.promoted()) return;
    throw new RingstoreError(
      'dr.notPromoted',
      'this region has not been promoted: lost keys are restored or discarded once it takes writes (GET /v1/admin/dr/status)',
    );
  }
}

/** Where an entry's offered value is: by version, or a notice's by its write id. */
function offeredObjectKeyOf(entry: PendingEntry): string {
  return entry.notice && entry.writeId !== undefined
    ? noticeValueObjectKeyOf({ ...entry, writeId: entry.writeId })
    : valueObjectKeyOf(entry);
}

/** The version a lost entry is named by in the API: 0 for a notice, whose version never reached this region. */
function versionNamed(entry: PendingEntry): number {
  return entry.notice ? 0 : entry.version;
}

/** The version of a copy, 0 for none (isLive narrows a copy it refuses to `never`). */
function held(copy: StoredItem | undefined): number {
  return copy?.version ?? 0;
}

function notLost(target: ReconcileTarget): RingstoreError {
  return new RingstoreError(
    'dr.notLost',
    `${target.namespace}/${target.key} has no lost write at version ${target.version} (restored, discarded, written since, or never lost): ` +
      'see GET /v1/admin/dr/lost',
    { details: { namespace: target.namespace, key: target.key, version: target.version } },
  );
}
