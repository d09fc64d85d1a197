// Builds the OpenAPI 3.1 document from the zod schemas (schemas/api.ts) and the routes (topology).
import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { limits, rebalanceDefaults, routes, txnLimits, watchDefaults, type RouteSpec } from './topology';
import * as api from './api';
import { error, json, jsonBody, keyParam, type Operation } from './openapi-helpers';
import { kvBatchAndCounterOperations } from './openapi-kv';
import { WatchResponse } from './watch';
import { volumeOperations } from './openapi-volumes';
import { version as packageVersion } from '../package.json';

const valueHeaders = {
  ETag: { description: 'The version, quoted', schema: { type: 'string' as const } },
  'x-ringstore-version': { description: 'The version', schema: { type: 'integer' as const } },
  'x-ringstore-expires-at': { description: 'When the key expires (ISO 8601), if it has a TTL', schema: { type: 'string' as const } },
};
/** Every answer names its request (lambdas/http/request-id.ts), API Gateway's own error answers included. */
const requestIdHeaders = {
  'x-request-id': {
    description: "The request's id (API Gateway's request id): quote it to find the request's log lines and trace",
    schema: { type: 'string' as const },
  },
};

/** The responses of an operation, each with the request id among its headers. */
function withRequestId(responses: RouteConfig['responses']): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]): [string, (typeof responses)[string]] => {
      if ('$ref' in response) return [status, response];
      // The headers here are plain header objects; a zod object (the library allows one) would need merging as zod.
      const own = response.headers;
      if (own instanceof z.ZodType) throw new Error(`response ${status}: headers as a zod object are not merged with x-request-id`);
      return [status, { ...response, headers: { ...requestIdHeaders, ...own } }];
    }),
  );
}

const common = {
  400: error('Bad input: the message names the field'),
  401: error('Missing x-api-key header'),
  403: error('Unknown or revoked API key, or not an admin key'),
  429: error('Throttled; retry after Retry-After seconds'),
  503: error('A shard is unavailable; retry after Retry-After seconds'),
};
const valueResponses = {
  200: {
    description: 'The value, with the content type it was stored with',
    headers: valueHeaders,
    content: { '*/*': { schema: { type: 'string' as const, format: 'binary' } } },
  },
  303: {
    description: `Values over ${limits.directBodyBytesMax} bytes: fetch the presigned URL in Location`,
    headers: { ...valueHeaders, Location: { schema: { type: 'string' as const } } },
  },
  404: error('No such key (never written, deleted, or expired)'),
};
const writeResponses = {
  200: { ...json(api.WriteAck, 'Written; the new version is also the ETag'), headers: { ETag: valueHeaders.ETag } },
  412: error(
    'If-Match or If-None-Match did not hold (If-Match is evaluated first; details.field names the one that failed). Nothing was written',
  ),
  503: error('Strong write: no replica could take the version (not acknowledged; the owner may hold it). Or the owner is unavailable'),
};

const operations: Record<string, Operation> = {
  listKeys: {
    summary: 'List keys by prefix, in key order, across all shards',
    responses: { 200: json(api.ListKeysResponse, 'A page of keys') },
  },
  getValue: {
    summary: 'Read a value',
    request: { params: keyParam },
    responses: valueResponses,
  },
  headValue: {
    summary: "Read a value's metadata",
    request: { params: keyParam },
    responses: { 200: { description: 'Metadata only', headers: valueHeaders }, 404: { description: 'No such key' } },
  },
  putValue: {
    summary: `Write a value (body up to ${limits.directBodyBytesMax} bytes; larger values use the upload flow)`,
    request: {
      params: keyParam,

      headers: api.ConditionalHeaders,
      body: {
        description:
          'The value. Its Content-Type is stored and sent back on reads: a media type (type/subtype, optional parameters, ' +
          `at most ${limits.contentTypeCharsMax} characters), else 400 with details.field content-type; none: application/octet-stream`,
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      },
    },
    responses: { ...writeResponses, 413: error('Body over the direct limit: use POST /v1/kv/{key}/uploads') },
  },
  putEmptyKey: { summary: 'Always 400: a key must not be empty', responses: { 400: error('Empty key') } },
  deleteEmptyKey: { summary: 'Always 400: a key must not be empty', responses: { 400: error('Empty key') } },
  deleteValue: {
    summary: 'Delete a key (a versioned tombstone)',
    request: { params: keyParam, headers: api.ConditionalHeaders },
    responses: { ...writeResponses, 404: error('No such key, and the conditions, if any, held (If-None-Match: * on an absent key)') },
  },
  createUpload: {
    summary: `Start an upload of a value up to ${limits.valueBytesMax} bytes: returns a presigned PUT URL`,
    request: { params: keyParam, body: jsonBody(api.CreateUploadBody, { size: 8_388_608, contentType: 'video/mp4' }) },
    responses: {
      201: json(api.UploadTicket, 'PUT the bytes to url with headers, then commit'),
      413: error('Declared size over the limit'),
    },
  },
  commitUpload: {
    summary: 'Make uploaded bytes the value of the key, atomically and versioned',
    request: {
      params: keyParam.extend({ uploadId: z.string() }),

      headers: api.ConditionalHeaders,
      body: jsonBody(api.CommitUploadBody, {
        sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        contentType: 'video/mp4',
      }),
    },
    responses: { ...writeResponses, 404: error('No such upload, or no bytes uploaded yet'), 413: error('Uploaded bytes over the limit') },
  },
  ...kvBatchAndCounterOperations,
  ...volumeOperations,
  describeRing: {
    summary: 'Describe the ring: epoch, shards, token ranges with owners and replicas',
    responses: { 200: json(api.RingResponse, 'The ring') },
  },
  watchChanges: {
    summary:
      'Watch the namespace’s changes by key prefix from a cursor (a long poll with waitSeconds): every acknowledged write, ' +
      'delete and expiry after the cursor, at least once, a key’s in version order; a cursor survives failovers, rebalances ' +
      `and restarts for the feed’s retention (${watchDefaults.retentionSeconds / 3600} hours by default)`,
    responses: {
      200: json(WatchResponse, 'The changes after the cursor (none when the wait ran out) and the cursor to continue from'),
      400: error('A bad parameter (details.field), or a cursor Ringstore did not give or that was edited (watch.cursorInvalid)'),
      403: error('A cursor of another namespace’s feed (watch.cursorForeign)'),
      410: error(
        'The cursor is older than the retention (watch.cursorExpired): changes after it may be gone. details.oldestCursor is ' +
          'the oldest still served; re-read the keys you follow and continue from it (or from now)',
      ),
      429: error('The namespace’s rate: each watch request counts as a read (quota.rate)'),
    },
  },
  transact: {
    summary: `Run a transaction: up to ${txnLimits.txnOpsMax} get, put, delete and check ops over any keys, atomic and serializable`,
    request: {
      body: jsonBody(api.TxnBody, {
        ops: [
          { op: 'check', key: 'account/alice', ifVersion: 3 },
          { op: 'put', key: 'account/alice', value: '90', ifVersion: 3 },
          { op: 'put', key: 'account/bob', value: '110' },
        ],
      }),
    },
    responses: {
      200: json(api.TxnCommitted, 'Committed: the new versions and the values read'),
      404: error('Aborted: a delete of a key that does not exist (details: txid, key)'),
      409: error(
        'Aborted: another transaction holds a key, or a read key changed, or the deadline passed; retry (details: txid, reason, key)',
      ),
      412: error('Aborted: a check or ifVersion did not hold (details: txid, key)'),
      413: error('Values written or read over the transaction limit'),
      503: error('The outcome is not known yet (txn.outcomeUnknown): read the keys strongly before retrying'),
    },
  },
  listApiKeys: { summary: 'List API keys (admin)', responses: { 200: json(api.ApiKeyList, 'All keys, without secrets') } },
  createApiKey: {
    summary: 'Create an API key for a namespace (admin)',
    request: { body: jsonBody(api.CreateApiKeyBody, { namespace: 'demo', description: 'demo app' }) },
    responses: { 201: json(api.ApiKeyCreated, 'The key; the secret is shown only here') },
  },
  listAuditEntries: {
    summary: 'The audit trail of admin operations that change something, newest first (admin): who, what, when, outcome',
    request: { query: api.AuditQuery },
    responses: { 200: json(api.AuditPage, 'A page of entries; a cursor while more remain'), 400: error('A bad limit or cursor') },
  },
  rotateApiKey: {
    summary:
      'Rotate an API key (admin): a new secret for the same key id; the current one keeps working for graceSeconds (default an hour)',
    request: { params: api.KeyIdParam, body: jsonBody(api.RotateApiKeyBody, { graceSeconds: 86400 }) },
    responses: {
      200: json(api.ApiKeyCreated, 'The key with its new secret, shown only here'),
      404: error('No such key'),
      409: error('The key is revoked, or was rotated by another request meanwhile (admin.keyRevoked)'),
    },
  },
  revokeApiKey: {
    summary: 'Revoke an API key (admin); takes effect within the authorizer cache TTL',
    request: { params: api.KeyIdParam },
    responses: { 200: json(api.RevokedApiKey, 'Revoked'), 404: error('No such key') },
  },
  listPrincipalMappings: {
    summary: 'List the IAM principals mapped to namespaces (admin)',
    responses: { 200: json(api.PrincipalMappingList, 'Every mapping') },
  },
  createPrincipalMapping: {
    summary: 'Map an IAM role or user to a namespace and role (admin): its SigV4-signed requests act as that namespace',
    request: {
      body: jsonBody(api.CreatePrincipalMappingBody, { principalArn: 'arn:aws:iam::123456789012:role/demo-app', namespace: 'demo' }),
    },
    responses: {
      201: json(api.PrincipalMappingInfo, 'The mapping'),
      400: error('Not a role or user ARN (request.invalid), or a namespace nothing names yet (admin.namespaceUnknown)'),
      409: error('The principal is mapped already (admin.principalExists)'),
    },
  },
  deletePrincipalMapping: {
    summary: "Delete an IAM principal's mapping (admin); takes effect within the handlers' cache TTL",
    request: { params: api.PrincipalArnParam },
    responses: { 200: json(api.PrincipalMappingInfo, 'The mapping deleted'), 404: error('No such mapping (admin.principalNotFound)') },
  },
  getNamespaceSettings: {
    summary: "A namespace's default consistency, DR mode and quotas, with its usage under a storage quota (admin)",
    request: { params: api.NamespaceParam },
    responses: { 200: json(api.NamespaceSettingsResponse, 'The defaults (eventual/eventual unless set)') },
  },
  putNamespaceSettings: {
    summary:
      "Set a namespace's default consistency, DR mode, request rate or storage quota (admin); applies within the authorizer cache TTL",
    request: {
      params: api.NamespaceParam,
      body: jsonBody(api.NamespaceSettingsBody, { readConsistency: 'strong', writeConsistency: 'strong' }),
    },
    responses: { 200: json(api.NamespaceSettingsResponse, 'The defaults now in force') },
  },
  describeShards: {
    summary: 'Shard health, hints waiting per shard, the last maintenance report, replication lag (admin)',
    responses: { 200: json(api.ShardsResponse, 'Shard status') },
  },
  repair: {
    summary: 'Run hinted handoff and a full anti-entropy pass now, and report what was repaired (admin)',
    responses: { 200: json(api.MaintenanceReport, 'What this run replayed and repaired') },
  },
  listFailovers: {
    summary: 'The recent failovers, newest first: running and finished, what each range chose and why (admin)',
    responses: { 200: json(api.FailoversResponse, 'Failover records') },
  },
  startFailover: {
    summary: 'Fail over a shard by hand: its token ranges get new owners among their replicas once it is confirmed down (admin)',
    request: { body: jsonBody(api.FailoverStartBody, { shard: 2, reason: 'shard 2 table unreachable' }) },
    responses: { 202: json(api.FailoverStarted, 'The failover workflow runs; GET /v1/admin/failovers follows it') },
  },
  describeDr: {
    summary: 'Cross-region DR: this region’s role, its backup’s state, the pending and lost keys of a backup (admin)',
    responses: { 200: json(api.DrStatusResponse, 'DR status') },
  },
  promote: {
    summary: 'Promote this backup region: fence the primary, drain, mark undelivered keys lost, open for writes (admin)',
    request: { body: jsonBody(api.PromoteBody, { reason: 'primary region down' }) },
    responses: { 202: json(api.PromotionStarted, 'The promotion workflow runs; GET /v1/admin/dr/report follows it') },
  },
  promotionReport: {
    summary: 'The newest promotion of this region: its steps’ findings and the lost keys (admin)',
    responses: { 200: json(api.PromotionReportResponse, 'Promotion report'), 404: error('No promotion yet') },
  },
  startDrSync: {
    summary: 'DR primary: ship every key to the backup once (the initial sync of data written before DR), range by range (admin)',
    responses: { 202: json(api.DrSyncResponse, 'The sync runs with maintenance; GET /v1/admin/dr/status follows it') },
  },
  offerLostValues: {
    summary:
      'The old DR primary, demoted: offer back the values it holds of the keys its backup’s promotion marked lost, to the promoted region’s bucket (admin)',
    request: { body: jsonBody(api.OfferBody, { from: 0 }) },
    responses: {
      200: json(api.OfferResponse, 'What was offered; continue from `next` when present'),
      404: error('The backup was never promoted (dr.noPromotion)'),
      409: error('The backup’s promotion has not completed (dr.notPromoted)'),
    },
  },
  listLostKeys: {
    summary: 'DR backup: the keys a promotion marked lost, each with its offered value (if any) and the version held now (admin)',
    responses: { 200: json(api.LostKeysResponse, 'A page of lost keys') },
  },
  reconcileLostKey: {
    summary: 'Promoted DR region: restore a lost key’s offered value as a new write of the key, or discard the lost write (admin)',
    request: { body: jsonBody(api.ReconcileBody, { namespace: 'demo', key: 'order-7', version: 4, action: 'restore' }) },
    responses: {
      200: json(api.ReconcileResponse, 'Restored or discarded; the key is no longer lost'),
      404: error('No such lost write (dr.notLost)'),
      409: error(
        'The region is not promoted (dr.notPromoted), no value was offered back (dr.noOffer), the offer does not match the lost write ' +
          '(dr.corruptOffer), or the version cannot be restored (dr.cannotRestore: not the newest lost write of the key, or expired)',
      ),
      412: error('The key does not hold expectVersion, or (without it) was written at or past the lost version since the promotion'),
    },
  },
  describeRebalance: {
    summary: 'The current (or last) rebalance: status, ranges moved of the total, keys copied, keys per second, progress and ETA (admin)',
    responses: {
      200: json(api.RebalanceResponse, 'The rebalance; with ?ranges=true every moving range too'),
      404: error('No rebalance has run (rebalance.notFound)'),
    },
  },
  startRebalance: {
    summary:
      `Add shards (up to ${rebalanceDefaults.shardsAddedMax} at once, ids after the highest) or remove shards, online: ranges are ` +
      'copied at a bounded rate and cut over one at a time while reads and writes go on (admin)',
    request: { body: jsonBody(api.RebalanceStartBody, { add: 1, rateKeysPerSecond: 5_000 }) },
    responses: {
      202: json(api.RebalanceResponse, 'Started; GET /v1/admin/rebalance follows it'),
      409: error(
        'The ring cannot take it (rebalance.refused: a shard named wrongly, too few left for the replication factor, a failover ' +
          'not finished) or a rebalance is already running or paused (rebalance.conflict)',
      ),
      503: error('This deployment has no rebalance workflow (rebalance.unavailable): nothing was started'),
    },
  },
  pauseRebalance: {
    summary: 'Pause the rebalance after its current step; every stage resumes from its checkpoint (admin)',
    request: { params: api.RebalanceIdParam },
    responses: {
      202: json(api.RebalanceResponse, 'Asked for: `requested` is pause until the workflow stops'),
      404: error('No rebalance with this id is the current one (rebalance.notFound)'),
      409: error('Only a running (or cancelling) rebalance pauses (rebalance.conflict)'),
    },
  },
  resumeRebalance: {
    summary: 'Resume a paused rebalance: a new run of its workflow goes on from the checkpoint (admin)',
    request: { params: api.RebalanceIdParam },
    responses: {
      202: json(api.RebalanceResponse, 'Resumed'),
      404: error('No rebalance with this id is the current one (rebalance.notFound)'),
      409: error('Only a paused rebalance resumes (rebalance.conflict)'),
      503: error('This deployment has no rebalance workflow (rebalance.unavailable)'),
    },
  },
  cancelRebalance: {
    summary: 'Cancel the rebalance: the ranges that had moved are moved back, and the ring ends as it began (admin)',
    request: { params: api.RebalanceIdParam },
    responses: {
      202: json(api.RebalanceResponse, 'Asked for: `requested` is cancel, then the status is cancelling, then cancelled'),
      404: error('No rebalance with this id is the current one (rebalance.notFound)'),
      409: error('A rebalance that has ended is not cancelled (rebalance.conflict)'),
      503: error('This deployment has no rebalance workflow (rebalance.unavailable)'),
    },
  },
  setRebalanceRate: {
    summary: 'Change the copy rate of a rebalance that has not ended; it applies from the next page copied (admin)',
    request: { params: api.RebalanceIdParam, body: jsonBody(api.RebalanceRateBody, { rateKeysPerSecond: 20_000 }) },
    responses: {
      200: json(api.RebalanceResponse, 'The rebalance with its new rate'),
      404: error('No rebalance with this id is the current one (rebalance.notFound)'),
      409: error('The rebalance has ended (rebalance.conflict)'),
    },
  },
  openApiDocument: { summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1 JSON' } } },
  apiPage: { summary: 'Human-readable API reference (this page)', responses: { 200: { description: 'HTML' } } },
  apiPageScript: {
    summary: 'The script that renders the API reference (Redoc), served here so the page needs no internet',
    responses: { 200: { description: 'JavaScript' } },
  },
  apiIndex: { summary: 'Where the documentation is', responses: { 200: json(api.ApiIndex, 'Links to the API reference') } },
};

/**
 * Routes that exist only to answer a clear 400 ("Always 400"): listed last, under their own tag, so the
 * reference opens on the operations a client uses.
 */
const placeholderOperations: ReadonlySet<string> = new Set(['putEmptyKey', 'deleteEmptyKey']);

/** The tags in the order the reference lists them; `x-displayName` is the heading it shows. */
const tags = [
  {
    name: 'kv',
    'x-displayName': 'Keys and values',
    description: 'Read, write, list and delete keys; batch reads; counters; uploads; transactions; the ring.',
  },
  {
    name: 'volumes',
    'x-displayName': 'Block volumes',
    description: 'Sparse 4 KiB-block disks of a namespace: atomic reads and writes of up to 256 KiB at any offset (docs/volumes.md).',
  },
  { name: 'admin', 'x-displayName': 'Administration', description: 'Needs an **admin** API key (`x-api-key`).' },
  { name: 'docs', 'x-displayName': 'Documentation', description: 'No API key needed.' },
  {
    name: 'invalid',
    'x-displayName': 'Invalid requests',
    description: 'Routes that exist only to refuse a request clearly (`400`) instead of answering "no such route".',
  },
] as const;

type Tag = (typeof tags)[number]['name'];

const tagOf = (route: RouteSpec): Tag =>
  placeholderOperations.has(route.operationId)
    ? 'invalid'
    : route.path.startsWith('/v1/admin')
      ? 'admin'
      : route.path.startsWith('/v1/volumes')
        ? 'volumes'
        : route.authorized
          ? 'kv'
          : 'docs';

/** Example values of path parameters in the curl samples; a parameter without one fails the build. */
const pathParamExamples: Record<string, string> = {
  key: 'greeting',
  uploadId: '$UPLOAD_ID',
  keyId: '$KEY_ID',
  namespace: 'demo',
  id: '$REBALANCE_ID',
  principalArn: 'arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo-app',
  volume: 'disk',
  snapshot: 'before-upgrade',
};

/** Example query strings of the curl samples, where a query is the point of the operation. */
const queryExamples: Partial<Record<string, string>> = {
  listKeys: '?prefix=order-&limit=10',
  getValue: '?consistency=strong',
  batchGet: '?consistency=strong',
  watchChanges: '?prefix=orders/&waitSeconds=20',
  writeVolume: '?offset=4096&epoch=1',
  detachVolume: '?epoch=1',
};

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The curl line of one operation, from its route and request: `$RS` is the API's URL and `$KEY` (or
 * `$ADMIN_KEY`) an API key, as in the README.
 */
export function curlSample(route: RouteSpec, operation: Operation): string {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const example = pathParamExamples[name];
    if (example === undefined) throw new Error(`no example value for path parameter ${name} of ${route.operationId}`);
    return example;
  });
  const method = route.method === 'GET' ? [] : route.method === 'HEAD' ? ['-I'] : ['-X', route.method];
  const key = route.authorized ? ['-H', `"x-api-key: ${route.admin ? '$ADMIN_KEY' : '$KEY'}"`] : [];
  const content = operation.request?.body?.content ?? {};
  const jsonExample = (content['application/json'] as { example?: unknown } | undefined)?.example;
  const body =
    jsonExample !== undefined
      ? ['-H', "'content-type: application/json'", '--data', shellQuote(JSON.stringify(jsonExample))]
      : content['*/*']
        ? ['-H', "'content-type: text/plain'", '--data', "'hello'"]
        : [];
  if (Object.keys(content).length > 0 && body.length === 0) throw new Error(`no example body for ${route.operationId}`);
  return ['curl', ...method, `"$RS${path}${queryExamples[route.operationId] ?? ''}"`, ...key, ...body].join(' ');
}

export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'x-api-key' });
  // OpenAPI has no SigV4 scheme: the signature travels in Authorization (docs/security.md, "IAM authentication").
  registry.registerComponent('securitySchemes', 'sigv4', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'AWS SigV4 (service execute-api), on a deployment with IAM authorization (CDK context auth=iam, or the IAM API of auth=both); ' +
      'the caller must be mapped to a namespace with POST /v1/admin/principals',
  });
  // Placeholders last: Redoc lists operations in the order of the document.
  const ordered = [
    ...routes.filter((r) => !placeholderOperations.has(r.operationId)),
    ...routes.filter((r) => placeholderOperations.has(r.operationId)),
  ];
  for (const route of ordered) {
    const operation = operations[route.operationId];
    if (!operation) throw new Error(`no OpenAPI description for ${route.operationId}`);
    // Query parameters come from the one list the router enforces (schemas/api.ts routeQueries).
    const query: z.ZodObject = api.routeQueries[route.operationId];
    const request = Object.keys(query.shape).length === 0 ? operation.request : { ...operation.request, query };
    registry.registerPath({
      method: route.method.toLowerCase() as RouteConfig['method'],
      path: route.path,
      operationId: route.operationId,
      tags: [tagOf(route)],
      ...(route.authorized ? { security: [{ apiKey: [] }, { sigv4: [] }] } : { security: [] }),
      ...operation,
      ...(request === undefined ? {} : { request }),
      responses: withRequestId(route.authorized ? { ...common, ...operation.responses } : operation.responses),
      // Shown by Redoc as the operation's request sample, beside the payload example.
      'x-codeSamples': [{ lang: 'Shell', label: 'curl', source: curlSample(route, operation) }],
    });
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Ringstore API',
      // One version for the service: the package's (what /docs shows is what `npm start` runs).
      version: packageVersion,
      description:
        'A key-value store on a consistent-hash ring of DynamoDB shard tables. Every request carries an API key ' +
        '(x-api-key) that maps to a namespace, or, where the deployment takes IAM authorization, a SigV4 signature of an ' +
        'IAM principal mapped to one; errors are JSON `{ "error": { "code", "message", "retryable" } }`. ' +
        'Every answer carries `x-request-id`, the id of the request in the logs.\n\n' +
        'The curl samples expect `RS` (the API URL, `http://127.0.0.1:4510` for `npm start`), `KEY` (an API key) and ' +
        '`ADMIN_KEY` (an admin key) in the environment.',
    },
    tags: [...tags],
  });
  return document;
}
