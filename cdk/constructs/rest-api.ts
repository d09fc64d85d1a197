// The REST API: one method per topology route, proxied to its handler, behind the API-key authorizer or
// API Gateway's own IAM (SigV4) authorization.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { ManagedPolicy } from 'aws-cdk-lib/aws-iam';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  RestApi,
  type Method,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { limits, type Names, type RegionHandlerName, type RouteSpec } from '../../schemas/topology';
import { errorHeaders, errorTemplate, gatewayErrorsFor } from './gateway-errors';
import { acknowledge, nagFindingName } from './nag';
import { addRouteStubs } from './route-stubs';

/** Header that carries a Ringstore API key; the authorizer's identity source. */
export const apiKeyHeader = 'x-api-key';
/**
 * How long API Gateway caches an authorizer decision per key (topology, 60 s). A revoked key keeps
 * working for at most this long: revocation takes effect within a minute.
 */
export const authorizerCacheTtl = Duration.seconds(limits.authorizerCacheTtlSeconds);

/** CDK context `auth` (docs/security.md, "IAM authentication"). */
export const authModes = ['apiKey', 'iam', 'both'] as const;
export type AuthMode = (typeof authModes)[number];

export interface RestApiProps {
  names: Names;
  routes: readonly RouteSpec[];
  functions: Record<RegionHandlerName, IFunction>;
  /**
   * How the authorized methods authenticate: `apiKey` through the Lambda authorizer; `iam` by API Gateway
   * itself (SigV4, `AWS_IAM`), the handlers mapping the verified caller to its namespace. A REST API
   * method has one authorization type, so a deployment offering both builds two APIs.
   */
  authorization: 'apiKey' | 'iam';
  /** The API's name; `names.apiName` by default. */
  apiName?: string;
  /** The handler that maps an API key to a namespace (API-key authorization). */
  authorizer: RegionHandlerName;
  rateLimitPerSecond: number;
  burstLimit: number;
  /** See DeploymentConfig.manageApiGatewayAccountRole. */
  manageAccountRole: boolean;
  /** The customer-managed key of the access logs (CDK context `kmsKey=customer`); absent: CloudWatch Logs' own. */
  encryptionKey?: IKey;
}

/** `{key}` placeholders of a resource path. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}+]+)\+?\}/g)].map((match) => match[1] as string);
}

/** One JSON line per request in the access log. The key's id (the authorizer's principalId) is logged, never the key. */
const accessLogFields = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  keyId: '$context.authorizer.principalId',
  // An IAM-signed caller (AWS_IAM methods): the role session or user API Gateway verified.
  userArn: '$context.identity.userArn',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatencyMs: '$context.authorizer.latency',
  errorType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  xrayTraceId: '$context.xrayTraceId',
};

export class RingstoreRestApi extends Construct {
  readonly api: RestApi;
  readonly methods: ReadonlyMap<RouteSpec, Method>;

  constructor(scope: Construct, id: string, props: RestApiProps) {
    super(scope, id);
    const { names } = props;

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });

    const byKey = props.authorization === 'apiKey';
    this.api = new RestApi(this, 'Api', {
      restApiName: props.apiName ?? names.apiName,
      description: `Ringstore ${names.stage}: key-value API (${byKey ? 'API keys' : 'IAM authorization'})`,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Every body reaches Lambda base64-encoded, byte for byte: values are arbitrary binary.
      binaryMediaTypes: ['*/*'],
      // Ringstore keys live hashed in the control table and are checked by the Lambda authorizer,
      // not by API Gateway API keys. No method requires an API Gateway key; should per-tenant usage
      // plans come, the authorizer returns the tenant's usage identifier (AUTHORIZER), because the
      // x-api-key header holds a Ringstore key that API Gateway does not know.
      ...(byKey ? { apiKeySourceType: ApiKeySourceType.AUTHORIZER } : {}),
      cloudWatchRole: props.manageAccountRole,
      ...(props.manageAccountRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: names.stage,
        tracingEnabled: true,
        metricsEnabled: true,
        // Errors only: INFO execution logs are verbose and costly; request bodies (values) are never logged.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: props.rateLimitPerSecond,
        throttlingBurstLimit: props.burstLimit,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(accessLogFields)),
      },
    });

    for (const error of gatewayErrorsFor(props.authorization)) {
      this.api.addGatewayResponse(`Error${error.type.responseType}`, {
        type: error.type,
        ...(error.statusCode === undefined ? {} : { statusCode: String(error.statusCode) }),
        responseHeaders: errorHeaders(error),
        templates: { 'application/json': errorTemplate(error) },
      });
    }

    this.methods = this.addMethods(props, byKey);
    addRouteStubs(this.api, props.routes);

    this.addUsagePlanAndFindings(props, byKey);
  }

  /** Every route's method, behind the authorizer (API keys) or AWS_IAM, with required path parameters. */
  private addMethods(props: RestApiProps, byKey: boolean): Map<RouteSpec, Method> {
    const { names } = props;
    // One decision per key, reused for every route for authorizerCacheTtl: the authorizer therefore
    // returns a policy for the whole stage, not for the route that happened to be called first, and
    // admin routes check the key's role (authorizer context) in the handler.
    const authorizer = byKey
      ? new RequestAuthorizer(this, 'ApiKeyAuthorizer', {
          authorizerName: `${names.prefix}-api-key`,
          handler: props.functions[props.authorizer],
          identitySources: [IdentitySource.header(apiKeyHeader)],
          resultsCacheTtl: authorizerCacheTtl,
        })
      : undefined;
    const authorized = authorizer ? { authorizer } : { authorizationType: AuthorizationType.IAM };

    // Path parameters are declared required, so a malformed path is refused before any Lambda runs.
    // Body validation applies only to methods that declare a model, and none does yet: values are
    // opaque binary, and the few JSON bodies are parsed by the zod schemas in the handlers. Models
    // generated from schemas/ can be attached per method later without touching the validator.
    const validator = this.api.addRequestValidator('RequestValidator', {
      requestValidatorName: 'parameters-and-models',
      validateRequestParameters: true,
      validateRequestBody: true,
    });

    const integrations = new Map<RegionHandlerName, LambdaIntegration>();
    const integrationFor = (handler: RegionHandlerName): LambdaIntegration => {
      let integration = integrations.get(handler);
      if (!integration) {
        // Proxy integration, with one invoke permission per function and API (any method of this API) rather
        // than one per method: a permission per method made a stack with both APIs (auth=both) pass
        // CloudFormation's 500 resources once the routes grew, and it guarded nothing more (a function is the
        // integration of its own routes only).
        integration = new LambdaIntegration(props.functions[handler], { proxy: true, scopePermissionToMethod: false });
        integrations.set(handler, integration);
      }
      return integration;
    };

    const methods = new Map<RouteSpec, Method>();
    for (const route of props.routes) {
      const resource = this.api.root.resourceForPath(route.path);
      const requestParameters = Object.fromEntries(pathParameters(route.path).map((name) => [`method.request.path.${name}`, true]));
      const method = resource.addMethod(route.method, integrationFor(route.handler), {
        operationName: route.operationId,
        requestParameters,
        requestValidator: validator,
        ...(route.authorized ? authorized : { authorizationType: AuthorizationType.NONE }),
      });
      acknowledgeMethod(method, route, byKey);
      methods.set(route, method);
    }
    return methods;
  }

  /** The usage plan of an API-key API, and the findings the API meets on purpose. */
  private addUsagePlanAndFindings(props: RestApiProps, byKey: boolean): void {
    const { names } = props;
    // Stage-wide throttling above (deployOptions) applies to every request. The usage plan carries
    // the same limits; API Gateway enforces a usage plan per API key, so it binds once the
    // authorizer returns usage identifiers (see apiKeySourceType). An IAM API has no API keys to bind one to.
    if (byKey) {
      this.api.addUsagePlan('UsagePlan', {
        name: `${names.prefix}-default`,
        description: 'Default throttling of the Ringstore API stage',
        throttle: { rateLimit: props.rateLimitPerSecond, burstLimit: props.burstLimit },
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }

    acknowledge(
      this.api,
      'AwsSolutions-APIG3',
      'No WAF: the AWS managed common rule set blocks request bodies over 8 KB (SizeRestrictions_BODY) and inspects arbitrary binary values, which breaks a KV API storing values up to 10 MiB; abuse is bounded by the API-key authorizer and stage throttling.',
    );
    if (props.manageAccountRole) {
      const pushToLogs = ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs');
      acknowledge(
        this.api,
        `AwsSolutions-IAM4[Policy::${nagFindingName(this, pushToLogs.managedPolicyArn)}]`,
        "API Gateway's CloudWatch role is one setting per account and region, shared by every REST API there; the AWS managed AmazonAPIGatewayPushToCloudWatchLogs policy is the documented one, and scoping it to Ringstore's log groups would break other APIs' logging.",
      );
    }
  }
}

/** cdk-nag's findings a method meets on purpose: its authorizer is no Cognito one; a public route reads no data. */
function acknowledgeMethod(method: Method, route: RouteSpec, byKey: boolean): void {
  if (route.authorized) {
    acknowledge(
      method,
      'AwsSolutions-COG4',
      byKey
        ? 'Ringstore clients are programs holding API keys, not Cognito users: keys are validated by the custom Lambda REQUEST authorizer against hashed keys in the control table.'
        : 'Ringstore clients here are AWS principals signing with SigV4, not Cognito users: API Gateway verifies the signature and the IAM policy (AWS_IAM), and the handlers map the caller to a namespace.',
    );
  } else {
    acknowledge(
      method,
      'AwsSolutions-APIG4',
      `${route.method} ${route.path} is public by design (topology route "${route.operationId}" has authorized: false): it serves the API documentation and reads no data.`,
    );
    acknowledge(
      method,
      'AwsSolutions-COG4',
      `${route.method} ${route.path} is public API documentation (authorized: false in topology), so no authorizer of any kind applies to it.`,
    );
  }
}
