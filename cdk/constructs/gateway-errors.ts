// Errors API Gateway answers by itself (no Lambda ran) in the project's JSON error shape (docs/api.md, "Errors"),
// with the same code-to-status mapping as the handlers (schemas/errors.ts).
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { type ErrorCode, retryAfterSeconds, statusOf } from '../../schemas/errors';

export interface GatewayError {
  type: ResponseType;
  code: ErrorCode;
  /** Omitted: keep the status API Gateway chose (the DEFAULT_* families cover many). */
  statusCode?: number;
  retryable: boolean;
  /** A fixed message where API Gateway's own would mislead; else `$context.error.message`. */
  message?: string;
}

const status = (code: ErrorCode): number => statusOf[code];

export const gatewayErrors: readonly GatewayError[] = [
  // No x-api-key header: API Gateway answers before the authorizer runs (or it threw "Unauthorized").
  {
    type: ResponseType.UNAUTHORIZED,
    code: 'auth.missingKey',
    statusCode: status('auth.missingKey'),
    retryable: false,
    message: 'Missing API key: send it in the x-api-key header',
  },
  // The authorizer answered Deny: the key is unknown or revoked (lambdas/handlers/authorizer.ts).
  {
    type: ResponseType.ACCESS_DENIED,
    code: 'auth.invalidKey',
    statusCode: status('auth.invalidKey'),
    retryable: false,
    message: 'Unknown or revoked API key',
  },
  // API Gateway's answer to a path no route declares (a known path's other methods meet the ANY stubs of route-stubs.ts).
  {
    type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
    code: 'route.notFound',
    statusCode: status('route.notFound'),
    retryable: false,
    message: 'No such route; the API is described at /docs',
  },
  { type: ResponseType.REQUEST_TOO_LARGE, code: 'request.tooLarge', statusCode: status('request.tooLarge'), retryable: false },
  { type: ResponseType.BAD_REQUEST_PARAMETERS, code: 'request.invalid', statusCode: status('request.invalid'), retryable: false },
  { type: ResponseType.BAD_REQUEST_BODY, code: 'request.invalid', statusCode: status('request.invalid'), retryable: false },
  { type: ResponseType.THROTTLED, code: 'throttled', statusCode: status('throttled'), retryable: true },
  // Quotas reset per day or month: retrying within a client's backoff budget cannot help.
  { type: ResponseType.QUOTA_EXCEEDED, code: 'throttled', statusCode: status('throttled'), retryable: false },
  // The authorizer crashed or timed out (e.g. the control table was briefly unreachable).
  { type: ResponseType.AUTHORIZER_FAILURE, code: 'internal', statusCode: status('internal'), retryable: true },
  { type: ResponseType.INTEGRATION_TIMEOUT, code: 'internal', retryable: true },
  { type: ResponseType.DEFAULT_4XX, code: 'request.invalid', retryable: false },
  { type: ResponseType.DEFAULT_5XX, code: 'internal', retryable: true },
];

/**
 * The same for a REST API whose methods use `AWS_IAM`: API Gateway itself checks the signature and the
 * caller's IAM policy, and its refusals get the codes the local gateway answers (cdk/local/sigv4-verify.ts).
 * An unsigned request meets MISSING_AUTHENTICATION_TOKEN on every path there, so it cannot mean "no route".
 */
const iamGatewayErrors: readonly GatewayError[] = [
  {
    type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
    code: 'auth.invalidSignature',
    statusCode: status('auth.invalidSignature'),
    retryable: false,
    message: 'No SigV4 signature (this API takes IAM-signed requests), or no such route; the API is described at /docs',
  },
  { type: ResponseType.INVALID_SIGNATURE, code: 'auth.invalidSignature', statusCode: status('auth.invalidSignature'), retryable: false },
  { type: ResponseType.EXPIRED_TOKEN, code: 'auth.signatureExpired', statusCode: status('auth.signatureExpired'), retryable: false },
  {
    type: ResponseType.UNAUTHORIZED,
    code: 'auth.unknownAccessKey',
    statusCode: status('auth.unknownAccessKey'),
    retryable: false,
    message: 'The access key or security token is not valid',
  },
  {
    type: ResponseType.ACCESS_DENIED,
    code: 'auth.forbidden',
    statusCode: status('auth.forbidden'),
    retryable: false,
    message: "The caller's IAM policy does not allow execute-api:Invoke on this method",
  },
];

/** The gateway responses of an API whose methods authorize by API key or by IAM. */
export function gatewayErrorsFor(authorization: 'apiKey' | 'iam'): readonly GatewayError[] {
  if (authorization === 'apiKey') return gatewayErrors;
  const replaced = new Set(iamGatewayErrors.map((error) => error.type.responseType));
  return [...iamGatewayErrors, ...gatewayErrors.filter((error) => !replaced.has(error.type.responseType))];
}

/** The VTL body of a gateway response: `{"error":{"code","message","retryable"}}`. */
export function errorTemplate(error: GatewayError): string {
  // messageString is the message already quoted and escaped as a JSON string.
  const message = error.message === undefined ? '$context.error.messageString' : JSON.stringify(error.message);
  return `{"error":{"code":${JSON.stringify(error.code)},"message":${message},"retryable":${error.retryable}}}`;
}

/** The header every answer names its request in (lambdas/http/request-id.ts; the deploy side may not import it). */
export const requestIdHeader = 'x-request-id';

/** Headers of a gateway response, as API Gateway mapping expressions (static values are quoted). */
export function errorHeaders(error: GatewayError): Record<string, string> {
  // The request id, as the handlers' answers carry it (lambdas/handlers/observe.ts): a refused request is found
  // in the access log by it.
  const headers: Record<string, string> = { [requestIdHeader]: 'context.requestId' };
  if (error.statusCode === 429 || error.statusCode === 503) headers['Retry-After'] = `'${retryAfterSeconds}'`;
  return headers;
}
