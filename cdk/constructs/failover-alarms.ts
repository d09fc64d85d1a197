// The alarms on failovers: one when a failover starts (a shard was found down and confirmed, or an admin
// started one), one when a failover's execution fails (its fence was lifted, the owners kept: the shard's
// keys stay unavailable until someone acts). Both notify the deployment's alarm topic.
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { Names } from '../../schemas/topology';

export interface FailoverAlarmsProps {
  names: Names;
  failovers: StateMachine;
}

export class FailoverAlarms extends Construct {
  /** Where the alarms go: subscribe an e-mail address, a chat webhook or a pager to it. */
  readonly topic: Topic;
  readonly started: Alarm;
  readonly failed: Alarm;

  constructor(scope: Construct, id: string, props: FailoverAlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', {
      topicName: props.names.alarmTopic,
      // Alarm notifications say which shard failed over; encrypted at rest with the account's SNS key.
      masterKey: Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    const action = new SnsAction(this.topic);
    // One execution in a minute is enough: a failover is rare, and each one is worth a look.
    const onAnyExecution = (alarmId: string, name: string, metric: Metric, description: string) => {
      const alarm = new Alarm(this, alarmId, {
        alarmName: `${props.names.prefix}-${name}`,
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(action);
      return alarm;
    };
    const period = Duration.minutes(1);
    this.started = onAnyExecution(
      'Started',
      'failover-started',
      props.failovers.metricStarted({ period, statistic: 'Sum' }),
      'A failover started: a shard stopped answering (or an admin started one). See GET /v1/admin/failovers and docs/operations.md, "Runbook: failover".',
    );
    this.failed = onAnyExecution(
      'Failed',
      'failover-failed',
      props.failovers.metricFailed({ period, statistic: 'Sum' }),
      'A failover could not finish: its fence was lifted and the shard kept its ranges, so their writes and strong reads still fail. See the record in GET /v1/admin/failovers.',
    );
  }
}
