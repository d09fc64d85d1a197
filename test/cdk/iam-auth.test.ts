// CDK context `auth` (docs/security.md, "IAM authentication"): API keys, IAM (AWS_IAM methods) or both (two APIs).
import type { Template } from 'aws-cdk-lib/assertions';
import { parseConfig } from '../../cdk/stacks/config';
import { namesFor, routes } from '../../schemas/topology';
import { render, synth, type Synthesized } from './support';

type Resource = { Type: string; Properties: Record<string, any> };

const authorizedCount = routes.filter((route) => route.authorized).length;
const publicCount = routes.length - authorizedCount;

/** The authorization types of the methods of one REST API (stubs included), by type. */
function authorizationTypes(template: Template, apiLogicalId: string): Record<string, number> {
  const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Record<string, Resource>).filter(
    (method) => (method.Properties.RestApiId as { Ref?: string }).Ref === apiLogicalId,
  );
  const counts: Record<string, number> = {};
  for (const method of methods) {
    // Route stubs are `ANY` mocks (405 and the key-slash hint): never authorized.
    if (method.Properties.HttpMethod === 'ANY') continue;
    const type = String(method.Properties.AuthorizationType);
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

function restApis(template: Template): Array<{ id: string; name: string }> {
  return Object.entries(template.findResources('AWS::ApiGateway::RestApi') as Record<string, Resource>).map(([id, api]) => ({
    id,
    name: String(api.Properties.Name),
  }));
}

function gatewayResponse(template: Template, apiLogicalId: string, type: string): string | undefined {
  const found = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse') as Record<string, Resource>).find(
    (response) => response.Properties.ResponseType === type && (response.Properties.RestApiId as { Ref?: string }).Ref === apiLogicalId,
  );
  return found?.Properties.ResponseTemplates?.['application/json'] as string | undefined;
}

describe('CDK context auth', () => {
  it('defaults to API keys: every authorized method uses the Lambda authorizer, and no IAM output', () => {
    const s = synth();
    const [api] = restApis(s.apiTemplate);
    expect(s.config.auth).toBe('apiKey');
    expect(authorizationTypes(s.apiTemplate, api!.id)).toEqual({ CUSTOM: authorizedCount, NONE: publicCount });
    expect(Object.keys(s.apiTemplate.findOutputs('IamInvokeArn'))).toEqual([]);
  });

  it('refuses an unknown mode, naming the key', () => {
    expect(() => parseConfig({ auth: 'cognito' })).toThrow(/auth/);
  });

  describe('auth=iam', () => {
    let s: Synthesized;
    beforeAll(() => {
      s = synth({ auth: 'iam' });
    });

    it('makes every authorized method AWS_IAM, with no Lambda authorizer and no usage plan; the docs stay public', () => {
      const apis = restApis(s.apiTemplate);
      expect(apis).toHaveLength(1);
      expect(authorizationTypes(s.apiTemplate, apis[0]!.id)).toEqual({ AWS_IAM: authorizedCount, NONE: publicCount });
      s.apiTemplate.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
      s.apiTemplate.resourceCountIs('AWS::ApiGateway::UsagePlan', 0);
    });

    it("answers API Gateway's own signature refusals with Ringstore's codes", () => {
      const [api] = restApis(s.apiTemplate);
      expect(gatewayResponse(s.apiTemplate, api!.id, 'INVALID_SIGNATURE')).toContain('"code":"auth.invalidSignature"');
      expect(gatewayResponse(s.apiTemplate, api!.id, 'EXPIRED_TOKEN')).toContain('"code":"auth.signatureExpired"');
      expect(gatewayResponse(s.apiTemplate, api!.id, 'ACCESS_DENIED')).toContain('"code":"auth.forbidden"');
      // An unsigned request meets MISSING_AUTHENTICATION_TOKEN on every path: not a "no route" here.
      expect(gatewayResponse(s.apiTemplate, api!.id, 'MISSING_AUTHENTICATION_TOKEN')).toContain('"code":"auth.invalidSignature"');
    });

    it('outputs the execute-api ARN an IAM policy allows execute-api:Invoke on', () => {
      const [output] = Object.values(s.apiTemplate.findOutputs('IamInvokeArn')) as Array<{ Value: unknown }>;
      // Every method and path of the IAM API's stage: arn:aws:execute-api:<region>:<account>:<api id>/<stage>/*/*
      expect(render(output!.Value)).toMatch(
        /^arn:aws:execute-api:[a-z0-9-]+:123456789012:<RestApi\w+>\/<RestApiDeploymentStage\w+>\/\*\/\*$/,
      );
    });

    it('logs the caller ARN API Gateway verified in the access log', () => {
      const stages = Object.values(s.apiTemplate.findResources('AWS::ApiGateway::Stage') as Record<string, Resource>);
      expect(String(stages[0]!.Properties.AccessLogSetting.Format)).toContain('$context.identity.userArn');
    });
  });

  describe('auth=both', () => {
    let s: Synthesized;
    beforeAll(() => {
      s = synth({ auth: 'both' });
    });

    it("keeps each stack within CloudFormation's 500 resources, the second API in a nested stack of its own", () => {
      const count = (template: Template) => Object.keys(template.toJSON().Resources as Record<string, unknown>).length;
      // The parent holds the functions and the first API; routes can grow a long way before either stack is full.
      expect(count(s.apiTemplate)).toBeLessThanOrEqual(400);
      expect(count(s.iamApiTemplate!)).toBeLessThanOrEqual(300);
      s.apiTemplate.resourceCountIs('AWS::CloudFormation::Stack', 1);
    });

    it('lets API Gateway invoke a function from its own two APIs only, one permission per function and API', () => {
      const byFunctionAndApi = new Map<string, number>();
      for (const template of [s.apiTemplate, s.iamApiTemplate!]) {
        const apiIds = restApis(template).map((api) => api.id);
        const permissions = Object.values(template.findResources('AWS::Lambda::Permission') as Record<string, Resource>).filter(
          (permission) => permission.Properties.Principal === 'apigateway.amazonaws.com',
        );
        expect(permissions.length).toBeGreaterThan(0);
        for (const permission of permissions) {
          const source = JSON.stringify(permission.Properties.SourceArn);
          const apis = apiIds.filter((id) => source.includes(`"Ref":"${id}"`));
          expect({ source, apis: apis.length }).toEqual({ source, apis: 1 });
          const key = `${JSON.stringify(permission.Properties.FunctionName)} ${apis[0]}`;
          byFunctionAndApi.set(key, (byFunctionAndApi.get(key) ?? 0) + 1);
        }
      }
      expect([...byFunctionAndApi.values()].filter((count) => count > 1)).toEqual([]);
    });

    it('builds a second REST API of the same routes under AWS_IAM, beside the API-key one', () => {
      const [keyed] = restApis(s.apiTemplate);
      const [signed] = restApis(s.iamApiTemplate!);
      const { apiName } = namesFor(s.config.stage);
      expect([keyed!.name, signed!.name]).toEqual([apiName, `${apiName}-iam`]);
      expect(authorizationTypes(s.apiTemplate, keyed!.id)).toEqual({ CUSTOM: authorizedCount, NONE: publicCount });
      expect(authorizationTypes(s.iamApiTemplate!, signed!.id)).toEqual({ AWS_IAM: authorizedCount, NONE: publicCount });
      expect(Object.keys(s.apiTemplate.findOutputs('IamApiUrl'))).toHaveLength(1);
      expect(Object.keys(s.apiTemplate.findOutputs('IamInvokeArn'))).toHaveLength(1);
    });

    it("manages API Gateway's account role once", () => {
      s.apiTemplate.resourceCountIs('AWS::ApiGateway::Account', 1);
    });
  });
});
