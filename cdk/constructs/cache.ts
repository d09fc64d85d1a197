// The L2 cache (design §1): ElastiCache Serverless for Valkey, reachable only from the Lambdas.
import { Tags } from 'aws-cdk-lib';
import { Port, SecurityGroup, type ISecurityGroup, type IVpc, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { CfnServerlessCache } from 'aws-cdk-lib/aws-elasticache';
import { Construct } from 'constructs';
import type { Names } from '../../lambdas/topology';

/** Serverless caches listen on 6379 (primary) and 6380 (reads from replicas). */
export const cachePorts = { from: 6379, to: 6380 } as const;

export interface CacheProps {
  names: Names;
  vpc: IVpc;
  subnets: SubnetSelection;
  /** The only security group allowed to connect. */
  clientSecurityGroup: ISecurityGroup;
  evictionPolicy: string;
  dataStorageGbMax: number;
  ecpuPerSecondMax: number;
}

export class Cache extends Construct {
  readonly securityGroup: SecurityGroup;
  readonly cache: CfnServerlessCache;
  /** `rediss://host:port`: serverless caches always require TLS. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: CacheProps) {
    super(scope, id);
    this.securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'Ringstore L2 cache: Lambda functions only',
      allowAllOutbound: false,
    });
    this.securityGroup.addIngressRule(
      props.clientSecurityGroup,
      Port.tcpRange(cachePorts.from, cachePorts.to),
      'Ringstore Lambdas to the cache (primary and reader endpoints)',
    );

    this.cache = new CfnServerlessCache(this, 'Cache', {
      // Not in topology's Names yet; derived from the same prefix.
      serverlessCacheName: `${props.names.prefix}-cache`,
      description: `Ringstore ${props.names.stage} L2 cache`,
      engine: 'valkey',
      majorEngineVersion: '8',
      subnetIds: props.vpc.selectSubnets(props.subnets).subnetIds,
      securityGroupIds: [this.securityGroup.securityGroupId],
      cacheUsageLimits: {
        dataStorage: { maximum: props.dataStorageGbMax, unit: 'GB' },
        ecpuPerSecond: { maximum: props.ecpuPerSecondMax },
      },
    });
    // ElastiCache Serverless has no parameter group, so `maxmemory-policy` cannot be set; the
    // intended policy is recorded where operators look, ready for a node-based cluster.
    Tags.of(this.cache).add('ringstore:eviction-policy', props.evictionPolicy);

    this.url = `rediss://${this.cache.attrEndpointAddress}:${this.cache.attrEndpointPort}`;
  }
}
