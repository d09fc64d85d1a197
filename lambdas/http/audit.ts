// Records every admin operation that changes something (docs/security.md, "Audit"): who, what, when and
// how it ended, in the audit trail and as a structured log line, whether it succeeded, failed or was refused.
// Neither keeps a secret: a whole API key sent for a key id is recorded as its id, any other is redacted.
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { statusOf } from '../../schemas/errors';
import { keyIdOf } from '../core/auth';
import { RingstoreError } from '../core/errors';
import { redactedCopy } from '../core/redaction';
import type { AuditEntry, AuditLog, Clock } from '../ports';
import { bodyBytes, principalOf } from './request';
import { auditDefaults, routes } from '../../schemas/topology';

export interface AuditLogger {
  info(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

/** Reads change nothing and are not recorded: the trail is of changes (and the audit listing would record itself). */
const recordedMethods = new Set(['POST', 'PUT', 'DELETE']);

const operationOf = (event: APIGatewayProxyEvent) =>
  routes.find((route) => route.method === event.httpMethod && route.path === event.resource)?.operationId ?? 'unrouted';

function entryOf(event: APIGatewayProxyEvent, at: string, status: number, errorCode?: string): AuditEntry | undefined {
  let actor: AuditEntry['actor'];
  try {
    const { keyId, namespace, role } = principalOf(event);
    actor = { keyId, namespace, role };
  } catch {
    // Not authenticated: API Gateway refuses such requests before any handler; nobody to name.
    return undefined;
  }
  const body = Buffer.from(bodyBytes(event)).toString('utf8');
  const target: Record<string, string> = {};
  // A whole key where a key id is expected is taken for its id, as the handler takes it.
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) if (value !== undefined) target[name] = keyIdOf(value) ?? value;
  return redactedCopy({
    at,
    requestId: event.requestContext?.requestId ?? 'unknown',
    actor,
    operation: operationOf(event),
    target,
    ...(body === '' ? {} : { request: body.slice(0, auditDefaults.requestCharsMax) }),
    outcome: status < 400 ? 'succeeded' : 'failed',
    status,
    ...(errorCode === undefined ? {} : { errorCode }),
  });
}

/**
 * The audit middleware of the admin handler, used after `httpErrors` (so its onError runs first and sees
 * the error itself). A failed write of the trail is logged: the operation has happened, and the log line
 * still records it.
 */
export function auditTrail(deps: {
  log: AuditLog;
  clock: Clock;
  logger: AuditLogger;
}): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const record = async (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult>, status: number, errorCode?: string) => {
    if (!recordedMethods.has(request.event?.httpMethod)) return;
    const entry = entryOf(request.event, new Date(deps.clock.nowMs()).toISOString(), status, errorCode);
    if (!entry) return;
    deps.logger.info('audit', { audit: entry });
    try {
      await deps.log.record(entry);
    } catch (error) {
      deps.logger.error('the audit trail could not record an admin operation (its log line above has it)', { error, audit: entry });
    }
  };
  return {
    after: async (request) => record(request, request.response?.statusCode ?? 200),
    onError: async (request) => {
      const { error } = request;
      const known = error instanceof RingstoreError;
      await record(request, known ? statusOf[error.code] : 500, known ? error.code : 'internal');
    },
  };
}
