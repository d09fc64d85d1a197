// Runs a handler on a fixed rate (EventBridge schedule → maintenance, docs/architecture.md).
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface EveryProps {
  target: IFunction;
  everyMinutes: number;
  description: string;
}

export class Every extends Construct {
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: EveryProps) {
    super(scope, id);
    if (!Number.isInteger(props.everyMinutes) || props.everyMinutes < 1) {
      throw new Error(`everyMinutes must be a whole number of minutes ≥ 1, not ${props.everyMinutes}`);
    }
    this.rule = new Rule(this, 'Rule', {
      description: props.description,
      schedule: Schedule.rate(Duration.minutes(props.everyMinutes)),
      // The next tick is the retry: a run that could not start within one period is dropped, so runs
      // never pile up behind a slow or failing one.
      targets: [
        new LambdaFunction(props.target, { retryAttempts: 0, maxEventAge: Duration.minutes(Math.min(props.everyMinutes, 24 * 60)) }),
      ],
    });
    // Same for Lambda's own retries of a failed asynchronous run (two by default); it keeps events 6 h at most.
    props.target.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(Math.min(props.everyMinutes, 6 * 60)) });
  }
}
