// What API Gateway answers for requests no route takes, as the local gateway answers them (cdk/local/gateway.ts):
// without these it answers 403 MissingAuthenticationToken (mapped to 404 route.notFound) for a wrong method too.
import { AuthorizationType, type IResource, MockIntegration, PassthroughBehavior, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { type ErrorCode, keySlashHint, statusOf } from '../../schemas/errors';
import type { RouteSpec } from '../../schemas/topology';
import { requestIdHeader } from './gateway-errors';
import { acknowledge } from './nag';

/** The greedy resource that catches a key sent with raw slashes (`/v1/kv/users/42/profile`). */
export const keySlashStubPath = '/v1/kv/{key}/{rest+}';

/** The methods each route path declares, in topology order: the Allow header of its 405. */
export function methodsByPath(routes: readonly RouteSpec[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route.method]);
  return byPath;
}

/** A mock integration that always answers `code`'s status with the project's error shape. */
function errorMock(code: ErrorCode, message: string, headers: Record<string, string>): MockIntegration {
  const status = String(statusOf[code]);
  return new MockIntegration({
    // Whatever the request's content type, the mock runs: its one integration response has no selection pattern.
    passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
    requestTemplates: { 'application/json': `{"statusCode": ${status}}` },
    integrationResponses: [
      {
        statusCode: status,
        responseParameters: {
          ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`])),
          // The request id, as every other answer carries it (gateway-errors.ts, lambdas/handlers/observe.ts).
          [`method.response.header.${requestIdHeader}`]: 'context.requestId',
        },
        responseTemplates: { 'application/json': JSON.stringify({ error: { code, message, retryable: false } }) },
      },
    ],
  });
}

function addStub(resource: IResource, code: ErrorCode, message: string, headers: Record<string, string>): void {
  // ANY matches only the methods the resource does not declare: the routes keep theirs.
  const method = resource.addMethod('ANY', errorMock(code, message, headers), {
    authorizationType: AuthorizationType.NONE,
    methodResponses: [
      {
        statusCode: String(statusOf[code]),
        responseParameters: Object.fromEntries(
          [...Object.keys(headers), requestIdHeader].map((name) => [`method.response.header.${name}`, true]),
        ),
      },
    ],
  });
  const reason = `ANY ${resource.path} is a mock that answers ${statusOf[code]} ${code} and reads no data or Lambda, so it needs no authorizer.`;
  acknowledge(method, 'AwsSolutions-APIG4', reason);
  acknowledge(method, 'AwsSolutions-COG4', reason);
}

/** 405 with Allow on every route path for the methods it lacks, and the %2F hint for keys with raw slashes. */
export function addRouteStubs(api: RestApi, routes: readonly RouteSpec[]): void {
  for (const [path, methods] of methodsByPath(routes)) {
    addStub(api.root.resourceForPath(path), 'route.methodNotAllowed', `this path allows ${methods.join(', ')}`, {
      Allow: methods.join(', '),
    });
  }
  addStub(api.root.resourceForPath(keySlashStubPath), 'kv.keyInvalid', keySlashHint, {});
}
