// The change feed (docs/watch.md). The shard streams' consumer (the replicator) appends each owner write to its
// namespace's feed: one entry per change, in one of `buckets` partitions chosen by the key's topic (its first path
// segment), at a position stamped by the appender's clock. A watcher reads its prefix's partitions from a cursor up
// to a bound that trails the clock by `settleMs`: an entry stamped before the bound was stored before a read at the
// bound could begin, unless its append took longer than the settle time, in which case the appender stamps it again
// (a repeated delivery, never a gap). Positions are one order across partitions, so a cursor is one position whatever
// the prefix, and it stays valid across failovers, rebalances and restarts: it names a time, not a shard.
import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { volumeNamespaceSuffix, watchDefaults } from '../../schemas/topology';
import { RingstoreError } from './errors';
import { carriesCommittedChange } from './replication';
import { inHistory, retryFrom, type StreamOwnership, type WeighingStop } from './stream-ownership';
import type { Clock, FeedEntry, FeedOperation, FeedStore, StoredItem } from '../ports';

/** The feed's settings (topology's watchDefaults, the retention and settle time configurable per deployment). */
export type WatchLimits = { readonly [Name in keyof typeof watchDefaults]: number };

// ---------------------------------------------------------------------------------------------- placement

/** A key's topic: its first path segment with its `/` (`orders/` of `orders/17`), or the whole key when it has none. */
export function topicOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash + 1);
}

function bucketOfTopic(topic: string, buckets: number): number {
  return createHash('md5').update(topic).digest().readUInt32BE(0) % buckets;
}

/** The feed partition of a key: its topic's, so a watcher of one topic reads one partition. */
export function bucketOfKey(key: string, buckets: number): number {
  return bucketOfTopic(topicOf(key), buckets);
}

/**
 * The partitions a watcher of `prefix` reads: its topic's alone when the prefix names one (it has a `/`), else every
 * partition (a prefix within a first segment, or none, matches topics that hash anywhere).
 */
export function bucketsOfPrefix(prefix: string, buckets: number): number[] {
  if (prefix.includes('/')) return [bucketOfTopic(topicOf(prefix), buckets)];
  return Array.from({ length: buckets }, (_, bucket) => bucket);
}

// ---------------------------------------------------------------------------------------------- positions

const msDigits = 15;
const counterDigits = 6;
const positionPattern = /^\d{15}(\.\d{6}\.[0-9a-f]{8}|~)$/;

/** The bound that sorts after every position stamped at or before `ms` (and before any stamped later). */
export function boundAtMs(ms: number): string {
  return `${String(Math.max(0, Math.floor(ms))).padStart(msDigits, '0')}~`;
}

/** The epoch ms a position or bound was stamped at. */
export function msOfPosition(position: string): number {
  return Number(position.slice(0, msDigits));
}

export function isPosition(text: string): boolean {
  return positionPattern.test(text);
}

/**
 * Stamps positions: a hybrid logical clock (the wall clock, never stepping back, with a counter within a
 * millisecond) and this appender's id, so positions are unique across appenders and ordered by time.
 */
export class FeedClock {
  private lastMs = 0;
  private counter = 0;
  readonly appenderId: string;

  constructor(
    private readonly clock: Clock,
    appenderId: string = randomBytes(4).toString('hex'),
  ) {
    this.appenderId = appenderId;
  }

  /** A position at `atMs` (the clock's now by default; later to stamp ahead of it), after every one stamped before. */
  stamp(atMs: number = this.clock.nowMs()): string {
    const nowMs = Math.floor(atMs);
    if (nowMs > this.lastMs) {
      this.lastMs = nowMs;
      this.counter = 0;
    } else if (++this.counter >= 10 ** counterDigits) {
      this.lastMs += 1;
      this.counter = 0;
    }
    return `${String(this.lastMs).padStart(msDigits, '0')}.${String(this.counter).padStart(counterDigits, '0')}.${this.appenderId}`;
  }
}

// ---------------------------------------------------------------------------------------------- cursors

const cursorVersion = 'w1';
const cursorCheckChars = 16;

interface CursorPayload {
  namespace: string;
  position: string;
}

/**
 * A cursor: the namespace and a position, with a check that detects a cursor edited or cut short. It grants
 * nothing: a watch reads only the caller's namespace, and any position in it within the retention is the caller's
 * to read, so the check is a digest rather than a secret's signature.
 */
export function encodeCursor(namespace: string, position: string): string {
  const payload = Buffer.from(JSON.stringify({ n: namespace, p: position })).toString('base64url');
  return `${cursorVersion}.${payload}.${cursorCheck(payload)}`;
}

function cursorCheck(payload: string): string {
  return createHash('sha256').update(`ringstore-watch-cursor\u0000${payload}`).digest('base64url').slice(0, cursorCheckChars);
}

function invalidCursor(reason: string): RingstoreError {
  return new RingstoreError('watch.cursorInvalid', `cursor is not a watch cursor Ringstore gave: ${reason}`, {
    details: { field: 'cursor' },
  });
}

export function decodeCursor(cursor: string): CursorPayload {
  const [version, payload, check, ...rest] = cursor.split('.');
  if (version !== cursorVersion || payload === undefined || check === undefined || rest.length > 0) {
    throw invalidCursor('it has not the form of one');
  }
  if (check !== cursorCheck(payload)) throw invalidCursor('its check does not match (edited or cut short)');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('its content is not readable');
  }
  const { n, p } = (decoded ?? {}) as { n?: unknown; p?: unknown };
  if (typeof n !== 'string' || typeof p !== 'string' || !isPosition(p)) throw invalidCursor('its content is not readable');
  return { namespace: n, position: p };
}

// ---------------------------------------------------------------------------------------------- appending

/** One record of a shard stream as the feed sees it. */
export interface FeedChange {
  /** The table whose stream carried it. */
  sourceTable: string;
  /** The new image of a write; the old image of a removal. */
  item: StoredItem;
  /** The version before the change, when the record carries the old image. */
  previousVersion?: number;
  /** The image is a copy (a replica's, a move's, a repair's): only the owner's writes are changes of the key. */
  copied: boolean;
  /** A removal by the store's TTL (DynamoDB's own deletion of an expired owner item). */
  expired?: boolean;
}

export interface FeedAppendResult {
  appended: number;
  /** Entries stamped again because their append outlasted the settle time (each a repeated delivery). */
  restamped: number;
  ignored: number;
  /** Changes this writer had appended already (a stream batch retried after another part of it failed): skipped. */
  alreadyAppended: number;
  /**
   * Writes a table made of a key whose range it no longer owned, which never reached the range's owner: refused to
   * their client, in no later read's history, so in no watcher's (StreamOwnership).
   */
  notInEffect: number;
  /** Index of the first change that could not be appended; the stream retries from there. */
  firstFailedIndex?: number;
  /** Set when the first change not appended lies in a range under a fence: it is weighed again once the fence lifts. */
  awaitingFence?: true;
}

export interface FeedWriterDeps {
  store: FeedStore;
  clock: Clock;
  limits: WatchLimits;
  /** Tells which writes are in their key's history (a former owner's refused write is in no watcher's). */
  ownership: Pick<StreamOwnership, 'weigh'>;
  feedClock?: FeedClock;
}

/** A change of a stream batch bound for the feed: its place in the batch and what it does to its key. */
interface FeedCandidate {
  index: number;
  change: FeedChange;
  operation: FeedOperation;
}

/** The change of a key an owner write or a TTL removal makes, or undefined for a copy, an intent, or a tombstone's removal. */
export function operationOf(change: FeedChange): FeedOperation | undefined {
  // A volume's blocks live in a keyspace no API key names (volumeNamespaceSuffix): no watcher could ask for them.
  if (change.copied || change.item.namespace.endsWith(volumeNamespaceSuffix)) return undefined;
  if (change.expired) return change.item.tombstone || change.item.version === 0 ? undefined : 'expire';
  if (!carriesCommittedChange(change)) return undefined;
  return change.item.tombstone ? 'delete' : 'put';
}

function optional<Name extends string, Value>(name: Name, value: Value | undefined): { [K in Name]?: Value } {
  return (value === undefined ? {} : { [name]: value }) as { [K in Name]?: Value };
}

/**
 * One change of one key: its version, and when it was written (a key's versions start again at 1 after an expiry or
 * an aged-out tombstone).
 */
function changeIdOf({ item }: FeedChange, operation: FeedOperation): string {
  return `${item.namespace}#${item.key}@${item.version}:${operation}:${item.modifiedAtMs ?? ''}`;
}

/** Appends the owner changes of a stream batch to the feed, in the batch's order. */
export class FeedWriter {
  private readonly feedClock: FeedClock;
  /**
   * The changes this writer appended lately. A stream batch is retried whole from its first failed record, whether
   * the replicas or the feed failed it; its changes already in the feed are not appended again (a repeat avoided, and
   * its write unit). Best effort: another instance, or a change forgotten, is appended again, a repeat the feed allows.
   */
  private readonly appendedLately: LRUCache<string, true>;

  constructor(private readonly deps: FeedWriterDeps) {
    this.feedClock = deps.feedClock ?? new FeedClock(deps.clock);
    this.appendedLately = new LRUCache({ max: deps.limits.appendedRememberedMax });
  }

  async append(changes: readonly FeedChange[]): Promise<FeedAppendResult> {
    const result: FeedAppendResult = { appended: 0, restamped: 0, ignored: 0, alreadyAppended: 0, notInEffect: 0 };
    const candidates: FeedCandidate[] = [];
    changes.forEach((change, index) => {
      const operation = operationOf(change);
      if (!operation) result.ignored += 1;
      else if (this.appendedLately.has(changeIdOf(change, operation))) result.alreadyAppended += 1;
      else candidates.push({ index, change, operation });
    });
    if (candidates.length === 0) return result;
    let fed: readonly FeedCandidate[];
    let stoppedAt: WeighingStop | undefined;
    try {
      ({ fed, stoppedAt } = await this.inEffect(candidates, result));
    } catch {
      return { ...result, firstFailedIndex: candidates[0]!.index };
    }
    const appended = await this.appendAll(fed, result);
    if (appended.firstFailedIndex !== undefined || stoppedAt === undefined) return appended;
    return { ...appended, ...retryFrom(stoppedAt) };
  }

  /**
   * The changes that are writes in their key's history, in order, up to the first that cannot be told yet (`stoppedAt`,
   * its index in the batch): a former owner's write that never reached the range's owner was refused to its client, and the new
   * owner may reuse its version with other contents, which a watcher that drops repeats by key and version would then
   * drop (StreamOwnership; docs/watch.md, "Ownership").
   */
  private async inEffect(
    candidates: readonly FeedCandidate[],
    result: FeedAppendResult,
  ): Promise<{ fed: FeedCandidate[]; stoppedAt?: WeighingStop }> {
    const { standings, stoppedAt } = await this.deps.ownership.weigh(candidates.map(({ change }) => change));
    const fed: FeedCandidate[] = [];
    standings.forEach((standing, position) => {
      if (inHistory(standing)) fed.push(candidates[position]!);
      else result.notInEffect += 1;
    });
    return { fed, ...(stoppedAt ? { stoppedAt: { ...stoppedAt, index: candidates[stoppedAt.index]!.index } } : {}) };
  }

  /** Appends `fed` in order, a request's worth at a time; on a failure, reports the first change not appended. */
  private async appendAll(fed: readonly FeedCandidate[], result: FeedAppendResult): Promise<FeedAppendResult> {
    if (fed.length === 0) return result;
    // One request's worth at a time, in the batch's order: each is stamped just before it is sent, and a key's
    // versions keep their order even when one request must be stamped again.
    for (let start = 0; start < fed.length; start += this.deps.limits.appendBatchMax) {
      const part = fed.slice(start, start + this.deps.limits.appendBatchMax);
      try {
        result.restamped += await this.appendInOrder(part);
      } catch {
        return { ...result, firstFailedIndex: part[0]!.index };
      }
      result.appended += part.length;
      for (const { change, operation } of part) this.appendedLately.set(changeIdOf(change, operation), true);
    }
    return result;
  }

  /**
   * Appends entries stamped just before they are sent. An append that outlasts the settle time (less the clocks'
   * allowed skew) may have landed behind a watcher's bound, so its entries are stamped again and appended again:
   * ahead of the clock by twice what the slow append took, so that readers do not pass the new positions before
   * they land even when the store stays as slow (an engine under load), and the restamps end. Answers how many
   * entries were stamped again.
   */
  private async appendInOrder(part: readonly FeedCandidate[]): Promise<number> {
    const { settleMs, skewAllowanceMs, retentionSeconds } = this.deps.limits;
    let restamped = 0;
    let leadMs = 0;
    for (let attempt = 0; ; attempt++) {
      const stampedAtMs = this.deps.clock.nowMs();
      const entries = part.map(({ change, operation }) => this.entryOf(change, operation, stampedAtMs + leadMs));
      await this.deps.store.append(entries, retentionSeconds);
      const tookMs = this.deps.clock.nowMs() - stampedAtMs;
      if (tookMs <= leadMs + settleMs - skewAllowanceMs) return restamped;
      if (attempt + 1 >= watchDefaults.restampAttemptsMax) {
        throw new RingstoreError('throttled', `feed appends keep outlasting the settle time (the last took ${tookMs} ms)`, {
          retryable: true,
        });
      }
      restamped += entries.length;
      leadMs = Math.min(2 * tookMs, watchDefaults.restampLeadMaxMs);
    }
  }

  private entryOf(change: FeedChange, operation: FeedOperation, atMs: number): FeedEntry {
    const { item } = change;
    const inline = operation === 'put' && item.value !== undefined && item.size <= this.deps.limits.inlineValueBytesMax;
    return {
      namespace: item.namespace,
      bucket: bucketOfKey(item.key, this.deps.limits.buckets),
      position: this.feedClock.stamp(atMs),
      key: item.key,
      version: item.version,
      operation,
      contentType: item.contentType,
      size: item.size,
      ...(inline ? { value: item.value } : {}),
      ...optional('txid', item.writtenBy?.txid),
      ...optional('modifiedAtMs', item.modifiedAtMs),
      ...optional('expiresAtSeconds', item.expiresAtSeconds),
    };
  }
}

// ---------------------------------------------------------------------------------------------- watching

export interface WatchRequest {
  /** Keys that start with it; empty: the whole namespace. */
  prefix: string;
  /** Where the last page ended; absent: from now. */
  cursor?: string;
  /** How long to wait for a first change when there is none yet (a long poll); 0 answers at once. */
  waitMs: number;
  limit: number;
}

/** One change as a watcher gets it, with the cursor that continues after it. */
export interface WatchChange {
  entry: FeedEntry;
  cursor: string;
}

export interface WatchPage {
  changes: WatchChange[];
  /** Where to continue from: after the last change, or after everything up to the bound read. */
  cursor: string;
}

export interface WatchServiceDeps {
  store: FeedStore;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  limits: WatchLimits;
}

export class WatchService {
  constructor(private readonly deps: WatchServiceDeps) {}

  /**
   * The changes of `namespace` after the cursor whose keys start with the prefix: at once if any, else within the wait.
   * Each read looks past the settled bound to the clock's edge and beyond (entries stamped ahead of the clock): an entry
   * seen there is not handed out yet, but tells when it settles, and the watcher reads again then rather than a
   * poll interval later. The delivery lag is the settle time, not the settle time and half a poll.
   */
  async watch(namespace: string, request: WatchRequest): Promise<WatchPage> {
    const { clock, limits } = this.deps;
    const startedMs = clock.nowMs();
    // From now: everything stamped from this millisecond on (a change stamped within it may be acknowledged after it).
    let after = request.cursor === undefined ? boundAtMs(startedMs - 1) : this.positionOf(namespace, request.cursor, startedMs);
    const buckets = bucketsOfPrefix(request.prefix, limits.buckets);
    const deadlineMs = clock.monotonicMs() + request.waitMs;
    for (;;) {
      const nowMs = clock.nowMs();
      const readAtMs = clock.monotonicMs();
      const settledTo = boundAtMs(nowMs - limits.settleMs);
      const read = await this.readOnce(namespace, buckets, request, after, settledTo, boundAtMs(nowMs + limits.restampLeadMaxMs));
      if (read.page.changes.length > 0) return read.page;
      after = decodeCursor(read.page.cursor).position;
      const leftMs = deadlineMs - clock.monotonicMs();
      if (leftMs <= 0) return read.page;
      // When the change seen settles, but not sooner than the reads' least interval (changes settling one after
      // another are then served together, a read each at most), nor later than the poll interval.
      const settlesInMs = read.nextSettlesAtMs === undefined ? Infinity : read.nextSettlesAtMs - clock.nowMs();
      const spacedInMs = readAtMs + limits.readIntervalMinMs - clock.monotonicMs();
      await this.deps.sleep(Math.max(1, Math.min(limits.pollMs, Math.max(settlesInMs, spacedInMs), leftMs)));
    }
  }

  /** The cursor's position, once it is shown to be this namespace's and within the retention. */
  private positionOf(namespace: string, cursor: string, nowMs: number): string {
    const decoded = decodeCursor(cursor);
    if (decoded.namespace !== namespace) {
      throw new RingstoreError('watch.cursorForeign', "cursor belongs to another namespace's feed", { details: { field: 'cursor' } });
    }
    const retainedFromMs = nowMs - this.deps.limits.retentionSeconds * 1000;
    if (msOfPosition(decoded.position) < retainedFromMs) {
      // A cursor a little after the retention's edge, so that it is still served when the client comes back with it.
      const oldest = encodeCursor(namespace, boundAtMs(retainedFromMs + this.deps.limits.expiredCursorGraceMs));
      throw new RingstoreError(
        'watch.cursorExpired',
        `cursor is older than the feed's retention (${this.deps.limits.retentionSeconds} s): changes after it may be gone; ` +
          'continue from oldestCursor (the oldest still served) or from now, and re-read the keys you follow',
        { details: { field: 'cursor', oldestCursor: oldest, retentionSeconds: this.deps.limits.retentionSeconds } },
      );
    }
    return decoded.position;
  }

  /**
   * One read of every partition of the prefix up to `lookTo`, merged in position order. The page holds what has
   * settled: it ends where every partition has been read in full (at the settled bound, or earlier where a partition
   * stopped early, its filtered pages bounded). Past it, the earliest entry read tells when the next one settles.
   */
  private async readOnce(
    namespace: string,
    buckets: readonly number[],
    request: WatchRequest,
    after: string,
    settledTo: string,
    lookTo: string,
  ): Promise<{ page: WatchPage; nextSettlesAtMs?: number }> {
    const { prefix: keyPrefix, limit } = request;
    const pages = await Promise.all(
      buckets.map((bucket) => this.deps.store.read({ namespace, bucket, after, upTo: lookTo, keyPrefix, limit })),
    );
    const readTo = pages.map((page) => page.readTo).reduce((least, position) => (position < least ? position : least), settledTo);
    const entries = pages.flatMap((page) => page.entries).sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    const settled = entries.filter((entry) => entry.position <= readTo).slice(0, limit);
    const unsettled = entries.find((entry) => entry.position > settledTo);
    const changes = settled.map((entry) => ({ entry, cursor: encodeCursor(namespace, entry.position) }));
    const end = settled.length === limit ? settled[settled.length - 1]!.position : readTo > after ? readTo : after;
    const page = { changes, cursor: encodeCursor(namespace, end) };
    return unsettled ? { page, nextSettlesAtMs: msOfPosition(unsettled.position) + this.deps.limits.settleMs } : { page };
  }
}
