// GET /openapi.json and GET /docs: the API contract, generated from the zod schemas.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { buildOpenApiDocument } from '../../schemas/openapi';
import { apiPageHtml } from '../../schemas/api-page';
import { httpErrors } from '../http/errors';
import { json } from '../http/response';
import { router } from '../http/router';
import type { Wiring } from '../wiring/wiring';

const document = buildOpenApiDocument();
const page = apiPageHtml(document as unknown as Record<string, unknown>);

export function docsHandler(wiring: Wiring) {
  const { logger } = wiring;

  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .handler(
      router('docs', {
        openApiDocument: async () => json(200, document, { 'cache-control': 'public, max-age=300' }),
        apiPage: async () => ({ statusCode: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page }),
      }),
    );
}
