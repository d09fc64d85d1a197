// The customer-managed KMS key of CDK context `kmsKey=customer` (docs/security.md, "Encryption"): one per region,
// in the data stack, encrypting the tables, the blob bucket, the queues and the log groups. Its policy lets the
// account administer it, Ringstore's own roles use it through DynamoDB, S3 and SQS, and CloudWatch Logs encrypt
// this account's log groups with it; nobody else may use it.
import { ArnFormat, Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccountRootPrincipal, Effect, PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key, type IKey } from 'aws-cdk-lib/aws-kms';
import { QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Names } from '../../schemas/topology';

/** CDK context `kmsKey`: AWS-managed keys, or one customer-managed key. */
export const kmsKeyModes = ['aws', 'customer'] as const;
export type KmsKeyMode = (typeof kmsKeyModes)[number];

/** The key's alias; the same in every region of a stage, which is how roles are granted it (see keyUseStatement). */
export const encryptionKeyAlias = (names: Names): string => `alias/${names.prefix}`;

/**
 * Names of the roles that may use the key: every role Ringstore names (`<prefix>-<handler>-<region>`, the
 * handlers' roles). A role elsewhere in the account is refused by the key policy even with IAM permissions.
 */
export const ringstoreRoleNamePattern = (names: Names): string => `${names.prefix}-*`;

/** What the roles do with the key: data keys for DynamoDB, S3 (with a bucket key) and SQS, and grants for DynamoDB. */
export const keyUseActions = [
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:ReEncryptFrom',
  'kms:ReEncryptTo',
  'kms:GenerateDataKey',
  'kms:GenerateDataKeyWithoutPlaintext',
  'kms:DescribeKey',
  'kms:CreateGrant',
] as const;

/** Administration of the key by the account (IAM decides who): never encryption or decryption. */
export const keyAdminActions = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
  'kms:RotateKeyOnDemand',
] as const;

/** What CloudWatch Logs does with a log group's key. */
export const logsKeyActions = ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'] as const;

/** The services through which the roles may use the key, in the key's region. */
export const keyServices = ['dynamodb', 's3', 'sqs'] as const;

/** How long a deleted key waits before it is gone: the longest KMS allows, as data encrypted with it is lost with it. */
export const keyDeletionWindow = Duration.days(30);

/**
 * The IAM statement a Ringstore role needs besides the key policy: the key actions on the stage's key in any
 * region, found by its alias (the key's ARN is not known across stacks and regions: a DR primary's shipper
 * writes to the backup region's queue and bucket, encrypted with the backup's key).
 *
 * @example
 * role.addToPrincipalPolicy(keyUseStatement(role, names));
 */
export function keyUseStatement(scope: Construct, names: Names): PolicyStatement {
  return new PolicyStatement({
    effect: Effect.ALLOW,
    actions: [...keyUseActions],
    resources: [Stack.of(scope).formatArn({ service: 'kms', region: '*', resource: 'key', resourceName: '*' })],
    conditions: { 'ForAnyValue:StringEquals': { 'kms:ResourceAliases': [encryptionKeyAlias(names)] } },
  });
}

/**
 * A queue's encryption at rest: SQS-managed keys (SSE-SQS) by default, the customer-managed key with
 * `kmsKey=customer`. Every queue is also TLS-only (`enforceSSL`), whichever.
 */
export function queueEncryption(key: IKey | undefined): { encryption: QueueEncryption; encryptionMasterKey?: IKey } {
  return key ? { encryption: QueueEncryption.KMS, encryptionMasterKey: key } : { encryption: QueueEncryption.SQS_MANAGED };
}

export interface EncryptionKeyProps {
  names: Names;
}

export class EncryptionKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: EncryptionKeyProps) {
    super(scope, id);
    const { names } = props;
    const stack = Stack.of(this);
    const policy = new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: 'AccountAdministersTheKey',
          effect: Effect.ALLOW,
          principals: [new AccountRootPrincipal()],
          actions: [...keyAdminActions],
          resources: ['*'],
        }),
        new PolicyStatement({
          sid: 'RingstoreRolesUseTheKeyThroughItsServices',
          effect: Effect.ALLOW,
          // The account, narrowed to Ringstore's role names: a role also needs its own IAM permission (keyUseStatement).
          principals: [new AccountRootPrincipal()],
          actions: [...keyUseActions],
          resources: ['*'],
          conditions: {
            ArnLike: {
              'aws:PrincipalArn': stack.formatArn({
                service: 'iam',
                region: '',
                resource: 'role',
                resourceName: ringstoreRoleNamePattern(names),
              }),
            },
            StringEquals: { 'kms:ViaService': keyServices.map((service) => `${service}.${Aws.REGION}.${Aws.URL_SUFFIX}`) },
          },
        }),
        new PolicyStatement({
          sid: 'CloudWatchLogsEncryptsThisAccountsLogGroups',
          effect: Effect.ALLOW,
          principals: [new ServicePrincipal(`logs.${Aws.REGION}.${Aws.URL_SUFFIX}`)],
          actions: [...logsKeyActions],
          resources: ['*'],
          conditions: {
            ArnLike: {
              'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
                service: 'logs',
                resource: 'log-group',
                resourceName: '*',
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
            },
          },
        }),
      ],
    });
    this.key = new Key(this, 'Key', {
      alias: encryptionKeyAlias(names),
      description: `Ringstore ${names.stage}: tables, blob bucket, queues and logs`,
      enableKeyRotation: true,
      policy,
      pendingWindow: keyDeletionWindow,
      // Data encrypted with the key outlives the stack (tables and bucket are retained): so does the key.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
