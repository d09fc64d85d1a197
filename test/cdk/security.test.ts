// The security review of the templates (docs/security.md): the L2 cache lets in only its IAM-authenticated user,
// every queue is encrypted and TLS-only, the blob bucket keeps deleted values for a while and refuses plain HTTP.
import { Match, Template } from 'aws-cdk-lib/assertions';
import { cacheConnectActions, usesValueCache } from '../../cdk/constructs/access';
import { defaultNoncurrentBlobDays } from '../../cdk/constructs/blob-bucket';
import type { HandlerFunction } from '../../cdk/constructs/handler-function';
import { cacheAccessString, cacheAcl, defaults, envVars, handlers, namesFor, type HandlerName } from '../../schemas/topology';
import { asArray, logicalIdOf, render, statementsOfRole, synth, type Synthesized } from './support';

const names = namesFor(defaults.stage);

/** Every template of a synthesized app: data and API, and the backup's with DR. */
function templates(s: Synthesized): Template[] {
  return [s.dataTemplate, s.apiTemplate, ...(s.backup ? [Template.fromStack(s.backup.data), Template.fromStack(s.backup.api)] : [])];
}

describe('the L2 cache', () => {
  const s = synth();
  const t = s.apiTemplate;
  const userName = cacheAcl.userName(names.prefix);

  it('has one IAM-authenticated user, allowed the adapter’s commands on the adapter’s keys only', () => {
    t.resourceCountIs('AWS::ElastiCache::User', 1);
    t.hasResourceProperties('AWS::ElastiCache::User', {
      UserId: userName,
      UserName: userName,
      Engine: 'valkey',
      AuthenticationMode: { Type: 'iam' },
      AccessString: cacheAccessString,
    });
    expect(cacheAccessString).toMatch(/^on ~rs:\* -@all( \+[a-z]+)+$/);
  });

  it('lets in only that user: the replication group takes the user group holding it, and no AUTH token', () => {
    const groupId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.userGroup } });
    t.hasResourceProperties('AWS::ElastiCache::UserGroup', { Engine: 'valkey', UserIds: [userName] });
    t.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      UserGroupIds: [{ Ref: groupId }],
      AuthToken: Match.absent(),
    });
  });

  it('tells every handler the user and the replication group its token is signed for, and no password', () => {
    const groupId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.replicationGroup } });
    for (const fn of Object.values(t.findResources('AWS::Lambda::Function'))) {
      const env = fn.Properties.Environment?.Variables as Record<string, unknown> | undefined;
      if (!env || !(envVars.redisUrl in env)) continue;
      expect(env[envVars.redisUser]).toBe(userName);
      expect(env[envVars.redisIamCache]).toEqual({ Ref: groupId });
      expect(env[envVars.redisPassword]).toBeUndefined();
    }
  });

  it.each(Object.keys(s.api.functions) as HandlerName[])(
    'lets %s connect to that group as that user only if it touches shard values',
    (name) => {
      const fn = s.api.functions[name];
      if (!fn) throw new Error(`${name} is not deployed`);
      const connects = statementsOfRole(t, logicalIdOf(s.api, fn.role)).filter((statement) =>
        asArray(statement.Action).some((action) => (cacheConnectActions as readonly string[]).includes(action)),
      );
      if (!usesValueCache(handlers[name])) {
        expect(connects).toEqual([]);
        return;
      }
      const groupId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.replicationGroup } });
      const userId = logicalIdOf(s.api, { node: { defaultChild: s.api.cache.user } });
      expect(connects).toHaveLength(1);
      expect(
        asArray(connects[0]!.Resource)
          .map((resource) => render(resource))
          .sort(),
      ).toEqual([`<${userId}.Arn>`, `arn:aws:elasticache:us-east-1:123456789012:replicationgroup:<${groupId}>`]);
    },
  );
});

describe('role names', () => {
  it('stay within IAM’s 64 characters with the longest stage, handler and region names', () => {
    // Stages are at most 20 characters (namesFor), region names at most 14 (ap-southeast-7, ap-northeast-3).
    const longestHandler = Object.keys(handlers).reduce((a, b) => (b.length > a.length ? b : a));
    const name = `${namesFor('s'.repeat(20)).functionName(longestHandler as HandlerName)}-ap-southeast-7`;

    expect(name.length).toBeLessThanOrEqual(64);
    expect(() => namesFor('s'.repeat(21))).toThrow();
  });
});

describe('queues', () => {
  const s = synth({ drBackupRegion: 'eu-west-1' });

  it('are all encrypted at rest and refuse any request not sent over TLS, in every stack', () => {
    let queues = 0;
    for (const template of templates(s)) {
      const found = template.findResources('AWS::SQS::Queue');
      const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy'));
      for (const [id, queue] of Object.entries(found)) {
        queues += 1;
        expect({ id, sse: queue.Properties.SqsManagedSseEnabled === true || queue.Properties.KmsMasterKeyId !== undefined }).toEqual({
          id,
          sse: true,
        });
        const tlsOnly = policies.some(
          (policy) =>
            (policy.Properties.Queues as unknown[]).some((ref) => JSON.stringify(ref).includes(id)) &&
            (policy.Properties.PolicyDocument.Statement as { Effect: string; Condition?: unknown }[]).some(
              (statement) =>
                statement.Effect === 'Deny' && JSON.stringify(statement.Condition) === '{"Bool":{"aws:SecureTransport":"false"}}',
            ),
        );
        expect({ id, tlsOnly }).toEqual({ id, tlsOnly: true });
      }
    }
    // The stream failure queues of the replicator, the applier and the shipper, the backup's key queue and its dead letters.
    expect(queues).toBeGreaterThanOrEqual(5);
  });
});

describe('the blob bucket', () => {
  const s = synth();
  const bucket = () => {
    const id = logicalIdOf(s.data, s.data.blobBucket);
    return [id, s.dataTemplate.toJSON().Resources[id]] as const;
  };

  it('is versioned, and expires noncurrent blobs after the default window', () => {
    const [, resource] = bucket();
    expect(resource.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    const rules = resource.Properties.LifecycleConfiguration.Rules as {
      Id: string;
      Prefix?: string;
      NoncurrentVersionExpiration?: { NoncurrentDays: number };
    }[];
    const deleted = rules.filter((rule) => rule.Prefix !== 'uploads/' && rule.NoncurrentVersionExpiration);
    expect(deleted.map((rule) => rule.NoncurrentVersionExpiration?.NoncurrentDays)).toEqual(deleted.map(() => defaultNoncurrentBlobDays));
    expect(deleted.length).toBeGreaterThan(0);
  });

  it('follows -c blobNoncurrentVersionDays', () => {
    const other = synth({ blobNoncurrentVersionDays: '3' });
    const found = other.dataTemplate.toJSON().Resources[logicalIdOf(other.data, other.data.blobBucket)];
    const rules = found.Properties.LifecycleConfiguration.Rules as {
      Prefix?: string;
      NoncurrentVersionExpiration?: { NoncurrentDays: number };
    }[];
    const days = rules
      .filter((rule) => rule.Prefix !== 'uploads/' && rule.NoncurrentVersionExpiration)
      .map((rule) => rule.NoncurrentVersionExpiration?.NoncurrentDays);
    expect(days.length).toBeGreaterThan(0);
    expect(new Set(days)).toEqual(new Set([3]));
  });
  // Its TLS-only bucket policy: test/cdk/data-stack.test.ts, "refuses any request not made over TLS".
});

describe('encryption at rest without kmsKey (the default): AWS-managed keys', () => {
  const s = synth({ drBackupRegion: 'eu-west-1' });

  it('creates no KMS key and names none on tables, bucket, queues or log groups', () => {
    for (const template of templates(s)) {
      template.resourceCountIs('AWS::KMS::Key', 0);
      for (const table of Object.values(template.findResources('AWS::DynamoDB::Table'))) {
        expect(table.Properties.SSESpecification?.KMSMasterKeyId).toBeUndefined();
      }
      for (const queue of Object.values(template.findResources('AWS::SQS::Queue')))
        expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      for (const group of Object.values(template.findResources('AWS::Logs::LogGroup'))) expect(group.Properties.KmsKeyId).toBeUndefined();
    }
    const bucket = s.dataTemplate.toJSON().Resources[logicalIdOf(s.data, s.data.blobBucket)];
    expect(bucket.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
  });
});

describe('encryption at rest with -c kmsKey=customer', () => {
  const s = synth({ stage: 'cmk', kmsKey: 'customer', drBackupRegion: 'eu-west-1' });
  const cmk = namesFor('cmk');
  const keyIdIn = (template: Template): string => {
    const keys = Object.keys(template.findResources('AWS::KMS::Key'));
    expect(keys).toHaveLength(1);
    return keys[0]!;
  };
  const keyArnIn = (template: Template) => ({ 'Fn::GetAtt': [keyIdIn(template), 'Arn'] });

  it('refuses any other value, naming the context key', () => {
    expect(() => synth({ kmsKey: 'yes' as never })).toThrow(/-c kmsKey: /);
  });

  it('creates one rotated, retained key per region, in the data stack, aliased for the stage', () => {
    for (const template of [s.dataTemplate, Template.fromStack(s.backup!.data)]) {
      template.hasResource('AWS::KMS::Key', {
        Properties: Match.objectLike({ EnableKeyRotation: true, PendingWindowInDays: 30 }),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      template.hasResourceProperties('AWS::KMS::Alias', { AliasName: `alias/${cmk.prefix}`, TargetKeyId: keyArnIn(template) });
    }
    s.apiTemplate.resourceCountIs('AWS::KMS::Key', 0);
  });

  it('lets the account administer the key, only Ringstore’s roles use it (through DynamoDB, S3 and SQS), and CloudWatch Logs encrypt log groups', () => {
    const [key] = Object.values(s.dataTemplate.findResources('AWS::KMS::Key'));
    const statements = key!.Properties.KeyPolicy.Statement as {
      Sid: string;
      Principal: { AWS?: unknown; Service?: unknown };
      Action: string[];
      Condition?: Record<string, Record<string, unknown>>;
    }[];
    expect(statements.map((statement) => statement.Sid)).toEqual([
      'AccountAdministersTheKey',
      'RingstoreRolesUseTheKeyThroughItsServices',
      'CloudWatchLogsEncryptsThisAccountsLogGroups',
    ]);
    const [admin, roles, logs] = statements;
    const root = 'arn:aws:iam::123456789012:root';
    expect(render(admin!.Principal.AWS)).toBe(root);
    for (const action of ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:ReEncryptFrom', 'kms:*']) {
      expect(admin!.Action).not.toContain(action);
    }
    expect(render(roles!.Principal.AWS)).toBe(root);
    expect(roles!.Action).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:CreateGrant']));
    expect(render(roles!.Condition!.ArnLike!['aws:PrincipalArn'])).toBe(`arn:aws:iam::123456789012:role/${cmk.prefix}-*`);
    expect((roles!.Condition!.StringEquals!['kms:ViaService'] as unknown[]).map((service) => render(service))).toEqual([
      'dynamodb.us-east-1.amazonaws.com',
      's3.us-east-1.amazonaws.com',
      'sqs.us-east-1.amazonaws.com',
    ]);
    expect(render(logs!.Principal.Service)).toBe('logs.us-east-1.amazonaws.com');
    expect(render(logs!.Condition!.ArnLike!['kms:EncryptionContext:aws:logs:arn'])).toBe('arn:aws:logs:us-east-1:123456789012:log-group:*');
  });

  it('encrypts every table, the blob bucket (with a bucket key) and the key queues with it', () => {
    for (const template of [s.dataTemplate, Template.fromStack(s.backup!.data)]) {
      const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));
      expect(tables.length).toBeGreaterThan(0);
      for (const table of tables) {
        expect(table.Properties.SSESpecification).toEqual({ KMSMasterKeyId: keyArnIn(template), SSEEnabled: true, SSEType: 'KMS' });
      }
      template.hasResourceProperties('AWS::S3::Bucket', {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [
            { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArnIn(template) } },
          ],
        },
      });
      for (const queue of Object.values(template.findResources('AWS::SQS::Queue'))) {
        expect(queue.Properties.KmsMasterKeyId).toEqual(keyArnIn(template));
      }
    }
  });

  it('encrypts every log group and stream failure queue of the API stacks with their region’s key, read from the data stack', () => {
    for (const [api, data] of [
      [s.api, s.data],
      [s.backup!.api, s.backup!.data],
    ] as const) {
      const template = Template.fromStack(api);
      const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));
      const queues = Object.values(template.findResources('AWS::SQS::Queue'));
      expect(groups.length).toBeGreaterThan(0);
      for (const resource of [...groups.map((g) => g.Properties.KmsKeyId), ...queues.map((q) => q.Properties.KmsMasterKeyId)]) {
        // A weak reference to the data stack's output of the key's ARN (no export ties the stacks).
        expect(resource).toEqual({ 'Fn::GetStackOutput': expect.objectContaining({ StackName: data.stackName }) });
      }
    }
  });

  it('names every handler role after the stage, so the key policy admits it, and lets it use the stage’s keys by alias only', () => {
    for (const api of [s.api, s.backup!.api]) {
      const template = Template.fromStack(api);
      for (const [name, fn] of Object.entries(api.functions) as [HandlerName, HandlerFunction][]) {
        const roleId = logicalIdOf(api, fn.role);
        const role = template.toJSON().Resources[roleId];
        expect(render(role.Properties.RoleName)).toMatch(new RegExp(`^${cmk.prefix}-${name}-(us-east-1|eu-west-1)$`));
        const keyUse = statementsOfRole(template, roleId).filter((statement) => asArray(statement.Action).includes('kms:Decrypt'));
        expect(keyUse).toHaveLength(1);
        expect(asArray(keyUse[0]!.Resource).map((resource) => render(resource))).toEqual(['arn:aws:kms:*:123456789012:key/*']);
        expect(keyUse[0]!.Condition).toEqual({ 'ForAnyValue:StringEquals': { 'kms:ResourceAliases': [`alias/${cmk.prefix}`] } });
        for (const action of asArray(keyUse[0]!.Action)) expect(action).not.toContain('*');
      }
    }
  });
});
