// The contract of POST /v1/kv/{key}/increment: a counter's atomic increment (as DynamoDB's ADD or Redis's INCRBY),
// one versioned write of the key. Its own module: schemas/api.ts is past its size.
import * as z from 'zod';
import { WriteAck } from './api';

const byRule = `must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`;

export const IncrementBody = /* @__PURE__ */ z
  .object({
    by: z
      .number(byRule)
      .int(byRule)
      .min(-Number.MAX_SAFE_INTEGER, byRule)
      .max(Number.MAX_SAFE_INTEGER, byRule)
      .default(1)
      .meta({ description: 'Added to the counter (negative to decrement); default 1' }),
  })
  .strict()
  .meta({ id: 'IncrementRequest' });

export const IncrementAck = /* @__PURE__ */ WriteAck.extend({
  value: z.number().int().meta({ description: 'The counter after this increment, as the key now holds it (decimal text, text/plain)' }),
}).meta({ id: 'IncrementAck' });

export type IncrementAckBody = z.infer<typeof IncrementAck>;
