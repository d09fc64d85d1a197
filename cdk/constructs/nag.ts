// cdk-nag 3 acknowledgements: each one names one rule (or one finding of it) and says why it does
// not apply to Ringstore. A vague reason is a bug, so short ones are refused.
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
// The exact function cdk-nag uses to name findings such as `AwsSolutions-IAM5[Resource::…]`, so an
// acknowledgement always matches what the rule reports (partition and account rendered the same way).
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';

/** Shortest reason accepted: enough for "what is different here", not a shrug. */
export const nagReasonMinLength = 60;

/**
 * Acknowledges a cdk-nag rule on `scope` and everything under it.
 *
 * @example
 * acknowledge(bucket, 'AwsSolutions-S1', 'This bucket receives the access logs; logging it to itself would loop.');
 */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < nagReasonMinLength) {
    throw new Error(`cdk-nag acknowledgement of ${id} at ${scope.node.path} needs a specific reason (≥ ${nagReasonMinLength} characters)`);
  }
  Validations.of(scope).acknowledge({ id, reason });
}

/** The name cdk-nag gives a finding about `value` (an ARN, possibly with tokens) in `scope`'s stack. */
export function nagFindingName(scope: IConstruct, value: string): string {
  return flattenCfnReference(Stack.of(scope).resolve(value));
}
