// API Gateway REST proxy events and Lambda contexts for calling the handlers in-process, built in the
// same shape as cdk/local/gateway.ts builds them (resource, base64 body, authorizer context).
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { limits } from '../lambdas/topology';

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
  const stage = input.stage ?? 'local';
  const path = `/v1/kv/${encodeURIComponent(input.key)}`;
  const headers: Record<string, string> = { host: '127.0.0.1', 'x-api-key': '(checked by the authorizer)' };
  if (input.bodyBase64 !== undefined) {
    headers['content-type'] = 'application/octet-stream';
    headers['content-length'] = String(Buffer.byteLength(input.bodyBase64, 'base64'));
  }
  return {
    resource: kvResource,
    path,
    httpMethod: input.method,
    headers,
    multiValueHeaders: {},
    queryStringParameters: input.query && Object.keys(input.query).length ? input.query : null,
    multiValueQueryStringParameters: null,
    pathParameters: { key: input.key },
    stageVariables: null,
    body: input.bodyBase64 ?? null,
    isBase64Encoded: input.bodyBase64 !== undefined,
    requestContext: {
      authorizer: { namespace: input.caller.namespace, role: 'user', keyId: input.caller.keyId, principalId: input.caller.keyId },
      stage,
      requestId: randomUUID(),
      httpMethod: input.method,
      path: `/${stage}${path}`,
      resourcePath: kvResource,
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

/** A Lambda context with API Gateway's integration deadline, like the local gateway's. */
export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + limits.apiGatewayTimeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
