// The contract of POST /v1/batch/get: up to 100 keys read in one request, each as a GET reads it, answered in
// request order. Its own module: schemas/api.ts is past its size, and nothing here is shared with other routes.
import * as z from 'zod';
import { limits } from './topology';

const keysRule = `must name 1 to ${limits.batchGetKeysMax} keys`;

export const BatchGetBody = /* @__PURE__ */ z
  .object({
    keys: z
      .array(z.string('each key must be a string'))
      .min(1, keysRule)
      .max(limits.batchGetKeysMax, keysRule)
      .meta({
        description:
          `1 to ${limits.batchGetKeysMax} distinct keys of the caller's namespace, each 1 to ${limits.keyBytesMax} bytes of UTF-8 ` +
          '(as in a path, but not percent-encoded). A bad or repeated key is a 400 naming it, and nothing is read',
      }),
  })
  .strict()
  .meta({ id: 'BatchGetRequest' });

export const BatchGetFound = /* @__PURE__ */ z
  .object({
    key: z.string(),
    found: z.literal(true),
    version: z.number().int(),
    contentType: z.string(),
    size: z.number().int().meta({ description: 'Bytes of the value' }),
    expiresAt: z.string().optional().meta({ description: 'When the key expires (ISO 8601), if it has a TTL' }),
    value: z.string().optional().meta({ description: 'The value, base64 (as a transaction’s reads)' }),
    url: z
      .string()
      .optional()
      .meta({
        description:
          `A value kept in S3 (over ${limits.inlineValueBytesMax} bytes): a presigned GET URL, valid ` +
          `${limits.presignedUrlTtlSeconds} s, as a GET's 303 Location; send no API key there`,
      }),
    valueOmitted: z
      .literal(true)
      .optional()
      .meta({
        description:
          `The answer already carries ${limits.batchGetValueBytesMax} bytes of values: read this one with GET /v1/kv/{key} ` +
          '(the SDK does)',
      }),
  })
  .meta({ id: 'BatchGetFound', description: 'A live key: exactly one of value, url and valueOmitted' });

export const BatchGetMissing = /* @__PURE__ */ z
  .object({ key: z.string(), found: z.literal(false) })
  .meta({ id: 'BatchGetMissing', description: 'Never written, deleted or expired (a GET would answer 404)' });

export const BatchGetResponse = /* @__PURE__ */ z
  .object({
    items: z.array(z.union([BatchGetFound, BatchGetMissing])).meta({ description: 'One per requested key, in request order' }),
  })
  .meta({ id: 'BatchGetResponse' });

export type BatchGetResponseBody = z.infer<typeof BatchGetResponse>;
