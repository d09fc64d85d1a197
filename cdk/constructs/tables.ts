// The DynamoDB tables of a deployment: the ring's shard tables, the control, hints, transaction and feed tables,
// with the key schemas the topology gives them.
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import {
  controlSchema,
  feedSchema,
  hintsSchema,
  type KeyAttribute,
  pendingSchema,
  shardSchema,
  txnSchema,
  type Names,
} from '../../schemas/topology';

/** PITR keeps the longest window DynamoDB offers; the blob bucket keeps old versions as long (see BlobBucket). */
export const pitrRetentionDays = 35;

/** How every table is kept: on demand, PITR, and retained when its stack goes (stored data outlives a deployment). */
const keptTable = {
  billingMode: BillingMode.PAY_PER_REQUEST,
  pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true, recoveryPeriodInDays: pitrRetentionDays },
  removalPolicy: RemovalPolicy.RETAIN,
} as const;

/** CloudFormation's name for each of the topology's key attribute types. */
const attributeTypes = { string: AttributeType.STRING, number: AttributeType.NUMBER, binary: AttributeType.BINARY } as const;

/**
 * A table's encryption at rest: DynamoDB's own key by default (CDK context `kmsKey=aws`), or the
 * deployment's customer-managed key (`kmsKey=customer`, docs/security.md).
 */
const encryptionOf = (key: IKey | undefined) => (key ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key } : {});

/** A key attribute of the topology as CDK takes it. */
const cdkKey = (key: KeyAttribute) => ({ name: key.name, type: attributeTypes[key.type] });

/** A kept table keyed by a partition and a sort key (control, hints, pending), as `scope`'s child `Table`. */
function keyPairTable(
  scope: Construct,
  tableName: string,
  schema: { partitionKey: KeyAttribute; sortKey: KeyAttribute },
  key: IKey | undefined,
): Table {
  return new Table(scope, 'Table', {
    tableName,
    partitionKey: cdkKey(schema.partitionKey),
    sortKey: cdkKey(schema.sortKey),
    ...keptTable,
    ...encryptionOf(key),
  });
}

/** A global secondary index as the topology describes it. */
interface IndexSpec {
  name: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  nonKeyAttributes?: readonly string[];
}

function addIndex(table: Table, index: IndexSpec): void {
  table.addGlobalSecondaryIndex({
    indexName: index.name,
    partitionKey: cdkKey(index.partitionKey),
    sortKey: cdkKey(index.sortKey),
    projectionType: ProjectionType[index.projection],
    ...(index.projection === 'INCLUDE' ? { nonKeyAttributes: [...(index.nonKeyAttributes ?? [])] } : {}),
  });
}

export interface ShardTablesProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
  shardCount: number;
}

/**
 * N shard tables `ringstore-<stage>-shard-<n>`. Streams carry both images so the replicator can apply
 * only strictly newer versions to replicas; the two indexes serve rebalancing and listing.
 */
export class ShardTables extends Construct {
  readonly tables: readonly Table[];

  constructor(scope: Construct, id: string, props: ShardTablesProps) {
    super(scope, id);
    this.tables = Array.from({ length: props.shardCount }, (_, shardId) => {
      const table = new Table(this, `Shard${shardId}`, {
        tableName: props.names.shardTable(shardId),
        partitionKey: cdkKey(shardSchema.partitionKey),
        stream: StreamViewType.NEW_AND_OLD_IMAGES,
        timeToLiveAttribute: shardSchema.ttlAttribute,
        ...keptTable,
        ...encryptionOf(props.encryptionKey),
      });
      // Token order (tb = token bucket, tok = token): a token range is one sequential Query, so
      // rebalancing and anti-entropy work range by range. Projection as topology decides (versions
      // only: values are read from the table for the keys a copy moves).
      addIndex(table, shardSchema.tokenIndex);
      // Per-namespace key order for listing by prefix (owners' live keys only, write-sharded by bucket),
      // with only the summary attributes a listing shows.
      addIndex(table, shardSchema.keyIndex);
      return table;
    });
  }
}

export interface ControlTableProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
}

/** Ring, API keys (hashed), shard health, namespace settings, job state: small, hot, read through caches. */
export class ControlTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: ControlTableProps) {
    super(scope, id);
    this.table = keyPairTable(this, props.names.controlTable, controlSchema, props.encryptionKey);
  }
}

export interface HintsTableProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
}

/**
 * The failure log: one item per write a replica missed (pk = target replica table, sk = key#version),
 * replayed before that replica serves again. Kept like the other tables (PITR, retained): a lost hint is
 * a replica that stays stale until anti-entropy finds it.
 */
export class HintsTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: HintsTableProps) {
    super(scope, id);
    this.table = keyPairTable(this, props.names.hintsTable, hintsSchema, props.encryptionKey);
  }
}

export interface TxnTableProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
}

/**
 * Transaction records: the coordinator state of two-phase commit (pk = txid), the one conditional write
 * that decides a transaction. The `byDeadline` index lets the recovery sweeper walk records in deadline
 * order; it projects ALL because the sweeper needs the whole record (status, the keys it wrote) to finish
 * a transaction, and records are small and short-lived (TTL removes decided ones after
 * txnLimits.recordRetentionSeconds). Kept like the other tables (PITR, retained): intents are read under
 * presumed commit, so losing the record of an undecided transaction would roll its intents forward.
 */
export class TxnTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: TxnTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      tableName: props.names.txnTable,
      partitionKey: cdkKey(txnSchema.partitionKey),
      // Decisions feed the applier: an eventual transaction is answered at its decision and applied from here.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: txnSchema.ttlAttribute,
      ...keptTable,
      ...encryptionOf(props.encryptionKey),
    });
    // db = `<the deadline's minute>#<bucket>`, dl = the deadline (ms): the sweeper merges a minute's buckets in order.
    addIndex(this.table, txnSchema.deadlineIndex);
  }
}

export interface PendingTableProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
}

/**
 * DR backup region only (docs/dr.md): the keys whose key message arrived and whose value has not (pk = a
 * hash of the key, sk = the version waited for), and after a promotion the keys lost in the disaster.
 * Kept like the other tables (PITR, retained, encrypted at rest): an entry lost here is
 * a read that could be served stale.
 */
export class PendingTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: PendingTableProps) {
    super(scope, id);
    this.table = keyPairTable(this, props.names.pendingTable, pendingSchema, props.encryptionKey);
  }
}

export interface FeedTableProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: DynamoDB's own. */
  encryptionKey?: IKey;
}

/**
 * The change feed (docs/watch.md): one item per owner write (pk = `<namespace>#<bucket>`, sk = its position),
 * appended by the replicator and read by the watch function, removed by TTL after the retention. Kept like the other
 * tables: an entry lost here is a change a watcher never sees.
 */
export class FeedTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: FeedTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      tableName: props.names.feedTable,
      partitionKey: cdkKey(feedSchema.partitionKey),
      sortKey: cdkKey(feedSchema.sortKey),
      timeToLiveAttribute: feedSchema.ttlAttribute,
      ...keptTable,
      ...encryptionOf(props.encryptionKey),
    });
  }
}
