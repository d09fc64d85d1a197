// `client.watch(prefix)`: the namespace's change feed as an async iterable. It follows the cursor page after page
// (long polls), resumes after transient failures from the last cursor it handed out, and drops the repeats an
// at-least-once feed may deliver, remembering the last version of a bounded number of keys.

import { assertWatchInput, type WatchChange, type WatchCommandInput, type WatchCommandOutput } from './commands/WatchCommand';
import { invalidInput } from './commands/command';
import { assertInteger } from './encoding';
import { RingstoreError } from './errors';
import { WATCH_REMEMBERED_KEYS_MAX, WATCH_WAIT_SECONDS_MAX } from './limits';

/**
 * How long a watch that does not long-poll (`waitSeconds: 0`) waits after an empty page before it reads again:
 * every request counts against the namespace's rate, so an idle feed is not read in a tight loop.
 */
const IDLE_READ_PAUSE_MS = 1000;

/**
 * Options of {@link RingstoreClient.watch}.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: WatchOptions = { cursor: saved, abortSignal: controller.signal };
 * ```
 */
export interface WatchOptions {
  /** Continue after this position (a change's or the stream's `cursor`); absent: from now. */
  cursor?: string;
  /** How long each request waits for a change when there is none yet (a long poll), 0 to 20; default 20. */
  waitSeconds?: number;
  /** Changes per request, 1 to 1000 (server default 100). */
  limit?: number;
  /**
   * Stops the watch: the iteration ends (it does not throw), also in the middle of a long poll or of a wait
   * between retries. As `abortSignal` is for every other call.
   */
  abortSignal?: AbortSignal;
  /** Keys whose last delivered version is remembered to drop repeats (default {@link WATCH_REMEMBERED_KEYS_MAX}). */
  rememberedKeysMax?: number;
  /** Called with each transient failure (network, 429, 5xx) before the watch waits and resumes, e.g. to log it. */
  onRetry?: (error: RingstoreError, retry: number) => void;
}

/**
 * What a {@link WatchStream} needs of its client: one page of the feed, and the jittered backoff between tries.
 *
 * @example
 * ```ts
 * const source: WatchSource = {
 *   page: (input, signal) => client.send(new WatchCommand(input), signal ? { abortSignal: signal } : {}),
 *   pause: async (retry, signal, atLeastMs) => defaultSleep(Math.max(atLeastMs, backoffDelayMs(retry, Math.random)), signal),
 * };
 * ```
 */
export interface WatchSource {
  page(input: WatchCommandInput, signal: AbortSignal | undefined): Promise<WatchCommandOutput>;
  pause(retry: number, signal: AbortSignal | undefined, atLeastMs: number): Promise<void>;
}

/** What is kept of a key's last delivered change to tell a repeat from a new change. */
interface Delivered {
  version: number;
  operation: WatchChange['operation'];
  modifiedAtMs: number | undefined;
}

function modifiedAtMsOf(change: WatchChange): number | undefined {
  const ms = change.modifiedAt === undefined ? Number.NaN : Date.parse(change.modifiedAt);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Whether `change` comes after `last`, the key's last delivered change. A key's versions only grow while the store
 * holds its item, so a version not above the last is a repeat, with two exceptions the feed's contract implies:
 * an `expire` carries the version it removed (it follows the put of that version), and once the store removed
 * the item (an expire, or a delete whose tombstone aged out after days) the key's versions start again from 1: a
 * lower version written after the removal is a new change, while a repeat of an older one was written before it.
 */
function follows(last: Delivered, change: WatchChange): boolean {
  if (change.version > last.version) return true;
  if (change.version === last.version) return change.operation === 'expire' && last.operation !== 'expire';
  if (last.operation === 'put') return false;
  const modifiedAtMs = modifiedAtMsOf(change);
  if (modifiedAtMs === undefined || last.modifiedAtMs === undefined) return last.operation === 'expire';
  return modifiedAtMs > last.modifiedAtMs;
}

/** The last delivered change of at most `max` keys; past it, the key delivered least recently is forgotten. */
class RecentVersions {
  // A Map iterates in insertion order: a key is re-inserted on each delivery, so the first is the least recent.
  private readonly byKey = new Map<string, Delivered>();

  constructor(private readonly max: number) {}

  /** Records `change` and answers true when it is new; false for a repeat (or an older version) of a key. */
  admit(change: WatchChange): boolean {
    const last = this.byKey.get(change.key);
    if (last !== undefined && !follows(last, change)) return false;
    this.byKey.delete(change.key);
    this.byKey.set(change.key, { version: change.version, operation: change.operation, modifiedAtMs: modifiedAtMsOf(change) });
    if (this.byKey.size > this.max) this.byKey.delete(this.byKey.keys().next().value!);
    return true;
  }
}

/** A failure the watch resumes after: what the SDK's retry policy calls transient (network, 429, 5xx). */
function isResumable(error: unknown): error is RingstoreError {
  return error instanceof RingstoreError && error.retryable;
}

/**
 * The changes of a namespace's keys under a prefix, as {@link RingstoreClient.watch} returns them: iterate it with
 * `for await`. It reads the feed page after page with long polls, and
 *
 * - **resumes by itself** after network failures, 429 and 5xx answers (after the client's own retries), waiting
 *   the jittered backoff (or the server's Retry-After), from the last cursor it handed out: nothing is skipped;
 * - **drops repeats**: delivery is at least once, so a change may come again; one whose version is not above the
 *   last the stream delivered for its key is not yielded (for the last {@link WATCH_REMEMBERED_KEYS_MAX} keys
 *   delivered; an `expire` of the delivered version, and a key's versions starting again after the store removed
 *   it, are new changes). A key's changes come in version order;
 * - **throws** {@link WatchCursorExpiredError} for a cursor older than the feed's retention (with `oldestCursor`),
 *   and every other error that retrying cannot help (a cursor Ringstore did not give or of another namespace, a
 *   refused API key) as the SDK's typed errors;
 * - **stops** when its `abortSignal` aborts (the loop ends without an error) or when the loop is left.
 *
 * {@link WatchStream.cursor} is the position after the last change handed out, moving on with empty pages too: save
 * it once a change is handled, and watch again from it later (in this process or another). Iterating the stream
 * again after leaving the loop continues from there. Repeats across processes are not dropped (the memory is this
 * stream's).
 *
 * @example
 * ```ts
 * const changes = client.watch('orders/', { cursor: saved });
 * for await (const change of changes) {
 *   console.log(change.operation, change.key, change.version);
 *   saved = changes.cursor;
 * }
 * ```
 */
export class WatchStream implements AsyncIterable<WatchChange> {
  private position: string | undefined;
  private readonly versions: RecentVersions;
  // A copy: the options are checked once, here, and a caller changing its object later changes nothing.
  private readonly options: WatchOptions;
  private iterating = false;

  constructor(
    private readonly source: WatchSource,
    /** The prefix watched ('' for the whole namespace). */
    readonly prefix: string,
    options: WatchOptions = {},
  ) {
    const { abortSignal: _signal, onRetry: _onRetry, rememberedKeysMax = WATCH_REMEMBERED_KEYS_MAX, ...input } = options;
    // Checked here, so that bad input throws where the watch is made rather than in the loop.
    assertWatchInput({ ...input, prefix });
    assertInteger('rememberedKeysMax', rememberedKeysMax, 1);
    this.options = { ...options };
    this.position = input.cursor;
    this.versions = new RecentVersions(rememberedKeysMax);
  }

  /**
   * Where the watch stands: after the last change handed out, or after the last page when it held no new change.
   * Undefined only before the first answer of a watch started without a cursor.
   *
   * @example
   * ```ts
   * await saveCursor(changes.cursor);
   * ```
   */
  get cursor(): string | undefined {
    return this.position;
  }

  /**
   * The changes, one at a time, for as long as the loop runs and the signal has not aborted.
   *
   * @example
   * ```ts
   * for await (const change of client.watch('')) console.log(change.key);
   * ```
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<WatchChange, void, undefined> {
    if (this.iterating) throw invalidInput('a watch stream is read by one loop at a time');
    this.iterating = true;
    try {
      yield* this.follow();
    } finally {
      this.iterating = false;
    }
  }

  /** Whether the caller stopped the watch (a call, not a narrowed field: the signal aborts while the loop awaits). */
  private stopped(): boolean {
    return this.options.abortSignal?.aborted === true;
  }

  private async *follow(): AsyncGenerator<WatchChange, void, undefined> {
    while (!this.stopped()) {
      const page = await this.nextPage();
      if (page === undefined) return;
      for (const change of page.changes) {
        const fresh = this.versions.admit(change);
        // Moved before the change is handed out, so that a cursor saved while handling it continues after it.
        this.position = change.cursor;
        if (fresh) yield change;
        if (this.stopped()) return;
      }
      this.position = page.cursor;
      if (page.changes.length === 0 && (this.options.waitSeconds ?? WATCH_WAIT_SECONDS_MAX) === 0) {
        if (!(await this.pause(1, IDLE_READ_PAUSE_MS))) return;
      }
    }
  }

  private request(): WatchCommandInput {
    const { waitSeconds = WATCH_WAIT_SECONDS_MAX, limit } = this.options;
    return {
      prefix: this.prefix,
      waitSeconds,
      ...(this.position === undefined ? {} : { cursor: this.position }),
      ...(limit === undefined ? {} : { limit }),
    };
  }

  /** The next page, after as many transient failures as it takes; undefined once the signal has aborted. */
  private async nextPage(): Promise<WatchCommandOutput | undefined> {
    const signal = this.options.abortSignal;
    for (let retry = 1; ; retry++) {
      try {
        return await this.source.page(this.request(), signal);
      } catch (error) {
        if (this.stopped()) return undefined;
        if (!isResumable(error)) throw error;
        this.options.onRetry?.(error, retry);
        if (!(await this.pause(retry, (error.retryAfterSeconds ?? 0) * 1000))) return undefined;
      }
    }
  }

  /** Waits before the next read; false when the signal aborted the wait (the watch then stops). */
  private async pause(retry: number, atLeastMs: number): Promise<boolean> {
    const signal = this.options.abortSignal;
    try {
      await this.source.pause(retry, signal, atLeastMs);
    } catch (error) {
      if (this.stopped()) return false;
      throw error;
    }
    return !this.stopped();
  }
}
