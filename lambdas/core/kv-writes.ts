// KV writes (docs/consistency.md): a versioned write of the key's owner through the range router, written
// through the cache, copied to the replicas before a strong write's acknowledgement; what a capability adds
// around it (DR, quotas) comes in as hooks (write-hooks.ts).
import { type Conditions, failureOf, planWrite, type WriteKind, type WritePlan } from './conditions';
import { PreconditionFailedError, RingstoreError, invariant, isRingstoreError, unexpected } from './errors';
import { cacheEntryOf, type IntentResolver } from './intents';
import type {
  BlobStore,
  Clock,
  Consistency,
  FaultInjector,
  IdSource,
  ItemWrite,
  NoticeContent,
  LockedItem,
  ShardHealthStore,
  StoredItem,
  ValueCache,
  WritePrecondition,
  WriteResult,
} from '../ports';
import { sha256Hex } from './digest';
import { tombstoneRetentionSeconds } from './item';
import type { KvReader } from './kv-reads';
import type { RangeRouter } from './range-router';
import type { ReplicationService } from './replication';
import { tokenOf } from './ring';
import { validateKey } from './validation';
import type { OwnerWriter, WriteHooks, WriteSettings } from './write-hooks';
import { blobPrefixes } from '../../schemas/topology';

/** Plain writes that meet a transaction's intent resolve it and try again, this many times in all. */
export const intentWriteAttemptsMax = 3;

export interface KvWriteLimits {
  keyBytesMax: number;
  valueBytesMax: number;
  directBodyBytesMax: number;
  inlineValueBytesMax: number;
  ttlSecondsMax: number;
  entityTagsMax: number;
}

export interface KvWriterDeps {
  router: RangeRouter;
  /** A delete no key state allows reads the key to say which failure it is. */
  reader: Pick<KvReader, 'readLive'>;
  owners: OwnerWriter;
  hooks: WriteHooks;
  blobs: Pick<BlobStore, 'put' | 'delete'>;
  clock: Pick<Clock, 'nowMs'>;
  ids: IdSource;
  limits: KvWriteLimits;
  /** Strong writes fan out through it. */
  replication: Pick<ReplicationService, 'fanOut'>;
  /** An owner that cannot be reached is marked, as a replica is. */
  health: Pick<ShardHealthStore, 'markUnavailable'>;
  /** Written through on every write; absent: no cache. */
  cache?: ValueCache;
  /** Crash points (test runs only). */
  faults?: FaultInjector;
  /** Resolves transactions' intents a write meets (absent: intents are not expected). */
  intents?: IntentResolver;
}

export interface PutInput extends Conditions, WriteSettings {
  value: Uint8Array;
  contentType: string;
  ttlSeconds?: number;
}

export interface DeleteInput extends Conditions, WriteSettings {}

export interface WriteAck {
  key: string;
  version: number;
  consistency: Consistency;
  /** Shards that held this version when the write was acknowledged (strong writes; the owner included). */
  copies?: number;
}

/** A write's precondition with the conditions it came from, which explain a failure. */
export interface WriteGuard {
  precondition: WritePrecondition;
  conditions: Conditions;
  kind: WriteKind;
}

export class KvWriter {
  constructor(private readonly deps: KvWriterDeps) {}

  async put(namespace: string, key: string, input: PutInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.hooks.assertWritable();
    const { limits } = this.deps;
    const size = input.value.byteLength;
    if (size > limits.directBodyBytesMax) {
      throw new RingstoreError(
        'kv.valueTooLarge',
        `a direct PUT body is at most ${limits.directBodyBytesMax} bytes (got ${size}); ` +
          `upload larger values (up to ${limits.valueBytesMax} bytes) with POST /v1/kv/{key}/uploads, as the SDK and CLI do`,
        { details: { size, limit: limits.directBodyBytesMax, uploadFlow: 'POST /v1/kv/{key}/uploads' } },
      );
    }
    const plan = planWrite(key, input, 'put', limits.entityTagsMax);
    const expiresAtSeconds = this.expiresAt(input.ttlSeconds);
    const guard = guardOf(plan, input, 'put');
    const content = { contentType: input.contentType, size, sha256: sha256Hex(input.value), expiresAtSeconds };
    if (size <= limits.inlineValueBytesMax) {
      return this.writeContent(namespace, key, guard, { ...content, value: input.value }, input);
    }
    // Larger values go to S3 first, under a fresh key, so the item switches from one complete value to another.
    const objectKey = this.blobKey(namespace);
    await this.deps.blobs.put(objectKey, input.value, input.contentType);
    return this.writeContent(namespace, key, guard, { ...content, blob: { objectKey } }, input);
  }

  async delete(namespace: string, key: string, input: DeleteInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.hooks.assertWritable();
    const plan = planWrite(key, input, 'delete', this.deps.limits.entityTagsMax);
    if (plan.kind === 'refuseByKeyState') {
      // Nothing can be deleted: a strong read tells which failure it is (readLive is the 404 when absent).
      const item = await this.deps.reader.readLive(namespace, key, 'strong');
      const failure = failureOf(key, input, 'delete', item, this.nowSeconds());
      invariant(failure, `a delete under If-None-Match: * fails on a live key (${key})`);
      throw failure;
    }
    return this.writeContent(namespace, key, guardOf(plan, input, 'delete'), undefined, input);
  }

  /**
   * Stores `content` (undefined: a tombstone) as the key's next version on its owner, then: the hooks, the
   * cache, the replaced blob removed; a strong write's copies on the replicas. Acknowledged once all hold.
   */
  async writeContent(
    namespace: string,
    key: string,
    guard: WriteGuard,
    content: ItemWrite['content'],
    settings: WriteSettings,
  ): Promise<WriteAck> {
    const { faults, hooks } = this.deps;
    const consistency = settings.consistency ?? 'eventual';
    const times = this.writeTimes();
    // A DR key-sync write's notice travels beside the owner write (docs/dr.md), under one write id for every attempt.
    const announced = hooks.announce?.({ namespace, key, writtenAtMs: times.modifiedAtMs, content: noticeContentOf(content) }, settings);
    const first: ItemWrite = {
      namespace,
      key,
      token: tokenOf(namespace, key),
      content,
      precondition: guard.precondition,
      ...times,
      ...(announced ? { writeId: announced.writeId } : {}),
    };
    let routed: Awaited<ReturnType<RangeRouter['ownerWrite']>>;
    try {
      routed = await this.deps.router.ownerWrite(
        first,
        () => ({ ...first, ...this.writeTimes() }),
        (table, write) => this.writeOwner(table, write, guard, settings),
      );
    } catch (error) {
      // Not acknowledged, whether or not it was stored: the backup need not wait for it.
      if (announced) await announced.withdraw().catch(() => undefined);
      throw error;
    }
    const { result, replicas, backfilling, listedOn, write } = routed;
    faults?.reach('write.afterOwner');
    const item = storedItemOf(write, result.version);
    // Awaited before the acknowledgement; marked handled now so a refusal while the cache write runs is not an
    // unhandled rejection.
    const stored = hooks.stored(item, settings, announced);
    stored.catch(() => undefined);
    await this.deps.cache?.put(namespace, key, cacheEntryOf(item));
    const replacedBlob = result.previous?.blob?.objectKey;
    // Best effort: an object left behind by a failed delete costs storage, never correctness.
    if (replacedBlob) await this.deps.blobs.delete(replacedBlob).catch(() => undefined);
    if (consistency === 'eventual' || replicas.length === 0) {
      await stored;
      await hooks.assertWritable();
      return { key, version: result.version, consistency };
    }
    // Strong: acknowledged when the owner and at least one replica hold the version; every other
    // replica holds it too or has a hint that replays it before that replica serves again.
    const [{ holders, outcomes }] = await Promise.all([this.deps.replication.fanOut(item, replicas, backfilling, listedOn), stored]);
    if (holders < 2) {
      throw new RingstoreError(
        'shard.unavailable',
        `no replica of ${key} could take version ${result.version}: the write is not acknowledged ` +
          '(the owner holds it and replicates it when a replica returns; retry, or read strongly to see whether it applied)',
        { retryable: true, details: { version: result.version, replicas: outcomes } },
      );
    }
    await hooks.assertWritable();
    return { key, version: result.version, consistency, copies: holders };
  }

  /** When a key written now with `ttlSeconds` expires (epoch seconds); undefined without one. */
  expiresAt(ttlSeconds: number | undefined): number | undefined {
    if (ttlSeconds === undefined) return undefined;
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > this.deps.limits.ttlSecondsMax) {
      throw new RingstoreError('kv.ttlInvalid', `ttlSeconds must be an integer from 1 to ${this.deps.limits.ttlSecondsMax}`, {
        details: { field: 'ttlSeconds' },
      });
    }
    // Rounded up: a key lives at least ttlSeconds (at most one second more), never less.
    return Math.ceil(this.deps.clock.nowMs() / 1000) + ttlSeconds;
  }

  /** A fresh object key for a value kept in S3. */
  blobKey(namespace: string): string {
    return `${blobPrefixes.blobs}${namespace}/${this.deps.ids.newId()}`;
  }

  /**
   * The owner's write (or a charged one: the owner writer decides); a transaction's intent in the way is
   * resolved first (a pending one: 409, retryable). A failure is the client's answer.
   */
  private async writeOwner(table: string, write: ItemWrite, guard: WriteGuard, settings: WriteSettings): Promise<WriteResult> {
    const { faults, blobs, health, clock } = this.deps;
    try {
      faults?.reach('write.beforeOwner');
      return await this.resolvingIntents(table, write, guard, settings);
    } catch (error) {
      if (write.content?.blob) await blobs.delete(write.content.blob.objectKey).catch(() => undefined);
      // An owner that cannot be reached is marked, as a replica is (throttling is not an outage): eventual
      // reads skip it, and with automatic failover on, the mark starts its failover.
      if (isRingstoreError(error, 'shard.unavailable')) {
        await health.markUnavailable(table, error.message, clock.nowMs()).catch(() => undefined);
      }
      throw error;
    }
  }

  /** The owner writer's outcome as the write's result, or thrown as the client's answer: 412, 404 or 409. */
  private async resolvingIntents(table: string, write: ItemWrite, guard: WriteGuard, settings: WriteSettings): Promise<WriteResult> {
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.deps.owners.write(table, write, settings);
      switch (outcome.outcome) {
        case 'written':
          return outcome;
        case 'preconditionFailed':
          throw (
            failureOf(write.key, guard.conditions, guard.kind, outcome.current, write.nowSeconds) ??
            new PreconditionFailedError(`condition failed for ${write.key}`)
          );
        case 'locked':
          await this.resolveLock(table, write.key, outcome.current, attempt);
          break;
        default:
          unexpected(outcome, 'write outcome');
      }
    }
  }

  /** Resolves the intent a write met, for its next attempt; throws 409 when it is pending or the attempts are spent. */
  private async resolveLock(table: string, key: string, current: LockedItem, attempt: number): Promise<void> {
    if (!this.deps.intents || attempt >= intentWriteAttemptsMax) {
      throw new RingstoreError('txn.conflict', `key ${key} is locked by transaction ${current.intent.txid}`, { retryable: true });
    }
    const resolution = await this.deps.intents.resolve(table, current);
    if (resolution.state === 'pending') {
      throw new RingstoreError('txn.conflict', `key ${key} is locked by transaction ${resolution.record.txid}; retry`, {
        retryable: true,
        details: { key, txid: resolution.record.txid },
      });
    }
  }

  /** When a write is made: its stored time (ms) and the second its conditions are judged at. */
  private writeTimes(): { modifiedAtMs: number; nowSeconds: number } {
    const modifiedAtMs = this.deps.clock.nowMs();
    return { modifiedAtMs, nowSeconds: Math.floor(modifiedAtMs / 1000) };
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

/** The guard of a write that may happen; a plan no key state satisfies is refused here, before any blob is stored. */
export function guardOf(plan: WritePlan, conditions: Conditions, kind: WriteKind): WriteGuard {
  if (plan.kind === 'refuse') throw plan.error;
  if (plan.kind !== 'write') throw new RingstoreError('internal', `a ${kind} cannot be planned as ${plan.kind}`);
  return { precondition: plan.precondition, conditions, kind };
}

const emptyContent = { contentType: '', size: 0, sha256: '' };

/** What a write's notice says of its content (docs/dr.md): as its key message will, but for the version. */
function noticeContentOf(content: ItemWrite['content']): NoticeContent {
  if (!content) return { ...emptyContent, deleted: true };
  const { contentType, size, sha256, expiresAtSeconds } = content;
  return { contentType, size, sha256, deleted: false, ...(expiresAtSeconds === undefined ? {} : { expiresAtSeconds }) };
}

/** The item the owner now holds after a write (as the owner table's stream would carry it). */
function storedItemOf(write: Omit<ItemWrite, 'precondition'>, version: number): StoredItem {
  const { namespace, key, token, content, modifiedAtMs } = write;
  const writeId = write.writeId === undefined ? {} : { writeId: write.writeId };
  if (!content) {
    return {
      namespace,
      key,
      token,
      version,
      modifiedAtMs,
      ...writeId,
      ...emptyContent,
      tombstone: true,
      expiresAtSeconds: write.nowSeconds + tombstoneRetentionSeconds,
    };
  }
  return {
    namespace,
    key,
    token,
    version,
    modifiedAtMs,
    ...writeId,
    tombstone: false,
    contentType: content.contentType,
    size: content.size,
    sha256: content.sha256,
    ...(content.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: content.expiresAtSeconds }),
    ...(content.value === undefined ? {} : { value: content.value }),
    ...(content.blob === undefined ? {} : { blob: { objectKey: content.blob.objectKey } }),
  };
}
