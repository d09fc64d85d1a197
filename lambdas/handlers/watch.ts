// GET /v1/watch: the changes of the caller's namespace after a cursor, by key prefix, with a long poll (docs/watch.md).
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { WatchQuery, type WatchResponseBody } from '../../schemas/watch';
import type { WatchPage, WatchService } from '../core/watch';
import { httpErrors } from '../http/errors';
import { parseWith, principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

export interface WatchDeps {
  watch: WatchService;
  guards: RequestGuardDeps;
  logger: Logger;
}

const isoOf = (ms: number) => new Date(ms).toISOString();

export function watchBody(page: WatchPage): WatchResponseBody {
  return {
    changes: page.changes.map(({ entry, cursor }) => ({
      key: entry.key,
      version: entry.version,
      operation: entry.operation,
      contentType: entry.contentType,
      size: entry.size,
      ...(entry.value !== undefined
        ? { value: Buffer.from(entry.value).toString('base64') }
        : entry.operation === 'put'
          ? { valueOmitted: true as const }
          : {}),
      ...(entry.txid === undefined ? {} : { txid: entry.txid }),
      ...(entry.modifiedAtMs === undefined ? {} : { modifiedAt: isoOf(entry.modifiedAtMs) }),
      ...(entry.expiresAtSeconds === undefined ? {} : { expiresAt: isoOf(entry.expiresAtSeconds * 1000) }),
      cursor,
    })),
    cursor: page.cursor,
  };
}

export function watchHandler({ watch, guards, logger }: WatchDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
    .handler(
      router('watch', {
        watchChanges: async (event) => {
          const query = parseWith(WatchQuery, event.queryStringParameters, 'query');
          const page = await watch.watch(principalOf(event).namespace, {
            prefix: query.prefix,
            ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
            waitMs: query.waitSeconds * 1000,
            limit: query.limit,
          });
          return json(200, watchBody(page));
        },
      }),
    );
}
