// The API Gateway REST proxy event and Lambda context the local gateway hands to the handlers; the
// benchmark builds its in-process calls with the same functions so both see what Lambda would.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { handlers, limits } from '../../schemas/topology';

export interface ProxyEventInput {
  /** The route's resource path, e.g. `/v1/kv/{key}`. */
  resource: string;
  path: string;
  method: string;
  stage: string;
  headers: Record<string, string>;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  /** Raw body bytes: with binaryMediaTypes `*\/*` API Gateway hands every body over base64-encoded. */
  body?: Buffer;
  /** The authorizer's context (namespace, role, keyId, principalId), or null on public routes. */
  authorizer: Record<string, unknown> | null;
  /** API Gateway's id of the request; a new one when absent. */
  requestId?: string;
  /** The verified caller of a SigV4-signed request (API Gateway `AWS_IAM`): its ARN, access key and account. */
  caller?: { userArn: string; accessKey: string; accountId: string };
}

export function proxyEvent(input: ProxyEventInput): APIGatewayProxyEvent {
  const { query, pathParameters, body } = input;
  return {
    resource: input.resource,
    path: input.path,
    httpMethod: input.method,
    headers: input.headers,
    multiValueHeaders: {},
    queryStringParameters: query && Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: null,
    pathParameters: pathParameters && Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    body: body?.length ? body.toString('base64') : null,
    isBase64Encoded: Boolean(body?.length),
    requestContext: {
      authorizer: input.authorizer,
      stage: input.stage,
      requestId: input.requestId ?? randomUUID(),
      httpMethod: input.method,
      path: `/${input.stage}${input.path}`,
      resourcePath: input.resource,
      ...(input.caller ? { identity: { ...input.caller, caller: input.caller.userArn, user: input.caller.userArn } } : {}),
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

/**
 * A Lambda context whose deadline is the function's timeout (its HandlerSpec's), or API Gateway's
 * integration timeout when the gateway invokes it (`viaApi`), whichever comes first, as in AWS. Middy
 * aborts a handler that outlives it.
 */
export function lambdaContext(functionName: string, options: { viaApi?: boolean } = {}): Context {
  const spec = (handlers as Partial<Record<string, { timeoutSeconds: number }>>)[functionName];
  const timeoutMs = Math.min(
    spec ? spec.timeoutSeconds * 1000 : limits.apiGatewayTimeoutMs,
    options.viaApi ? limits.apiGatewayTimeoutMs : Infinity,
  );
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
