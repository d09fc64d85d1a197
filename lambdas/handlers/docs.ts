// GET /openapi.json, GET /docs and its script: the API contract, generated from the zod schemas, and its
// reference page; GET /: where they are.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiIndex } from '../../schemas/api';
import { buildOpenApiDocument } from '../../schemas/openapi';
import { apiPageHtml, offlineApiPageScript } from '../../schemas/api-page';
import { apiPageScriptFile } from '../../schemas/topology';
import { readBundledFile } from '../http/bundled-file';
import { httpErrors } from '../http/errors';
import { json } from '../http/response';
import { router } from '../http/router';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { z } from 'zod';

const document = buildOpenApiDocument();
const page = apiPageHtml(document);
// Redoc's browser bundle (docs' spec lists it in bundledFiles), read once per instance.
const script = offlineApiPageScript(readBundledFile(apiPageScriptFile));
const index: z.input<typeof ApiIndex> = { name: 'Ringstore', docs: '/docs', openapi: '/openapi.json' };

export interface DocsDeps {
  logger: Logger;
}

export function docsHandler({ logger }: DocsDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .handler(
      router('docs', {
        openApiDocument: async () => json(200, document, { 'cache-control': 'public, max-age=300' }),
        apiPage: async () => ({
          statusCode: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300' },
          body: page,
        }),
        // The URL is not versioned, so a day rather than forever: a Redoc upgrade reaches browsers by the next day.
        apiPageScript: async () => ({
          statusCode: 200,
          headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' },
          body: script,
        }),
        apiIndex: async () => json(200, index),
      }),
    );
}
