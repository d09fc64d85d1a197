// API stack: one Lambda per topology handler, one API method per topology route, the authorizer,
// error responses, throttling, the cache reachable only from the Lambdas, the transaction state machine, and
// what invokes the background handlers (shard stream subscriptions, schedules).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { statusOf } from '../../schemas/errors';
import {
  defaults,
  envVars,
  handlers,
  limits,
  namesFor,
  replicationDefaults,
  routes,
  stateMachines,
  type RegionHandlerName,
} from '../../schemas/topology';
import { keySlashStubPath, methodsByPath } from '../../cdk/constructs/route-stubs';
import { repoRoot } from '../../cdk/constructs/handler-function';
import { definitionPlaceholders, taskArnSubstitutions } from '../../cdk/constructs/transaction-state-machine';
import { handlerNames } from '../../cdk/stacks/api-stack';
import { logicalIdOf, render, shardStreamOutputs, streamArnSamples, synth, txnStreamOutput, type Synthesized } from './support';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** Full path of each API Gateway resource (logical id → `/v1/kv/{key}`), walking ParentId up to the root. */
function resourcePaths(template: Template): Map<string, string> {
  const resources = template.findResources('AWS::ApiGateway::Resource') as Record<string, Resource>;
  const pathOf = (logicalId: string): string => {
    const resource = resources[logicalId];
    if (!resource) throw new Error(`no resource ${logicalId}`);
    const parent = resource.Properties.ParentId as { Ref?: string; 'Fn::GetAtt'?: string[] };
    const prefix = parent.Ref ? pathOf(parent.Ref) : '';
    return `${prefix}/${resource.Properties.PathPart}`;
  };
  return new Map(Object.keys(resources).map((id) => [id, pathOf(id)]));
}

function methodFor(template: Template, method: string, path: string): Resource | undefined {
  const paths = resourcePaths(template);
  const methods = Object.values(template.findResources('AWS::ApiGateway::Method')) as Resource[];
  return methods.find((m) => {
    if (m.Properties.HttpMethod !== method) return false;
    const resourceId = m.Properties.ResourceId as { Ref?: string; 'Fn::GetAtt'?: string[] };
    const actual = resourceId.Ref ? paths.get(resourceId.Ref) : '/';
    return actual === path;
  });
}

describe('ApiStack', () => {
  let s: Synthesized;
  let t: Template;
  const names = namesFor(defaults.stage);
  beforeAll(() => {
    s = synth();
    t = s.apiTemplate;
  });

  it('skips esbuild bundling in tests (aws:cdk:bundling-stacks is empty)', () => {
    expect(s.api.bundlingRequired).toBe(false);
  });

  it('writes the initial ring at deploy time through the bootstrap handler', () => {
    const bootstrapId = s.api.getLogicalId(s.api.functions.bootstrap.function.node.defaultChild as never);
    t.hasResourceProperties('Custom::RingstoreRing', {
      ServiceToken: { 'Fn::GetAtt': [bootstrapId, 'Arn'] },
      shardCount: defaults.shardCount,
      replicationFactor: defaults.replicationFactor,
      vnodesPerShard: defaults.vnodesPerShard,
    });
  });

  describe('Lambda functions', () => {
    const fnOf = (name: RegionHandlerName): Resource => {
      const found = Object.values(
        t.findResources('AWS::Lambda::Function', {
          Properties: { FunctionName: names.functionName(name) },
        }),
      ) as Resource[];
      expect(found).toHaveLength(1);
      return found[0] as Resource;
    };

    it('has exactly one function per topology handler', () => {
      const ours = Object.values(t.findResources('AWS::Lambda::Function')).filter((f) =>
        String(f.Properties.FunctionName ?? '').startsWith(`${names.prefix}-`),
      );

      expect(ours).toHaveLength(handlerNames.length);
      for (const name of handlerNames) fnOf(name);
    });

    it.each(handlerNames)('runs %s on Node.js 22 in the VPC, sized as its spec says', (name) => {
      const { Properties: p } = fnOf(name);

      expect(p.Runtime).toBe('nodejs22.x');
      expect(p.Handler).toBe('index.handler');
      expect(p.MemorySize).toBe(handlers[name].memoryMb);
      expect(p.Timeout).toBe(handlers[name].timeoutSeconds);
      // Behind API Gateway a handler must answer before the integration times out.
      if (routes.some((route) => route.handler === name)) expect(p.Timeout * 1000).toBeLessThan(limits.apiGatewayTimeoutMs);
      expect(p.Timeout).toBeLessThanOrEqual(900);
      expect(p.VpcConfig.SubnetIds.length).toBeGreaterThanOrEqual(2);
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
    });

    it.each(handlerNames)('gives %s the configuration lambdas/config.ts parses', (name) => {
      const env = fnOf(name).Properties.Environment.Variables as Record<string, unknown>;

      expect(env).toMatchObject({
        [envVars.stage]: defaults.stage,
        [envVars.shardCount]: String(defaults.shardCount),
        [envVars.replicationFactor]: String(defaults.replicationFactor),
        [envVars.vnodesPerShard]: String(defaults.vnodesPerShard),
        [envVars.l1Policy]: 'lru',
        POWERTOOLS_SERVICE_NAME: names.prefix,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
      expect(env[envVars.blobBucket]).toBeDefined();
      // Local-cloud endpoint overrides never reach AWS.
      expect(env[envVars.dynamodbEndpoint]).toBeUndefined();
      expect(env[envVars.s3Endpoint]).toBeUndefined();
      // Fault injection is for test runs only: the CDK app never arms it.
      expect(env[envVars.faultInjection]).toBeUndefined();
      expect(Object.values(env).map((value) => JSON.stringify(value))).not.toContain(JSON.stringify(envVars.faultInjection));
    });

    it.each(handlerNames)('tells %s the transaction state machine ARN only if its spec says startsTransactions', (name) => {
      const env = fnOf(name).Properties.Environment.Variables as Record<string, unknown>;
      const stateMachineId = logicalIdOf(s.api, s.api.transactions.stateMachine);

      if (handlers[name].startsTransactions) {
        expect(env[envVars.txnStateMachineArn]).toEqual({ Ref: stateMachineId });
      } else {
        expect(env[envVars.txnStateMachineArn]).toBeUndefined();
      }
    });

    it.each(handlerNames)('points %s at the L2 primary endpoint over TLS', (name) => {
      const groupId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.replicationGroup } });
      const env = fnOf(name).Properties.Environment.Variables as Record<string, unknown>;

      expect(env[envVars.redisUrl]).toEqual({
        'Fn::Join': [
          '',
          ['rediss://', { 'Fn::GetAtt': [groupId, 'PrimaryEndPoint.Address'] }, ':', { 'Fn::GetAtt': [groupId, 'PrimaryEndPoint.Port'] }],
        ],
      });
    });
  });

  describe('REST API', () => {
    it('passes every body to Lambda as binary', () => {
      t.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: names.apiName, BinaryMediaTypes: ['*/*'] });
    });

    it('has one method per topology route, one 405 stub per route path and the %2F stub, and nothing else', () => {
      t.resourceCountIs('AWS::ApiGateway::Method', routes.length + methodsByPath(routes).size + 1);
    });

    it('answers a method a route path lacks with 405 and Allow, and a key with raw slashes with the %2F hint', () => {
      const stub = methodFor(t, 'ANY', '/v1/kv/{key}');
      const keySlash = methodFor(t, 'ANY', keySlashStubPath);
      const root = methodFor(t, 'ANY', '/');
      expect(stub?.Properties).toMatchObject({
        AuthorizationType: 'NONE',
        Integration: {
          Type: 'MOCK',
          IntegrationResponses: [
            {
              StatusCode: '405',
              ResponseParameters: {
                'method.response.header.Allow': "'GET, HEAD, PUT, DELETE'",
                'method.response.header.x-request-id': 'context.requestId',
              },
            },
          ],
        },
      });
      expect(root?.Properties).toMatchObject({ Integration: { IntegrationResponses: [{ StatusCode: '405' }] } });
      expect(keySlash?.Properties).toMatchObject({ Integration: { Type: 'MOCK', IntegrationResponses: [{ StatusCode: '400' }] } });
      expect(JSON.stringify(keySlash?.Properties)).toContain('%2F');
      t.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
        StatusCode: '404',
        ResponseTemplates: { 'application/json': Match.stringLikeRegexp('route.notFound.*described at /docs') },
      });
    });

    it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('routes %s to its handler', (_, route) => {
      const method = methodFor(t, route.method, route.path);
      const handlerFn = logicalIdOf(s.api, s.api.functions[route.handler].function);

      expect(method).toBeDefined();
      expect(method?.Properties.Integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(method?.Properties.Integration.Uri)).toContain(handlerFn);
      expect(method?.Properties.OperationName).toBe(route.operationId);
    });

    it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('guards %s as topology says', (_, route) => {
      const method = methodFor(t, route.method, route.path);
      const [authorizerId] = Object.keys(t.findResources('AWS::ApiGateway::Authorizer'));

      if (route.authorized) {
        expect(method?.Properties.AuthorizationType).toBe('CUSTOM');
        expect(method?.Properties.AuthorizerId).toEqual({ Ref: authorizerId });
      } else {
        expect(method?.Properties.AuthorizationType).toBe('NONE');
        expect(method?.Properties.AuthorizerId).toBeUndefined();
      }
    });

    it('authorizes with the authorizer handler, keyed on x-api-key, cached 60 s', () => {
      const authorizerFn = logicalIdOf(s.api, s.api.functions.authorizer.function);

      t.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
      t.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'REQUEST',
        IdentitySource: 'method.request.header.x-api-key',
        AuthorizerResultTtlInSeconds: limits.authorizerCacheTtlSeconds,
      });
      const [authorizer] = Object.values(t.findResources('AWS::ApiGateway::Authorizer'));
      expect(JSON.stringify(authorizer?.Properties.AuthorizerUri)).toContain(authorizerFn);
      expect(limits.authorizerCacheTtlSeconds).toBe(60);
    });

    it('deploys a stage named after the stage, traced, access-logged and throttled', () => {
      t.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: defaults.stage,
        TracingEnabled: true,
        AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') }),
        MethodSettings: Match.arrayWith([
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
            ThrottlingRateLimit: s.config.apiRateLimitPerSecond,
            ThrottlingBurstLimit: s.config.apiBurstLimit,
          }),
        ]),
      });
    });

    it('attaches a usage plan with the throttle to the stage', () => {
      const [stageId] = Object.keys(t.findResources('AWS::ApiGateway::Stage'));

      t.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
        Throttle: { RateLimit: s.config.apiRateLimitPerSecond, BurstLimit: s.config.apiBurstLimit },
        ApiStages: [Match.objectLike({ Stage: { Ref: stageId } })],
      });
    });

    it('takes throttle limits from context', () => {
      const other = synth({ apiRateLimitPerSecond: '50', apiBurstLimit: '80' });

      other.apiTemplate.hasResourceProperties('AWS::ApiGateway::UsagePlan', { Throttle: { RateLimit: 50, BurstLimit: 80 } });
    });

    describe('gateway responses', () => {
      const responses = () => Object.values(t.findResources('AWS::ApiGateway::GatewayResponse')) as Resource[];
      const responseOf = (type: string) => responses().find((r) => r.Properties.ResponseType === type);
      /** The body API Gateway would send, with context variables filled in. */
      const bodyOf = (response: Resource | undefined) =>
        JSON.parse(
          String(response?.Properties.ResponseTemplates['application/json']).replaceAll('$context.error.messageString', '"sample message"'),
        );

      it.each([
        ['UNAUTHORIZED', 401, 'auth.missingKey', false],
        ['ACCESS_DENIED', 403, 'auth.invalidKey', false],
        ['REQUEST_TOO_LARGE', 413, 'request.tooLarge', false],
        ['THROTTLED', 429, 'throttled', true],
        ['MISSING_AUTHENTICATION_TOKEN', 404, 'route.notFound', false],
      ] as const)('answers %s with %i and the JSON error shape', (type, status, code, retryable) => {
        const response = responseOf(type);

        expect(response?.Properties.StatusCode).toBe(String(status));
        expect(statusOf[code]).toBe(status);
        expect(bodyOf(response)).toEqual({ error: { code, message: expect.any(String), retryable } });
      });

      it.each([
        ['DEFAULT_4XX', 'request.invalid', false],
        ['DEFAULT_5XX', 'internal', true],
      ] as const)('answers every other %s in the JSON error shape, keeping the status', (type, code, retryable) => {
        const response = responseOf(type);

        expect(response?.Properties.StatusCode).toBeUndefined();
        expect(bodyOf(response)).toEqual({ error: { code, message: 'sample message', retryable } });
      });

      it('tells throttled clients when to retry', () => {
        expect(responseOf('THROTTLED')?.Properties.ResponseParameters).toEqual({
          'gatewayresponse.header.Retry-After': "'1'",
          'gatewayresponse.header.x-request-id': 'context.requestId',
        });
      });

      it('returns the request id on every answer it makes itself, as the handlers do', () => {
        for (const response of responses()) {
          expect(response.Properties.ResponseParameters).toMatchObject({ 'gatewayresponse.header.x-request-id': 'context.requestId' });
        }
      });

      it('renders valid JSON for every response', () => {
        for (const response of responses()) expect(() => bodyOf(response)).not.toThrow();
      });
    });

    it('outputs the API URL', () => {
      expect(Object.keys(t.toJSON().Outputs)).toContain('ApiUrl');
    });
  });

  describe('network and cache', () => {
    const endpoints = () =>
      Object.entries(t.findResources('AWS::EC2::VPCEndpoint')).map(([id, e]) => ({
        id,
        type: e.Properties.VpcEndpointType as string,
        service: JSON.stringify(e.Properties.ServiceName),
        properties: e.Properties as Record<string, any>,
      }));

    it('has no internet path: no NAT or internet gateway, gateway endpoints for DynamoDB and S3, interface endpoints for Step Functions (sync and standard)', () => {
      t.resourceCountIs('AWS::EC2::NatGateway', 0);
      t.resourceCountIs('AWS::EC2::InternetGateway', 0);
      const gateways = endpoints().filter((e) => e.type === 'Gateway');
      const interfaces = endpoints().filter((e) => e.type === 'Interface');

      expect(gateways).toHaveLength(2);
      expect(gateways.some((e) => e.service.includes('.dynamodb'))).toBe(true);
      expect(gateways.some((e) => e.service.includes('.s3'))).toBe(true);
      expect(interfaces.map((e) => e.service).sort()).toEqual(
        [expect.stringContaining('.states'), expect.stringContaining('.sync-states')].sort(),
      );
      expect(interfaces.some((e) => e.service.includes('.sync-states'))).toBe(true);
      expect(interfaces.some((e) => /\.states"/.test(e.service))).toBe(true);
      expect(endpoints()).toHaveLength(4);
    });

    it.each([
      ['sync-states', 'StartSyncExecution', 'transaction'],
      ['states', 'StartExecution', 'failover and rebalance'],
    ] as const)('lets the %s endpoint carry only %s on the %s state machine, from the Lambdas only', (service, action, machine) => {
      const [endpoint] = endpoints().filter((e) => e.type === 'Interface' && e.service.includes(`.${service}"`));
      const lambdaSg = logicalIdOf(s.api, s.api.network.lambdaSecurityGroup);
      const stateMachineIds = (machine === 'transaction' ? [s.api.transactions] : [s.api.failovers, s.api.rebalances]).map((workflow) =>
        logicalIdOf(s.api, workflow.stateMachine),
      );
      const securityGroups = endpoint?.properties.SecurityGroupIds as { 'Fn::GetAtt': string[] }[];
      const [endpointSg] = securityGroups.map((ref) => ref['Fn::GetAtt'][0] as string);
      const inline = t.toJSON().Resources[endpointSg as string].Properties.SecurityGroupIngress ?? [];
      const separate = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress'))
        .map((r) => r.Properties)
        .filter((p) => p.GroupId?.['Fn::GetAtt']?.[0] === endpointSg);

      const rules = [...inline, ...separate];

      expect(endpoint?.properties.PrivateDnsEnabled).toBe(true);
      const refs = stateMachineIds.map((id) => ({ Ref: id }));
      expect(endpoint?.properties.PolicyDocument.Statement).toEqual([
        { Action: `states:${action}`, Effect: 'Allow', Principal: { AWS: '*' }, Resource: refs.length === 1 ? refs[0] : refs },
      ]);
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [lambdaSg, 'GroupId'] });
        expect(rule.CidrIp).toBeUndefined();
        expect([rule.FromPort, rule.ToPort]).toEqual([443, 443]);
      }
    });

    it('runs a two-node Valkey replication group in the VPC subnets, behind its own security group', () => {
      const cacheSg = logicalIdOf(s.api, s.api.cache.securityGroup);
      const subnets = s.api.network.vpc.isolatedSubnets.map((subnet) => logicalIdOf(s.api, subnet));
      const [subnetGroupId] = Object.keys(t.findResources('AWS::ElastiCache::SubnetGroup'));
      const parameterGroupId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.parameterGroup } });

      t.resourceCountIs('AWS::ElastiCache::ServerlessCache', 0);
      t.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 1);
      t.resourceCountIs('AWS::ElastiCache::SubnetGroup', 1);
      t.hasResourceProperties('AWS::ElastiCache::SubnetGroup', { SubnetIds: subnets.map((id) => ({ Ref: id })) });
      t.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
        Engine: 'valkey',
        CacheNodeType: 'cache.t4g.small',
        NumCacheClusters: 2,
        AutomaticFailoverEnabled: true,
        MultiAZEnabled: true,
        TransitEncryptionEnabled: true,
        AtRestEncryptionEnabled: true,
        Port: 6379,
        SecurityGroupIds: [{ 'Fn::GetAtt': [cacheSg, 'GroupId'] }],
        CacheSubnetGroupName: { Ref: subnetGroupId },
        CacheParameterGroupName: { Ref: parameterGroupId },
      });
      expect(subnets.length).toBeGreaterThanOrEqual(2);
    });

    it('matches the parameter group family to the engine version', () => {
      const [group] = Object.values(t.findResources('AWS::ElastiCache::ReplicationGroup'));
      const [parameters] = Object.values(t.findResources('AWS::ElastiCache::ParameterGroup'));
      const major = String(group?.Properties.EngineVersion).split('.')[0];

      expect(parameters?.Properties.CacheParameterGroupFamily).toBe(`${group?.Properties.Engine}${major}`);
    });

    it.each(['allkeys-lru', 'allkeys-lfu'] as const)('sets maxmemory-policy from l2EvictionPolicy=%s', (policy) => {
      const other = synth({ l2EvictionPolicy: policy });

      const groups = Object.values(other.apiTemplate.findResources('AWS::ElastiCache::ParameterGroup'));

      expect(groups).toHaveLength(1);
      expect(groups[0]?.Properties.Properties).toEqual({ 'maxmemory-policy': policy });
    });

    it('refuses a bad l2EvictionPolicy before building anything, naming the key', () => {
      // Context arrives untyped (cdk.json, -c), hence the cast.
      expect(() => synth({ l2EvictionPolicy: 'volatile-lru' } as never)).toThrow(/-c l2EvictionPolicy:/);
    });

    it('takes the node type from cacheNodeType', () => {
      const other = synth({ cacheNodeType: 'cache.r7g.large' });

      other.apiTemplate.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', { CacheNodeType: 'cache.r7g.large' });
    });

    it("lets only the Lambdas' security group reach the cache", () => {
      const cacheSg = logicalIdOf(s.api, s.api.cache.securityGroup);
      const lambdaSg = logicalIdOf(s.api, s.api.network.lambdaSecurityGroup);
      const inline = t.toJSON().Resources[cacheSg].Properties.SecurityGroupIngress ?? [];
      const separate = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress'))
        .map((r) => r.Properties)
        .filter((p) => p.GroupId?.['Fn::GetAtt']?.[0] === cacheSg);

      const rules = [...inline, ...separate];

      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [lambdaSg, 'GroupId'] });
        expect(rule.CidrIp).toBeUndefined();
        expect(rule.CidrIpv6).toBeUndefined();
        expect([rule.FromPort, rule.ToPort]).toEqual([6379, 6379]);
      }
    });

    it("puts every handler in the Lambdas' security group", () => {
      const lambdaSg = logicalIdOf(s.api, s.api.network.lambdaSecurityGroup);

      for (const name of handlerNames) {
        t.hasResourceProperties('AWS::Lambda::Function', {
          FunctionName: names.functionName(name),
          VpcConfig: Match.objectLike({ SecurityGroupIds: [{ 'Fn::GetAtt': [lambdaSg, 'GroupId'] }] }),
        });
      }
    });
  });

  describe.each(['transaction', 'failover'] as const)('%s state machine', (name) => {
    const expected = {
      transaction: { type: 'EXPRESS', task: 'txnStep', outputs: ['TransactionStateMachineArn', 'TransactionLogGroup'] },
      failover: { type: 'STANDARD', task: 'failoverStep', outputs: ['FailoverStateMachineArn'] },
    }[name];
    const substitution = taskArnSubstitutions[name];
    const workflow = () => (name === 'transaction' ? s.api.transactions : s.api.failovers);
    const definitionFromFile = () => JSON.parse(readFileSync(path.join(repoRoot, stateMachines[name].definitionFile), 'utf8'));
    const machine = () => {
      const found = (Object.values(t.findResources('AWS::StepFunctions::StateMachine')) as Resource[]).filter(
        (resource) => resource.Properties.StateMachineName === names.stateMachineName(name),
      );
      expect(found).toHaveLength(1);
      return (found[0] as Resource).Properties;
    };
    /** Every Task state's Resource, Map iterators included. */
    const taskResources = (states: Record<string, any>): unknown[] =>
      Object.values(states).flatMap((state) => [
        ...(state.Type === 'Task' ? [state.Resource] : []),
        ...(state.Iterator ? taskResources(state.Iterator.States) : []),
        ...(state.ItemProcessor ? taskResources(state.ItemProcessor.States) : []),
      ]);

    it('is the type of state machine topology names, under its name', () => {
      expect(machine()).toMatchObject({ StateMachineName: names.stateMachineName(name), StateMachineType: expected.type });
      expect(stateMachines[name].type).toBe(expected.type);
    });

    it('deploys the ASL file the local cloud runs, unchanged', () => {
      expect(JSON.parse(machine().DefinitionString)).toEqual(definitionFromFile());
    });

    it("substitutes every Task's Lambda with the task handler's function, and nothing else", () => {
      const taskFn = logicalIdOf(s.api, s.api.functions[stateMachines[name].taskHandler].function);
      const definition = machine().DefinitionString as string;

      const resources = new Set(taskResources(JSON.parse(definition).States));

      expect(stateMachines[name].taskHandler).toBe(expected.task);
      expect([...resources]).toEqual([`\${${substitution}}`]);
      expect(definitionPlaceholders(definition)).toEqual([substitution]);
      expect(machine().DefinitionSubstitutions).toEqual({ [substitution]: { 'Fn::GetAtt': [taskFn, 'Arn'] } });
    });

    it("logs every event to its own log group, never the execution's input or output, and is traced", () => {
      const logGroupId = logicalIdOf(s.api, workflow().logGroup);

      expect(machine().LoggingConfiguration).toEqual({
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logGroupId, 'Arn'] } } }],
        IncludeExecutionData: false,
        Level: 'ALL',
      });
      expect(machine().TracingConfiguration).toEqual({ Enabled: true });
      t.hasResourceProperties('AWS::Logs::LogGroup', {
        LogGroupName: `/aws/vendedlogs/states/${names.stateMachineName(name)}`,
        RetentionInDays: 30,
      });
    });

    it('runs under its own role, which only Step Functions of this account may assume', () => {
      const roleId = logicalIdOf(s.api, workflow().stateMachine.role);
      const role = t.toJSON().Resources[roleId];

      expect(machine().RoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({
          Principal: { Service: 'states.amazonaws.com' },
          Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
        }),
      ]);
    });

    it('finds each ${…} placeholder of a definition once, ignoring JSONPath (what the synth compares with the substitutions)', () => {
      expect(definitionPlaceholders('{"Resource": "${A}", "Other": "${B}", "Again": "${A}", "Path.$": "$.x"}')).toEqual(['A', 'B']);
    });

    it('outputs its ARN and log group', () => {
      expect(Object.keys(t.toJSON().Outputs)).toEqual(expect.arrayContaining(expected.outputs));
    });
  });

  describe('shard stream subscriptions', () => {
    const streamed = handlerNames.filter((name) => handlers[name].shardStreams);
    const mappingsOf = (template: Template, synthesized: Synthesized, name: RegionHandlerName) => {
      const fnId = logicalIdOf(synthesized.api, synthesized.api.functions[name].function);
      return (Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as Resource[]).filter(
        (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: fnId }),
      );
    };

    it('subscribes the replicator (and only the handlers whose spec says shardStreams or txnStream)', () => {
      expect(streamed).toContain('replicator');
      for (const name of handlerNames.filter((n) => !handlers[n].shardStreams && !handlers[n].txnStream)) {
        expect(mappingsOf(t, s, name)).toEqual([]);
      }
    });

    it('subscribes the applier to the transaction table stream only, by weak reference, with a failure queue', () => {
      const applierMappings = mappingsOf(t, s, 'txnApplier');

      expect(handlers.txnApplier.txnStream).toBe(true);
      expect(applierMappings.map((m) => render(m.Properties.EventSourceArn, undefined, streamArnSamples(s)))).toEqual([
        txnStreamOutput(s).arn,
      ]);
      expect(applierMappings[0]!.Properties).toMatchObject({
        StartingPosition: 'TRIM_HORIZON',
        BisectBatchOnFunctionError: true,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [logicalIdOf(s.api, s.api.shardStreams.txnApplier!.failures), 'Arn'] } },
        },
      });
    });

    it.each(streamed)('gives %s one mapping per shard table stream, each stream once', (name) => {
      const samples = streamArnSamples(s);

      const sources = mappingsOf(t, s, name).map((m) => render(m.Properties.EventSourceArn, undefined, samples));

      expect(sources.sort()).toEqual(
        shardStreamOutputs(s)
          .map((o) => o.arn)
          .sort(),
      );
    });

    it.each(streamed)('follows shardCount for %s', (name) => {
      const other = synth({ shardCount: 7, replicationFactor: 3 });

      expect(mappingsOf(other.apiTemplate, other, name)).toHaveLength(7);
    });

    it.each(streamed)('reads the streams of %s from the data stack by weak reference, not by export', (name) => {
      for (const mapping of mappingsOf(t, s, name)) {
        expect(mapping.Properties.EventSourceArn).toEqual({
          'Fn::GetStackOutput': expect.objectContaining({ StackName: s.data.stackName, OutputName: expect.any(String) }),
        });
      }
      expect(JSON.stringify(t.toJSON())).not.toContain('Fn::ImportValue');
    });

    it.each(streamed)('retries %s batches item by item, bisecting, bounded, and never drops one silently', (name) => {
      const queueId = logicalIdOf(s.api, s.api.shardStreams[name]!.failures);

      for (const mapping of mappingsOf(t, s, name)) {
        expect(mapping.Properties).toMatchObject({
          StartingPosition: 'TRIM_HORIZON',
          BatchSize: replicationDefaults.streamBatchSize,
          BisectBatchOnFunctionError: true,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ParallelizationFactor: 1,
          DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
        });
        expect(mapping.Properties.MaximumRetryAttempts).toBeGreaterThanOrEqual(1);
        expect(mapping.Properties.MaximumRetryAttempts).toBeLessThanOrEqual(10_000);
        expect(mapping.Properties.MaximumRecordAgeInSeconds).toBeGreaterThanOrEqual(60);
        // Streams keep records 24 h: a record must be given up (and reported) before it expires unseen.
        expect(mapping.Properties.MaximumRecordAgeInSeconds).toBeLessThan(24 * 3600);
      }
    });

    it.each(streamed)('keeps the failure queue of %s encrypted and TLS-only', (name) => {
      const queueId = logicalIdOf(s.api, s.api.shardStreams[name]!.failures);
      const queue = t.toJSON().Resources[queueId];

      expect(queue.Properties.SqsManagedSseEnabled ?? queue.Properties.KmsMasterKeyId).toBeTruthy();
      t.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queueId }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    });
  });

  describe('schedules', () => {
    const scheduled = handlerNames.filter((name) => handlers[name].everyMinutes !== undefined);
    const rulesTargeting = (name: RegionHandlerName) => {
      const fnId = logicalIdOf(s.api, s.api.functions[name].function);
      return (Object.values(t.findResources('AWS::Events::Rule')) as Resource[]).filter((rule) =>
        (rule.Properties.Targets as { Arn: unknown }[]).some(
          (target) => JSON.stringify(target.Arn) === JSON.stringify({ 'Fn::GetAtt': [fnId, 'Arn'] }),
        ),
      );
    };

    it('schedules maintenance and the transaction sweeper (and only the handlers whose spec says everyMinutes)', () => {
      expect(scheduled).toEqual(expect.arrayContaining(['maintenance', 'txnSweeper']));
      for (const name of handlerNames.filter((n) => handlers[n].everyMinutes === undefined)) expect(rulesTargeting(name)).toEqual([]);
    });

    it.each(scheduled)('runs %s at the rate its spec says, without retries piling up', (name) => {
      const minutes = handlers[name].everyMinutes as number;
      const fnId = logicalIdOf(s.api, s.api.functions[name].function);

      const rules = rulesTargeting(name);

      expect(rules).toHaveLength(1);
      expect(rules[0]?.Properties.ScheduleExpression).toBe(`rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`);
      expect(rules[0]?.Properties.State).toBe('ENABLED');
      expect(rules[0]?.Properties.Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: minutes * 60 });
      t.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: fnId }, MaximumRetryAttempts: 0 });
    });

    it.each(scheduled)('lets EventBridge, from that rule only, invoke %s', (name) => {
      const fnId = logicalIdOf(s.api, s.api.functions[name].function);
      const [ruleId] = Object.entries(t.findResources('AWS::Events::Rule')).find(([, rule]) =>
        JSON.stringify(rule.Properties.Targets).includes(fnId),
      ) as [string, unknown];

      t.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      });
    });
  });

  describe('failover alarms', () => {
    it('alarms when a failover starts and when one fails, on the failover state machine, to the alarm topic', () => {
      const machine = { Ref: logicalIdOf(s.api, s.api.failovers.stateMachine) };
      const topic = { Ref: logicalIdOf(s.api, s.api.failoverAlarms.topic) };
      for (const metric of ['ExecutionsStarted', 'ExecutionsFailed']) {
        t.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/States',
          MetricName: metric,
          Dimensions: [{ Name: 'StateMachineArn', Value: machine }],
          Statistic: 'Sum',
          Period: 60,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
          AlarmActions: [topic],
        });
      }
    });

    it('sends them to an encrypted, TLS-only topic whose ARN is an output', () => {
      t.hasResourceProperties('AWS::SNS::Topic', { TopicName: names.alarmTopic, KmsMasterKeyId: Match.anyValue() });
      t.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: Match.objectLike({
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        }),
      });
      t.hasOutput('AlarmTopicArn', { Value: { Ref: logicalIdOf(s.api, s.api.failoverAlarms.topic) } });
    });
  });
});
