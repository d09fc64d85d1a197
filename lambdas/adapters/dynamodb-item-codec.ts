// How a stored item is kept in DynamoDB: the shard table and its `kv` entity, the attributes the hints
// table keeps too, and the conversions between a StoredItem and those attributes.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { $remove, Entity, EntityFormatter, type FormattedItem, Table, binary, boolean, item, number, string } from 'dynamodb-toolbox';
import type { Intent, StoredItem } from '../ports';
import { shardSchema } from '../../schemas/topology';
import { listingBucketOf } from '../core/ring';

/** A shard table; with no client, only for building commands' params or formatting items. */
export function shardTable(documentClient?: DynamoDBDocumentClient) {
  return new Table({
    // Every call names its shard with `tableName`; this default is never used for I/O.
    name: 'ringstore-shard',
    partitionKey: shardSchema.partitionKey,
    indexes: {
      [shardSchema.tokenIndex.name]: {
        type: 'global',
        partitionKey: shardSchema.tokenIndex.partitionKey,
        sortKey: shardSchema.tokenIndex.sortKey,
      },
      [shardSchema.keyIndex.name]: {
        type: 'global',
        partitionKey: shardSchema.keyIndex.partitionKey,
        sortKey: shardSchema.keyIndex.sortKey,
      },
    },
    ...(documentClient ? { documentClient } : {}),
  });
}

export type ShardTable = ReturnType<typeof shardTable>;

/** The one item kind of a shard table: a key's committed content, and a transaction's intent on it. */
export function kvEntity(table: ShardTable) {
  return new Entity({
    name: 'kv',
    table,
    entityAttribute: false,
    timestamps: false,
    // lp: the listing partition, on the owner's live copy only (topology: shardSchema.keyIndex).
    schema: item({
      pk: string().key(),
      tb: number(),
      lp: string().optional(),
      ...storedItemAttributes(),
      ...intentAttributes(),
      ...writerAttributes(),
    }),
  });
}

export type KvEntity = ReturnType<typeof kvEntity>;

/** The attributes of a stored item; the hints table keeps whole items with the same ones. */
export function storedItemAttributes() {
  return {
    ns: string(),
    k: string(),
    v: number(),
    tok: number(),
    ct: string(),
    size: number(),
    sha: string(),
    tomb: boolean(),
    ttl: number().optional(),
    val: binary().optional(),
    blob: string().optional(),
    mt: number().optional(),
    // The version a copy was written at (replication, repair, a move, a hint): the item is a copy while it is the
    // item's version. An owner write assigns the next version and leaves it behind, so the owner's writes need no
    // attribute more; the change feed tells the owner's writes from copies by it (isCopyImage).
    cpv: number().optional(),
  };
}

/** A transaction's intent, kept beside the committed content on the owner's item (never replicated). */
function intentAttributes() {
  return {
    itx: string().optional(),
    iop: string().enum('put', 'delete').optional(),
    ict: string().optional(),
    isize: number().optional(),
    isha: string().optional(),
    ival: binary().optional(),
    its: number().optional(),
    iwn: number().optional(),
  };
}

/**
 * The transaction that wrote the owner's current version (never replicated): its id, the version it
 * wrote and how many keys it wrote. Plain writes leave them behind rather than remove them (one less
 * attribute in every write's expression); they count only while `wtv` is the item's version.
 */
function writerAttributes() {
  return {
    wtx: string().optional(),
    wtv: number().optional(),
    wtn: number().optional(),
    /** A DR key-sync write's notice id (StoredItem.writeId), left behind by later writes without one. */
    wid: string().optional(),
  };
}

/** An update that removes the intent; the same list as intentAttributes, so none is left behind. */
export const noIntent = {
  itx: $remove(),
  iop: $remove(),
  ict: $remove(),
  isize: $remove(),
  isha: $remove(),
  ival: $remove(),
  its: $remove(),
  iwn: $remove(),
} satisfies Record<keyof ReturnType<typeof intentAttributes>, ReturnType<typeof $remove>>;

/** A shard item's partition key: the namespace and the key (namespaces exclude `#`). */
export function partitionKeyOf(namespace: string, key: string): string {
  return `${namespace}#${key}`;
}

/** The listing index partition of a key: its namespace and its listing bucket. */
export function listingPartitionOf(namespace: string, token: number): string {
  return `${namespace}#${listingBucketOf(token)}`;
}

/** A stored item's attributes as either table's entity formats them: the keys aside, an intent only on a shard. */
export type StoredAttributes = Omit<FormattedItem<KvEntity>, 'pk' | 'tb' | 'lp'>;

/** The attributes a copy of a stored item carries (a replica's item, a hint): never an intent. */
export type CopiedAttributes = Pick<FormattedItem<KvEntity>, keyof ReturnType<typeof storedItemAttributes>>;

/** The stored item these attributes hold, with the intent if they carry one. */
export function toStoredItem(attributes: StoredAttributes): StoredItem {
  const { itx } = attributes;
  return {
    namespace: attributes.ns,
    key: attributes.k,
    version: attributes.v,
    token: attributes.tok,
    contentType: attributes.ct,
    size: attributes.size,
    sha256: attributes.sha,
    tombstone: attributes.tomb,
    ...(attributes.ttl === undefined ? {} : { expiresAtSeconds: attributes.ttl }),
    ...(attributes.val === undefined ? {} : { value: attributes.val }),
    ...(attributes.blob === undefined ? {} : { blob: { objectKey: attributes.blob } }),
    ...(attributes.mt === undefined ? {} : { modifiedAtMs: attributes.mt }),
    ...(itx === undefined ? {} : { intent: intentOf(itx, attributes) }),
    ...(attributes.wtx !== undefined && attributes.wtv === attributes.v
      ? { writtenBy: { txid: attributes.wtx, writes: attributes.wtn ?? 1 } }
      : {}),
    ...(attributes.wid === undefined ? {} : { writeId: attributes.wid }),
  };
}

function intentOf(txid: string, attributes: StoredAttributes): Intent {
  return {
    txid,
    kind: attributes.iop ?? 'put',
    contentType: attributes.ict ?? '',
    size: attributes.isize ?? 0,
    sha256: attributes.isha ?? '',
    ...(attributes.ival === undefined ? {} : { value: attributes.ival }),
    placedAtMs: attributes.its ?? 0,
    ...(attributes.iwn === undefined ? {} : { writes: attributes.iwn }),
  };
}

/** The attributes a copy of an item is written with (the inverse of toStoredItem, without the intent). */
export function toCopiedAttributes(item: StoredItem): CopiedAttributes {
  return {
    ns: item.namespace,
    k: item.key,
    v: item.version,
    tok: item.token,
    ct: item.contentType,
    size: item.size,
    sha: item.sha256,
    tomb: item.tombstone,
    ...(item.expiresAtSeconds === undefined ? {} : { ttl: item.expiresAtSeconds }),
    ...(item.value === undefined ? {} : { val: item.value }),
    ...(item.blob === undefined ? {} : { blob: item.blob.objectKey }),
    ...(item.modifiedAtMs === undefined ? {} : { mt: item.modifiedAtMs }),
    cpv: item.version,
  };
}

// Raw images (stream records, the item a failed condition returns) are checked by the entity's formatter,
// as an entity read would be, rather than by a guard written beside it: it adds under a tenth to the
// replicator's CPU per record, which builds its replica writes with the same library.
const kvFormatter = kvEntity(shardTable()).build(EntityFormatter);

/** Whether a shard item's image is a copy (a replica's, a move's, a repair's), not a write its owner made. */
export function isCopyImage(image: Record<string, AttributeValue>): boolean {
  const copiedAt = image.cpv?.N;
  return copiedAt !== undefined && copiedAt === image.v?.N;
}

/** A shard item as DynamoDB's wire format holds it, decoded and checked against the entity. */
export function storedItemOfImage(image: Record<string, AttributeValue>): StoredItem {
  return toStoredItem(kvFormatter.format(unmarshall(image)));
}
