// The request path of a deployment: VPC, L2 cache, one Lambda per topology handler, and the REST API.
import { CfnOutput, CustomResource, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { envVars, handlers, namesFor, routes, type HandlerName, type Names } from '../../lambdas/topology';
import { Cache } from '../constructs/cache';
import { dataRefs } from '../constructs/data-refs';
import { HandlerFunction } from '../constructs/handler-function';
import { Network } from '../constructs/network';
import { RingstoreRestApi } from '../constructs/rest-api';
import type { RingstoreConfig } from './config';

export interface ApiStackProps extends StackProps {
  config: RingstoreConfig;
}

/** Handler names in topology order, typed. */
export const handlerNames = Object.keys(handlers) as HandlerName[];

function mapHandlers<T>(fn: (name: HandlerName) => T): Record<HandlerName, T> {
  const out = {} as Record<HandlerName, T>;
  for (const name of handlerNames) out[name] = fn(name);
  return out;
}

export class ApiStack extends Stack {
  readonly names: Names;
  readonly network: Network;
  readonly cache: Cache;
  readonly functions: Record<HandlerName, HandlerFunction>;
  readonly restApi: RingstoreRestApi;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.names = namesFor(config.stage, this.account);
    const data = dataRefs(this, this.names, config.shardCount);

    this.network = new Network(this, 'Network');
    this.cache = new Cache(this, 'Cache', {
      names: this.names,
      vpc: this.network.vpc,
      subnets: this.network.privateSubnets,
      clientSecurityGroup: this.network.lambdaSecurityGroup,
      evictionPolicy: config.cacheEvictionPolicy,
      dataStorageGbMax: config.cacheDataStorageGbMax,
      ecpuPerSecondMax: config.cacheEcpuPerSecondMax,
    });

    // What lambdas/config.ts parses; the endpoint overrides are for the local cloud only.
    const environment: Record<string, string> = {
      [envVars.stage]: config.stage,
      [envVars.shardCount]: String(config.shardCount),
      [envVars.replicationFactor]: String(config.replicationFactor),
      [envVars.vnodesPerShard]: String(config.vnodesPerShard),
      [envVars.blobBucket]: data.blobBucket.name,
      [envVars.redisUrl]: this.cache.url,
      [envVars.l1Policy]: config.l1CachePolicy,
    };

    const functions = mapHandlers(
      (name) =>
        new HandlerFunction(this, `Handler-${name}`, {
        handlerName: name,
        spec: handlers[name],
        names: this.names,
        data,
        vpc: this.network.vpc,
        subnets: this.network.privateSubnets,
        securityGroup: this.network.lambdaSecurityGroup,
          environment,
          logLevel: config.logLevel,
        }),
    );
    this.functions = functions;

    // The initial ring, written once by the bootstrap handler (conditional put: never overwrites a ring).
    new CustomResource(this, 'RingBootstrap', {
      serviceToken: functions.bootstrap.function.functionArn,
      resourceType: 'Custom::RingstoreRing',
      properties: {
        shardCount: config.shardCount,
        replicationFactor: config.replicationFactor,
        vnodesPerShard: config.vnodesPerShard,
      },
    });

    this.restApi = new RingstoreRestApi(this, 'RestApi', {
      names: this.names,
      routes,
      functions: mapHandlers((name) => functions[name].function),
      authorizer: 'authorizer',
      rateLimitPerSecond: config.apiRateLimitPerSecond,
      burstLimit: config.apiBurstLimit,
      manageAccountRole: config.manageApiGatewayAccountRole,
    });

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the Ringstore REST API', value: this.restApi.api.url });
    new CfnOutput(this, 'CacheEndpoint', { value: this.cache.url });
    new CfnOutput(this, 'CacheEvictionPolicy', {
      description: 'Intended maxmemory-policy (ElastiCache Serverless manages eviction itself)',
      value: config.cacheEvictionPolicy,
    });
  }
}
