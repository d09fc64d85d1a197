// What a transaction step does on one key of a participant: lock it with an intent, read it as committed,
// see what it holds, and check that its owner did not move meanwhile (docs/transactions.md).
import type { Abort, Clock, ParticipantKey, ShardItemReads, ShardTransactions, StoredItem, TxnExecution } from '../ports';
import { RingstoreError, unexpected } from './errors';
import type { IntentResolver } from './intents';
import { isLive } from './item';
import type { RingSource } from './ring-source';
import { base64, intentContentOf } from './txn-content';
import type { Observed, TxnServiceLimits } from './txn-deps';
import { writeCountOf } from './txn-hooks';

export interface TxnKeyAccessDeps {
  shards: ShardItemReads & ShardTransactions;
  ring: RingSource;
  clock: Clock;
  intents: IntentResolver;
  limits: Pick<TxnServiceLimits, 'intentAttemptsMax' | 'txnReadBytesMax'>;
}

export class TxnKeyAccess {
  constructor(private readonly deps: TxnKeyAccessDeps) {}

  /**
   * Fencing (docs/failover.md): once a step's intents are placed or its keys read, the ring leased now
   * must still give `table` every key, unfenced. A lease holds at most `ringLeaseMs`, and a failover waits
   * that and its margin after fencing before it settles transactions and reads the candidates, so a step
   * that passes landed before it; one that fails aborts the transaction (retryable), and what it
   * left on a shard that lost the range is cleared when that shard rejoins.
   */
  async ownerMovedAbort(table: string, keys: readonly ParticipantKey[]): Promise<Abort | undefined> {
    if (keys.length === 0) return undefined;
    const { ring } = await this.deps.ring.lease();
    const moved = keys.find((key) => ring.isFenced(key.token) || ring.ownerOf(key.token).table !== table);
    if (!moved) return undefined;
    return {
      reason: 'unavailable',
      key: moved.key,
      message: `the owner of ${moved.key} is ${ring.rebalancing ? 'moving to another shard (a rebalance)' : 'being replaced by a failover'}; retry the transaction`,
    };
  }

  async lock(execution: TxnExecution, table: string, key: ParticipantKey): Promise<{ observed: Observed } | { abort: Abort }> {
    const { limits } = this.deps;
    for (let attempt = 0; attempt < limits.intentAttemptsMax; attempt += 1) {
      const placement = await this.deps.shards.placeIntent(table, {
        namespace: execution.namespace,
        key: key.key,
        token: key.token,
        intent: {
          txid: execution.txid,
          ...intentContentOf(key.write!),
          placedAtMs: this.deps.clock.nowMs(),
          writes: writeCountOf(execution),
        },
        mustBeLive: key.mustBeLive,
        nowSeconds: this.nowSeconds(),
        ...(key.expectVersion === undefined ? {} : { expectVersion: key.expectVersion }),
      });
      switch (placement.outcome) {
        case 'placed':
          return { observed: this.observe(execution, key.key, placement.previous) };
        case 'preconditionFailed':
          return { abort: this.preconditionAbort(key, placement.current) };
        case 'locked': {
          const resolution = await this.deps.intents.resolve(table, placement.current, execution);
          if (resolution.state === 'pending') {
            return {
              abort: {
                reason: 'conflict',
                key: key.key,
                message: `key ${key.key} is locked by an older transaction (${resolution.record.txid})`,
              },
            };
          }
          break;
        }
        default:
          unexpected(placement, 'intent placement outcome');
      }
    }
    return {
      abort: { reason: 'conflict', key: key.key, message: `key ${key.key} stayed contended after ${limits.intentAttemptsMax} attempts` },
    };
  }

  async readCommitted(execution: TxnExecution, table: string, key: ParticipantKey): Promise<{ observed: Observed } | { abort: Abort }> {
    let item = await this.deps.shards.get(table, execution.namespace, key.key, { consistent: true });
    if (item?.intent && item.intent.txid !== execution.txid) {
      const resolution = await this.deps.intents.resolve(table, item);
      // Pending: its write is not committed, so the committed content is what this transaction reads.
      if (resolution.state === 'gone') item = resolution.item;
    }
    const observed = this.observe(execution, key.key, item);
    if (key.expectVersion !== undefined && observed.version !== key.expectVersion) {
      return { abort: this.preconditionAbort(key, item) };
    }
    return { observed };
  }

  /**
   * `items` as their keys stand once every decided transaction's intent on them is resolved, as a reader
   * resolves one (rolled forward or cleared); undefined when an intent's transaction is still pending.
   */
  async withDecidedIntentsResolved(table: string, items: ReadonlyMap<string, StoredItem>): Promise<Map<string, StoredItem> | undefined> {
    const resolved = new Map(items);
    for (const [key, item] of items) {
      if (!item.intent) continue;
      const resolution = await this.deps.intents.resolve(table, item);
      if (resolution.state === 'pending') return undefined;
      if (resolution.item) resolved.set(key, resolution.item);
      else resolved.delete(key);
    }
    return resolved;
  }

  observe(execution: TxnExecution, key: string, item: StoredItem | undefined): Observed {
    // Read before the liveness guard, which narrows a dead item away.
    const storedVersion = item?.version ?? 0;
    if (!isLive(item, this.nowSeconds())) return { key, version: 0, storedVersion, found: false };
    // Only a key a `get` reads in its committed state needs its value carried to the answer.
    const needed = execution.reads.some((read) => read.key === key && read.from === 'committed');
    if (!needed) return { key, version: item.version, storedVersion: item.version, found: true };
    const bytes = item.value?.byteLength ?? 0;
    if (bytes > this.deps.limits.txnReadBytesMax || item.blob) {
      throw new RingstoreError(
        'request.tooLarge',
        `key ${key} holds ${item.size} bytes: a transaction reads values up to ${this.deps.limits.txnReadBytesMax} bytes`,
        {
          details: { field: 'ops', key },
        },
      );
    }
    return {
      key,
      version: item.version,
      storedVersion: item.version,
      found: true,
      valueBase64: base64(item.value ?? new Uint8Array(0)),
      contentType: item.contentType,
    };
  }

  preconditionAbort(key: ParticipantKey, current: StoredItem | undefined): Abort {
    const live = isLive(current, this.nowSeconds());
    if (key.expectVersion === undefined && key.mustBeLive) return { reason: 'notFound', key: key.key, message: `key ${key.key} not found` };
    const actual = live ? `version ${current.version}` : 'absent';
    return {
      reason: 'precondition',
      key: key.key,
      message: `key ${key.key} is ${actual}, not ${key.expectVersion === 0 ? 'absent' : `version ${key.expectVersion}`}`,
    };
  }

  nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}
