// PUT/DELETE /v1/kv/{key} and the two-step upload of large values.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { CommitUploadBody, CommitUploadQuery, CreateUploadBody, DeleteValueQuery, PutValueHeaders, PutValueQuery } from '../../schemas/api';
import { RingstoreError } from '../core/errors';
import type { RequestPrincipal } from '../core/auth';
import type { WriteAck } from '../core/kv';
import { httpErrors } from '../http/errors';
import { flushMetrics } from '../http/metrics';
import { failoverStats, replicationStats } from '../wiring/data';
import { bodyBytes, conditionsOf, headersOf, jsonBody, parseWith, pathParam, principalOf } from '../http/request';
import { etagOf, json } from '../http/response';
import { router } from '../http/router';
import { kvService } from '../wiring/services';
import { callerAndQuotas } from './request-guards';
import { drStats } from '../wiring/dr';
import type { Wiring } from '../wiring/wiring';

const rejectEmptyKey = async () => {
  throw new RingstoreError('kv.keyInvalid', 'key must not be empty: use /v1/kv/{key}', { details: { field: 'key' } });
};

/** The namespace's storage quota, which its writes are counted against (docs/security.md, "Quotas"). */
const storageOf = (principal: RequestPrincipal) => (principal.storage ? { storageQuota: principal.storage } : {});

const acknowledged = (status: number, ack: WriteAck) => json(status, ack, { etag: etagOf(ack.version) });

export function kvWriteHandler(wiring: Wiring) {
  const kv = kvService(wiring);
  const { logger } = wiring;

  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(httpErrors(logger))
      .use(callerAndQuotas(wiring))
      // Strong writes' replica copies, the requests a failover refused, key-sync durations.
      .use(flushMetrics(replicationStats(wiring), failoverStats(wiring), drStats(wiring)))
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
              consistency: consistency ?? principal.writeConsistency,
              drMode: principal.drMode,
              ...storageOf(principal),
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
                consistency: consistency ?? principal.writeConsistency,
                drMode: principal.drMode,
                ...storageOf(principal),
              }),
            );
          },
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
              consistency: consistency ?? principal.writeConsistency,
              drMode: principal.drMode,
              ...storageOf(principal),
            });
            return acknowledged(200, ack);
          },
        }),
      )
  );
}
