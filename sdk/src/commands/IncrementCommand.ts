// POST /v1/kv/{key}/increment: adds to a key's decimal counter atomically, as one versioned write; answers the
// new value with the write's acknowledgement.

import { assertInteger, encodeKey } from '../encoding';
import { assertConsistency, type CommandContext, conditionHeaders, type Consistency, RingstoreCommand } from './command';
import { writeAckWire, type WriteAckWire, type WriteOutput } from './PutCommand';
import { readJson, type Reader, wire } from './response';

/**
 * Input of {@link IncrementCommand}.
 *
 * @example
 * ```ts
 * const input: IncrementCommandInput = { key: 'hits/home', by: 5, consistency: 'strong' };
 * ```
 */
export interface IncrementCommandInput {
  key: string;
  /** Added to the counter: a safe integer, negative to decrement (default 1). */
  by?: number;
  /** Increment only if the current version is this one. */
  ifMatch?: number;
  /** `'*'`: only if the key does not exist (it is created at `by`). */
  ifNoneMatch?: '*';
  consistency?: Consistency;
}

/**
 * Result of an increment: the write's acknowledgement and the counter's new value.
 *
 * @example
 * ```ts
 * const { value, version }: IncrementCommandOutput = await client.increment('hits/home');
 * ```
 */
export interface IncrementCommandOutput extends WriteOutput {
  /** The counter after this increment. */
  value: number;
}

/**
 * An increment's answer as the SDK reads it off the wire: a write's acknowledgement and the new value.
 *
 * @example
 * ```ts
 * const ack: IncrementAckWire = { key: 'k', version: 4, consistency: 'eventual', value: 12 };
 * ```
 */
export type IncrementAckWire = { [K in keyof (WriteAckWire & { value: number })]: (WriteAckWire & { value: number })[K] };

const valueWire = wire.object({ value: wire.number });

/**
 * Reader of an increment's answer (`IncrementAck` in the OpenAPI document): a write's acknowledgement and the value.
 *
 * @example
 * ```ts
 * const ack: IncrementAckWire = readJson(response, incrementAckWire);
 * ```
 */
export const incrementAckWire: Reader<IncrementAckWire> = {
  read: (value, path) => ({ ...writeAckWire.read(value, path), ...valueWire.read(value, path) }),
};

/**
 * Adds `by` (default 1) to a key's counter (`POST /v1/kv/{key}/increment`), atomically: concurrent increments
 * never lose one. The key holds the counter as decimal text (`text/plain`); a missing key counts as 0. A key
 * holding anything else is refused ({@link ConflictError} `kv.notAnInteger`), as is a sum past the safe integers
 * (`kv.outOfRange`). Never repeated automatically except after a 429: a retry could add twice.
 *
 * @example
 * ```ts
 * const { value } = await client.send(new IncrementCommand({ key: 'stock/42', by: -1, ifMatch: 7 }));
 * ```
 */
export class IncrementCommand extends RingstoreCommand<IncrementCommandInput, IncrementCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<IncrementCommandOutput> {
    const { key, by = 1, consistency } = this.input;
    const path = `/v1/kv/${encodeKey(key)}/increment`;
    assertInteger('by', by, -Number.MAX_SAFE_INTEGER);
    assertConsistency(consistency);
    const headers = { ...conditionHeaders(this.input), 'content-type': 'application/json' };
    const response = await transport.send(
      { method: 'POST', path, headers, query: { consistency }, body: JSON.stringify({ by }), authenticated: true, idempotent: false },
      signal,
    );
    return readJson(response, incrementAckWire);
  }
}
