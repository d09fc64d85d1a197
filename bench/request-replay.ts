// Ringstore's own DynamoDB requests for one operation, captured from the local cloud's client and replayed raw on
// the same engine, with the same overlap: what the data model costs, apart from what the code around it adds
// (the NBD server, the SDK, the API, the service). bench/volumes.ts replays a volume's reads and writes so.
import { performance } from 'node:perf_hooks';
import * as dynamodb from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** One request as the engine received it, with when it was sent and answered (ms, this process's clock). */
export interface CapturedCall {
  command: string;
  input: Record<string, unknown>;
  sentAt: number;
  answeredAt: number;
}

const middlewareName = 'ringstoreBenchRequestCapture';

/**
 * Records every request `client` sends from now on; `stop()` removes the recorder and returns the calls in the order
 * they were sent. It sits at the build step, after the document client has marshalled the input to AttributeValues.
 *
 * @example
 * const capture = captureCalls(documentClient(cloud.wiring));
 * await disk.write(0, bytes);
 * const calls = capture.stop();
 */
export function captureCalls(client: DynamoDBDocumentClient): { stop(): CapturedCall[] } {
  const calls: CapturedCall[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // structuredClone: the replay must not share objects the SDK may still touch.
      const call = {
        command: context.commandName ?? 'Unknown',
        input: structuredClone(args.input as Record<string, unknown>),
        sentAt: performance.now(),
        answeredAt: Number.NaN,
      };
      calls.push(call);
      try {
        return await next(args);
      } finally {
        call.answeredAt = performance.now();
      }
    },
    { step: 'build', name: middlewareName },
  );
  return {
    stop: () => {
      client.middlewareStack.remove(middlewareName);
      return calls;
    },
  };
}

/** The suffix of the keys a replayed write writes: beside Ringstore's items on the same tables, never over them. */
const replaySuffix = '~replay';
/** A condition that always holds: the replay keeps each conditional write's evaluation, never its refusal. */
const alwaysTrue = { expression: 'attribute_not_exists(#replayNever)', name: '#replayNever', attribute: 'replay_never' };
const writeCommands = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand']);

type Item = Record<string, dynamodb.AttributeValue>;

/** `item` with its partition key and key attribute moved to the replay key (pk `ns#key`, k `key`). */
function onReplayKey(item: Item | undefined): Item | undefined {
  if (!item) return item;
  const moved: Item = { ...item };
  if (item.pk?.S !== undefined) moved.pk = { S: `${item.pk.S}${replaySuffix}` };
  if (item.k?.S !== undefined) moved.k = { S: `${item.k.S}${replaySuffix}` };
  return moved;
}

interface WriteRequest {
  TableName?: string;
  Key?: Item;
  Item?: Item;
  ConditionExpression?: string;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

/**
 * One write request for its replay: on the replay key, its condition (if any) replaced by one that always holds, and
 * the placeholders only the condition used dropped (DynamoDB refuses unused ones).
 */
function replayWrite<Request extends WriteRequest>(request: Request): Request {
  const rewritten: Request = { ...request };
  if (request.Key) rewritten.Key = onReplayKey(request.Key);
  if (request.Item) rewritten.Item = onReplayKey(request.Item);
  if (request.ConditionExpression === undefined) return rewritten;
  rewritten.ConditionExpression = alwaysTrue.expression;
  const used = new Set(`${request.UpdateExpression ?? ''} ${alwaysTrue.expression}`.match(/[#:][A-Za-z0-9_]+/g) ?? []);
  const names = { ...request.ExpressionAttributeNames, [alwaysTrue.name]: alwaysTrue.attribute };
  rewritten.ExpressionAttributeNames = Object.fromEntries(Object.entries(names).filter(([name]) => used.has(name)));
  const values = Object.entries(request.ExpressionAttributeValues ?? {}).filter(([name]) => used.has(name));
  if (values.length > 0) rewritten.ExpressionAttributeValues = Object.fromEntries(values);
  else delete rewritten.ExpressionAttributeValues;
  return rewritten;
}

type TransactItem = Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', WriteRequest>>;

/** The request a captured call replays: writes on replay keys with conditions that hold, reads as they were. */
export function replayInputOf(call: CapturedCall): Record<string, unknown> {
  if (!writeCommands.has(call.command)) return call.input;
  if (call.command !== 'TransactWriteItemsCommand') return replayWrite(call.input as WriteRequest) as Record<string, unknown>;
  const {
    TransactItems = [],
    ClientRequestToken: _token,
    ...rest
  } = call.input as { TransactItems?: TransactItem[]; ClientRequestToken?: string };
  // No ClientRequestToken: a replay repeats the same request, which DynamoDB would answer from its idempotency window.
  return {
    ...rest,
    TransactItems: TransactItems.map((item) =>
      Object.fromEntries(Object.entries(item).map(([action, request]) => [action, request && replayWrite(request)])),
    ),
  };
}

/** The SDK command class of a captured call (`PutItemCommand` → `dynamodb.PutItemCommand`). */
function commandOf(call: CapturedCall, input: Record<string, unknown>) {
  const Command = (dynamodb as unknown as Record<string, new (input: unknown) => dynamodb.PutItemCommand>)[call.command];
  if (!Command) throw new Error(`no DynamoDB command ${call.command} to replay`);
  return new Command(input);
}

/**
 * Sends `calls` once on `client` with the overlap they had: each is sent once every call answered before it was sent
 * has been answered again, so what ran one after another runs one after another and what overlapped overlaps. Each
 * request is given `timeoutMs`. Resolves with the time it took (ms).
 */
export async function replayOnce(client: dynamodb.DynamoDBClient, calls: readonly CapturedCall[], timeoutMs: number): Promise<number> {
  const started = performance.now();
  const done: Promise<unknown>[] = [];
  for (const [index, call] of calls.entries()) {
    const before = calls.flatMap((other, at) => (at !== index && other.answeredAt <= call.sentAt ? [done[at]!] : []));
    done[index] = Promise.all(before).then(() =>
      client.send(commandOf(call, replayInputOf(call)), { abortSignal: AbortSignal.timeout(timeoutMs) }),
    );
  }
  await Promise.all(done);
  return performance.now() - started;
}

/** How many of each command `calls` holds (`PutItem: 128`), for the results. */
export function commandCounts(calls: readonly CapturedCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of calls) {
    const name = call.command.replace(/Command$/, '');
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}
