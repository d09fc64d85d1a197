// API Gateway REST proxy events and Lambda contexts for calling the handlers in-process, built in the
// same shape as cdk/local/gateway.ts builds them (resource, base64 body, authorizer context).
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { lambdaContext, proxyEvent } from '../cdk/local/lambda-events';

/** What the authorizer put into the request context for the caller's API key. */
export interface Caller {
  namespace: string;
  keyId: string;
}

export interface KvEventInput {
  method: 'GET' | 'PUT';
  key: string;
  caller: Caller;
  /** Base64 body, as API Gateway delivers every body with binaryMediaTypes '*\/*'; PUT only. */
  bodyBase64?: string;
  query?: Record<string, string>;
  stage?: string;
}

const kvResource = '/v1/kv/{key}';

/**
 * @example
 * const event = kvEvent({ method: 'GET', key: 'a', caller, query: { consistency: 'strong' } });
 * const result = await readHandler(event, lambdaContext('kvRead'));
 */
export function kvEvent(input: KvEventInput): APIGatewayProxyEvent {
  const headers: Record<string, string> = { host: '127.0.0.1', 'x-api-key': '(checked by the authorizer)' };
  const body = input.bodyBase64 === undefined ? undefined : Buffer.from(input.bodyBase64, 'base64');
  if (body) {
    headers['content-type'] = 'application/octet-stream';
    headers['content-length'] = String(body.length);
  }
  const { namespace, keyId } = input.caller;
  return proxyEvent({
    resource: kvResource,
    path: `/v1/kv/${encodeURIComponent(input.key)}`,
    method: input.method,
    stage: input.stage ?? 'local',
    headers,
    ...(input.query ? { query: input.query } : {}),
    pathParameters: { key: input.key },
    ...(body ? { body } : {}),
    authorizer: { namespace, role: 'user', keyId, principalId: keyId },
  });
}

export { lambdaContext };
