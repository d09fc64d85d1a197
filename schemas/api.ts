// The API contract as zod schemas: handlers parse with them, the OpenAPI document is generated from them.
// Every top-level schema here (and in the other schema modules handlers import) is marked `/* @__PURE__ */`: esbuild
// then leaves out of a handler's bundle the schemas it never parses with, so they cost its cold start nothing
// (test/unit/schemas/tree-shaking.test.ts keeps every one marked).
import * as z from 'zod';
import { errorCodes } from './errors';
import { integerParam } from './query-params';
import { WatchQuery } from './watch';
import {
  auditDefaults,
  drDefaults,
  limits,
  namespacePattern,
  quotaDefaults,
  rebalanceDefaults,
  type routes,
  txnLimits,
  volumeLimits,
} from './topology';

export const Consistency = /* @__PURE__ */ z.enum(['eventual', 'strong']).meta({
  id: 'Consistency',
  description:
    'Reads: eventual = cache or any available replica; strong = the owner with a consistent read, never a cache (linearizable per key). ' +
    'Writes: eventual = acknowledged once the owner holds it, replicas follow from its stream; strong = acknowledged once the owner ' +
    'and every reachable replica hold it (at least one replica). Default: the namespace setting, else eventual.',
});

export const ttlSecondsRule = `must be an integer from 1 to ${limits.ttlSecondsMax}`;

export const PutValueQuery = /* @__PURE__ */ z.object({
  ttlSeconds: integerParam(`Seconds until the key expires, 1 to ${limits.ttlSecondsMax}`, 1, limits.ttlSecondsMax).optional(),
  consistency: Consistency.optional(),
});

export const ReadValueQuery = /* @__PURE__ */ z.object({ consistency: Consistency.optional() });

export const DeleteValueQuery = /* @__PURE__ */ z.object({ consistency: Consistency.optional() });

export const CommitUploadQuery = /* @__PURE__ */ z.object({ consistency: Consistency.optional() });

export const IncrementQuery = /* @__PURE__ */ z.object({ consistency: Consistency.optional() });

export const ListKeysQuery = /* @__PURE__ */ z.object({
  prefix: z.string().max(limits.keyBytesMax).default('').meta({ description: 'Only keys that start with this' }),
  limit: integerParam(`Page size, 1 to ${limits.listLimitMax}`, 1, limits.listLimitMax).default(limits.listLimitDefault),
  cursor: z.string().min(1).max(4096).optional().meta({ description: 'The cursor of the previous page' }),
});

const entityTags =
  `\`*\` or a comma-separated list of up to ${limits.entityTagsMax} entity tags (\`"3"\`, \`W/"3"\`); the ETag of a read is \`"<version>"\`. ` +
  'A tag this API did not issue is well formed but matches nothing. Anything else is a 400 naming the header';

/**
 * Conditional requests (RFC 9110 §13.1.1–2). Only their shape is here: the grammar of entity-tag lists is
 * parsed by lambdas/http, and what the tags mean is decided in the core.
 */
export const ConditionalHeaders = /* @__PURE__ */ z.object({
  'if-match': z
    .string()
    .optional()
    .meta({
      description:
        `Write only if the key exists and its ETag is one of these (strong comparison: a weak tag never matches); ` +
        `\`*\`: only if the key exists. Otherwise 412. ${entityTags}`,
      examples: ['"3"', '"3", "5"', '*'],
    }),
  'if-none-match': z
    .string()
    .optional()
    .meta({
      description:
        `Write only if the key's ETag is none of these (weak comparison: \`W/"3"\` matches version 3; an absent key matches none); ` +
        `\`*\`: only if the key does not exist. Otherwise 412. Evaluated after If-Match. ${entityTags}`,
      examples: ['*', '"3"'],
    }),
});

/** RFC 9110 §5.6.2 token: the type, the subtype and parameter names. */
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** RFC 9110 §5.6.4, without obs-text: a stored type is echoed back as a header, so it stays ASCII. */
const quotedString = '"(?:[\\t \\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\t \\x21-\\x7E])*"';
/**
 * RFC 9110 §8.3.1 media-type = type "/" subtype *( OWS ";" OWS [ parameter ] ). Written so that no two
 * ways match the same text (whitespace after a ";" belongs to it alone): no backtracking blow-up.
 */
export const mediaTypePattern = /* @__PURE__ */ new RegExp(
  `^${token}/${token}[ \\t]*(?:;[ \\t]*(?:${token}=(?:${token}|${quotedString})[ \\t]*)?)*$`,
);

/** A Content-Type as stored with a value and sent back on reads. */
export const MediaType = /* @__PURE__ */ z
  .string()
  .max(limits.contentTypeCharsMax)
  .regex(mediaTypePattern, 'must be a media type, type/subtype with optional parameters, e.g. text/plain; charset=utf-8')
  .meta({
    description: `A media type (RFC 9110 §8.3.1), e.g. \`text/plain; charset=utf-8\`; at most ${limits.contentTypeCharsMax} characters`,
  });

/** An empty Content-Type is as good as none: the default applies. */
export const PutValueHeaders = /* @__PURE__ */ z.object({
  'content-type': z.preprocess((value) => (value === '' ? undefined : value), MediaType.default('application/octet-stream')),
});

export const CreateUploadBody = /* @__PURE__ */ z
  .object({
    size: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: `Bytes to upload; over ${limits.valueBytesMax} is refused with 413` }),
    contentType: MediaType.default('application/octet-stream'),
  })
  .strict()
  .meta({ id: 'CreateUploadRequest' });

export const CommitUploadBody = /* @__PURE__ */ z
  .object({
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits'),
    contentType: MediaType.default('application/octet-stream'),
    ttlSeconds: z.number().int(ttlSecondsRule).min(1, ttlSecondsRule).max(limits.ttlSecondsMax, ttlSecondsRule).optional(),
  })
  .strict()
  .meta({ id: 'CommitUploadRequest' });

export const CreateApiKeyBody = /* @__PURE__ */ z
  .object({
    namespace: z.string().regex(namespacePattern, `must match ${namespacePattern}`),
    role: z.enum(['user', 'admin']).default('user'),
    description: z.string().max(256).optional(),
    expiresAt: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'After it the key no longer authenticates (a future time)' }),
  })
  .strict()
  .meta({ id: 'CreateApiKeyRequest' });

export const RotateApiKeyBody = /* @__PURE__ */ z
  .object({
    graceSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .optional()
      .meta({ description: 'How long the current secret keeps working beside the new one (default 3600)' }),
    expiresAt: z.iso.datetime({ offset: true }).optional().meta({ description: "A new expiry for the key (default: the key's own)" }),
  })
  .strict()
  .meta({ id: 'RotateApiKeyRequest', examples: [{ graceSeconds: 86400 }] });

export const CreatePrincipalMappingBody = /* @__PURE__ */ z
  .object({
    principalArn: z
      .string()
      .min(20)
      .max(2048)
      .meta({ description: 'An IAM role or user ARN (arn:aws:iam::<account>:role/<name> or user/<name>); never a session or the root' }),
    namespace: z.string().regex(namespacePattern, `must match ${namespacePattern}`),
    role: z.enum(['user', 'admin']).default('user'),
    description: z.string().max(256).optional(),
  })
  .strict()
  .meta({ id: 'CreatePrincipalMappingRequest' });

export const PrincipalArnParam = /* @__PURE__ */ z.object({
  principalArn: z.string().startsWith('arn:', 'must be an IAM ARN, percent-encoded (/ as %2F)').max(2048),
});

export const PrincipalMappingInfo = /* @__PURE__ */ z
  .object({
    principalArn: z.string().meta({ description: 'The ARN as it was mapped' }),
    matchArn: z.string().meta({
      description: 'What callers match: the role or user ARN without its path (an assumed-role session matches its role)',
    }),
    namespace: z.string(),
    role: z.enum(['user', 'admin']),
    createdAt: z.string(),
    description: z.string().optional(),
  })
  .meta({ id: 'PrincipalMapping' });

export const PrincipalMappingList = /* @__PURE__ */ z
  .object({ principals: z.array(PrincipalMappingInfo) })
  .meta({ id: 'PrincipalMappingList' });

export const AuditQuery = /* @__PURE__ */ z.object({
  limit: integerParam(`Page size, 1 to ${auditDefaults.listLimitMax}`, 1, auditDefaults.listLimitMax).default(
    auditDefaults.listLimitDefault,
  ),
  cursor: z.string().min(1).max(4096).optional().meta({ description: 'The cursor of the previous page' }),
});

export const AuditEntry = /* @__PURE__ */ z
  .object({
    at: z.string(),
    requestId: z.string(),
    actor: z.object({ keyId: z.string(), namespace: z.string(), role: z.string() }),
    operation: z.string().meta({ description: "The route's operationId, e.g. rotateApiKey, putNamespaceSettings, startFailover" }),
    target: z.record(z.string(), z.string()).meta({ description: 'The path parameters (keyId, namespace, id)' }),
    request: z
      .string()
      .optional()
      .meta({ description: `The request body, at most ${auditDefaults.requestCharsMax} characters` }),
    outcome: z.enum(['succeeded', 'failed']),
    status: z.number().int(),
    errorCode: z.string().optional(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditPage = /* @__PURE__ */ z
  .object({ entries: z.array(AuditEntry), cursor: z.string().optional().meta({ description: 'Absent on the last page' }) })
  .meta({ id: 'AuditPage' });

/**
 * A key id, or a whole API key `rs_<keyId>_<secret>` (an easy mistake), of which only the id is kept: the
 * secret goes no further than this parse (not into the audit trail, a log line or an error message).
 */
export const KeyIdParam = /* @__PURE__ */ z.object({
  keyId: z
    .string()
    .regex(
      /^(?:[0-9a-f]{12}|rs_[0-9a-f]{12}_[A-Za-z0-9_-]+)$/,
      'must be a key id (the 12 hex digits after rs_ in an API key rs_<keyId>_<secret>) or a whole API key',
    )
    .transform((keyIdOrKey) => (keyIdOrKey.startsWith('rs_') ? keyIdOrKey.slice('rs_'.length, 'rs_'.length + 12) : keyIdOrKey))
    .meta({ description: 'The key id: the 12 hex digits after rs_ in the key (a whole key is taken for its id)' }),
});

export const WriteAck = /* @__PURE__ */ z
  .object({
    key: z.string(),
    version: z.number().int(),
    consistency: Consistency,
    copies: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Strong writes: shards holding the version at the acknowledgement, the owner included' }),
  })
  .meta({ id: 'WriteAck' });

const txnKey = /* @__PURE__ */ z
  .string()
  .min(1)
  .max(limits.keyBytesMax * 4);
const txnVersion = /* @__PURE__ */ z
  .number()
  .int()
  .min(0)
  .meta({ description: 'The version the key must be at before the transaction; 0: absent' });

export const TxnOp = /* @__PURE__ */ z
  .discriminatedUnion('op', [
    z.object({ op: z.literal('get'), key: txnKey }).strict(),
    z
      .object({
        op: z.literal('put'),
        key: txnKey,
        value: z.string().meta({ description: 'The value: text, or base64 with encoding "base64"' }),
        encoding: z.enum(['utf8', 'base64']).default('utf8'),
        contentType: MediaType.optional(),
        ifVersion: txnVersion.optional(),
      })
      .strict(),
    z.object({ op: z.literal('delete'), key: txnKey, ifVersion: txnVersion.optional() }).strict(),
    z.object({ op: z.literal('check'), key: txnKey, ifVersion: txnVersion }).strict(),
  ])
  .meta({ id: 'TxnOp' });

export const TxnBody = /* @__PURE__ */ z
  .object(
    {
      ops: z.array(TxnOp).min(1).max(txnLimits.txnOpsMax),
      timeoutMs: z
        .number()
        .int()
        .min(100)
        .max(txnLimits.txnTimeoutMsMax)
        .optional()
        .meta({
          description: `After this the transaction aborts (default ${txnLimits.txnTimeoutMsDefault})`,
        }),
    },
    {
      // The CLI's --file takes a bare array of operations; the API takes one shape, and says which.
      error: (issue) =>
        Array.isArray(issue.input) ? 'a transaction is an object, {"ops": [...]}, not a bare array of operations' : undefined,
    },
  )
  .strict()
  .meta({ id: 'TxnRequest' });

export const TxnQuery = /* @__PURE__ */ z.object({ consistency: Consistency.optional() });

export const TxnCommitted = /* @__PURE__ */ z
  .object({
    status: z.literal('committed'),
    txid: z.string(),
    writes: z.array(z.object({ key: z.string(), version: z.number().int() })),
    reads: z
      .array(
        z.object({
          key: z.string(),
          found: z.boolean(),
          version: z.number().int().optional(),
          value: z.string().optional().meta({ description: 'base64' }),
          contentType: z.string().optional(),
        }),
      )
      .meta({ description: 'One per get op, in request order; a get after a write of the same key sees that write' }),
  })
  .meta({ id: 'TxnCommitted' });

/** How a namespace's writes reach a DR backup region (docs/dr.md). */
export const DrMode = /* @__PURE__ */ z.enum(['key-sync', 'async']).meta({
  id: 'DrMode',
  description:
    'key-sync (default): a write is acknowledged once the backup region knows of it (one cross-region round trip); async: shipped after the acknowledgement, so a disaster can hide the last writes',
});

/** A namespace's request rate (docs/security.md, "Quotas"): shared by every instance of every handler. */
export const RateLimit = /* @__PURE__ */ z
  .object({
    requestsPerSecond: z
      .number()
      .min(quotaDefaults.requestsPerSecondMin)
      .max(quotaDefaults.requestsPerSecondMax)
      .meta({ description: 'Steady requests per second' }),
    burst: z.number().int().min(1).max(quotaDefaults.burstMax).meta({ description: 'Requests it may take at once after a quiet spell' }),
  })
  .strict()
  .meta({ id: 'RateLimit', examples: [{ requestsPerSecond: 50, burst: 100 }] });

/** A namespace's storage quota: live keys and the bytes of their values; a bound left out is not enforced. */
const StorageBounds = /* @__PURE__ */ z
  .object({
    keysMax: z.number().int().min(0).max(quotaDefaults.keysMax).optional(),
    bytesMax: z.number().int().min(0).max(quotaDefaults.bytesMax).optional(),
  })
  .strict()
  .meta({ id: 'StorageQuota', examples: [{ keysMax: 100000, bytesMax: 1073741824 }] });

/** A storage quota as a request sets it: at least one bound (null, not an empty quota, removes it). */
export const StorageQuota = /* @__PURE__ */ StorageBounds.refine(
  (quota) => quota.keysMax !== undefined || quota.bytesMax !== undefined,
  'name keysMax, bytesMax or both (null removes the quota)',
).meta({ id: 'StorageQuotaRequest', examples: [{ keysMax: 100000, bytesMax: 1073741824 }] });

export const NamespaceSettingsBody = /* @__PURE__ */ z
  .object({
    readConsistency: Consistency.optional(),
    writeConsistency: Consistency.optional(),
    drMode: DrMode.optional(),
    rate: RateLimit.nullable().optional().meta({ description: "null: back to the deployment's default rate" }),
    storage: StorageQuota.nullable()
      .optional()
      .meta({ description: 'null: no storage quota. Set on a namespace without one, its current keys are counted first' }),
  })
  .strict()
  .meta({ id: 'NamespaceSettingsRequest', examples: [{ rate: { requestsPerSecond: 50, burst: 100 }, storage: { keysMax: 10000 } }] });

export const NamespaceSettingsResponse = /* @__PURE__ */ z
  .object({
    namespace: z.string(),
    readConsistency: Consistency,
    writeConsistency: Consistency,
    drMode: DrMode,
    rate: RateLimit,
    storage: StorageBounds.optional(),
    usage: z
      .object({ keys: z.number().int(), bytes: z.number().int() })
      .optional()
      .meta({ description: 'What the namespace stores, counted exactly with every write (with a storage quota only)' }),
    takesEffectWithinSeconds: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({
        description:
          "In the answer to a change: within how many seconds every request sees it (the authorizer cache TTL: a key's " +
          'requests keep the settings they were authorized with until then)',
      }),
  })
  .meta({ id: 'NamespaceSettings', description: 'A change reaches requests within the authorizer cache TTL' });

export const NamespaceParam = /* @__PURE__ */ z.object({ namespace: z.string().regex(namespacePattern, `must match ${namespacePattern}`) });

const ReplayReport = /* @__PURE__ */ z.object({
  table: z.string(),
  transition: z.enum(['recovering', 'available']).optional(),
  applied: z.number().int(),
  alreadyCurrent: z.number().int(),
  durationMs: z.number(),
  hintsPerSecond: z.number(),
  completed: z.boolean(),
});

const AntiEntropyReport = /* @__PURE__ */ z.object({
  rangesCompared: z.number().int(),
  keysCompared: z.number().int(),
  repairedCount: z.number().int(),
  repairs: z.array(z.object({ table: z.string(), namespace: z.string(), key: z.string(), from: z.number().int(), to: z.number().int() })),
  rangesSkipped: z.number().int(),
  nextRange: z.number().int(),
  rangesLeft: z
    .number()
    .int()
    .meta({ description: 'Ranges left for the next run: the time budget of the run ran out (0: every range of the pass was compared)' }),
  durationMs: z.number(),
});

export const MaintenanceReport = /* @__PURE__ */ z
  .object({ startedAt: z.string(), handoff: z.array(ReplayReport), antiEntropy: AntiEntropyReport })
  .meta({ id: 'MaintenanceReport', description: 'One run of hinted handoff and anti-entropy' });

export const FailoverStartBody = /* @__PURE__ */ z
  .object({
    shard: z.number().int().min(0).meta({ description: 'The id of the shard whose token ranges get new owners' }),
    reason: z.string().min(1).max(256).optional().meta({ description: 'Kept in the failover record' }),
    action: z
      .enum(['failOver', 'moveBack'])
      .default('failOver')
      .meta({
        description:
          'failOver: the shard’s ranges go to live replicas (it must be down: the workflow confirms it). ' +
          'moveBack: the ranges a failover took from the shard go back to it, once it has rejoined',
      }),
  })
  .strict()
  .meta({ id: 'FailoverRequest' });

export const FailoverStarted = /* @__PURE__ */ z
  .object({
    id: z.string().meta({ description: 'One failover per shard and ring epoch: starting it again is a no-op' }),
    shard: z.number().int(),
    started: z.boolean().meta({ description: 'False when this failover was started before (it runs once)' }),
  })
  .meta({ id: 'FailoverStarted' });

export const FailoverRecordResponse = /* @__PURE__ */ z
  .object({
    id: z.string(),
    shard: z.number().int(),
    reason: z.string(),
    requestedAt: z.string(),
    updatedAt: z.string(),
    action: z.enum(['failOver', 'moveBack']).optional(),
    status: z.enum(['running', 'notDown', 'notReady', 'completed', 'lost', 'aborted']).meta({
      description:
        'running; notDown: the shard answered a probe, nothing changed; notReady: a move-back found the shard not rejoined, ' +
        'not answering, or with nothing to move back; completed: the ranges have new owners; ' +
        'lost: another run of the same failover published first; aborted: a step failed, the fence was lifted and the owners kept',
    }),
    report: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'The confirmation, the fence, each range with its new owner and why, the publication' }),
  })
  .meta({ id: 'Failover' });

export const FailoversResponse = /* @__PURE__ */ z.object({ failovers: z.array(FailoverRecordResponse) }).meta({ id: 'Failovers' });

export const PromoteBody = /* @__PURE__ */ z
  .object({ reason: z.string().min(1).max(256).optional().meta({ description: 'Kept in the promotion report' }) })
  .strict()
  .meta({ id: 'PromoteRequest' });

export const PromotionStarted = /* @__PURE__ */ z
  .object({ id: z.string(), started: z.boolean().meta({ description: 'False when this promotion was started before' }) })
  .meta({ id: 'PromotionStarted' });

export const DrSyncResponse = /* @__PURE__ */ z
  .object({
    status: z.enum(['running', 'completed']),
    nextRange: z.number().int(),
    ranges: z.number().int(),
    keys: z.number().int().meta({ description: 'Keys shipped so far' }),
    startedAtMs: z.number().int(),
    updatedAtMs: z.number().int(),
    startedAt: z.string().optional(),
  })
  .meta({ id: 'DrSync', description: 'A DR primary’s initial sync: every key shipped once to the backup, range by range, by maintenance' });

export const DrStatusResponse = /* @__PURE__ */ z
  .object({
    role: z.enum(['none', 'primary', 'backup']),
    state: z
      .enum(['backup', 'promoting', 'promoted'])
      .optional()
      .meta({ description: 'The backup region’s DR state (a primary shows its backup’s, as its lease last read it)' }),
    epoch: z.number().int().optional(),
    promotedAt: z.string().optional(),
    pending: z
      .object({
        count: z.number().int(),
        lost: z.number().int(),
        oldestAgeMs: z.number().int().optional(),
        oldestKey: z.string().optional(),
      })
      .optional()
      .meta({ description: 'Backup: keys waiting for their value, and keys a promotion marked lost' }),
    queue: z.object({ waiting: z.number().int(), inFlight: z.number().int() }).optional().meta({ description: 'Backup: the key queue' }),
    backupReachable: z.boolean().optional().meta({ description: 'Primary: whether the backup’s DR state could be read now' }),
    sync: DrSyncResponse.optional().meta({ description: 'Primary: the initial sync to the backup, once one was started' }),
  })
  .meta({ id: 'DrStatus' });

export const PromotionReportResponse = /* @__PURE__ */ z
  .object({
    id: z.string(),
    reason: z.string(),
    status: z.enum(['running', 'completed', 'failed']),
    startedAtMs: z.number().int(),
    updatedAtMs: z.number().int(),
    fencedAtMs: z.number().int().optional(),
    drain: z.object({ waitedMs: z.number().int(), remaining: z.number().int() }).optional(),
    values: z.object({ waitedMs: z.number().int(), pending: z.number().int() }).optional(),
    lost: z
      .object({
        count: z.number().int(),
        possiblyNeverAcknowledged: z
          .number()
          .int()
          .optional()
          .meta({ description: 'Of count: key-sync writes announced whose owner write may have failed before the disaster' }),
        keys: z.array(
          z.object({
            namespace: z.string(),
            key: z.string(),
            version: z.number().int().meta({ description: 'The lost version; 0 for a write announced but never numbered' }),
            writtenAtMs: z.number().int(),
            txid: z.string().optional(),
            possiblyNeverAcknowledged: z
              .literal(true)
              .optional()
              .meta({ description: 'An announced write whose version never reached this region: it may never have been acknowledged' }),
            writeId: z
              .string()
              .optional()
              .meta({ description: 'With possiblyNeverAcknowledged: the write id its value is offered back by' }),
          }),
        ),
      })
      .optional()
      .meta({ description: 'The keys whose value never arrived, oldest write first (the list is bounded; the count is not)' }),
    promotedAtMs: z.number().int().optional(),
    failure: z.string().optional(),
  })
  .meta({ id: 'PromotionReport' });

export const OfferBody = /* @__PURE__ */ z
  .object({
    from: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Index in the promotion report’s list of lost keys to continue from (a previous answer’s `next`); default 0' }),
  })
  .strict()
  .meta({ id: 'OfferRequest' });

export const OfferResponse = /* @__PURE__ */ z
  .object({
    promotionId: z.string(),
    lost: z.number().int().meta({ description: 'Keys the promotion marked lost' }),
    listed: z.number().int().meta({ description: 'Lost keys its report lists (at most 1,000): the offer works from the list' }),
    from: z.number().int(),
    next: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Where to continue (POST again with `from`), when this call stopped at its time budget' }),
    offered: z.number().int().meta({ description: 'Values uploaded to the promoted region’s bucket' }),
    notHeld: z.number().int().meta({ description: 'Keys this region holds at another version, or not at all' }),
    noValueNeeded: z.number().int().meta({ description: 'Lost deletes and empty values: a restore needs no offer' }),
    failed: z.number().int(),
    failures: z.array(z.object({ namespace: z.string(), key: z.string(), version: z.number().int(), reason: z.string() })),
  })
  .meta({ id: 'OfferReport', description: 'What the old primary offered back of the keys its backup’s promotion marked lost' });

export const LostKeysQuery = /* @__PURE__ */ z.object({
  limit: integerParam(`Page size, 1 to ${drDefaults.lostListLimitMax}`, 1, drDefaults.lostListLimitMax).default(
    drDefaults.lostListLimitDefault,
  ),
  cursor: z.string().min(1).max(4096).optional().meta({ description: 'The cursor of the previous page' }),
});

export const LostKey = /* @__PURE__ */ z
  .object({
    namespace: z.string(),
    key: z.string(),
    version: z.number().int().meta({ description: 'The lost version; 0 for a write announced but never numbered' }),
    writtenAt: z.string(),
    writtenAtMs: z.number().int(),
    txid: z.string().optional(),
    size: z.number().int(),
    contentType: z.string(),
    deleted: z.boolean(),
    offer: z.object({ needed: z.boolean(), present: z.boolean(), size: z.number().int().optional() }).meta({
      description: 'Whether a restore needs an offered value (deletes and empty values do not), and whether one is in this region',
    }),
    currentVersion: z.number().int().meta({ description: 'The version this region holds now (0: none)' }),
    superseded: z.boolean().meta({ description: 'Written here at or past the lost version: a restore would overwrite that write' }),
    possiblyNeverAcknowledged: z.literal(true).optional().meta({
      description: 'A key-sync write announced but never numbered: it may never have been acknowledged; discard it or write the key',
    }),
  })
  .meta({ id: 'LostKey' });

export const LostKeysResponse = /* @__PURE__ */ z
  .object({ entries: z.array(LostKey), cursor: z.string().optional() })
  .meta({ id: 'LostKeys', description: 'A page may hold fewer entries than the limit, even none; no cursor when the listing is complete' });

export const ReconcileBody = /* @__PURE__ */ z
  .object({
    namespace: z.string().regex(namespacePattern, `must match ${namespacePattern}`),
    key: z
      .string()
      .min(1)
      .refine((key) => Buffer.byteLength(key) <= limits.keyBytesMax, `at most ${limits.keyBytesMax} bytes of UTF-8`),
    version: z.number().int().min(0).meta({ description: 'The lost version (0: a lost write announced but never numbered)' }),
    action: z.enum(['restore', 'discard']),
    expectVersion: z.number().int().min(0).optional().meta({
      description: 'restore: the version the key must hold now (a listing’s currentVersion); default: any older than the lost one',
    }),
  })
  .strict()
  .refine((body) => body.action === 'restore' || body.expectVersion === undefined, {
    message: 'expectVersion applies to restore only',
    path: ['expectVersion'],
  })
  .meta({ id: 'ReconcileRequest' });

export const ReconcileResponse = /* @__PURE__ */ z
  .object({
    namespace: z.string(),
    key: z.string(),
    version: z.number().int(),
    action: z.enum(['restore', 'discard']),
    currentVersion: z.number().int().meta({ description: 'The version the key holds now: a restore’s new write, or what a discard left' }),
  })
  .meta({ id: 'ReconcileOutcome' });

const rateRule = `must be an integer from 0 to ${rebalanceDefaults.rateKeysPerSecondMax}`;
const rateKeysPerSecond = /* @__PURE__ */ z
  .number()
  .int(rateRule)
  .min(0, rateRule)
  .max(rebalanceDefaults.rateKeysPerSecondMax, rateRule)
  .meta({
    description:
      `The copy's ceiling, keys per second over the whole rebalance, 0 to ${rebalanceDefaults.rateKeysPerSecondMax} ` +
      `(0: no ceiling); a start without one copies at ${rebalanceDefaults.defaultRateKeysPerSecond}`,
  });

const addRule = `must be an integer from 1 to ${rebalanceDefaults.shardsAddedMax}`;

export const RebalanceStartBody = /* @__PURE__ */ z
  .object({
    add: z
      .number()
      .int(addRule)
      .min(1, addRule)
      .max(rebalanceDefaults.shardsAddedMax, addRule)
      .optional()
      .meta({ description: 'How many shards to add; they get the ids after the highest on the ring, and their tables from the topology' }),
    remove: z
      .array(z.number().int('must be a shard id (an integer)').min(0, 'must be a shard id (an integer from 0)'))
      .min(1, 'must name at least one shard (leave it out to remove none)')
      .max(rebalanceDefaults.shardsRemovedMax, `must name at most ${rebalanceDefaults.shardsRemovedMax} shards`)
      .refine((ids) => new Set(ids).size === ids.length, 'names a shard twice')
      .optional()
      .meta({ description: 'The ids of the shards to remove: their ranges go to the shards that follow them on the ring' }),
    rateKeysPerSecond: rateKeysPerSecond.optional(),
  })
  .strict()
  .refine((body) => body.add !== undefined || body.remove !== undefined, {
    message: 'nothing to do: give add (how many shards to add) or remove (shard ids), or both',
  })
  .meta({ id: 'RebalanceRequest' });

export const RebalanceRateBody = /* @__PURE__ */ z.object({ rateKeysPerSecond }).strict().meta({ id: 'RebalanceRateRequest' });

/** Ids are `rebalance-<ms>-<8 hex>`; the bound keeps the workflow's run names within Step Functions' 80 characters. */
export const RebalanceIdParam = /* @__PURE__ */ z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a rebalance id (GET /v1/admin/rebalance shows the current one)')
    .meta({ description: 'The id of the current rebalance (GET /v1/admin/rebalance)' }),
});

export const RebalanceQuery = /* @__PURE__ */ z.object({
  ranges: z
    .enum(['true', 'false'])
    .default('false')
    .meta({ description: 'true: list every moving range with its stage and counts (there can be hundreds)' }),
});

const RebalanceStatus = /* @__PURE__ */ z.enum(['running', 'paused', 'cancelling', 'cancelled', 'done']).meta({
  id: 'RebalanceStatus',
  description:
    'running; paused (by a request, or by an error its workflow could not get past: `message` says which; a resume goes on from ' +
    'the checkpoint); cancelling: the ranges that had moved are moved back; cancelled: the ring is as it was; done',
});

export const RebalanceRange = /* @__PURE__ */ z
  .object({
    start: z.number().int().meta({ description: 'Exclusive' }),
    end: z.number().int().meta({ description: 'Inclusive' }),
    from: z.array(z.number().int()).meta({ description: 'Replicas before, owner first' }),
    to: z.array(z.number().int()).meta({ description: 'Replicas after, owner first' }),
    stage: z.enum(['planned', 'backfilled', 'copying', 'cutover', 'moved', 'cleaned']),
    keysCopied: z.number().int(),
    keysVerified: z.number().int().optional().meta({ description: 'Keys the cut-over compared on the old owner and the new replicas' }),
    keysCleaned: z.number().int().optional().meta({ description: 'Copies removed from the replicas the range left' }),
  })
  .meta({ id: 'RebalanceRange' });

export const RebalanceResponse = /* @__PURE__ */ z
  .object({
    id: z.string(),
    status: RebalanceStatus,
    requested: z
      .enum(['pause', 'cancel'])
      .optional()
      .meta({ description: 'A pause or cancel asked for; the workflow acts on it between two steps' }),
    message: z.string().optional().meta({ description: 'Why the workflow stopped, when it paused on an error' }),
    change: z.object({
      join: z.array(z.number().int()).meta({ description: 'Shards added' }),
      leave: z.array(z.number().int()).meta({ description: 'Shards removed' }),
    }),
    rateKeysPerSecond: z.number().int().meta({ description: 'The copy’s ceiling (0: none)' }),
    startedAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().optional(),
    ranges: z
      .object({
        total: z.number().int(),
        planned: z.number().int(),
        moving: z.number().int().meta({ description: 'Being copied or cut over' }),
        moved: z.number().int(),
        cleaned: z.number().int().meta({ description: 'Moved, and the copies they left behind removed' }),
      })
      .meta({ description: 'The ranges whose replicas change, counted by stage' }),
    keysCopied: z.number().int(),
    keysPerSecond: z.number().int().meta({ description: 'Keys copied per second since the start' }),
    progress: z.number().min(0).max(1).meta({ description: 'Share of the moving token space that has moved, 0 to 1' }),
    etaSeconds: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Time left, from the progress so far; absent before any range has moved and once it has ended' }),
    cancelledFrom: z
      .object({ ranges: z.number().int(), moved: z.number().int() })
      .optional()
      .meta({ description: 'Once cancelled: how many ranges it had and how many had moved; `ranges` then counts the moves back' }),
    revision: z.number().int().meta({ description: 'Bumped by every change of the job' }),
    rangeDetail: z.array(RebalanceRange).optional().meta({ description: 'Every moving range, in token order; only with ?ranges=true' }),
  })
  .meta({ id: 'Rebalance', description: 'The current (or last) rebalance and its progress' });

export const ShardsResponse = /* @__PURE__ */ z
  .object({
    epoch: z.number().int(),
    shards: z.array(
      z.object({
        id: z.number().int(),
        table: z.string(),
        health: z.enum(['available', 'unavailable', 'recovering']),
        since: z.string().optional(),
        reason: z.string().optional(),
        pendingHints: z.number().int(),
      }),
    ),
    lastMaintenance: MaintenanceReport.optional(),
    replication: z
      .object({
        replicasApplied: z.number().int(),
        hintsWritten: z.number().int(),
        lagMs: z.object({ p50: z.number(), p99: z.number(), max: z.number(), samples: z.number().int() }),
      })
      .meta({ description: "Observed by the instance that answered (in AWS, CloudWatch's ReplicationLag metric covers all)" }),
  })
  .meta({ id: 'Shards' });

export const KeySummary = /* @__PURE__ */ z
  .object({
    key: z.string(),
    version: z.number().int(),
    size: z.number().int(),
    contentType: z.string(),
    expiresAt: z.string().optional(),
  })
  .meta({ id: 'KeySummary' });

export const ListKeysResponse = /* @__PURE__ */ z
  .object({ items: z.array(KeySummary), cursor: z.string().optional() })
  .meta({ id: 'ListKeysResponse', description: 'No cursor when the listing is complete' });

export const UploadTicket = /* @__PURE__ */ z
  .object({
    uploadId: z.string(),
    url: z.string(),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()),
    expiresAt: z.string(),
  })
  .meta({ id: 'UploadTicket' });

export const RingResponse = /* @__PURE__ */ z
  .object({
    epoch: z.number().int(),
    replicationFactor: z.number().int(),
    vnodesPerShard: z.number().int(),
    tokenBits: z.literal(32),
    shards: z.array(z.object({ id: z.number().int(), table: z.string(), status: z.string() })),
    ranges: z.array(
      z.object({
        start: z.number().int().meta({ description: 'Exclusive; the first range wraps around' }),
        end: z.number().int().meta({ description: 'Inclusive' }),
        owner: z.number().int(),
        replicas: z.array(z.number().int()).meta({ description: 'Owner first' }),
        fenced: z
          .literal(true)
          .optional()
          .meta({ description: 'A failover is replacing the owner: writes and strong reads of the range answer a retryable 503' }),
        backfilling: z
          .array(z.number().int())
          .optional()
          .meta({ description: 'Replicas a failover added that are still being backfilled: they take writes, serve no reads' }),
      }),
    ),
    rejoining: z
      .array(z.object({ shard: z.number().int(), failover: z.string(), ends: z.array(z.number().int()) }))
      .optional()
      .meta({ description: 'Shards that lost ranges to a failover and serve no reads until they are reconciled' }),
  })
  .meta({ id: 'Ring' });

export const ApiKeyInfo = /* @__PURE__ */ z
  .object({
    keyId: z.string(),
    namespace: z.string(),
    role: z.enum(['user', 'admin']),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
    description: z.string().optional(),
    expiresAt: z.string().optional().meta({ description: 'After it the key no longer authenticates' }),
    lastUsedAt: z.string().optional().meta({ description: 'The last time the authorizer accepted the key, to the minute' }),
    rotatedAt: z.string().optional(),
    previousSecretExpiresAt: z.string().optional().meta({ description: 'Until then the secret before the last rotation works too' }),
  })
  .meta({ id: 'ApiKeyInfo' });

export const ApiKeyCreated = /* @__PURE__ */ ApiKeyInfo.extend({
  apiKey: z.string().meta({ description: 'The secret; shown once, stored only as a hash' }),
}).meta({ id: 'ApiKeyCreated' });

export const ApiKeyList = /* @__PURE__ */ z.object({ keys: z.array(ApiKeyInfo) }).meta({ id: 'ApiKeyList' });

export const RevokedApiKey = /* @__PURE__ */ z.object({ keyId: z.string(), revokedAt: z.string() }).meta({ id: 'RevokedApiKey' });

export const ErrorResponse = /* @__PURE__ */ z
  .object({
    error: z.object({
      code: z.enum(errorCodes),
      message: z.string(),
      retryable: z.boolean(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });

export type WriteAckBody = z.infer<typeof WriteAck>;
export type ListKeysBody = z.infer<typeof ListKeysResponse>;
export type RingBody = z.infer<typeof RingResponse>;
export type ErrorBody = z.infer<typeof ErrorResponse>;

/** For routes that take no query parameters: any name is unknown. */
/** Block volumes' query parameters (their bodies and answers: schemas/volumes.ts). */
export const ListVolumesQuery = /* @__PURE__ */ z.object({
  limit: integerParam(`Page size, 1 to ${limits.listLimitMax}`, 1, limits.listLimitMax).default(limits.listLimitDefault),
  cursor: z.string().min(1).max(4096).optional().meta({ description: 'The cursor of the previous page' }),
});

const epochParam = /* @__PURE__ */ integerParam(
  'The writer epoch its lease gave (POST /v1/volumes/{volume}/lease)',
  1,
  Number.MAX_SAFE_INTEGER,
);

export const WriteVolumeQuery = /* @__PURE__ */ z.object({
  offset: integerParam(`The byte offset the body is written at, 0 to ${volumeLimits.sizeBytesMax}`, 0, volumeLimits.sizeBytesMax),
  epoch: epochParam,
});

export const VolumeEpochQuery = /* @__PURE__ */ z.object({ epoch: epochParam });

export const NoQuery = /* @__PURE__ */ z.object({});

/**
 * The query parameters of every route, by operationId: the one list the handlers parse with, the router
 * checks names against (an unknown one is a 400, never silently ignored) and OpenAPI documents.
 */
export const routeQueries = {
  listKeys: ListKeysQuery,
  getValue: ReadValueQuery,
  headValue: ReadValueQuery,
  putValue: PutValueQuery,
  // The empty-key routes take their keyed twin's parameters, so the answer is the empty key's 400.
  putEmptyKey: PutValueQuery,
  deleteEmptyKey: DeleteValueQuery,
  deleteValue: DeleteValueQuery,
  createUpload: NoQuery,
  incrementValue: IncrementQuery,
  commitUpload: CommitUploadQuery,
  // A batch reads as GET does: its consistency is a query parameter, as on every route that takes one.
  batchGet: ReadValueQuery,
  describeRing: NoQuery,
  watchChanges: WatchQuery,
  listVolumes: ListVolumesQuery,
  createVolume: NoQuery,
  describeVolume: NoQuery,
  deleteVolume: NoQuery,
  readVolume: NoQuery,
  writeVolume: WriteVolumeQuery,
  trimVolume: NoQuery,
  resizeVolume: NoQuery,
  attachVolume: NoQuery,
  detachVolume: VolumeEpochQuery,
  listSnapshots: NoQuery,
  createSnapshot: NoQuery,
  deleteSnapshot: NoQuery,
  readSnapshot: NoQuery,
  transact: TxnQuery,
  listApiKeys: NoQuery,
  createApiKey: NoQuery,
  rotateApiKey: NoQuery,
  listAuditEntries: AuditQuery,
  revokeApiKey: NoQuery,
  listPrincipalMappings: NoQuery,
  createPrincipalMapping: NoQuery,
  deletePrincipalMapping: NoQuery,
  getNamespaceSettings: NoQuery,
  putNamespaceSettings: NoQuery,
  describeShards: NoQuery,
  repair: NoQuery,
  listFailovers: NoQuery,
  startFailover: NoQuery,
  describeDr: NoQuery,
  promote: NoQuery,
  promotionReport: NoQuery,
  startDrSync: NoQuery,
  offerLostValues: NoQuery,
  listLostKeys: LostKeysQuery,
  reconcileLostKey: NoQuery,
  describeRebalance: RebalanceQuery,
  startRebalance: NoQuery,
  pauseRebalance: NoQuery,
  resumeRebalance: NoQuery,
  cancelRebalance: NoQuery,
  setRebalanceRate: NoQuery,
  openApiDocument: NoQuery,
  apiPage: NoQuery,
  apiPageScript: NoQuery,
  apiIndex: NoQuery,
} as const satisfies Record<(typeof routes)[number]['operationId'], z.ZodObject>;

export const ApiIndex = /* @__PURE__ */ z
  .object({
    name: z.literal('Ringstore'),
    docs: z.string().meta({ description: 'The human-readable API reference' }),
    openapi: z.string().meta({ description: 'The OpenAPI 3.1 document' }),
  })
  .meta({
    id: 'ApiIndex',
    description: 'What GET / answers: where the documentation is (paths from the API’s base URL, after the stage in AWS)',
  });
