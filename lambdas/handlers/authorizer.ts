// Lambda REQUEST authorizer: maps x-api-key to a namespace and role. API Gateway caches the answer.
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { ApiKeyService } from '../core/auth';
import { isRingstoreError } from '../core/errors';
import type { NamespaceSettingsService } from '../core/namespaces';
import { authorizerContextOf } from '../http/request';

export interface AuthorizerDeps {
  apiKeys: ApiKeyService;
  /** The namespace's defaults and quotas, which ride along in the authorizer's context. */
  namespaces: NamespaceSettingsService;
}

/** The policy covers every method of the stage, because API Gateway caches it per key, not per route. */
function policy(event: APIGatewayRequestAuthorizerEvent, effect: 'Allow' | 'Deny', principalId: string): APIGatewayAuthorizerResult {
  const [arnPrefix = '*', stage = '*'] = event.methodArn.split('/');
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: `${arnPrefix}/${stage}/*/*` }],
    },
  };
}

export function authorizerHandler({ apiKeys, namespaces }: AuthorizerDeps) {
  return middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>().handler(async (event) => {
    const header = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'x-api-key')?.[1];
    // API Gateway's contract: throwing exactly "Unauthorized" answers 401; a Deny policy answers 403.
    if (!header) throw new Error('Unauthorized');
    try {
      const principal = await apiKeys.authenticate(header);
      // The namespace's default consistency, DR mode and quotas ride along, cached with the answer (a change
      // applies within the TTL).
      const settings = await namespaces.settingsOf(principal.namespace);
      return { ...policy(event, 'Allow', principal.keyId), context: authorizerContextOf(principal, settings) };
    } catch (error) {
      if (isRingstoreError(error, 'auth.invalidKey')) return policy(event, 'Deny', 'anonymous');
      throw error;
    }
  });
}
