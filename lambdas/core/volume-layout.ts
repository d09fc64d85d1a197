// Where a block volume's bytes live (docs/volumes.md, "Placement"): one key per 4 KiB block in the namespace's
// volume keyspace, named by the volume's id and the block's placement group, so a group's blocks share one ring
// token; and which blocks, and which bytes of each, a byte range covers.
import { volumeNamespaceSuffix } from '../../schemas/topology';

export interface BlockGeometry {
  blockBytes: number;
  groupBlocks: number;
}

/** The bytes of one block a byte range covers: [start, end) within the block, and where they sit in the range. */
export interface BlockSpan {
  block: number;
  start: number;
  end: number;
  /** Offset of `start` within the range. */
  at: number;
}

/** The keyspace of a namespace's volumes (its blocks and records): a namespace no API key can name. */
export function volumeNamespaceOf(namespace: string): string {
  return `${namespace}${volumeNamespaceSuffix}`;
}

/** The key of a volume's record: placed on its own (its group is the name). */
export function volumeRecordKey(name: string): string {
  return `${volumeRecordPrefix}${name}/record`;
}

/** Every volume record's key starts so; no block key does (block keys start with the volume's id, hex). */
export const volumeRecordPrefix = '@';

/** The key of block `block` of volume `volumeId`: `<id>.<group>/<block>`, placed by `<id>.<group>`. */
export function blockKey(volumeId: string, block: number, geometry: BlockGeometry): string {
  return `${blockKeyPrefix(volumeId)}${groupOf(block, geometry)}/${block}`;
}

/** The key of a placement group's fence: the writer epoch the group takes writes from (volume-leases.ts). */
export function fenceKey(volumeId: string, group: number): string {
  return `${blockKeyPrefix(volumeId)}${group}/${fenceKeySuffix}`;
}

/** What a fence key ends with after its group's `/`; a block key ends with the block's number. */
export const fenceKeySuffix = 'fence';

/** The placement group of a block. */
export function groupOf(block: number, geometry: BlockGeometry): number {
  return Math.floor(block / geometry.groupBlocks);
}

/** How many placement groups a volume of `sizeBytes` has. */
export function groupCount(sizeBytes: number, geometry: BlockGeometry): number {
  return Math.ceil(sizeBytes / geometry.blockBytes / geometry.groupBlocks);
}

/** What every key of a volume's blocks and fences starts with (its listing prefix). */
export function blockKeyPrefix(volumeId: string): string {
  return `${volumeId}.`;
}

/** The blocks a byte range of `length` > 0 bytes at `offset` covers, first to last. */
export function blockSpans(offset: number, length: number, geometry: BlockGeometry): BlockSpan[] {
  const { blockBytes } = geometry;
  const spans: BlockSpan[] = [];
  const end = offset + length;
  for (let block = Math.floor(offset / blockBytes); block * blockBytes < end; block += 1) {
    const blockStart = block * blockBytes;
    const start = Math.max(offset, blockStart) - blockStart;
    const stop = Math.min(end, blockStart + blockBytes) - blockStart;
    spans.push({ block, start, end: stop, at: blockStart + start - offset });
  }
  return spans;
}

/** Whether a span covers its whole block (a write of it replaces the block without reading it). */
export function coversBlock(span: BlockSpan, geometry: BlockGeometry): boolean {
  return span.start === 0 && span.end === geometry.blockBytes;
}
