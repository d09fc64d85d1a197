// Requests signed with SigV4 (API Gateway `AWS_IAM`): the caller's ARN, which API Gateway has verified, is
// mapped to its namespace and role here, since an IAM-authorized method runs no Lambda authorizer.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { LRUCache } from 'lru-cache';
import { isRingstoreError, type RingstoreError } from '../core/errors';
import type { IamPrincipalService } from '../core/iam-principals';
import type { NamespaceSettingsService } from '../core/namespaces';
import type { Clock } from '../ports';
import { authorizerContextOf } from './request';

/** Callers one instance remembers at most; an entry lives `ttlSeconds`, like API Gateway's authorizer cache. */
export const iamCallerCacheEntriesMax = 1_000;

type Answer = { context: Record<string, string | number> } | { refusal: RingstoreError };

/**
 * Before the route: a request with no authorizer context and a verified caller ARN
 * (`requestContext.identity.userArn`) gets the context a Lambda authorizer would have given an API key
 * of the same namespace and role, so `principalOf`, quotas, `requireAdmin` and the audit trail treat
 * both alike. An unmapped caller is refused `403 auth.principalUnmapped`. Answers, refusals included, are
 * kept `ttlSeconds` (0: not kept), so a deleted mapping stops working within it. Use after `httpErrors`.
 */
export function iamCallers(deps: {
  principals: IamPrincipalService;
  namespaces: NamespaceSettingsService;
  clock: Clock;
  ttlSeconds: number;
}): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const answers = new LRUCache<string, { answer: Answer; expiresAtMs: number }>({ max: iamCallerCacheEntriesMax });

  const resolve = async (callerArn: string): Promise<Answer> => {
    const nowMs = deps.clock.nowMs();
    const kept = answers.get(callerArn);
    if (kept && kept.expiresAtMs > nowMs) return kept.answer;
    let answer: Answer;
    try {
      const principal = await deps.principals.authenticate(callerArn);
      answer = { context: authorizerContextOf(principal, await deps.namespaces.settingsOf(principal.namespace)) };
    } catch (error) {
      if (!isRingstoreError(error, 'auth.principalUnmapped')) throw error;
      answer = { refusal: error };
    }
    if (deps.ttlSeconds > 0) answers.set(callerArn, { answer, expiresAtMs: nowMs + deps.ttlSeconds * 1000 });
    return answer;
  };

  return {
    before: async (request) => {
      const { requestContext } = request.event;
      // An API key's request: the Lambda authorizer has answered already.
      const authorizer: Partial<Record<string, unknown>> | null | undefined = requestContext?.authorizer;
      if (authorizer?.namespace !== undefined) return;
      const callerArn = requestContext?.identity?.userArn;
      // Neither: `principalOf` refuses the request as unauthenticated.
      if (!callerArn) return;
      const answer = await resolve(callerArn);
      if ('refusal' in answer) throw answer.refusal;
      request.event = {
        ...request.event,
        requestContext: { ...requestContext, authorizer: { ...answer.context, principalId: callerArn } },
      };
    },
  };
}
