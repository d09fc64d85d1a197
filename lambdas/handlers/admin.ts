// /v1/admin/*: API key management, for admin keys only.
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { CreateApiKeyBody } from '../../schemas/api';
import { requireAdmin } from '../core/auth';
import type { ApiKeyRecord } from '../ports';
import { httpErrors } from '../http/errors';
import { jsonBody, parseWith, pathParam, principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { runtime } from '../runtime';

const { apiKeys, logger } = runtime();

/** Never return the secret's hash. */
const publicView = ({ secretHash: _hash, ...info }: ApiKeyRecord) => info;

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpErrors(logger))
  .use({ before: (request) => requireAdmin(principalOf(request.event)) })
  .handler(
    router('admin', {
      createApiKey: async (event) => {
        const input = parseWith(CreateApiKeyBody, jsonBody(event), 'body');
        const { apiKey, record } = await apiKeys.create(input);
        return json(201, { ...publicView(record), apiKey });
      },
      listApiKeys: async () => json(200, { keys: (await apiKeys.list()).map(publicView) }),
      revokeApiKey: async (event) => {
        const { keyId, revokedAt } = await apiKeys.revoke(pathParam(event, 'keyId'));
        return json(200, { keyId, revokedAt });
      },
    }),
  );
