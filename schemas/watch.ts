// The contract of GET /v1/watch (docs/watch.md): the changes of the caller's namespace whose keys start with a prefix,
// after a cursor, with a long poll. Its own module: schemas/api.ts is past its size, and nothing here is shared.
import * as z from 'zod';
import { integerParam } from './query-params';
import { limits, watchDefaults } from './topology';

export const WatchQuery = /* @__PURE__ */ z.object({
  prefix: z
    .string()
    .max(limits.keyBytesMax)
    .default('')
    .meta({
      description:
        'Only changes of keys that start with this; empty: the whole namespace. A prefix with a `/` reads one partition of the ' +
        'feed (its first path segment’s); one without reads them all (docs/watch.md, "Layout")',
    }),
  cursor: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .meta({
      description:
        'Where the last answer (or a change in it) ended; absent: from now. A cursor is a position in the namespace’s feed, ' +
        'valid for any prefix of the same namespace, across failovers, rebalances and restarts, for the retention',
    }),
  waitSeconds: integerParam(
    `When there is no change yet, how long to wait for one (a long poll), 0 to ${watchDefaults.waitSecondsMax}; default 0`,
    0,
    watchDefaults.waitSecondsMax,
  ).default(0),
  limit: integerParam(`Changes per answer, 1 to ${watchDefaults.limitMax}`, 1, watchDefaults.limitMax).default(watchDefaults.limitDefault),
});

export const WatchChange = /* @__PURE__ */ z
  .object({
    key: z.string(),
    version: z.number().int().meta({ description: 'The version the change made (a delete’s tombstone has one too)' }),
    operation: z.enum(['put', 'delete', 'expire']).meta({
      description:
        'put: a write (PUT, an increment, an upload’s commit, a transaction’s write); delete: a DELETE or a transaction’s delete; ' +
        'expire: the key’s TTL passed and the store removed it (AWS only: DynamoDB’s TTL deletion)',
    }),
    contentType: z.string(),
    size: z.number().int().meta({ description: 'Bytes of the value (0 for a delete)' }),
    value: z
      .string()
      .optional()
      .meta({ description: `A put’s value, base64, when it is at most ${watchDefaults.inlineValueBytesMax} bytes` }),
    valueOmitted: z
      .literal(true)
      .optional()
      .meta({ description: `A put’s value over ${watchDefaults.inlineValueBytesMax} bytes: read it with GET /v1/kv/{key}` }),
    txid: z.string().optional().meta({ description: 'The transaction that wrote it: a transaction’s changes share it' }),
    modifiedAt: z.string().optional().meta({ description: 'When the owner stored the version (ISO 8601)' }),
    expiresAt: z.string().optional().meta({ description: 'When the key expires (ISO 8601), if it has a TTL' }),
    cursor: z.string().meta({ description: 'The cursor that continues after this change' }),
  })
  .meta({ id: 'WatchChange' });

export const WatchResponse = /* @__PURE__ */ z
  .object({
    changes: z.array(WatchChange).meta({
      description:
        'In feed order: a key’s changes in version order. At least once: a change may come again (same key and version); drop it',
    }),
    cursor: z.string().meta({ description: 'Where to continue from, also when there are no changes: it moves with time' }),
  })
  .meta({ id: 'WatchResponse' });

export type WatchResponseBody = z.infer<typeof WatchResponse>;
