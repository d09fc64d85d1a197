// The messages that travel between regions for disaster recovery (docs/dr.md): the primary sends them,
// the backup parses them with these schemas, so a malformed message is refused whole, never half-applied.
import * as z from 'zod';

/** A key message's body on the backup region's FIFO queue (lambdas/ports/dr.ts, DrKeyMessage). */
export const DrKeyMessageBody = /* @__PURE__ */ z
  .strictObject({
    namespace: z.string().min(1),
    key: z.string().min(1),
    version: z.number().int().min(1),
    txid: z.string().min(1).optional(),
    /** With txid: how many keys the transaction wrote (the backup applies them as a unit). */
    txnWrites: z.number().int().min(1).optional(),
    writtenAtMs: z.number().int().min(0),
    size: z.number().int().min(0),
    /** Empty for a delete. */
    sha256: z.string().regex(/^([0-9a-f]{64})?$/),
    contentType: z.string(),
    deleted: z.boolean(),
    expiresAtSeconds: z.number().int().min(0).optional(),
    writeId: z.string().min(1).max(64).optional(),
  })
  .refine((message) => message.txnWrites === undefined || message.txid !== undefined, {
    message: 'txnWrites comes only with a txid',
    path: ['txnWrites'],
  });

/** A key-sync write's notice or its withdrawal (lambdas/ports/dr.ts, DrWriteNotice). */
export const DrWriteNoticeBody = /* @__PURE__ */ z.strictObject({
  notice: z.enum(['announced', 'withdrawn']),
  namespace: z.string().min(1),
  key: z.string().min(1),
  writeId: z.string().min(1).max(64),
  writtenAtMs: z.number().int().min(0),
  content: z
    .strictObject({
      size: z.number().int().min(0),
      sha256: z.string().regex(/^([0-9a-f]{64})?$/),
      contentType: z.string(),
      deleted: z.boolean(),
      expiresAtSeconds: z.number().int().min(0).optional(),
    })
    .optional(),
});

/** Any message of the backup's key queue. */
export const DrQueueMessageBody = /* @__PURE__ */ z.union([DrWriteNoticeBody, DrKeyMessageBody]);
