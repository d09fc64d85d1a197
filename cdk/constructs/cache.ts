// The L2 cache (docs/architecture.md, "Cache"): a node-based Valkey replication group, so its eviction policy is ours to set
// (ElastiCache Serverless takes no parameter group). Reachable only from the Lambdas, and only by its one IAM-authenticated
// user (docs/security.md, "The L2 cache").
import { ArnFormat, Stack } from 'aws-cdk-lib';
import { Port, SecurityGroup, type ISecurityGroup, type IVpc, type SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { CfnParameterGroup, CfnReplicationGroup, CfnSubnetGroup, CfnUser, CfnUserGroup } from 'aws-cdk-lib/aws-elasticache';
import { Construct } from 'constructs';
import { cacheAccessString, cacheAcl, type Names } from '../../schemas/topology';
import { acknowledge } from './nag';

/**
 * `maxmemory-policy` values the L2 cache may run with. Only the two `allkeys-*` policies: every L2 entry
 * is a disposable copy of a stored value, so any key may be evicted, and `noeviction` would turn a full
 * cache into write errors on the request path.
 */
export const l2EvictionPolicies = ['allkeys-lru', 'allkeys-lfu'] as const;
export type L2EvictionPolicy = (typeof l2EvictionPolicies)[number];

/** Primary and reader endpoints both listen here. */
export const cachePort = 6379;

/** Engine and the parameter group family that goes with its major version. */
export const cacheEngine = { engine: 'valkey', version: '8.0', parameterGroupFamily: 'valkey8' } as const;

/** A primary and one replica in another AZ: the smallest group ElastiCache fails over automatically. */
export const cacheNodeCount = 2;

export interface CacheProps {
  names: Names;
  vpc: IVpc;
  subnets: SubnetSelection;
  /** The only security group allowed to connect. */
  clientSecurityGroup: ISecurityGroup;
  /** `maxmemory-policy` of the parameter group. */
  evictionPolicy: L2EvictionPolicy;
  /** e.g. `cache.t4g.small`. */
  nodeType: string;
}

/** What a handler needs to authenticate to the cache: the IAM-enabled user, and what its token is signed for. */
export interface CacheIamAuth {
  /** User name and user id (equal, as IAM authentication requires). */
  userName: string;
  /** The replication group id, the host name of the presigned token. */
  cacheName: string;
  /** What `elasticache:Connect` must be allowed on: the replication group and the user. */
  connectArns: string[];
}

export class Cache extends Construct {
  readonly securityGroup: SecurityGroup;
  readonly parameterGroup: CfnParameterGroup;
  readonly replicationGroup: CfnReplicationGroup;
  /** The handlers' user: IAM authentication, the adapter's commands on the adapter's keys only. */
  readonly user: CfnUser;
  /** The only users the replication group lets in (Valkey: no `default` user). */
  readonly userGroup: CfnUserGroup;
  readonly iamAuth: CacheIamAuth;
  /** `rediss://host:port` of the primary endpoint (TLS is required). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: CacheProps) {
    super(scope, id);
    const { names } = props;

    this.securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'Ringstore L2 cache: Lambda functions only',
      allowAllOutbound: false,
    });
    this.securityGroup.addIngressRule(props.clientSecurityGroup, Port.tcp(cachePort), 'Ringstore Lambdas to the cache');

    const subnetGroup = new CfnSubnetGroup(this, 'Subnets', {
      description: `Ringstore ${names.stage} L2 cache: the isolated subnets the Lambdas run in`,
      subnetIds: props.vpc.selectSubnets(props.subnets).subnetIds,
    });

    this.parameterGroup = new CfnParameterGroup(this, 'Parameters', {
      cacheParameterGroupFamily: cacheEngine.parameterGroupFamily,
      description: `Ringstore ${names.stage} L2 cache: maxmemory-policy ${props.evictionPolicy}`,
      properties: { 'maxmemory-policy': props.evictionPolicy },
    });

    const userName = cacheAcl.userName(names.prefix);
    [this.user, this.userGroup] = this.iamUsers(names, userName);

    // Names are left to CloudFormation: a cache holds nothing that must survive a replacement, and a
    // fixed name would make any replacing change (subnets, encryption) fail on the name clash.
    this.replicationGroup = new CfnReplicationGroup(this, 'ReplicationGroup', {
      replicationGroupDescription: `Ringstore ${names.stage} L2 cache (${names.prefix})`,
      engine: cacheEngine.engine,
      engineVersion: cacheEngine.version,
      cacheNodeType: props.nodeType,
      numCacheClusters: cacheNodeCount,
      automaticFailoverEnabled: true,
      multiAzEnabled: true,
      cacheParameterGroupName: this.parameterGroup.ref,
      cacheSubnetGroupName: subnetGroup.ref,
      securityGroupIds: [this.securityGroup.securityGroupId],
      port: cachePort,
      transitEncryptionEnabled: true,
      atRestEncryptionEnabled: true,
      userGroupIds: [this.userGroup.ref],
      autoMinorVersionUpgrade: true,
      // Every entry is a copy of a value in DynamoDB: a lost cache is refilled by reads, never restored.
      snapshotRetentionLimit: 0,
    });

    acknowledge(
      this.replicationGroup,
      'AwsSolutions-AEC6',
      "Authentication is by RBAC instead of an AUTH token (which the rule looks for): the replication group's user group holds one IAM-authenticated user, so a connection needs a SigV4 token signed by a role allowed elasticache:Connect on this group and user; there is no shared secret to leak or rotate.",
    );

    this.iamAuth = {
      userName,
      cacheName: this.replicationGroup.ref,
      connectArns: [
        Stack.of(this).formatArn({
          service: 'elasticache',
          resource: 'replicationgroup',
          resourceName: this.replicationGroup.ref,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
        this.user.attrArn,
      ],
    };
    this.url = `rediss://${this.replicationGroup.attrPrimaryEndPointAddress}:${this.replicationGroup.attrPrimaryEndPointPort}`;
  }

  /** The one user the replication group lets in, IAM-authenticated, and its user group. */
  private iamUsers(names: CacheProps['names'], userName: string): [CfnUser, CfnUserGroup] {
    // No password to keep or rotate: a handler signs a 15-minute token with its role (elasticache:Connect),
    // and the user may run the adapter's commands on its keys only (cacheAccessString).
    const user = new CfnUser(this, 'User', {
      userId: userName,
      userName,
      engine: cacheEngine.engine,
      accessString: cacheAccessString,
      authenticationMode: { Type: 'iam' },
    });
    // A Valkey user group takes only users that authenticate, and needs no `default` user: nobody is let in
    // without a token.
    const userGroup = new CfnUserGroup(this, 'UserGroup', {
      userGroupId: `${names.prefix}-l2-users`,
      engine: cacheEngine.engine,
      userIds: [userName],
    });
    userGroup.addResourceDependency(user);
    return [user, userGroup];
  }
}
