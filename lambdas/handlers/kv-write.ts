// PUT/DELETE /v1/kv/{key}, a counter's increment, and the two-step upload of large values.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  CommitUploadBody,
  CommitUploadQuery,
  CreateUploadBody,
  DeleteValueQuery,
  IncrementQuery,
  PutValueHeaders,
  PutValueQuery,
} from '../../schemas/api';
import { IncrementBody } from '../../schemas/kv-increment';
import { RingstoreError } from '../core/errors';
import type { RequestPrincipal } from '../core/auth';
import type { Consistency, KvService, WriteAck } from '../core/kv';
import { httpErrors } from '../http/errors';
import { flushMetrics, type MetricsSink } from '../http/metrics';
import { bodyBytes, conditionsOf, headersOf, jsonBody, parseWith, pathParam, principalOf } from '../http/request';
import { etagOf, json } from '../http/response';
import { type Operation, router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

export interface KvWriteDeps {
  kv: KvService;
  guards: RequestGuardDeps;
  logger: Logger;
  /** Flushed after every request: strong writes' replica copies, the requests a failover refused, key-sync durations. */
  metrics: readonly MetricsSink[];
}

const rejectEmptyKey = async () => {
  throw new RingstoreError('kv.keyInvalid', 'key must not be empty: use /v1/kv/{key}', { details: { field: 'key' } });
};

/**
 * A write's settings from its namespace: the consistency asked (else the namespace's), how it reaches a DR backup,
 * and the storage quota it is counted against (docs/security.md, "Quotas").
 */
const settingsOf = (principal: RequestPrincipal, consistency: Consistency | undefined) => ({
  consistency: consistency ?? principal.writeConsistency,
  drMode: principal.drMode,
  ...(principal.storage ? { storageQuota: principal.storage } : {}),
});

const acknowledged = (status: number, ack: WriteAck) => json(status, ack, { etag: etagOf(ack.version) });

/** POST /v1/kv/{key}/increment: the counter's new value with the write's acknowledgement. */
const incrementWith =
  (kv: KvService): Operation =>
  async (event) => {
    const { by } = parseWith(IncrementBody, jsonBody(event), 'body');
    const { consistency } = parseWith(IncrementQuery, event.queryStringParameters, 'query');
    const principal = principalOf(event);
    const input = { by, ...conditionsOf(event), ...settingsOf(principal, consistency) };
    return acknowledged(200, await kv.increment(principal.namespace, pathParam(event, 'key'), input));
  };

export function kvWriteHandler({ kv, guards, logger, metrics }: KvWriteDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
    .use(flushMetrics(...metrics))
    .handler(
      router('kvWrite', {
        putValue: async (event) => {
          const { ttlSeconds, consistency } = parseWith(PutValueQuery, event.queryStringParameters, 'query');
          const { 'content-type': contentType } = parseWith(PutValueHeaders, headersOf(event), 'header');
          const principal = principalOf(event);
          const ack = await kv.put(principal.namespace, pathParam(event, 'key'), {
            value: bodyBytes(event),
            contentType,
            ttlSeconds,
            ...conditionsOf(event),
            ...settingsOf(principal, consistency),
          });
          return acknowledged(200, ack);
        },
        putEmptyKey: rejectEmptyKey,
        deleteEmptyKey: rejectEmptyKey,
        deleteValue: async (event) => {
          const { consistency } = parseWith(DeleteValueQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          return acknowledged(
            200,
            await kv.delete(principal.namespace, pathParam(event, 'key'), {
              ...conditionsOf(event),
              ...settingsOf(principal, consistency),
            }),
          );
        },
        incrementValue: incrementWith(kv),
        createUpload: async (event) => {
          const body = parseWith(CreateUploadBody, jsonBody(event), 'body');
          return json(201, await kv.createUpload(principalOf(event).namespace, pathParam(event, 'key'), body));
        },
        commitUpload: async (event) => {
          const body = parseWith(CommitUploadBody, jsonBody(event), 'body');
          const { consistency } = parseWith(CommitUploadQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const ack = await kv.commitUpload(principal.namespace, pathParam(event, 'key'), pathParam(event, 'uploadId'), {
            ...body,
            ...conditionsOf(event),
            ...settingsOf(principal, consistency),
          });
          return acknowledged(200, ack);
        },
      }),
    );
}
