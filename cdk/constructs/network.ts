// A VPC with no internet path: Lambdas reach DynamoDB and S3 through gateway endpoints (free, no NAT),
// the cache inside the VPC, and any other AWS API they call through an interface endpoint of its own.
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpoint,
  type InterfaceVpcEndpointAwsService,
  PrivateSubnet,
  PublicSubnet,
  SecurityGroup,
  SubnetType,
  Vpc,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Availability zones used when the region is known; an environment-agnostic stack gets two. */
export const maxAzs = 3;

export interface NetworkProps {
  /**
   * A DR primary (docs/dr.md) calls its backup region's SQS and DynamoDB, which no endpoint of this VPC
   * reaches (gateway and interface endpoints serve their own region): a NAT gateway per zone, in public
   * subnets added after the Lambdas' (their addresses and the cache stay as they are), gives the Lambdas'
   * subnets a default route out. Off: no route out of the VPC at all.
   */
  egressToOtherRegions?: boolean;
  /** The customer-managed key of the flow logs (CDK context `kmsKey=customer`); absent: CloudWatch Logs' own. */
  encryptionKey?: IKey;
}

export class Network extends Construct {
  readonly vpc: Vpc;
  /** Where every Lambda runs; the only source the cache accepts. */
  readonly lambdaSecurityGroup: SecurityGroup;
  readonly privateSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_ISOLATED };

  constructor(scope: Construct, id: string, props: NetworkProps = {}) {
    super(scope, id);
    const isolated = { name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 20 } as const;
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs,
      natGateways: 0,
      subnetConfiguration: props.egressToOtherRegions
        ? [isolated, { name: 'egress', subnetType: SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false }]
        : [isolated],
      gatewayEndpoints: {
        DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: GatewayVpcEndpointAwsService.S3 },
      },
    });
    // Rejected flows only: accepted traffic is every request to DynamoDB and would cost more than
    // it tells; rejects are what an incident needs (a misrouted call, a probe on the cache).
    this.vpc.addFlowLog('RejectedFlows', {
      trafficType: FlowLogTrafficType.REJECT,
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this, 'FlowLogs', {
          retention: RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
          ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
        }),
      ),
    });

    if (props.egressToOtherRegions) {
      // One NAT gateway per zone, each the default route of the isolated subnet in its zone: a zone's
      // outage takes only its own Lambdas' path to the backup region. DynamoDB and S3 of this region keep
      // going through the gateway endpoints (their routes are more specific).
      for (const publicSubnet of this.vpc.publicSubnets) {
        const zone = publicSubnet.availabilityZone;
        const isolatedSubnet = this.vpc.isolatedSubnets.find((subnet) => subnet.availabilityZone === zone);
        if (!(publicSubnet instanceof PublicSubnet) || !(isolatedSubnet instanceof PrivateSubnet)) {
          throw new Error(`no public and isolated subnet pair in ${zone} to route through a NAT gateway`);
        }
        isolatedSubnet.addDefaultNatRoute(publicSubnet.addNatGateway().ref);
      }
    }

    // Egress stays open at the security group: without DR, the isolated subnets' route tables have no route
    // out of the VPC except the DynamoDB and S3 gateway endpoints, which is the real boundary; a DR primary's
    // also reach the NAT gateways, and IAM (by ARN) is what limits where its calls go.
    this.lambdaSecurityGroup = new SecurityGroup(this, 'LambdaSecurityGroup', {
      vpc: this.vpc,
      description: 'Ringstore Lambda functions',
      allowAllOutbound: true,
    });
  }

  /**
   * An interface endpoint (private DNS) for an AWS API without a gateway endpoint, reachable on 443 from the
   * Lambdas' security group only. The endpoint's policy narrows what may pass through it.
   *
   * @example
   * network.addInterfaceEndpoint('SyncStates', InterfaceVpcEndpointAwsService.STEP_FUNCTIONS_SYNC);
   */
  addInterfaceEndpoint(id: string, service: InterfaceVpcEndpointAwsService): InterfaceVpcEndpoint {
    const endpoint = new InterfaceVpcEndpoint(this, id, {
      vpc: this.vpc,
      service,
      subnets: this.privateSubnets,
      privateDnsEnabled: true,
      open: false,
    });
    endpoint.connections.allowDefaultPortFrom(this.lambdaSecurityGroup, 'HTTPS from the Ringstore Lambdas');
    return endpoint;
  }
}
