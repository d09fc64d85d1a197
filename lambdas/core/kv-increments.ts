// Atomic increments (POST /v1/kv/{key}/increment): a counter's decimal text is read from the key's owner and its
// sum written back as the key's next version by the KV write path (kv-writes.ts: routed, fenced, versioned, cached,
// replicated as a PUT), on the condition that the key is still as read. A writer that lost the race reads again,
// so concurrent increments never lose one.
import { type Conditions, failureOf, planWrite } from './conditions';
import { sha256Hex } from './digest';
import { isRingstoreError, PreconditionFailedError, RingstoreError } from './errors';
import type { Clock, IdSource, ItemWrite, StoredItem } from '../ports';
import type { KvReader } from './kv-reads';
import { guardOf, type KvWriter, type WriteAck, type WriteGuard } from './kv-writes';
import { validateKey } from './validation';
import type { WriteHooks, WriteSettings } from './write-hooks';

/**
 * Rounds of read and conditional write one increment makes before it answers 409: each round one of the key's
 * concurrent writers wins, so this many increments of one key at once all get through.
 */
export const incrementAttemptsMax = 10;

/** The longest pause before an increment's next round; the pause is random below it, doubling from 2 ms. */
export const incrementBackoffMsMax = 50;

/** What an increment stores: the sum as decimal text. */
export const counterContentType = 'text/plain';

/** Characters of a counter as stored: a sign, 16 digits of a safe integer, and blanks around them (`42\n`). */
const counterCharsMax = 24;

export interface IncrementInput extends Conditions, WriteSettings {
  /** What is added: a safe integer, negative to decrement. */
  by: number;
}

export interface IncrementAck extends WriteAck {
  /** The counter after this increment. */
  value: number;
}

export interface KvIncrementsDeps {
  reader: Pick<KvReader, 'readLive'>;
  writer: Pick<KvWriter, 'writeContent'>;
  hooks: Pick<WriteHooks, 'assertWritable'>;
  clock: Pick<Clock, 'nowMs'>;
  /** The randomness of the pause between rounds (the core draws none itself). */
  ids: IdSource;
  limits: { keyBytesMax: number; entityTagsMax: number };
  /** Waits between rounds; absent: the next round starts at once. */
  sleep?: (ms: number) => Promise<void>;
}

export class KvIncrements {
  constructor(private readonly deps: KvIncrementsDeps) {}

  /**
   * Adds `by` to the key's counter (a missing key counts as 0) as one write of the key. The client's conditions
   * are judged against the key as read, like a PUT's: a failed one is 412 and nothing is written.
   */
  async increment(namespace: string, key: string, input: IncrementInput): Promise<IncrementAck> {
    const { limits, hooks, writer } = this.deps;
    validateKey(key, limits);
    assertBy(input.by);
    // Conditions no state of the key can satisfy are refused before anything is read, as a PUT's are.
    guardOf(planWrite(key, input, 'put', limits.entityTagsMax), input, 'put');
    await hooks.assertWritable();
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.readCurrent(namespace, key);
      const failure = failureOf(key, input, 'put', current, Math.floor(this.deps.clock.nowMs() / 1000));
      if (failure) throw failure;
      const value = nextValue(key, current, input.by);
      try {
        const ack = await writer.writeContent(namespace, key, unchangedSince(current), counterContent(value, current), input);
        return { ...ack, value };
      } catch (error) {
        // The key changed since it was read (another increment won the round): read it again.
        if (!(error instanceof PreconditionFailedError)) throw error;
        if (attempt >= incrementAttemptsMax) {
          throw new RingstoreError('txn.conflict', `key ${key} is being written by others at the same time; nothing was written; retry`, {
            retryable: true,
            details: { key, attempts: attempt },
          });
        }
        await this.deps.sleep?.(this.pauseMs(attempt));
      }
    }
  }

  /** The owner's live item, strongly (the counter must be its newest value); undefined when absent, deleted or expired. */
  private async readCurrent(namespace: string, key: string): Promise<StoredItem | undefined> {
    try {
      return await this.deps.reader.readLive(namespace, key, 'strong');
    } catch (error) {
      if (isRingstoreError(error, 'kv.notFound')) return undefined;
      throw error;
    }
  }

  /** Full jitter: the increments of one key that lost a round together must not meet again in the next. */
  private pauseMs(attempt: number): number {
    return (randomOf(this.deps.ids.newId()) % Math.min(incrementBackoffMsMax, 2 ** attempt)) + 1;
  }
}

/** A number drawn from a fresh id (a UUID v4 in production): its last 32 bits. */
function randomOf(id: string): number {
  const hex = id.replace(/[^0-9a-f]/gi, '').slice(-8);
  return Number.parseInt(hex, 16) || 0;
}

/** The write's own guard: the key still at the version read, or still absent; the client's conditions held then. */
function unchangedSince(current: StoredItem | undefined): WriteGuard {
  return {
    precondition: current ? { kind: 'versionIn', versions: [current.version] } : { kind: 'absent' },
    // None to explain a failure with: a failed guard means another writer won, and the round is made again.
    conditions: {},
    kind: 'put',
  };
}

function assertBy(by: number): void {
  if (!Number.isSafeInteger(by)) {
    throw new RingstoreError('request.invalid', `by must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`, {
      details: { field: 'by' },
    });
  }
}

/** The counter after adding `by` to what `current` holds (0 when absent); 409 when that is no integer or past the safe ones. */
export function nextValue(key: string, current: StoredItem | undefined, by: number): number {
  const now = current === undefined ? 0 : counterOf(key, current);
  const next = now + by;
  if (!Number.isSafeInteger(next)) {
    throw new RingstoreError(
      'kv.outOfRange',
      `key ${key} holds ${now}; adding ${by} would leave the safe integers (±${Number.MAX_SAFE_INTEGER}); nothing was written`,
      { details: { key, current: now, by, limit: Number.MAX_SAFE_INTEGER } },
    );
  }
  return next;
}

/** The integer a stored value spells in decimal (blanks around it allowed, as `echo 42` leaves them). */
function counterOf(key: string, item: StoredItem): number {
  const text = item.value !== undefined && item.size <= counterCharsMax ? utf8(item.value) : undefined;
  const spelled = text !== undefined && /^\s*[+-]?\d+\s*$/.test(text) ? Number(text.trim()) : undefined;
  if (spelled === undefined) {
    const shown = text === undefined ? `${item.size} bytes of ${item.contentType}` : JSON.stringify(text);
    throw new RingstoreError('kv.notAnInteger', `key ${key} holds ${shown}, not a decimal integer; nothing was written`, {
      details: { key, contentType: item.contentType, size: item.size },
    });
  }
  if (!Number.isSafeInteger(spelled)) {
    throw new RingstoreError('kv.outOfRange', `key ${key} holds ${text!.trim()}, past the safe integers; nothing was written`, {
      details: { key, limit: Number.MAX_SAFE_INTEGER },
    });
  }
  return spelled;
}

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The counter as stored: its decimal text, keeping the key's expiry. */
function counterContent(value: number, current: StoredItem | undefined): NonNullable<ItemWrite['content']> {
  const bytes = new TextEncoder().encode(String(value));
  return {
    contentType: counterContentType,
    size: bytes.byteLength,
    sha256: sha256Hex(bytes),
    value: bytes,
    expiresAtSeconds: current?.expiresAtSeconds,
  };
}
