// Data stack: the ring's shard tables, the control, hints and transaction tables and the blob bucket, as topology names them.
import { Match } from 'aws-cdk-lib/assertions';
import { controlSchema, defaults, hintsSchema, namesFor, shardSchema, txnSchema } from '../../schemas/topology';
import { render, shardStreamOutputs, synth, type Synthesized } from './support';

const shardTableNamePattern = /^ringstore-[a-z0-9-]+-shard-\d+$/;

function tableNames(s: Synthesized): string[] {
  return Object.values(s.dataTemplate.findResources('AWS::DynamoDB::Table')).map((t) => t.Properties.TableName as string);
}

describe('DataStack', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth();
  });

  it('has one shard table per shard, named by topology, plus the control, hints, transaction and feed tables', () => {
    // Prepare
    const names = namesFor(defaults.stage);
    const expected = Array.from({ length: defaults.shardCount }, (_, i) => names.shardTable(i));

    // Act
    const shards = tableNames(s).filter((name) => shardTableNamePattern.test(name));

    // Assess
    expect(shards.sort()).toEqual(expected.sort());
    expect(tableNames(s)).toContain(names.controlTable);
    expect(tableNames(s)).toContain(names.hintsTable);
    expect(tableNames(s)).toContain(names.txnTable);
    expect(tableNames(s)).toContain(names.feedTable);
    s.dataTemplate.resourceCountIs('AWS::DynamoDB::Table', defaults.shardCount + 4);
  });

  it.each([1, 7])('follows shardCount=%i', (shardCount) => {
    const other = synth({ shardCount, replicationFactor: 1 });

    const shards = tableNames(other).filter((name) => shardTableNamePattern.test(name));

    expect(shards).toHaveLength(shardCount);
    expect(shards).toContain(namesFor(defaults.stage).shardTable(shardCount - 1));
  });

  it('names every table after the stage', () => {
    const dev = synth({ stage: 'dev' });

    expect(tableNames(dev).every((name) => name.startsWith('ringstore-dev-'))).toBe(true);
  });

  it('gives every shard table the item key, on-demand billing, streams with both images, PITR and TTL', () => {
    const names = namesFor(defaults.stage);
    for (let shardId = 0; shardId < defaults.shardCount; shardId++) {
      s.dataTemplate.hasResource('AWS::DynamoDB::Table', {
        Properties: Match.objectLike({
          TableName: names.shardTable(shardId),
          KeySchema: [{ AttributeName: shardSchema.partitionKey.name, KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
          StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
          PointInTimeRecoverySpecification: Match.objectLike({ PointInTimeRecoveryEnabled: true }),
          TimeToLiveSpecification: { AttributeName: shardSchema.ttlAttribute, Enabled: true },
        }),
        DeletionPolicy: 'Retain',
      });
    }
  });

  it('indexes shard tables by token (numbers) and by key (strings), projected as topology says', () => {
    const { tokenIndex, keyIndex } = shardSchema;
    const shards = Object.values(s.dataTemplate.findResources('AWS::DynamoDB::Table')).filter((t) =>
      shardTableNamePattern.test(t.Properties.TableName),
    );

    for (const table of shards) {
      const { GlobalSecondaryIndexes: indexes, AttributeDefinitions: attributes } = table.Properties;
      expect(indexes).toHaveLength(2);
      expect(indexes).toContainEqual({
        IndexName: tokenIndex.name,
        KeySchema: [
          { AttributeName: tokenIndex.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: tokenIndex.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...tokenIndex.nonKeyAttributes] },
      });
      expect(indexes).toContainEqual({
        IndexName: keyIndex.name,
        KeySchema: [
          { AttributeName: keyIndex.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: keyIndex.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...keyIndex.nonKeyAttributes] },
      });
      expect(attributes).toEqual(
        expect.arrayContaining([
          { AttributeName: shardSchema.partitionKey.name, AttributeType: 'S' },
          { AttributeName: tokenIndex.partitionKey.name, AttributeType: 'N' },
          { AttributeName: tokenIndex.sortKey.name, AttributeType: 'N' },
          { AttributeName: keyIndex.partitionKey.name, AttributeType: 'S' },
          { AttributeName: keyIndex.sortKey.name, AttributeType: 'S' },
        ]),
      );
    }
  });

  it('keys the control table by pk/sk, with PITR, retained on delete', () => {
    s.dataTemplate.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({
        TableName: namesFor(defaults.stage).controlTable,
        KeySchema: [
          { AttributeName: controlSchema.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: controlSchema.sortKey.name, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: Match.objectLike({ PointInTimeRecoveryEnabled: true }),
      }),
      DeletionPolicy: 'Retain',
    });
  });

  const tableNamed = (name: string) => {
    const found = Object.values(s.dataTemplate.findResources('AWS::DynamoDB::Table', { Properties: { TableName: name } }));
    expect(found).toHaveLength(1);
    return found[0] as { Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
  };

  describe('hints table', () => {
    it('keys hints by target/sk (strings), on demand, with PITR, retained on delete', () => {
      s.dataTemplate.hasResource('AWS::DynamoDB::Table', {
        Properties: Match.objectLike({
          TableName: namesFor(defaults.stage).hintsTable,
          KeySchema: [
            { AttributeName: hintsSchema.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: hintsSchema.sortKey.name, KeyType: 'RANGE' },
          ],
          AttributeDefinitions: [
            { AttributeName: hintsSchema.partitionKey.name, AttributeType: 'S' },
            { AttributeName: hintsSchema.sortKey.name, AttributeType: 'S' },
          ],
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 35 },
        }),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    });

    it('is encrypted and protected exactly like the control table', () => {
      const names = namesFor(defaults.stage);
      const hints = tableNamed(names.hintsTable);
      const control = tableNamed(names.controlTable);

      expect(hints.Properties.SSESpecification).toEqual(control.Properties.SSESpecification);
      expect(hints.Properties.DeletionProtectionEnabled).toEqual(control.Properties.DeletionProtectionEnabled);
      expect([hints.DeletionPolicy, hints.UpdateReplacePolicy]).toEqual([control.DeletionPolicy, control.UpdateReplacePolicy]);
    });

    it('follows the stage', () => {
      expect(tableNames(synth({ stage: 'dev' }))).toContain(namesFor('dev').hintsTable);
    });
  });

  describe('transaction table', () => {
    const names = namesFor(defaults.stage);

    it('keys records by txid (string), on demand, with PITR, retained on delete', () => {
      s.dataTemplate.hasResource('AWS::DynamoDB::Table', {
        Properties: Match.objectLike({
          TableName: names.txnTable,
          KeySchema: [{ AttributeName: txnSchema.partitionKey.name, KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 35 },
        }),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    });

    it('expires decided records by TTL on the attribute topology names', () => {
      expect(tableNamed(names.txnTable).Properties.TimeToLiveSpecification).toEqual({
        AttributeName: txnSchema.ttlAttribute,
        Enabled: true,
      });
    });

    it('indexes records by deadline (minute#bucket string, then the deadline number), keys only: a decision rewrites no index entry', () => {
      const { deadlineIndex } = txnSchema;

      const { GlobalSecondaryIndexes: indexes, AttributeDefinitions: attributes } = tableNamed(names.txnTable).Properties;

      expect(indexes).toEqual([
        {
          IndexName: deadlineIndex.name,
          KeySchema: [
            { AttributeName: deadlineIndex.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: deadlineIndex.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ]);
      expect(attributes).toEqual(
        expect.arrayContaining([
          { AttributeName: txnSchema.partitionKey.name, AttributeType: 'S' },
          { AttributeName: deadlineIndex.partitionKey.name, AttributeType: 'S' },
          { AttributeName: deadlineIndex.sortKey.name, AttributeType: 'N' },
        ]),
      );
      expect(attributes).toHaveLength(3);
    });

    it('has a stream of new and old images: decisions feed the applier', () => {
      expect(tableNamed(names.txnTable).Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    });

    it('is encrypted and protected exactly like the control table', () => {
      const txn = tableNamed(names.txnTable);
      const control = tableNamed(names.controlTable);

      expect(txn.Properties.SSESpecification).toEqual(control.Properties.SSESpecification);
      expect(txn.Properties.DeletionProtectionEnabled).toEqual(control.Properties.DeletionProtectionEnabled);
    });

    it('follows the stage', () => {
      expect(tableNames(synth({ stage: 'dev' }))).toContain(namesFor('dev').txnTable);
    });
  });

  describe('shard streams', () => {
    it("publishes each shard table's stream ARN as a plain output, in shard order (no export pins a shard)", () => {
      const outputs = s.dataTemplate.toJSON().Outputs as Record<string, { Export?: unknown }>;

      const published = shardStreamOutputs(s);

      expect(published).toHaveLength(defaults.shardCount);
      expect(new Set(published.map((p) => p.outputName)).size).toBe(defaults.shardCount);
      for (const [shardId, { arn }] of published.entries()) {
        expect(arn).toContain(`:table/${namesFor(defaults.stage).shardTable(shardId)}/stream/`);
      }
      for (const output of Object.values(outputs)) expect(output.Export).toBeUndefined();
    });

    it('hands the API stack one stream ARN per shard', () => {
      const other = synth({ shardCount: 7, replicationFactor: 3 });

      expect(other.data.shardStreamArns).toHaveLength(7);
      expect(shardStreamOutputs(other)).toHaveLength(7);
    });
  });

  describe('blob bucket', () => {
    const blobBucket = () => {
      const buckets = Object.entries(s.dataTemplate.findResources('AWS::S3::Bucket')).filter(
        ([, b]) => b.Properties.BucketName !== undefined,
      );
      expect(buckets).toHaveLength(1);
      return buckets[0] as [string, { Properties: Record<string, any> }];
    };

    it('is named by topology, unique per account', () => {
      const [, bucket] = blobBucket();

      expect(render(bucket.Properties.BucketName)).toBe(namesFor(defaults.stage, '123456789012').blobBucket);
    });

    it('blocks public access and is encrypted, versioned and access-logged', () => {
      const [, bucket] = blobBucket();

      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault).toEqual({
        SSEAlgorithm: 'AES256',
      });
      expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(bucket.Properties.LoggingConfiguration).toBeDefined();
    });

    it('refuses any request not made over TLS', () => {
      const [logicalId] = blobBucket();

      s.dataTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: logicalId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    });

    it('aborts stale multipart uploads and expires uncommitted uploads/ after a day', () => {
      const [, bucket] = blobBucket();
      const rules = bucket.Properties.LifecycleConfiguration.Rules as Record<string, unknown>[];

      expect(rules).toContainEqual(
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      );
      expect(rules).toContainEqual(expect.objectContaining({ Prefix: 'uploads/', ExpirationInDays: 1, Status: 'Enabled' }));
      // Committed blobs never expire while current.
      expect(rules.filter((rule) => rule.Prefix === 'blobs/' && rule.ExpirationInDays !== undefined)).toEqual([]);
    });

    it('lets browsers PUT and GET through presigned URLs from any origin', () => {
      const [, bucket] = blobBucket();

      expect(bucket.Properties.CorsConfiguration.CorsRules).toContainEqual(
        expect.objectContaining({
          AllowedMethods: expect.arrayContaining(['PUT', 'GET']),
          AllowedOrigins: ['*'],
        }),
      );
    });
  });

  it('outputs the bucket and table names', () => {
    const outputs = s.dataTemplate.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining(['ShardTableNames', 'ControlTableName', 'HintsTableName', 'TxnTableName', 'BlobBucketName']),
    );
  });
});
