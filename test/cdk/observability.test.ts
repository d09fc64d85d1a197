// The dashboard and the health alarms of the api stack (cdk/constructs/observability.ts): each alarm the
// issue names exists, watches the metric the handlers publish (names and dimensions of lambdas/adapters/*-metrics.ts)
// and notifies the deployment's alarm topic.
import type { Template } from 'aws-cdk-lib/assertions';
import { routes } from '../../schemas/topology';
import { routeLatencyP99AlarmMs, sweeperBacklogAlarmMs } from '../../cdk/constructs/observability';
import { synth } from './support';

let template: Template;
let alarms: Record<string, any>;

beforeAll(() => {
  template = synth({ stage: 'test', shardCount: 3, replicationFactor: 3 }).apiTemplate;
  alarms = template.findResources('AWS::CloudWatch::Alarm');
});

const alarmNamed = (suffix: string) => Object.values(alarms).find((alarm) => alarm.Properties.AlarmName === `ringstore-test-${suffix}`);
/** The metrics an alarm reads, directly or through its math expression. */
const metricsOf = (alarm: any): Array<{ Namespace: string; MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> }> =>
  alarm.Properties.MetricName
    ? [{ Namespace: alarm.Properties.Namespace, MetricName: alarm.Properties.MetricName, Dimensions: alarm.Properties.Dimensions ?? [] }]
    : alarm.Properties.Metrics.filter((m: any) => m.MetricStat).map((m: any) => ({
        ...m.MetricStat.Metric,
        Dimensions: m.MetricStat.Metric.Dimensions ?? [],
      }));
const dimension = (metric: { Dimensions: Array<{ Name: string; Value: unknown }> }, name: string) =>
  metric.Dimensions.find((d) => d.Name === name)?.Value;

describe('alarms', () => {
  it.each([
    ['api-5xx-rate', 'AWS/ApiGateway', '5XXError'],
    ['api-lambda-throttles', 'AWS/Lambda', 'Throttles'],
    ['replication-lag', 'Ringstore', 'ReplicationLag'],
    ['hints-backlog', 'Ringstore', 'HintsPending'],
    ['transaction-abort-rate', 'Ringstore', 'Transactions'],
    ['txn-sweeper-backlog', 'Ringstore', 'TxnSweeperBacklog'],
    ['cache-errors', 'Ringstore', 'CacheErrors'],
  ])('%s watches %s %s and notifies the alarm topic', (name, namespace, metricName) => {
    const alarm = alarmNamed(name);
    expect(alarm).toBeDefined();
    expect(metricsOf(alarm)).toContainEqual(expect.objectContaining({ Namespace: namespace, MetricName: metricName }));
    expect(JSON.stringify(alarm.Properties.AlarmActions)).toContain('FailoverAlarmsTopic');
  });

  it('reads Ringstore metrics under the service dimension Powertools adds', () => {
    const ringstoreMetrics = Object.values(alarms)
      .flatMap(metricsOf)
      .filter((metric) => metric.Namespace === 'Ringstore');
    expect(ringstoreMetrics.length).toBeGreaterThan(0);
    for (const metric of ringstoreMetrics) expect(dimension(metric, 'service')).toBe('ringstore');
  });

  it('alarms on p99 latency of every data route, by its method and resource, and on no admin or docs route', () => {
    const dataRoutes = routes.filter((route) => ['kvRead', 'kvWrite', 'txn', 'ring'].includes(route.handler));
    for (const route of dataRoutes) {
      const alarm = alarmNamed(`latency-p99-${route.operationId}`);
      expect(alarm?.Properties).toMatchObject({ ExtendedStatistic: 'p99', Threshold: routeLatencyP99AlarmMs, MetricName: 'Latency' });
      const [metric] = metricsOf(alarm);
      expect([dimension(metric!, 'Method'), dimension(metric!, 'Resource')]).toEqual([route.method, route.path]);
    }
    const adminRoute = routes.find((route) => route.handler === 'admin')!;
    expect(alarmNamed(`latency-p99-${adminRoute.operationId}`)).toBeUndefined();
  });

  it('alarms on DynamoDB throttling of each shard table', () => {
    for (const shard of [0, 1, 2]) {
      const metrics = metricsOf(alarmNamed(`dynamodb-throttles-shard-${shard}`));
      expect(metrics.map((metric) => metric.MetricName).sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      for (const metric of metrics) expect(dimension(metric, 'TableName')).toBe(`ringstore-test-shard-${shard}`);
    }
    expect(alarmNamed('dynamodb-throttles-shard-3')).toBeUndefined();
  });

  it('counts the transaction abort rate over both ways a transaction runs', () => {
    const metrics = metricsOf(alarmNamed('transaction-abort-rate'));
    const pairs = metrics.map((metric) => `${String(dimension(metric, 'Status'))}/${String(dimension(metric, 'Path'))}`).sort();
    expect(pairs).toEqual(['aborted/oneShard', 'aborted/stateMachine', 'committed/oneShard', 'committed/stateMachine']);
  });

  it('gives the sweeper three runs before its backlog alarms', () => {
    expect(alarmNamed('txn-sweeper-backlog')?.Properties).toMatchObject({ Threshold: sweeperBacklogAlarmMs, EvaluationPeriods: 3 });
  });
});

describe('dashboard', () => {
  it('is one dashboard named after the stage, with a widget for each area the metrics cover', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const [dashboard] = dashboards as [any];
    expect(dashboard.Properties.DashboardName).toBe('ringstore-test');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const title of [
      'Requests by operation',
      'Errors by code',
      'Cache hits by level',
      'Replication lag',
      'Transactions',
      'DynamoDB throttle',
      'Failovers',
      'DR lag',
    ]) {
      expect(body).toContain(title);
    }
    template.hasOutput('DashboardName', {});
  });
});

describe('tracing', () => {
  it('is active on every function and on the API stage', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')).filter((fn: any) =>
      fn.Properties.Runtime?.startsWith('nodejs22'),
    );
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
  });
});
