// A VPC with no internet path: Lambdas reach DynamoDB and S3 through gateway endpoints (free, no NAT),
// the cache inside the VPC, and any other AWS API they call through an interface endpoint of its own.
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpoint,
  type InterfaceVpcEndpointAwsService,
  SecurityGroup,
  SubnetType,
  Vpc,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Availability zones used when the region is known; an environment-agnostic stack gets two. */
export const maxAzs = 3;

export class Network extends Construct {
  readonly vpc: Vpc;
  /** Where every Lambda runs; the only source the cache accepts. */
  readonly lambdaSecurityGroup: SecurityGroup;
  readonly privateSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_ISOLATED };

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
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
        new LogGroup(this, 'FlowLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
      ),
    });

    // Egress stays open at the security group: the isolated subnets' route tables have no route out
    // of the VPC except the DynamoDB and S3 gateway endpoints, which is the real boundary.
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
