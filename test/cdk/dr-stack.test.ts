// Cross-region DR in the CDK app (CDK context drBackupRegion, docs/dr.md "Deploying two regions with CDK"):
// the backup region's stacks and DR resources, the primary's shipper and DR environment, the cross-region
// IAM (and its absence without DR), the alarms, cdk-nag.
import type { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DrStats } from '../../lambdas/adapters/dr-metrics';
import { powertoolsMetrics } from '../../lambdas/adapters/powertools-metrics';
import { envVars, handlers, namesFor, stateMachines, type HandlerName } from '../../schemas/topology';
import { deployedHandlerNames } from '../../cdk/stacks/api-stack';
import { parseConfig, type RingstoreConfigInput } from '../../cdk/stacks/config';
import { addRingstore, type Ringstore } from '../../cdk/stacks/ringstore';
import {
  drMetricDimensions,
  drMetricNames,
  drMetricNamespace,
  keyAgeAlarmSeconds,
  keyLagAlarmMinutes,
  keyLagAlarmMs,
} from '../../cdk/constructs/dr-alarms';
import { backupBucketName, keyMaxReceiveCount } from '../../cdk/constructs/dr-backup';
import { asArray, defaultSamples, logicalIdOf, newApp, render, statementsOfRole, type Statement } from './support';

const backupRegion = 'eu-west-1';
const account = defaultSamples['AWS::AccountId']!;
const names = namesFor('local', account);
const backupBucket = `ringstore-local-dr-${backupRegion}-${account}`;
const keyQueueArn = `arn:aws:sqs:${backupRegion}:${account}:${names.drKeyQueue}`;
const keyQueueUrl = `https://sqs.${backupRegion}.amazonaws.com/${account}/${names.drKeyQueue}`;
const valueObjectsArn = `arn:aws:s3:::${backupBucket}/dr/values/*`;
const backupControlArn = `arn:aws:dynamodb:${backupRegion}:${account}:table/${names.controlTable}`;
const backupPendingArn = `arn:aws:dynamodb:${backupRegion}:${account}:table/${names.pendingTable}`;

interface Built extends Ringstore {
  app: App;
  template(stack: Stack): Template;
}

function build(input: Partial<RingstoreConfigInput> = {}): Built {
  const app = newApp();
  const ringstore = addRingstore(app, parseConfig(input));
  const templates = new Map<Stack, Template>();
  return { app, ...ringstore, template: (stack) => templates.get(stack) ?? templates.set(stack, Template.fromStack(stack)).get(stack)! };
}

interface Grant {
  actions: string[];
  resources: string[];
  conditions?: Statement['Condition'];
}

/** A handler's Allow statements, with resources rendered as deployed (pseudo parameters as samples). */
function grantsOf(b: Built, stack: Ringstore['api'], handler: HandlerName): Grant[] {
  const fn = stack.functions[handler];
  if (!fn) throw new Error(`${handler} is not deployed in ${stack.stackName}`);
  return statementsOfRole(b.template(stack), logicalIdOf(stack, fn.role))
    .filter((statement: Statement) => statement.Effect === 'Allow')
    .map((statement) => ({
      actions: asArray(statement.Action),
      resources: asArray(statement.Resource).map((r) => render(r)),
      ...(statement.Condition ? { conditions: statement.Condition } : {}),
    }));
}

const actionsOn = (grants: Grant[], arn: string) => grants.filter((g) => g.resources.includes(arn)).flatMap((g) => g.actions);

/** The environment of a handler's function, values rendered. */
function environmentOf(b: Built, stack: Ringstore['api'], handler: HandlerName): Record<string, string> {
  const fn = stack.functions[handler]!;
  const resource = b.template(stack).toJSON().Resources[logicalIdOf(stack, fn.function)];
  const variables = (resource.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value)]));
}

const drVariables = Object.values(envVars).filter((name) => name.startsWith('RINGSTORE_DR_'));

describe('CDK without drBackupRegion', () => {
  const b = build();

  it('deploys one region: no backup stacks, no DR handler, no pending table or key queue', () => {
    expect(b.backup).toBeUndefined();
    expect(b.app.node.children.filter((child) => 'templateOptions' in child)).toHaveLength(2);
    expect(Object.keys(b.api.functions).sort()).toEqual(deployedHandlerNames().sort());
    expect(deployedHandlerNames().some((name) => handlers[name].drRole !== undefined)).toBe(false);
    b.template(b.data).resourceCountIs('AWS::SQS::Queue', 0);
    // Control, hints, transactions, the feed, and four shards.
    expect(Object.keys(b.template(b.data).findResources('AWS::DynamoDB::Table')).length).toBe(4 + 4);
  });

  it('gives no handler a DR variable, a grant on a key queue, a cross-region grant, or a NAT route', () => {
    for (const name of deployedHandlerNames()) {
      const environment = environmentOf(b, b.api, name);
      for (const variable of drVariables) expect(environment).not.toHaveProperty(variable);
      for (const grant of grantsOf(b, b.api, name)) {
        const dr = grant.resources.filter((r) => r.includes(names.drKeyQueue) || r.includes(backupRegion) || r.includes('/dr/values/'));
        expect({ name, dr }).toEqual({ name, dr: [] });
      }
    }
    b.template(b.api).resourceCountIs('AWS::EC2::NatGateway', 0);
    b.template(b.api).resourceCountIs('AWS::EC2::InternetGateway', 0);
  });
});

describe('CDK with drBackupRegion', () => {
  const b = build({ drBackupRegion: backupRegion });
  const backup = b.backup!;
  const backupData = () => b.template(backup.data);
  const backupApi = () => b.template(backup.api);
  const primaryApi = () => b.template(b.api);

  describe('stacks', () => {
    it('adds the backup data and API stacks in the backup region, deployed before the primary API', () => {
      expect(backup.data.stackName).toBe('ringstore-local-backup-data');
      expect(backup.api.stackName).toBe('ringstore-local-backup-api');
      expect([backup.data.region, backup.api.region]).toEqual([backupRegion, backupRegion]);
      expect(backup.api.dependencies).toContain(backup.data);
      expect(b.api.dependencies).toEqual(expect.arrayContaining([b.data, backup.api]));
    });

    it("names the backup's bucket for its region, so it never collides with the primary's (S3 names are global)", () => {
      const bucketNames = [b.data, backup.data].map((stack) =>
        render(
          Object.values(b.template(stack).findResources('AWS::S3::Bucket', { Properties: { BucketName: Match.anyValue() } }))[0]!.Properties
            .BucketName,
        ),
      );

      expect(bucketNames).toEqual([`ringstore-local-blobs-${account}`, backupBucket]);
      // The longest stage and region still make a valid S3 name (at most 63 characters).
      expect(backupBucketName('a'.repeat(20), account, 'ap-southeast-1').length).toBeLessThanOrEqual(63);
    });

    it("keeps the primary's data stack as it is without DR", () => {
      expect(b.template(b.data).toJSON()).toEqual(build().template(build().data).toJSON());
    });
  });

  describe('backup data', () => {
    it('has the pending table: key schema from topology, on demand, PITR, retained, never unencrypted', () => {
      const tables = backupData().findResources('AWS::DynamoDB::Table', { Properties: { TableName: names.pendingTable } });
      const [table] = Object.values(tables);

      expect(table).toBeDefined();
      expect(table!.DeletionPolicy).toBe('Retain');
      expect(table!.Properties).toMatchObject({
        KeySchema: [
          { AttributeName: 'kh', KeyType: 'HASH' },
          { AttributeName: 'v', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: expect.arrayContaining([
          { AttributeName: 'kh', AttributeType: 'S' },
          { AttributeName: 'v', AttributeType: 'N' },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
      expect(table!.Properties.SSESpecification?.SSEEnabled).not.toBe(false);
    });

    it('has the key queue: FIFO, explicit deduplication ids, high throughput, encrypted, TLS only, a FIFO dead-letter queue', () => {
      const dlqName = names.drKeyQueue.replace('.fifo', '-dlq.fifo');
      const dlqId = Object.keys(backupData().findResources('AWS::SQS::Queue', { Properties: { QueueName: dlqName } }))[0]!;

      backupData().hasResource('AWS::SQS::Queue', {
        DeletionPolicy: 'Retain',
        Properties: {
          QueueName: names.drKeyQueue,
          FifoQueue: true,
          ContentBasedDeduplication: false,
          DeduplicationScope: 'messageGroup',
          FifoThroughputLimit: 'perMessageGroupId',
          SqsManagedSseEnabled: true,
          RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: keyMaxReceiveCount },
        },
      });
      backupData().hasResourceProperties('AWS::SQS::Queue', { QueueName: dlqName, FifoQueue: true, SqsManagedSseEnabled: true });
      // enforceSSL on both queues.
      const policies = Object.values(backupData().findResources('AWS::SQS::QueuePolicy'));
      expect(policies).toHaveLength(2);
      for (const policy of policies) {
        expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        );
      }
    });
  });

  describe('backup API', () => {
    it('deploys the backup DR handlers and not the shipper', () => {
      expect(Object.keys(backup.api.functions).sort()).toEqual(deployedHandlerNames({ role: 'backup' }).sort());
      expect(backup.api.functions).toHaveProperty('drKeyApplier');
      expect(backup.api.functions).toHaveProperty('drValueApplier');
      expect(backup.api.functions).toHaveProperty('drPromotionStep');
      expect(backup.api.functions).not.toHaveProperty('drShipper');
    });

    it('feeds the key applier from the key queue, retrying only the messages it reports failed', () => {
      const applier = logicalIdOf(backup.api, backup.api.functions.drKeyApplier!.function);
      const mappings = Object.values(
        backupApi().findResources('AWS::Lambda::EventSourceMapping', { Properties: { FunctionName: { Ref: applier } } }),
      );

      expect(mappings).toHaveLength(1);
      expect(render(mappings[0]!.Properties.EventSourceArn)).toBe(keyQueueArn);
      expect(mappings[0]!.Properties).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    });

    it("sends the bucket's object-created events under dr/values/ to the value applier", () => {
      const applier = logicalIdOf(backup.api, backup.api.functions.drValueApplier!.function);

      backupApi().hasResourceProperties('Custom::S3BucketNotifications', {
        NotificationConfiguration: {
          LambdaFunctionConfigurations: [
            {
              Events: ['s3:ObjectCreated:*'],
              Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'dr/values/' }] } },
              LambdaFunctionArn: { 'Fn::GetAtt': [applier, 'Arn'] },
            },
          ],
        },
      });
      const [notification] = Object.values(backupApi().findResources('Custom::S3BucketNotifications'));
      expect(render(notification!.Properties.BucketName)).toBe(backupBucket);
      backupApi().hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 's3.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [applier, 'Arn'] },
      });
    });

    it('runs the promotion as a Standard state machine from the ASL file, invoking the promotion step', () => {
      const step = logicalIdOf(backup.api, backup.api.functions.drPromotionStep!.function);

      backupApi().hasResourceProperties('AWS::StepFunctions::StateMachine', {
        StateMachineName: names.stateMachineName('drPromotion'),
        StateMachineType: 'STANDARD',
        DefinitionSubstitutions: { [stateMachines.drPromotion.taskArnSubstitution]: { 'Fn::GetAtt': [step, 'Arn'] } },
      });
      b.template(b.api).resourcePropertiesCountIs(
        'AWS::StepFunctions::StateMachine',
        { StateMachineName: names.stateMachineName('drPromotion') },
        0,
      );
    });

    it('lets the admin handler start that state machine, and names it in its environment', () => {
      const machine = `<${logicalIdOf(backup.api, backup.api.promotions!.stateMachine)}>`;

      expect(environmentOf(b, backup.api, 'admin')[envVars.drPromotionStateMachineArn]).toBe(machine);
      expect(actionsOn(grantsOf(b, backup.api, 'admin'), machine)).toEqual(['states:StartExecution']);
      for (const name of deployedHandlerNames({ role: 'backup' }).filter((n) => !handlers[n].startsPromotions)) {
        expect(actionsOn(grantsOf(b, backup.api, name), machine)).toEqual([]);
      }
    });

    it('gives RINGSTORE_DR_ROLE=backup to the DR handlers and every handler that reads through the pending table', () => {
      for (const name of deployedHandlerNames({ role: 'backup' })) {
        const spec = handlers[name];
        const expected = spec.drRole === 'backup' || (spec.pendingTable ?? 'none') !== 'none' ? 'backup' : undefined;
        expect({ name, role: environmentOf(b, backup.api, name)[envVars.drRole] }).toEqual({ name, role: expected });
      }
      expect(environmentOf(b, backup.api, 'drPromotionStep')[envVars.drKeyQueueUrl]).toBe(keyQueueUrl);
      expect(environmentOf(b, backup.api, 'admin')[envVars.drKeyQueueUrl]).toBe(keyQueueUrl);
      expect(environmentOf(b, backup.api, 'kvRead')[envVars.blobBucket]).toBe(backupBucket);
    });

    it('grants the pending table as each spec says, the key queue to its consumer and its depth to the promotion and admin', () => {
      const pendingArn = `arn:aws:dynamodb:${backupRegion}:${account}:table/${names.pendingTable}`;
      for (const name of deployedHandlerNames({ role: 'backup' })) {
        const access = handlers[name].pendingTable ?? 'none';
        const actions = actionsOn(grantsOf(b, backup.api, name), pendingArn);
        if (access === 'none') expect({ name, actions }).toEqual({ name, actions: [] });
        else expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan']));
        expect(actions.includes('dynamodb:PutItem')).toBe(access === 'readWrite');
      }
      expect(actionsOn(grantsOf(b, backup.api, 'drKeyApplier'), keyQueueArn).sort()).toEqual([
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
      ]);
      expect(actionsOn(grantsOf(b, backup.api, 'drPromotionStep'), keyQueueArn)).toEqual(['sqs:GetQueueAttributes']);
      expect(actionsOn(grantsOf(b, backup.api, 'admin'), keyQueueArn)).toEqual(['sqs:GetQueueAttributes']);
      expect(actionsOn(grantsOf(b, backup.api, 'kvRead'), keyQueueArn)).toEqual([]);
    });

    it("lets the bucket's readers read dr/values/ (large values stay there as blobs), and only writers delete there", () => {
      const values = `arn:aws:s3:::${backupBucket}/dr/values/*`;

      expect(actionsOn(grantsOf(b, backup.api, 'kvRead'), values)).toEqual(['s3:GetObject']);
      expect(actionsOn(grantsOf(b, backup.api, 'drValueApplier'), values)).toEqual(
        expect.arrayContaining(['s3:GetObject', 's3:DeleteObject']),
      );
    });

    it('reaches SQS and Step Functions from the VPC through endpoints that carry only those calls on those resources', () => {
      const endpointStatements = (service: string) =>
        Object.values(backupApi().findResources('AWS::EC2::VPCEndpoint'))
          .filter((endpoint) => JSON.stringify(endpoint.Properties.ServiceName).includes(service))
          .flatMap((endpoint) => endpoint.Properties.PolicyDocument.Statement as Statement[]);
      const promotionMachine = `<${logicalIdOf(backup.api, backup.api.promotions!.stateMachine)}>`;

      expect(endpointStatements('.sqs').map((s) => [s.Action, asArray(s.Resource).map((r) => render(r))])).toEqual([
        ['sqs:GetQueueAttributes', [keyQueueArn]],
      ]);
      const states = endpointStatements('.states');
      expect(states.flatMap((s) => asArray(s.Resource).map((r) => render(r)))).toContain(promotionMachine);
      expect(new Set(states.flatMap((s) => asArray(s.Action)))).toEqual(new Set(['states:StartExecution']));
    });

    it('alarms on dead letters, old key messages, lost keys, corrupt values and key lag, notifying the alarm topic', () => {
      const topic = logicalIdOf(backup.api, backup.api.failoverAlarms.topic);
      const alarm = (name: string) => {
        const found = Object.values(
          backupApi().findResources('AWS::CloudWatch::Alarm', { Properties: { AlarmName: `${names.prefix}-${name}` } }),
        );
        expect(found).toHaveLength(1);
        expect(found[0]!.Properties.AlarmActions).toEqual([{ Ref: topic }]);
        return found[0]!.Properties;
      };

      expect(alarm('dr-key-dead-letters')).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: names.drKeyQueue.replace('.fifo', '-dlq.fifo') }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(alarm('dr-key-age')).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: names.drKeyQueue }],
        Threshold: keyAgeAlarmSeconds,
      });
      const service = [{ Name: 'service', Value: 'ringstore' }];
      expect(alarm('dr-lost-keys')).toMatchObject({ Namespace: 'Ringstore', MetricName: 'DrLostKeys', Dimensions: service, Threshold: 0 });
      expect(alarm('dr-corrupt-values')).toMatchObject({
        Namespace: 'Ringstore',
        MetricName: 'DrCorruptValues',
        Dimensions: service,
        Threshold: 0,
      });
      expect(alarm('dr-key-lag')).toMatchObject({
        Namespace: 'Ringstore',
        MetricName: 'DrKeyLag',
        ExtendedStatistic: 'p99',
        Threshold: keyLagAlarmMs,
        EvaluationPeriods: keyLagAlarmMinutes,
      });
      b.template(b.api).resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { AlarmName: `${names.prefix}-dr-lost-keys` }, 0);
    });

    it('watches the metrics the handlers publish (namespace, dimension and names of the DR metrics adapter)', () => {
      // Prepare: the adapter as Lambda runs it, its EMF lines captured.
      const lines: string[] = [];
      const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      });
      try {
        const stats = new DrStats(powertoolsMetrics());

        // Act
        stats.keyReceived(120);
        stats.keysLost(2);
        stats.valueCorrupt();
        stats.publish();
      } finally {
        write.mockRestore();
      }

      // Assess
      const emf = lines
        .flatMap((line) => line.split('\n'))
        .filter((line) => line.includes('CloudWatchMetrics'))
        .map((line) => JSON.parse(line));
      expect(emf.length).toBeGreaterThan(0);
      const directives = emf.flatMap(
        (entry) => entry._aws.CloudWatchMetrics as { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[],
      );
      expect(new Set(directives.map((d) => d.Namespace))).toEqual(new Set([drMetricNamespace]));
      for (const d of directives) expect(d.Dimensions).toEqual([Object.keys(drMetricDimensions)]);
      for (const entry of emf) expect(entry.service).toBe(drMetricDimensions.service);
      expect(directives.flatMap((d) => d.Metrics.map((m) => m.Name))).toEqual(expect.arrayContaining(Object.values(drMetricNames)));
    });
  });

  describe('primary API', () => {
    it("runs the shipper as a second consumer of every shard table's stream, beside the replicator", () => {
      const consumers = (handler: HandlerName) =>
        Object.keys(
          primaryApi().findResources('AWS::Lambda::EventSourceMapping', {
            Properties: { FunctionName: { Ref: logicalIdOf(b.api, b.api.functions[handler]!.function) } },
          }),
        ).length;

      expect(b.api.functions).toHaveProperty('drShipper');
      expect(b.api.functions).not.toHaveProperty('drKeyApplier');
      expect(consumers('drShipper')).toBe(4);
      expect(consumers('replicator')).toBe(4);
      primaryApi().hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: logicalIdOf(b.api, b.api.functions.drShipper!.function) },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        StartingPosition: 'TRIM_HORIZON',
      });
    });

    it('gives the handlers with the DR link (and the shipper) the primary role, the backup queue URL, bucket and region', () => {
      const linked = deployedHandlerNames({ role: 'primary', backupRegion }).filter((name) => handlers[name].drLink);
      expect(linked).toEqual(expect.arrayContaining(['kvWrite', 'txn', 'maintenance', 'drShipper']));

      for (const name of deployedHandlerNames({ role: 'primary', backupRegion })) {
        const environment = environmentOf(b, b.api, name);
        if (linked.includes(name)) {
          expect(environment).toMatchObject({
            [envVars.drRole]: 'primary',
            [envVars.drKeyQueueUrl]: keyQueueUrl,
            [envVars.drBucket]: backupBucket,
            [envVars.drRegion]: backupRegion,
          });
        } else {
          for (const variable of drVariables)
            expect({ name, variable, set: variable in environment }).toEqual({ name, variable, set: false });
        }
      }
    });

    it("grants exactly SendMessage on the key queue, PutObject under dr/values/, reads of the DR partitions of the backup's control table and (maintenance) a scan of its pending table, to the linked handlers only", () => {
      for (const name of deployedHandlerNames({ role: 'primary', backupRegion })) {
        const crossRegion = grantsOf(b, b.api, name).filter((g) =>
          g.resources.some((r) => r.includes(`:${backupRegion}:`) || r.includes(backupBucket)),
        );
        if (!handlers[name].drLink) {
          expect({ name, crossRegion }).toEqual({ name, crossRegion: [] });
          continue;
        }
        expect(crossRegion).toEqual(
          expect.arrayContaining([
            { actions: ['sqs:SendMessage'], resources: [keyQueueArn] },
            { actions: ['s3:PutObject'], resources: [valueObjectsArn] },
            {
              actions: ['dynamodb:GetItem', 'dynamodb:Query'],
              resources: [backupControlArn],
              conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['dr', 'drPromotion'] } },
            },
          ]),
        );
        const noticeScan = { actions: ['dynamodb:Scan'], resources: [backupPendingArn] };
        if (handlers[name].drNotices) expect(crossRegion).toContainEqual(noticeScan);
        expect(crossRegion).toHaveLength(handlers[name].drNotices ? 4 : 3);
      }
    });

    it('routes the Lambda subnets to NAT gateways (the backup region has no endpoint here), keeping their addresses', () => {
      const subnets = (template: Template) =>
        Object.values(template.findResources('AWS::EC2::Subnet'))
          .filter((subnet) => JSON.stringify(subnet.Properties.Tags).includes('isolated'))
          .map((subnet) => subnet.Properties.CidrBlock);

      expect(Object.keys(primaryApi().findResources('AWS::EC2::NatGateway')).length).toBeGreaterThanOrEqual(2);
      primaryApi().resourcePropertiesCountIs('AWS::EC2::Route', { DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: Match.anyValue() }, 2);
      expect(subnets(primaryApi())).toEqual(subnets(build().template(build().api)));
      backupApi().resourceCountIs('AWS::EC2::NatGateway', 0);
    });
  });

  it('passes cdk-nag with no unacknowledged finding', () => {
    b.app.synth();
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(b.app);

    expect(report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`))).toEqual([]);
  });
});
