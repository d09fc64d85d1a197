// API stack: one Lambda per topology handler, one API method per topology route, the authorizer,
// error responses, throttling, and the cache reachable only from the Lambdas.
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { statusOf } from '../../lambdas/http/errors';
import { defaults, envVars, handlers, limits, namesFor, routes, type HandlerName } from '../../lambdas/topology';
import { handlerNames } from '../../cdk/stacks/api-stack';
import { logicalIdOf, synth, type Synthesized } from './support';

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
    const fnOf = (name: HandlerName): Resource => {
      const found = Object.values(t.findResources('AWS::Lambda::Function', {
        Properties: { FunctionName: names.functionName(name) },
      })) as Resource[];
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
      expect(p.Timeout * 1000).toBeLessThan(limits.apiGatewayTimeoutMs);
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
      expect(JSON.stringify(env[envVars.redisUrl])).toContain('rediss://');
      // Local-cloud endpoint overrides never reach AWS.
      expect(env[envVars.dynamodbEndpoint]).toBeUndefined();
      expect(env[envVars.s3Endpoint]).toBeUndefined();
    });
  });

  describe('REST API', () => {
    it('passes every body to Lambda as binary', () => {
      t.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: names.apiName, BinaryMediaTypes: ['*/*'] });
    });

    it('has one method per topology route and nothing else', () => {
      t.resourceCountIs('AWS::ApiGateway::Method', routes.length);
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
          String(response?.Properties.ResponseTemplates['application/json'])
            .replaceAll('$context.error.messageString', '"sample message"'),
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
        });
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
    it('has no internet path: no NAT or internet gateway, gateway endpoints for DynamoDB and S3', () => {
      t.resourceCountIs('AWS::EC2::NatGateway', 0);
      t.resourceCountIs('AWS::EC2::InternetGateway', 0);
      const services = Object.values(t.findResources('AWS::EC2::VPCEndpoint')).map((e) => ({
        type: e.Properties.VpcEndpointType,
        service: JSON.stringify(e.Properties.ServiceName),
      }));
      expect(services).toHaveLength(2);
      expect(services.every((e) => e.type === 'Gateway')).toBe(true);
      expect(services.some((e) => e.service.includes('.dynamodb'))).toBe(true);
      expect(services.some((e) => e.service.includes('.s3'))).toBe(true);
    });

    it('runs an ElastiCache Serverless cache in the VPC subnets, behind its own security group', () => {
      const cacheSg = logicalIdOf(s.api, s.api.cache.securityGroup);
      const subnets = s.api.network.vpc.isolatedSubnets.map((subnet) => logicalIdOf(s.api, subnet));

      t.resourceCountIs('AWS::ElastiCache::ServerlessCache', 1);
      t.hasResourceProperties('AWS::ElastiCache::ServerlessCache', {
        Engine: 'valkey',
        SecurityGroupIds: [{ 'Fn::GetAtt': [cacheSg, 'GroupId'] }],
        SubnetIds: subnets.map((id) => ({ Ref: id })),
        CacheUsageLimits: Match.objectLike({ DataStorage: Match.objectLike({ Unit: 'GB' }) }),
      });
    });

    it('lets only the Lambdas\' security group reach the cache', () => {
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
        expect([rule.FromPort, rule.ToPort]).toEqual([6379, 6380]);
      }
    });

    it('puts every handler in the Lambdas\' security group', () => {
      const lambdaSg = logicalIdOf(s.api, s.api.network.lambdaSecurityGroup);

      for (const name of handlerNames) {
        t.hasResourceProperties('AWS::Lambda::Function', {
          FunctionName: names.functionName(name),
          VpcConfig: Match.objectLike({ SecurityGroupIds: [{ 'Fn::GetAtt': [lambdaSg, 'GroupId'] }] }),
        });
      }
    });
  });
});
