// Records the low-level UpdateItem / GetItem / PutItem requests Ringstore's shard adapter sends, so the
// diagnostics can replay exactly those requests without Ringstore's code in the way.
import type { GetItemCommandInput, PutItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CapturedRequests } from './cases';

const middlewareName = 'ringstoreBenchCapture';

/** The key of a shard item's partition key `${namespace}#${key}`. */
function keyOfPartitionKey(pk: string): string {
  return pk.slice(pk.indexOf('#') + 1);
}

/**
 * Adds a middleware to the client the handlers share; `stop()` removes it and returns what it saw.
 * It sits at the build step, after the document client has marshalled the input to AttributeValues.
 *
 * @example
 * const capture = captureShardRequests(runtime().dynamodb, 'ringstore-local-shard-');
 * await preload();
 * const captured = capture.stop();
 */
export function captureShardRequests(client: DynamoDBDocumentClient, shardTablePrefix: string): { stop(): CapturedRequests } {
  const captured: CapturedRequests = { updates: new Map(), gets: new Map(), replicaPuts: new Map() };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; Key?: { pk?: { S?: string } }; Item?: { pk?: { S?: string } } };
      const pk = input.Key?.pk?.S ?? input.Item?.pk?.S;
      if (input.TableName?.startsWith(shardTablePrefix) && pk !== undefined) {
        const key = keyOfPartitionKey(pk);
        // structuredClone: the replay must not share objects the SDK may still touch.
        if (context.commandName === 'UpdateItemCommand') captured.updates.set(key, structuredClone(args.input as UpdateItemCommandInput));
        if (context.commandName === 'GetItemCommand') captured.gets.set(key, structuredClone(args.input as GetItemCommandInput));
        if (context.commandName === 'PutItemCommand') {
          // A strong write's fan-out and the stream path send the same request to a replica: one per table.
          const puts = captured.replicaPuts.get(key) ?? [];
          if (!puts.some((put) => put.TableName === input.TableName)) puts.push(structuredClone(args.input as PutItemCommandInput));
          captured.replicaPuts.set(key, puts);
        }
      }
      return next(args);
    },
    { step: 'build', name: middlewareName },
  );
  return {
    stop: () => {
      client.middlewareStack.remove(middlewareName);
      return captured;
    },
  };
}
