// Every error code a client can see and the HTTP status it answers with: the contract shared by the
// handlers (lambdas/http), the gateway's own error responses (cdk/) and the OpenAPI document.

export const errorCodes = [
  'request.invalid',
  'request.tooLarge',
  'route.notFound',
  'route.methodNotAllowed',
  'kv.keyInvalid',
  'kv.ttlInvalid',
  'kv.cursorInvalid',
  'watch.cursorInvalid',
  'watch.cursorForeign',
  'watch.cursorExpired',
  'kv.notFound',
  'kv.preconditionFailed',
  'kv.valueTooLarge',
  'kv.uploadNotFound',
  'kv.checksumMismatch',
  'kv.notAnInteger',
  'kv.outOfRange',
  'auth.missingKey',
  'auth.invalidKey',
  'auth.forbidden',
  'auth.principalUnmapped',
  'auth.invalidSignature',
  'auth.unknownAccessKey',
  'auth.signatureExpired',
  'admin.keyNotFound',
  'admin.keyRevoked',
  'admin.principalNotFound',
  'admin.principalExists',
  'admin.namespaceUnknown',
  'txn.conflict',
  'txn.timeout',
  'txn.outcomeUnknown',
  'throttled',
  'shard.unavailable',
  'shard.failingOver',
  'replication.pending',
  'dr.lost',
  'dr.backupReadOnly',
  'dr.backupUnreachable',
  'dr.demoted',
  'dr.noPromotion',
  'dr.notLost',
  'dr.notPromoted',
  'dr.noOffer',
  'dr.corruptOffer',
  'dr.cannotRestore',
  'rebalance.refused',
  'rebalance.notFound',
  'rebalance.conflict',
  'rebalance.unavailable',
  'quota.rate',
  'quota.keys',
  'quota.bytes',
  'quota.unsupported',
  'volume.nameInvalid',
  'volume.sizeInvalid',
  'volume.notFound',
  'volume.exists',
  'volume.deleting',
  'volume.rangeNotSatisfiable',
  'volume.ioTooLarge',
  'volume.fenced',
  'volume.leaseHeld',
  'volume.shrinkBelowData',
  'volume.snapshotNotFound',
  'volume.snapshotExists',
  'volume.snapshotLimit',
  'volume.snapshotUnfinished',
  'volume.creating',
  'volume.hasClones',
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** The HTTP status of each code; docs/api.md lists them for users. */
export const statusOf: Record<ErrorCode, number> = {
  'request.invalid': 400,
  'kv.keyInvalid': 400,
  'kv.ttlInvalid': 400,
  'kv.cursorInvalid': 400,
  'watch.cursorInvalid': 400,
  'watch.cursorForeign': 403,
  'watch.cursorExpired': 410,
  'kv.checksumMismatch': 400,
  'auth.missingKey': 401,
  'auth.invalidKey': 403,
  'auth.forbidden': 403,
  // IAM (docs/security.md, "IAM authentication"): a signed caller no mapping names, and the local gateway's
  // SigV4 refusals (API Gateway answers its own INVALID_SIGNATURE, EXPIRED_TOKEN, ... with these codes too).
  'auth.principalUnmapped': 403,
  'auth.invalidSignature': 403,
  'auth.unknownAccessKey': 403,
  'auth.signatureExpired': 403,
  'route.notFound': 404,
  // A known path with a method it does not have; the answer's Allow header lists those it has.
  'route.methodNotAllowed': 405,
  'kv.notFound': 404,
  'kv.uploadNotFound': 404,
  'admin.keyNotFound': 404,
  // A rotation of a revoked key (revocation is final), or of one rotated or revoked by another request meanwhile.
  'admin.keyRevoked': 409,
  'admin.principalNotFound': 404,
  'admin.principalExists': 409,
  // A principal mapped to a namespace no API key and no settings name: most likely a typo.
  'admin.namespaceUnknown': 400,
  'kv.preconditionFailed': 412,
  // An increment of a key whose value is not a decimal integer, or whose sum would leave the safe integers: the
  // request is well formed, the key's state refuses it, and nothing is written.
  'kv.notAnInteger': 409,
  'kv.outOfRange': 409,
  'txn.conflict': 409,
  'txn.timeout': 409,
  'txn.outcomeUnknown': 503,
  'kv.valueTooLarge': 413,
  'request.tooLarge': 413,
  throttled: 429,
  'shard.unavailable': 503,
  'shard.failingOver': 503,
  'replication.pending': 503,
  'dr.lost': 410,
  'dr.backupReadOnly': 403,
  'dr.backupUnreachable': 503,
  'dr.demoted': 403,
  'dr.noPromotion': 404,
  // Reconciliation (docs/dr.md): no such lost entry; a region not promoted, a value not offered back
  // (or not matching its sha256), or a lost version that cannot be restored as it stands.
  'dr.notLost': 404,
  'dr.notPromoted': 409,
  'dr.noOffer': 409,
  'dr.corruptOffer': 409,
  'dr.cannotRestore': 409,
  // Rebalancing (docs/rebalancing.md): a start the ring cannot take (a failover's state, a shard named
  // wrongly, too few shards left); no rebalance to act on; an action its state does not allow.
  'rebalance.refused': 409,
  'rebalance.notFound': 404,
  'rebalance.conflict': 409,
  // A deployment without the rebalance workflow: nothing is started, rather than a rebalance that never runs.
  'rebalance.unavailable': 503,
  // Per-namespace limits (docs/security.md, "Quotas"): the request rate, the keys and the bytes stored. A
  // namespace over its own limit is throttled, never served a 5xx; `details.limit` names the limit.
  'quota.rate': 429,
  'quota.keys': 429,
  'quota.bytes': 429,
  // An operation a namespace's storage quota cannot count exactly (a write transaction), or a quota that
  // cannot be set (a namespace too large to count): nothing is changed.
  'quota.unsupported': 409,
  // Block volumes (docs/volumes.md): a bad name or size; no such volume; a name taken; a volume being deleted
  // (its delete goes on with DELETE); a byte range past the volume's end; a read or write over the atomic maximum.
  'volume.nameInvalid': 400,
  'volume.sizeInvalid': 400,
  'volume.notFound': 404,
  'volume.exists': 409,
  'volume.deleting': 409,
  'volume.rangeNotSatisfiable': 416,
  'volume.ioTooLarge': 413,
  // One writer at a time (docs/volumes.md, "One writer"): a write or detach of an epoch another writer has taken over
  // from; an attach while another holder's lease is live (details.holder).
  'volume.fenced': 409,
  'volume.leaseHeld': 409,
  // A shrink that would cut off written blocks (details.dataAtByte): trim them first.
  'volume.shrinkBelowData': 409,
  // Snapshots (docs/volumes.md, "Snapshots"): no such snapshot; a name taken; the volume's snapshots at their
  // maximum (details.max); a snapshot whose creation or deletion was cut short (the same request again finishes it).
  'volume.snapshotNotFound': 404,
  'volume.snapshotExists': 409,
  'volume.snapshotLimit': 409,
  'volume.snapshotUnfinished': 409,
  // Clones (docs/volumes.md, "Clones"): a clone whose creation was cut short (the same request again finishes it);
  // a snapshot, or a volume with a snapshot, that live clones read from (details.clones): delete them first.
  'volume.creating': 409,
  'volume.hasClones': 409,
  internal: 500,
};

/** Seconds a client should wait before retrying a 429/503. */
export const retryAfterSeconds = 1;

/**
 * The answer to a path under /v1/kv/ with more segments than any route (a key sent with raw slashes), locally
 * and in API Gateway: keys are one path segment, so the client is told how to send the slash.
 */
export const keySlashHint = 'a key is one path segment: percent-encode each / in it as %2F';
