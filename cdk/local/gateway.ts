// The local API Gateway: turns HTTP requests into REST proxy events and calls the same handlers Lambda runs.
// It enforces what API Gateway + Lambda enforce (payload limits, authorizer, its result cache), so
// behaviour seen locally is behaviour in AWS.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { LRUCache } from 'lru-cache';
import { lambdaContext, proxyEvent } from './lambda-events';
import { isSigV4, verifySigV4 } from './sigv4-verify';
import { requestIdHeader } from '../../lambdas/http/request-id';
import { type ErrorCode, keySlashHint, statusOf } from '../../schemas/errors';
import { type HandlerName, type HttpMethod, limits, type RouteSpec, routes } from '../../schemas/topology';

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

export interface GatewayHandlers {
  authorizer: AuthorizerHandler;
  /** The handler of every route, by handler name. */
  proxies: Partial<Record<HandlerName, ProxyHandler>>;
}

export interface GatewayOptions {
  host?: string;
  port: number;
  stage: string;
  handlers: GatewayHandlers;
  /** API Gateway's authorizer result cache TTL; revocations take effect after it. */
  authorizerCacheTtlSeconds: number;
  /**
   * Test runs only (RINGSTORE_FAULT_INJECTION=1): `GET /_faults` shows and `PUT /_faults` replaces the fault
   * plan (crash points, shard outages, broken modes). Not an API Gateway route: it never exists in AWS.
   */
  faults?: { apply(plan: unknown): void; status(): unknown };
  /**
   * The IAM users whose SigV4 signatures the gateway verifies (cdk/local/local-iam.ts), as API Gateway does
   * for an `AWS_IAM` method. Locally one endpoint takes both: a signed request is verified, an `x-api-key`
   * goes to the authorizer. Absent: every signed request is refused.
   */
  iam?: { find(accessKeyId: string): Promise<{ arn: string; secretAccessKey: string } | undefined> };
  /** The gateway's clock (milliseconds), against which a signature's date is checked. */
  now?: () => number;
  log?: (line: string) => void;
}

/** The local-only path of the fault plan. */
export const faultsPath = '/_faults';

export interface RunningGateway {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Bounded like API Gateway's own cache: entries expire after the TTL. */
const authorizerCacheEntriesMax = 10_000;

interface CompiledRoute {
  spec: RouteSpec;
  segments: string[];
}

const compiledRoutes: CompiledRoute[] = routes.map((spec) => ({ spec, segments: spec.path.split('/').slice(1) }));

type TemplateMatch = Record<string, string> | 'badEncoding' | undefined;

function matchTemplate(template: readonly string[], segments: readonly string[]): TemplateMatch {
  if (template.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i += 1) {
    const part = template[i]!;
    const actual = segments[i]!;
    if (!part.startsWith('{')) {
      if (part !== actual) return undefined;
    } else if (actual === '') return undefined;
    else {
      try {
        params[part.slice(1, -1)] = decodeURIComponent(actual);
      } catch {
        return 'badEncoding';
      }
    }
  }
  return params;
}

export function matchRoute(method: string, path: string): { route: RouteSpec; params: Record<string, string> } | 'badEncoding' | undefined {
  const segments = path.split('/').slice(1);
  for (const { spec, segments: template } of compiledRoutes) {
    if (spec.method !== method) continue;
    const params = matchTemplate(template, segments);
    if (params !== undefined) return params === 'badEncoding' ? params : { route: spec, params };
  }
  return undefined;
}

/** The methods some route declares for this path, whatever the request's method: the Allow header of a 405. */
export function allowedMethods(path: string): HttpMethod[] {
  const segments = path.split('/').slice(1);
  return compiledRoutes.filter(({ segments: template }) => matchTemplate(template, segments) !== undefined).map(({ spec }) => spec.method);
}

/** Where keys live; a path below it that no route knows is a key with an unencoded `/`. */
const keysPath = '/v1/kv/';

/**
 * What a request no route takes is told: 405 with Allow for a known path (API Gateway: the ANY stub of
 * cdk/constructs/route-stubs.ts), a 400 asking to encode `/` for a key sent with raw slashes, else 404.
 */
export function unroutedAnswer(
  method: string,
  path: string,
): { status: number; code: ErrorCode; message: string; headers: Record<string, string> } {
  const allow = allowedMethods(path);
  if (allow.length > 0) {
    return {
      status: statusOf['route.methodNotAllowed'],
      code: 'route.methodNotAllowed',
      message: `${method} is not a method of ${path}; it allows ${allow.join(', ')}`,
      headers: { allow: allow.join(', ') },
    };
  }
  if (path.startsWith(keysPath)) {
    const encoded = `${keysPath}${path.slice(keysPath.length).split('/').join('%2F')}`;
    return {
      status: statusOf['kv.keyInvalid'],
      code: 'kv.keyInvalid',
      message: `${keySlashHint} (${method} ${encoded})`,
      headers: {},
    };
  }
  return {
    status: statusOf['route.notFound'],
    code: 'route.notFound',
    message: `no route ${method} ${path}; the API is described at /docs`,
    headers: {},
  };
}

/** Room taken by everything but the body: API Gateway caps headers at 10 KB, paths and context are small. */
const nonBodyBytesMax = 64 * 1024;

/**
 * The JSON size of a Lambda payload when it exceeds the invocation limit, else undefined. The body
 * dominates, so small payloads are cleared by `body + nonBodyBytesMax` without serialising them
 * (serialising a 4 MiB body just to measure it costs ~20 ms); only those near the limit are measured.
 */
export function oversizedPayloadBytes(payload: object, body: string | null | undefined): number | undefined {
  const bodyBytes = body ? Buffer.byteLength(body) : 0;
  if (bodyBytes + nonBodyBytesMax <= limits.lambdaPayloadBytesMax) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  return bytes > limits.lambdaPayloadBytesMax ? bytes : undefined;
}

function errorBody(code: string, message: string, retryable = false): string {
  return JSON.stringify({ error: { code, message, retryable } });
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | 'tooLarge'> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request) {
    total += (chunk as Buffer).length;
    // Keep draining so the client sees our 413 instead of a reset connection.
    if (total <= maxBytes) chunks.push(chunk as Buffer);
  }
  return total > maxBytes ? 'tooLarge' : Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, headers: Record<string, string>, body: Buffer | string): void {
  response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  send(response, status, { 'content-type': 'application/json' }, errorBody(code, message, status >= 500));
}

/** What handling a request reads: the gateway's options and its authorizer result cache. */
interface Gateway {
  options: GatewayOptions;
  authorizerCache: LRUCache<string, APIGatewayAuthorizerResult>;
}

/** A request matched to its route, with its body read. */
interface RoutedRequest {
  route: RouteSpec;
  params: Record<string, string>;
  url: URL;
  method: string;
  /** The target as sent: a signature covers the client's own escapes, which URL parsing rewrites. */
  target: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Who the handler is told called: the authorizer's context (an API key) or the IAM user (SigV4). */
interface Identity {
  authorizer: Record<string, unknown> | null;
  caller?: { userArn: string; accessKey: string; accountId: string };
}

async function authorize({ options, authorizerCache }: Gateway, route: RouteSpec, url: URL, headers: Record<string, string>) {
  const apiKey = headers['x-api-key'];
  // API Gateway answers 401 itself, without calling the authorizer, when the identity source is absent.
  if (!apiKey) return { status: 401 as const };
  let result = authorizerCache.get(apiKey);
  if (!result) {
    const event: APIGatewayRequestAuthorizerEvent = {
      type: 'REQUEST',
      methodArn: `arn:aws:execute-api:local:000000000000:local/${options.stage}/${route.method}${route.path}`,
      resource: route.path,
      path: url.pathname,
      httpMethod: route.method,
      headers,
      multiValueHeaders: {},
      pathParameters: {},
      queryStringParameters: {},
      multiValueQueryStringParameters: {},
      stageVariables: {},
      requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
    };
    try {
      result = await options.handlers.authorizer(event, lambdaContext('authorizer', { viaApi: true }));
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return { status: 401 as const };
      throw error;
    }
    authorizerCache.set(apiKey, result);
  }
  const allowed = result.policyDocument.Statement.some((statement) => statement.Effect === 'Allow');
  return allowed ? { status: 200 as const, context: result.context ?? {}, principalId: result.principalId } : { status: 403 as const };
}

/** The caller of an authorized route, by its SigV4 signature or its API key; undefined once refused (answered). */
async function identify(gateway: Gateway, request: RoutedRequest, response: ServerResponse): Promise<Identity | undefined> {
  const { route, method, headers, body } = request;
  if (!route.authorized) return { authorizer: null };
  if (isSigV4(headers)) {
    const { iam, now } = gateway.options;
    const verdict = iam
      ? await verifySigV4({ method, target: request.target, headers, body }, (accessKeyId) => iam.find(accessKeyId), (now ?? Date.now)())
      : ({ ok: false, code: 'auth.unknownAccessKey', message: 'this gateway knows no IAM users' } as const);
    if (!verdict.ok) {
      sendError(response, 403, verdict.code, verdict.message);
      return undefined;
    }
    return {
      authorizer: null,
      caller: { userArn: verdict.user.arn, accessKey: verdict.accessKeyId, accountId: verdict.user.arn.split(':')[4] ?? '' },
    };
  }
  const verdict = await authorize(gateway, route, request.url, headers);
  if (verdict.status === 401) {
    sendError(response, 401, 'auth.missingKey', 'missing x-api-key header');
    return undefined;
  }
  if (verdict.status === 403) {
    sendError(response, 403, 'auth.invalidKey', 'API key is not valid (unknown or revoked)');
    return undefined;
  }
  return { authorizer: { ...verdict.context, principalId: verdict.principalId } };
}

/** The route, its parameters and the body of a request; undefined once it has been answered. */
async function routeOf(request: IncomingMessage, response: ServerResponse, url: URL, method: string, path: string) {
  const matched = matchRoute(method, path);
  if (matched === 'badEncoding') {
    sendError(response, 400, 'request.invalid', 'path is not valid percent-encoding');
    return undefined;
  }
  if (!matched) {
    const answer = unroutedAnswer(method, path);
    const body = errorBody(answer.code, answer.message);
    send(response, answer.status, { 'content-type': 'application/json', ...answer.headers }, method === 'HEAD' ? '' : body);
    return undefined;
  }
  const body = await readBody(request, limits.apiGatewayBodyBytesMax);
  if (body === 'tooLarge') {
    sendError(response, 413, 'request.tooLarge', `request body over ${limits.apiGatewayBodyBytesMax} bytes (API Gateway limit)`);
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return { route: matched.route, params: matched.params, url, method, target: request.url ?? '/', headers, body };
}

async function handle(gateway: Gateway, request: IncomingMessage, response: ServerResponse): Promise<void> {
  // API Gateway's request id: in the handler's event, and on every answer, its own errors included (as the
  // gateway responses of cdk/constructs/gateway-errors.ts carry it).
  const requestId = randomUUID();
  response.setHeader(requestIdHeader, requestId);
  const url = new URL(request.url ?? '/', 'http://localhost');
  const method = (request.method ?? 'GET').toUpperCase();
  // API Gateway ignores one trailing slash: /v1/kv/ is /v1/kv.
  const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  const { faults } = gateway.options;
  if (path === faultsPath && faults) return handleFaults(request, response, method, faults);
  const routed = await routeOf(request, response, url, method, path);
  if (!routed) return;
  const identity = await identify(gateway, routed, response);
  if (!identity) return;
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const event = proxyEvent({
    resource: routed.route.path,
    path: url.pathname,
    method,
    stage: gateway.options.stage,
    headers: routed.headers,
    query,
    pathParameters: routed.params,
    body: routed.body,
    authorizer: identity.authorizer,
    requestId,
    ...(identity.caller ? { caller: identity.caller } : {}),
  });
  await invoke(gateway, routed.route, event, response);
}

/** Calls the route's handler with its proxy event and answers with its result, within Lambda's payload limits. */
async function invoke(gateway: Gateway, route: RouteSpec, event: APIGatewayProxyEvent, response: ServerResponse): Promise<void> {
  const eventBytes = oversizedPayloadBytes(event, event.body);
  if (eventBytes !== undefined) {
    sendError(
      response,
      413,
      'request.tooLarge',
      `request is ${eventBytes} bytes as a Lambda event (the limit is ${limits.lambdaPayloadBytesMax}); ` +
        'send values over 4 MiB with POST /v1/kv/{key}/uploads',
    );
    return;
  }
  const proxy = gateway.options.handlers.proxies[route.handler];
  if (!proxy) throw new Error(`no handler loaded for ${route.handler}`);
  let result: APIGatewayProxyResult;
  try {
    result = await proxy(event, lambdaContext(route.handler, { viaApi: true }));
  } catch (error) {
    // A function that throws (or crashes, as injected crash points do) is a 502 from API Gateway.
    gateway.options.log?.(`${route.handler} failed: ${error instanceof Error ? error.message : String(error)}`);
    send(response, 502, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Internal server error' }));
    return;
  }
  const resultBytes = oversizedPayloadBytes(result, result.body);
  if (resultBytes !== undefined) {
    // What API Gateway answers when a Lambda response exceeds the invocation payload limit.
    sendError(response, 502, 'internal', `Lambda response of ${resultBytes} bytes exceeds ${limits.lambdaPayloadBytesMax}`);
    return;
  }
  const responseBody = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  const responseHeaders = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)]));
  if (event.httpMethod === 'HEAD') {
    response.writeHead(result.statusCode, responseHeaders);
    response.end();
    return;
  }
  send(response, result.statusCode, responseHeaders, responseBody);
}

async function handleFaults(
  request: IncomingMessage,
  response: ServerResponse,
  method: string,
  faults: NonNullable<GatewayOptions['faults']>,
): Promise<void> {
  if (method === 'PUT') {
    const body = await readBody(request, 64 * 1024);
    try {
      faults.apply(body === 'tooLarge' ? undefined : JSON.parse(body.toString('utf8') || '{}'));
    } catch (error) {
      sendError(response, 400, 'request.invalid', `fault plan: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
  } else if (method !== 'GET') {
    sendError(response, 404, 'route.notFound', `no route ${method} ${faultsPath}`);
    return;
  }
  send(response, 200, { 'content-type': 'application/json' }, JSON.stringify(faults.status()));
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const gateway: Gateway = {
    options,
    authorizerCache: new LRUCache<string, APIGatewayAuthorizerResult>({
      max: authorizerCacheEntriesMax,
      ttl: options.authorizerCacheTtlSeconds * 1000,
    }),
  };
  const server: Server = createServer((request, response) => {
    handle(gateway, request, response).catch((error: unknown) => {
      options.log?.(`gateway error: ${error instanceof Error ? error.stack : String(error)}`);
      if (!response.headersSent) sendError(response, 500, 'internal', 'internal error');
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
