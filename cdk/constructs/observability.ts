// The deployment's CloudWatch dashboard and the alarms on its health (docs/operations.md, "Dashboard and
// alarms"): server errors, throttling, p99 latency per data route, replication lag, the hint backlog,
// transaction aborts and the sweeper's backlog, DynamoDB throttling per shard table, and L2 cache errors.
// Every alarm notifies the deployment's alarm topic.
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { Names, RegionHandlerName, RouteSpec } from '../../schemas/topology';

/** Where the handlers' metrics are: Powertools' namespace and its one default dimension (lambdas/adapters/powertools-metrics.ts). */
export const metricNamespace = 'Ringstore';
export const metricDimensions = { service: 'ringstore' } as const;

/** Share of API answers that are 5xx, over a minute, above which the server-errors alarm counts the minute. */
export const serverErrorRateMax = 0.01;
/** p99 latency of a data route (as API Gateway measures it: the whole request) above which its alarm counts the minute. */
export const routeLatencyP99AlarmMs = 1_000;
/** p99 of the replication lag (owner write to replica apply) above which the minute counts. */
export const replicationLagP99AlarmMs = 5_000;
/** Minutes in a row the hints tables must hold hints before the backlog alarms: a blip of a replica drains sooner. */
export const hintBacklogAlarmMinutes = 15;
/** Share of transactions that abort, over a minute, above which the minute counts (conflicts, failed checks, timeouts). */
export const transactionAbortRateMax = 0.2;
/** How far behind the sweeper's walk may be: past it, abandoned transactions hold their keys' locks for longer. */
export const sweeperBacklogAlarmMs = 600_000;
/** L2 cache errors per minute above which the minute counts: reads then all go to DynamoDB. */
export const cacheErrorsPerMinuteMax = 10;
/** Minutes in a row a condition must hold before its alarm fires (unless the alarm says otherwise). */
export const alarmMinutes = 5;

/** The routes whose latency is alarmed on: the data path. Admin and documentation routes are on the dashboard only. */
const latencyAlarmedHandlers: ReadonlySet<RegionHandlerName> = new Set(['kvRead', 'kvWrite', 'txn', 'ring']);

export interface ObservabilityProps {
  names: Names;
  topic: ITopic;
  /** The REST API's name and stage, the dimensions of API Gateway's metrics. */
  apiName: string;
  stageName: string;
  routes: readonly RouteSpec[];
  /** The functions behind the routes (their throttles are alarmed on together). */
  apiFunctions: readonly IFunction[];
  shardTableNames: readonly string[];
}

const minute = Duration.minutes(1);

export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ObservabilityProps,
  ) {
    super(scope, id);
    this.apiAlarms();
    this.dataAlarms();
    this.dashboard = this.buildDashboard();
  }

  /** An alarm on the alarm topic, kept in `alarms`; no data (no traffic) is not breaching. */
  private alarm(
    alarmId: string,
    name: string,
    options: { metric: IMetric; threshold: number; description: string; evaluationPeriods?: number },
  ): Alarm {
    const created = new Alarm(this, alarmId, {
      alarmName: `${this.props.names.prefix}-${name}`,
      alarmDescription: options.description,
      metric: options.metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? alarmMinutes,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      // No data: no requests, no transactions, no cache traffic. Nothing to alarm on.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(new SnsAction(this.props.topic));
    this.alarms.push(created);
    return created;
  }

  /** A metric of Ringstore's own namespace, per minute. */
  private ringstore(metricName: string, statistic: string, dimensions: Record<string, string> = {}) {
    return new Metric({
      namespace: metricNamespace,
      metricName,
      dimensionsMap: { ...metricDimensions, ...dimensions },
      period: minute,
      statistic,
    });
  }

  /** A metric of the REST API's stage, per minute. */
  private apiGateway(metricName: string, statistic: string, dimensions: Record<string, string> = {}) {
    return new Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: { ApiName: this.props.apiName, Stage: this.props.stageName, ...dimensions },
      period: minute,
      statistic,
    });
  }

  private search(label: string, query: string, statistic: string) {
    return new MathExpression({ expression: `SEARCH('${query}', '${statistic}', 60)`, label, period: minute });
  }

  /** What the API's clients feel: server errors, throttled functions, the slow routes. */
  private apiAlarms(): void {
    // Server errors as a share of requests, so a quiet hour's single 500 does not page anyone.
    const serverErrorRate = new MathExpression({
      expression: 'IF(requests > 0, errors / requests, 0)',
      usingMetrics: { errors: this.apiGateway('5XXError', 'Sum'), requests: this.apiGateway('Count', 'Sum') },
      label: '5xx rate',
      period: minute,
    });
    this.alarm('ServerErrors', 'api-5xx-rate', {
      metric: serverErrorRate,
      threshold: serverErrorRateMax,
      description: `Over ${serverErrorRateMax * 100} % of API answers were 5xx for ${alarmMinutes} minutes. Find a failed request's log by its x-request-id (docs/operations.md, "Tracing and request ids").`,
    });

    // At most ten metrics per alarm expression: the API's functions fit (seven).
    const throttles = Object.fromEntries(
      this.props.apiFunctions.map((fn, index) => [`t${index}`, fn.metricThrottles({ period: minute, statistic: 'Sum' })]),
    );
    this.alarm('LambdaThrottles', 'api-lambda-throttles', {
      metric: new MathExpression({
        expression: Object.keys(throttles).join(' + '),
        usingMetrics: throttles,
        label: 'throttled invocations',
        period: minute,
      }),
      threshold: 0,
      evaluationPeriods: 1,
      description:
        "Lambda throttled invocations of the API's functions: the account's or a function's concurrency is exhausted, and requests fail with 5xx. Raise the concurrency limit or lower the API's throttling (apiRateLimitPerSecond).",
    });

    const latencyAlarmed = this.props.routes.filter((route) => latencyAlarmedHandlers.has(route.handler));
    for (const route of latencyAlarmed) {
      this.alarm(`Latency-${route.operationId}`, `latency-p99-${route.operationId}`, {
        metric: this.apiGateway('Latency', 'p99', { Method: route.method, Resource: route.path }),
        threshold: routeLatencyP99AlarmMs,
        description: `p99 latency of ${route.method} ${route.path} (${route.operationId}) has been over ${routeLatencyP99AlarmMs} ms for ${alarmMinutes} minutes.`,
      });
    }
  }

  /** What the data path owes: replication, hints, transactions, the sweeper, shard throttling, the cache. */
  private dataAlarms(): void {
    this.alarm('ReplicationLag', 'replication-lag', {
      metric: this.ringstore('ReplicationLag', 'p99'),
      threshold: replicationLagP99AlarmMs,
      description: `p99 replication lag (owner write to replica apply) has been over ${replicationLagP99AlarmMs} ms for ${alarmMinutes} minutes: eventual reads from replicas are that stale. Look at the replicator's IteratorAge and errors.`,
    });
    this.alarm('HintBacklog', 'hints-backlog', {
      metric: this.ringstore('HintsPending', 'Maximum'),
      threshold: 0,
      evaluationPeriods: hintBacklogAlarmMinutes,
      description: `Hints have waited in the failure log for ${hintBacklogAlarmMinutes} minutes: a shard is not coming back, or replay fails. See GET /v1/admin/shards and docs/operations.md, "Runbook: replication".`,
    });

    const outcome = (status: string, path: string) => this.ringstore('Transactions', 'Sum', { Status: status, Path: path });
    this.alarm('TransactionAborts', 'transaction-abort-rate', {
      metric: new MathExpression({
        expression: 'IF(a1 + a2 + c1 + c2 > 0, (a1 + a2) / (a1 + a2 + c1 + c2), 0)',
        usingMetrics: {
          a1: outcome('aborted', 'oneShard'),
          a2: outcome('aborted', 'stateMachine'),
          c1: outcome('committed', 'oneShard'),
          c2: outcome('committed', 'stateMachine'),
        },
        label: 'abort rate',
        period: minute,
      }),
      threshold: transactionAbortRateMax,
      description: `Over ${transactionAbortRateMax * 100} % of transactions aborted for ${alarmMinutes} minutes (TransactionAborts by Reason tells conflicts from timeouts and unavailable shards).`,
    });
    this.alarm('SweeperBacklog', 'txn-sweeper-backlog', {
      metric: this.ringstore('TxnSweeperBacklog', 'Maximum'),
      threshold: sweeperBacklogAlarmMs,
      evaluationPeriods: 3,
      description: `The transaction sweeper's walk has been over ${sweeperBacklogAlarmMs / 60_000} minutes behind for three runs: abandoned transactions keep their keys locked until readers resolve them. See its log and docs/operations.md, "Runbook: transactions".`,
    });

    for (const [index, table] of this.props.shardTableNames.entries()) {
      const events = (metricName: string) =>
        new Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap: { TableName: table }, period: minute, statistic: 'Sum' });
      this.alarm(`ShardThrottles${index}`, `dynamodb-throttles-shard-${index}`, {
        metric: new MathExpression({
          expression: 'reads + writes',
          usingMetrics: { reads: events('ReadThrottleEvents'), writes: events('WriteThrottleEvents') },
          label: `${table} throttle events`,
          period: minute,
        }),
        threshold: 0,
        description: `DynamoDB throttled requests to ${table} for ${alarmMinutes} minutes: a hot partition (docs/capacity.md, "Hot partitions") or an account limit.`,
      });
    }

    this.alarm('CacheErrors', 'cache-errors', {
      metric: this.ringstore('CacheErrors', 'Sum'),
      threshold: cacheErrorsPerMinuteMax,
      description: `Over ${cacheErrorsPerMinuteMax} L2 cache commands failed per minute for ${alarmMinutes} minutes: the cache is unreachable or refuses the handlers (IAM token, ACL), and every eventual read goes to DynamoDB.`,
    });
  }

  private buildDashboard(): Dashboard {
    const { names } = this.props;
    const graph = (title: string, left: IMetric[], width = 12) => new GraphWidget({ title, left, width, height: 6 });
    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: names.prefix, defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(
      new TextWidget({
        markdown: `# Ringstore ${this.props.names.stage}\nMetric names, units and dimensions: docs/operations.md, "Metrics". Alarms notify ${this.props.names.alarmTopic}.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      graph('API requests and errors', [
        this.apiGateway('Count', 'Sum'),
        this.apiGateway('4XXError', 'Sum'),
        this.apiGateway('5XXError', 'Sum'),
      ]),
      graph('Requests by operation', [this.search('requests', `{${metricNamespace},service,Operation} MetricName="Requests"`, 'Sum')]),
    );
    dashboard.addWidgets(
      graph(
        'p99 latency per route (API Gateway)',
        this.props.routes.map((route) =>
          this.apiGateway('Latency', 'p99', { Method: route.method, Resource: route.path }).with({ label: route.operationId }),
        ),
      ),
      graph('Errors by code', [this.search('errors', `{${metricNamespace},service,Operation,Code} MetricName="Errors"`, 'Sum')]),
    );
    dashboard.addWidgets(
      graph('Cache hits by level and misses', [
        this.search('hits', `{${metricNamespace},service,Level} MetricName="CacheHits"`, 'Sum'),
        this.ringstore('CacheMisses', 'Sum'),
        this.ringstore('CacheErrors', 'Sum'),
      ]),
      graph('Replication lag and hints', [
        this.ringstore('ReplicationLag', 'p99'),
        this.ringstore('HintsWritten', 'Sum'),
        this.ringstore('HintsPending', 'Maximum'),
      ]),
    );
    dashboard.addWidgets(
      graph('Transactions', [
        this.search('outcomes', `{${metricNamespace},service,Path,Status} MetricName="Transactions"`, 'Sum'),
        this.search('aborts', `{${metricNamespace},service,Reason} MetricName="TransactionAborts"`, 'Sum'),
      ]),
      graph('Transaction duration (p99) and sweeper backlog', [
        this.search('duration', `{${metricNamespace},service,Path,Status} MetricName="TransactionDuration"`, 'p99'),
        this.ringstore('TxnSweeperBacklog', 'Maximum'),
      ]),
    );
    dashboard.addWidgets(
      graph('DynamoDB throttle events per shard table', [
        this.search(
          'throttles',
          `{AWS/DynamoDB,TableName} MetricName=("ReadThrottleEvents" OR "WriteThrottleEvents") ${this.props.names.prefix}-shard-`,
          'Sum',
        ),
      ]),
      graph('Lambda throttles and errors', [
        this.search('throttles', `{AWS/Lambda,FunctionName} MetricName="Throttles" ${this.props.names.prefix}-`, 'Sum'),
        this.search('errors', `{AWS/Lambda,FunctionName} MetricName="Errors" ${this.props.names.prefix}-`, 'Sum'),
      ]),
    );
    dashboard.addWidgets(
      graph('Failovers', [
        this.search('failovers', `{${metricNamespace},service,Action,Status} MetricName="Failovers"`, 'Sum'),
        this.ringstore('FailoverFencedRequests', 'Sum'),
      ]),
      graph('DR lag (backup region)', [
        this.ringstore('DrKeyLag', 'p99'),
        this.ringstore('DrValueLag', 'p99'),
        this.ringstore('DrOldestPendingAge', 'Maximum'),
      ]),
    );
    return dashboard;
  }
}
