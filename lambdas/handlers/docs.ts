// GET /openapi.json and GET /docs: the API contract, generated from the zod schemas; GET /: where they are.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiIndex } from '../../schemas/api';
import { buildOpenApiDocument } from '../../schemas/openapi';
import { apiPageHtml } from '../../schemas/api-page';
import { httpErrors } from '../http/errors';
import { json } from '../http/response';
import { router } from '../http/router';
import type { Wiring } from '../wiring/wiring';
import type { z } from 'zod';

const document = buildOpenApiDocument();
const page = apiPageHtml(document as unknown as Record<string, unknown>);
const index: z.input<typeof ApiIndex> = { name: 'Ringstore', docs: '/docs', openapi: '/openapi.json' };

export function docsHandler(wiring: Wiring) {
  const { logger } = wiring;

  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .handler(
      router('docs', {
        openApiDocument: async () => json(200, document, { 'cache-control': 'public, max-age=300' }),
        apiPage: async () => ({ statusCode: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page }),
        apiIndex: async () => json(200, index),
      }),
    );
}
