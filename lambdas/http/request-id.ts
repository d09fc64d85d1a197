// The id that ties an API answer to its log lines and trace: API Gateway's request id (the one in its access
// log), else the invocation's (a direct invoke). Every answer returns it in `x-request-id`.
import type { Context } from 'aws-lambda';

export const requestIdHeader = 'x-request-id';

/** The request id of an API Gateway proxy event, or the Lambda invocation's when the event has none. */
export function requestIdOf(
  event: { requestContext?: { requestId?: string } } | null | undefined,
  context: Pick<Context, 'awsRequestId'>,
): string {
  return event?.requestContext?.requestId ?? context.awsRequestId;
}
