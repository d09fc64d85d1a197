// GET/HEAD /v1/kv/{key}, GET /v1/kv and POST /v1/batch/get: reads through the ring.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ListKeysQuery, ReadValueQuery } from '../../schemas/api';
import { BatchGetBody } from '../../schemas/kv-batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { KvService } from '../core/kv';
import type { NamespaceRateLimiter } from '../core/quotas';
import { httpErrors } from '../http/errors';
import { flushMetrics, type MetricsSink } from '../http/metrics';
import { admitReads } from '../http/quotas';
import { jsonBody, parseWith, pathParam, principalOf } from '../http/request';
import { batchGetItems, bytes, json, valueHeaders } from '../http/response';
import { router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

export interface KvReadDeps {
  kv: KvService;
  /** The namespace rate a batch get takes its further reads from (the guards take the request's first). */
  rateLimiter: NamespaceRateLimiter;
  guards: RequestGuardDeps;
  logger: Logger;
  /** Flushed after every request: strong writes' replica copies and the requests a failover refused. */
  metrics: readonly MetricsSink[];
}

export function kvReadHandler({ kv, rateLimiter, guards, logger, metrics }: KvReadDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
    .use(flushMetrics(...metrics))
    .handler(
      router('kvRead', {
        getValue: async (event) => {
          const { consistency } = parseWith(ReadValueQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const result = await kv.get(principal.namespace, pathParam(event, 'key'), consistency ?? principal.readConsistency);
          if (result.kind === 'redirect')
            return { statusCode: 303, headers: { ...valueHeaders(result.item), location: result.url }, body: '' };
          return bytes(200, result.value, valueHeaders(result.item));
        },
        headValue: async (event) => {
          const { consistency } = parseWith(ReadValueQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const item = await kv.head(principal.namespace, pathParam(event, 'key'), consistency ?? principal.readConsistency);
          return { statusCode: 200, headers: { ...valueHeaders(item), 'content-length': String(item.size) }, body: '' };
        },
        batchGet: async (event) => {
          const { keys } = parseWith(BatchGetBody, jsonBody(event), 'body');
          const { consistency } = parseWith(ReadValueQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const entries = await kv.batchGet(principal.namespace, keys, {
            consistency: consistency ?? principal.readConsistency,
            admit: admitReads(rateLimiter, principal),
          });
          return json(200, { items: batchGetItems(entries) });
        },
        listKeys: async (event) => {
          const query = parseWith(ListKeysQuery, event.queryStringParameters, 'query');
          const page = await kv.list(principalOf(event).namespace, query);
          const items = page.items.map(({ expiresAtSeconds, ...summary }) => ({
            ...summary,
            ...(expiresAtSeconds === undefined ? {} : { expiresAt: new Date(expiresAtSeconds * 1000).toISOString() }),
          }));
          return json(200, page.cursor ? { items, cursor: page.cursor } : { items });
        },
      }),
    );
}
