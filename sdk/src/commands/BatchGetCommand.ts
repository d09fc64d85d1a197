// POST /v1/batch/get: up to 100 keys in one request, in request order; the values the answer does not carry
// inline (kept in S3, or past the answer's budget) are fetched here, so every found key comes with its bytes.

import { base64ToBytes, encodeKey } from '../encoding';
import { NotFoundError } from '../errors';
import { BATCH_GET_KEYS_MAX } from '../limits';
import type { HttpResponse } from '../transport';
import { assertConsistency, type CommandContext, type Consistency, invalidInput, RingstoreCommand } from './command';
import { GetCommand, type GetCommandOutput, valueOutput } from './GetCommand';
import { invalidResponse, isJsonObject, readJson, type Reader, wire, type WireOf } from './response';

/** Values fetched at once for one batch: those kept in S3, and those past the answer's budget. */
const FOLLOW_UPS_IN_FLIGHT = 4;

/**
 * Input of {@link BatchGetCommand}.
 *
 * @example
 * ```ts
 * const input: BatchGetCommandInput = { keys: ['users/1', 'users/2'], consistency: 'strong' };
 * ```
 */
export interface BatchGetCommandInput {
  /** 1 to {@link BATCH_GET_KEYS_MAX} distinct keys. */
  keys: readonly string[];
  /** As for `get`: default the namespace's read consistency. */
  consistency?: Consistency;
}

/**
 * One key of a batch: found, with what {@link GetCommand} returns for it, or not found.
 *
 * @example
 * ```ts
 * const item: BatchGetItem = output.items[0]!;
 * if (item.found) console.log(item.key, item.version, item.text());
 * ```
 */
export type BatchGetItem = { key: string; found: false } | (GetCommandOutput & { found: true; size: number });

/**
 * The keys of a batch, one item each, in the order asked.
 *
 * @example
 * ```ts
 * const { items }: BatchGetCommandOutput = await client.batchGet(['a', 'b']);
 * ```
 */
export interface BatchGetCommandOutput {
  items: BatchGetItem[];
}

const foundWire = wire.object({
  key: wire.string,
  found: wire.literal(true),
  version: wire.number,
  contentType: wire.string,
  size: wire.number,
  expiresAt: wire.optional(wire.string),
  value: wire.optional(wire.string),
  url: wire.optional(wire.string),
  valueOmitted: wire.optional(wire.literal(true)),
});
const missingWire = wire.object({ key: wire.string, found: wire.literal(false) });
type FoundWire = WireOf<typeof foundWire>;

/** An item of the answer: `found: false` is read as a missing key, anything else as a found one. */
const itemWire: Reader<FoundWire | WireOf<typeof missingWire>> = {
  read: (value, path) => (isJsonObject(value) && value.found === false ? missingWire.read(value, path) : foundWire.read(value, path)),
};

/**
 * Reader of a batch get's answer (`BatchGetResponse` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { items }: BatchGetWire = readJson(response, batchGetWire);
 * ```
 */
export const batchGetWire = wire.object({ items: wire.array(itemWire) });

/**
 * A batch get's answer as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const answer: BatchGetWire = { items: [{ key: 'a', found: false }] };
 * ```
 */
export type BatchGetWire = WireOf<typeof batchGetWire>;

/** The keys as sent, checked as the server checks them: 1 to the limit, each a valid key, none twice. */
function checkedKeys(keys: unknown): readonly string[] {
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > BATCH_GET_KEYS_MAX) {
    throw invalidInput(`keys must be an array of 1 to ${BATCH_GET_KEYS_MAX} keys`);
  }
  const list: readonly string[] = keys;
  for (const key of list) encodeKey(key);
  const repeated = list.filter((key, index) => list.indexOf(key) !== index);
  if (repeated.length > 0)
    throw invalidInput(`each key may be named once; named more than once: ${JSON.stringify([...new Set(repeated)])}`);
  return list;
}

/**
 * Reads up to {@link BATCH_GET_KEYS_MAX} keys in one request (`POST /v1/batch/get`), each as `get` reads it,
 * answered in the order asked. A key that is absent, deleted or expired is `found: false`; a value the answer
 * does not carry (kept in S3, or past the answer's size budget) is fetched before the command resolves (a key
 * deleted in between is then `found: false`). Bad input throws {@link ValidationError} before any request.
 *
 * @example
 * ```ts
 * const { items } = await client.send(new BatchGetCommand({ keys: ['users/1', 'users/2'] }));
 * for (const item of items) console.log(item.key, item.found ? item.text() : '(not found)');
 * ```
 */
export class BatchGetCommand extends RingstoreCommand<BatchGetCommandInput, BatchGetCommandOutput> {
  override async execute(context: CommandContext): Promise<BatchGetCommandOutput> {
    const { consistency } = this.input;
    const keys = checkedKeys(this.input.keys);
    assertConsistency(consistency);
    const response = await context.transport.send(
      {
        method: 'POST',
        path: '/v1/batch/get',
        query: { consistency },
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ keys }),
        authenticated: true,
      },
      context.signal,
    );
    const { items } = readJson(response, batchGetWire);
    if (items.length !== keys.length || items.some((item, index) => item.key !== keys[index])) {
      throw invalidResponse(response, 'the answer does not list the keys asked, in their order');
    }
    const output = new Array<BatchGetItem>(items.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let index = next++; index < items.length; index = next++) output[index] = await this.itemOf(context, response, items[index]!);
    };
    await Promise.all(Array.from({ length: FOLLOW_UPS_IN_FLIGHT }, worker));
    return { items: output };
  }

  private async itemOf(context: CommandContext, response: HttpResponse, item: BatchGetWire['items'][number]): Promise<BatchGetItem> {
    if (!item.found) return item;
    const { key, version, contentType, size, expiresAt } = item;
    const metadata = { version, contentType, ...(expiresAt === undefined ? {} : { expiresAt }) };
    if (item.value !== undefined) {
      let value: Uint8Array;
      try {
        value = base64ToBytes(item.value);
      } catch (cause) {
        throw invalidResponse(response, `the value of ${key} is not base64`, cause);
      }
      return { ...valueOutput(key, value, metadata), found: true, size };
    }
    if (item.url !== undefined) {
      // The presigned URL carries its own authorization; the API key is not sent to S3.
      const blob = await context.transport.send(
        { method: 'GET', url: item.url, authenticated: false, errorCodePrefix: 'blob' },
        context.signal,
      );
      return { ...valueOutput(key, blob.body, metadata), found: true, size };
    }
    if (item.valueOmitted !== true) throw invalidResponse(response, `the answer carries no value for ${key}`);
    const { consistency } = this.input;
    try {
      const read = await new GetCommand({ key, ...(consistency === undefined ? {} : { consistency }) }).execute(context);
      return { ...read, found: true, size: read.value.byteLength };
    } catch (error) {
      if (error instanceof NotFoundError) return { key, found: false };
      throw error;
    }
  }
}
