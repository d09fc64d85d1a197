// The alarms of a DR backup region (docs/dr.md, "Deploying two regions with CDK"): key messages the applier
// gave up on, key messages waiting too long, keys lost by a promotion, values that arrived corrupt, and a
// key lag that stays high. All notify the region's alarm topic.
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { Names } from '../../schemas/topology';
import type { KeyQueueRefs } from './dr-backup';

/**
 * Where the handlers' DR metrics are (lambdas/adapters/replication-metrics.ts, powertoolsMetrics, and the
 * metric names of lambdas/adapters/dr-metrics.ts): Powertools' namespace and its one default dimension.
 */
export const drMetricNamespace = 'Ringstore';
export const drMetricDimensions = { service: 'ringstore' } as const;
export const drMetricNames = { keyLag: 'DrKeyLag', lostKeys: 'DrLostKeys', corruptValues: 'DrCorruptValues' } as const;

/**
 * A key message older than this is not being applied: the applier keeps failing or does not run. Key
 * messages are normally applied within a second of arriving; a promotion would wait for them (its drain).
 */
export const keyAgeAlarmSeconds = 120;
/**
 * p99 of the key lag (the primary's write to the backup recording its key) above this for
 * keyLagAlarmMinutes in a row: the backup falls behind, and a disaster would lose more.
 */
export const keyLagAlarmMs = 10_000;
export const keyLagAlarmMinutes = 5;

export interface DrAlarmsProps {
  names: Names;
  keyQueue: KeyQueueRefs;
  topic: ITopic;
}

export class DrAlarms extends Construct {
  readonly deadLetters: Alarm;
  readonly oldestKey: Alarm;
  readonly lostKeys: Alarm;
  readonly corruptValues: Alarm;
  readonly keyLag: Alarm;

  constructor(scope: Construct, id: string, props: DrAlarmsProps) {
    super(scope, id);
    const action = new SnsAction(props.topic);
    const minute = Duration.minutes(1);
    const alarm = (
      alarmId: string,
      name: string,
      options: { metric: Metric; threshold: number; evaluationPeriods?: number; description: string; atLeast?: boolean },
    ) => {
      const created = new Alarm(this, alarmId, {
        alarmName: `${props.names.prefix}-${name}`,
        alarmDescription: options.description,
        metric: options.metric,
        threshold: options.threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        comparisonOperator: options.atLeast
          ? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
          : ComparisonOperator.GREATER_THAN_THRESHOLD,
        // No data: no key messages, no promotion, no writes. Nothing to alarm on.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      return created;
    };
    const queueMetric = (queueName: string, metricName: string) =>
      new Metric({ namespace: 'AWS/SQS', metricName, dimensionsMap: { QueueName: queueName }, period: minute, statistic: 'Maximum' });
    const drMetric = (metricName: string, statistic: string) =>
      new Metric({ namespace: drMetricNamespace, metricName, dimensionsMap: { ...drMetricDimensions }, period: minute, statistic });

    this.deadLetters = alarm('KeyDeadLetters', 'dr-key-dead-letters', {
      metric: queueMetric(props.keyQueue.deadLetterQueueName, 'ApproximateNumberOfMessagesVisible'),
      threshold: 1,
      atLeast: true,
      description:
        'Key messages the DR key applier gave up on are in the dead-letter queue: their writes are unknown to this region (a read serves the older version). See docs/dr.md, "Deploying two regions with CDK".',
    });
    this.oldestKey = alarm('OldestKey', 'dr-key-age', {
      metric: queueMetric(props.keyQueue.name, 'ApproximateAgeOfOldestMessage'),
      threshold: keyAgeAlarmSeconds,
      evaluationPeriods: 3,
      description: `The oldest DR key message has waited over ${keyAgeAlarmSeconds} s for three minutes: the key applier is failing or not running.`,
    });
    this.lostKeys = alarm('LostKeys', 'dr-lost-keys', {
      metric: drMetric(drMetricNames.lostKeys, 'Sum'),
      threshold: 0,
      description:
        'A promotion marked keys lost (their values never arrived): they answer 410 until written again or reconciled. See GET /v1/admin/dr/report and docs/dr.md, "Reconciliation".',
    });
    this.corruptValues = alarm('CorruptValues', 'dr-corrupt-values', {
      metric: drMetric(drMetricNames.corruptValues, 'Sum'),
      threshold: 0,
      description: 'A DR value arrived whose sha256 does not match its key message: not applied, its key stays pending.',
    });
    this.keyLag = alarm('KeyLag', 'dr-key-lag', {
      metric: drMetric(drMetricNames.keyLag, 'p99'),
      threshold: keyLagAlarmMs,
      evaluationPeriods: keyLagAlarmMinutes,
      description: `The p99 DR key lag (primary write to key recorded here) has been over ${keyLagAlarmMs} ms for ${keyLagAlarmMinutes} minutes: the backup falls behind, and a disaster would lose more.`,
    });
  }
}
