// The contract of the block volume routes (docs/volumes.md): create, list, describe and delete volumes; read a
// byte range (HTTP Range), write one, trim one; take, list, read and delete snapshots. Its own module:
// schemas/api.ts is past its size (the routes' query parameters are there, with every route's).
import * as z from 'zod';
import { volumeLimits, volumeNamePattern } from './topology';

const nameRule = `must match ${volumeNamePattern}`;

// Names are checked by the volume service (volume.nameInvalid); the schemas describe the rule.
const volumeName = /* @__PURE__ */ z.string().meta({ description: `The volume name: ${nameRule}` });

export const VolumeParam = /* @__PURE__ */ z.object({ volume: volumeName });

const sizeRule = `must be a multiple of ${volumeLimits.blockBytes} from ${volumeLimits.blockBytes} to ${volumeLimits.sizeBytesMax}`;

const CloneSource = /* @__PURE__ */ z
  .object({
    volume: volumeName,
    snapshot: z.string().meta({ description: `The snapshot's name: ${nameRule}` }),
  })
  .strict()
  .meta({ id: 'CloneSource' });

export const CreateVolumeBody = /* @__PURE__ */ z
  .object({
    name: volumeName,
    sizeBytes: z
      .number(sizeRule)
      .int(sizeRule)
      .optional()
      .meta({
        description: `The size in bytes: ${sizeRule}. Sparse: nothing is stored until written. Required unless \`from\` is given; a clone's defaults to its snapshot's, and is at least that`,
      }),
    from: CloneSource.optional().meta({
      description:
        'Makes the volume a clone of this snapshot: copy-on-write, nothing copied at its creation; the snapshot and its volume cannot be deleted while the clone lives',
    }),
  })
  .strict()
  .meta({ id: 'CreateVolumeRequest' });

const leaseRule = `must be an integer from 1 to ${volumeLimits.leaseSecondsMax}`;

export const AttachVolumeBody = /* @__PURE__ */ z
  .object({
    holder: z.string().min(1).max(128).meta({ description: 'Who attaches (a host, a process): named to another holder refused' }),
    leaseSeconds: z
      .number(leaseRule)
      .int(leaseRule)
      .min(1, leaseRule)
      .max(volumeLimits.leaseSecondsMax, leaseRule)
      .optional()
      .meta({ description: `How long the lease lasts unrenewed (attach again to renew); default ${volumeLimits.leaseSecondsDefault}` }),
  })
  .strict()
  .meta({ id: 'AttachVolumeRequest' });

export const VolumeLease = /* @__PURE__ */ z
  .object({
    holder: z.string(),
    epoch: z.number().int().meta({ description: 'Carried by every write (?epoch=); refused once another writer takes over' }),
    expiresAt: z.string().meta({ description: 'ISO 8601; another holder may attach after it' }),
  })
  .meta({ id: 'VolumeLease' });

export const ResizeVolumeBody = /* @__PURE__ */ z
  .object({
    sizeBytes: z
      .number(sizeRule)
      .int(sizeRule)
      .meta({ description: `The new size: ${sizeRule}. Growing keeps the writer attached; shrinking needs the volume detached` }),
  })
  .strict()
  .meta({ id: 'ResizeVolumeRequest' });

export const Volume = /* @__PURE__ */ z
  .object({
    name: z.string(),
    sizeBytes: z.number().int(),
    blockBytes: z.number().int(),
    createdAt: z.string().meta({ description: 'ISO 8601' }),
    state: z.enum(['creating', 'active', 'deleting']).meta({
      description:
        'creating: a clone whose creation was cut short (POST it again to finish); deleting: its delete has begun (DELETE it again to finish)',
    }),
    epoch: z.number().int().meta({
      description:
        'The current writer epoch (0 when never attached; a volume made again under a deleted one’s name starts at that one’s last epoch)',
    }),
    lease: VolumeLease.optional().meta({ description: 'The attached writer (it may have expired)' }),
    origin: z
      .object({
        volume: z.string(),
        snapshot: z.string(),
        sizeBytes: z.number().int().meta({ description: "Bytes below which a block the clone never wrote reads as the snapshot's" }),
      })
      .optional()
      .meta({ description: 'Of a clone: the snapshot it was made from' }),
  })
  .meta({ id: 'Volume' });

export const VolumeSnapshotParam = /* @__PURE__ */ z.object({
  volume: volumeName,
  snapshot: z.string().meta({ description: `The snapshot name: ${nameRule}` }),
});

export const CreateSnapshotBody = /* @__PURE__ */ z
  .object({ name: z.string().meta({ description: `The snapshot's name, unique among the volume's: ${nameRule}` }) })
  .strict()
  .meta({ id: 'CreateSnapshotRequest' });

export const VolumeSnapshot = /* @__PURE__ */ z
  .object({
    name: z.string(),
    sizeBytes: z.number().int().meta({ description: "The volume's size when the snapshot was taken: the snapshot's size" }),
    createdAt: z.string().meta({ description: 'ISO 8601' }),
    state: z
      .enum(['creating', 'ready', 'deleting'])
      .meta({ description: 'creating, deleting: cut short by a failure; the same request again finishes it' }),
    clones: z.array(z.string()).optional().meta({ description: 'The volumes cloned from it: it cannot be deleted while one lives' }),
  })
  .meta({ id: 'VolumeSnapshot' });

export const VolumeSnapshotList = /* @__PURE__ */ z
  .object({ snapshots: z.array(VolumeSnapshot) })
  .meta({ id: 'VolumeSnapshotList', description: `Oldest first; at most ${volumeLimits.snapshotsMax}` });

export const VolumeSnapshotDeletion = /* @__PURE__ */ z
  .object({
    name: z.string(),
    copiesDeleted: z.number().int().meta({ description: 'Block copies only this snapshot read, now freed' }),
  })
  .meta({ id: 'VolumeSnapshotDeletion' });

export const VolumeDescription = /* @__PURE__ */ Volume.extend({
  allocatedBytes: z.number().int().meta({ description: 'Bytes held by written blocks (unwritten and trimmed blocks hold none)' }),
  snapshotBytes: z.number().int().meta({ description: "Bytes held by blocks' copies that snapshots read (changed since a snapshot)" }),
  snapshots: z.array(VolumeSnapshot).meta({ description: 'Oldest first' }),
}).meta({ id: 'VolumeDescription' });

export const VolumeList = /* @__PURE__ */ z
  .object({ volumes: z.array(Volume), cursor: z.string().optional() })
  .meta({ id: 'VolumeList', description: 'In name order; no cursor when the listing is complete' });

export const VolumeDeletion = /* @__PURE__ */ z
  .object({
    name: z.string(),
    status: z.enum(['deleted', 'deleting']),
    blocksDeleted: z.number().int().meta({ description: 'Blocks this request removed' }),
  })
  .meta({ id: 'VolumeDeletion' });

const byteRule = `must be an integer from 0 to ${volumeLimits.sizeBytesMax}`;
const byteCount = /* @__PURE__ */ z.number(byteRule).int(byteRule).min(0, byteRule).max(volumeLimits.sizeBytesMax, byteRule);

const epochRule = 'must be the writer epoch its lease gave (an integer of 1 or more)';
const epoch = /* @__PURE__ */ z.number(epochRule).int(epochRule).min(1, epochRule);

export const TrimVolumeBody = /* @__PURE__ */ z
  .object({
    offset: byteCount,
    length: byteCount.max(volumeLimits.ioBytesMax, `must be at most ${volumeLimits.ioBytesMax}`),
    epoch,
  })
  .strict()
  .meta({ id: 'TrimVolumeRequest' });

export const VolumeWriteAck = /* @__PURE__ */ z
  .object({ offset: z.number().int(), length: z.number().int() })
  .meta({ id: 'VolumeWriteAck', description: 'The byte range now written (or trimmed), durable on its owners and replicas' });

export type VolumeBody = z.infer<typeof Volume>;
export type VolumeDescriptionBody = z.infer<typeof VolumeDescription>;
export type VolumeListBody = z.infer<typeof VolumeList>;
export type VolumeDeletionBody = z.infer<typeof VolumeDeletion>;
export type VolumeWriteAckBody = z.infer<typeof VolumeWriteAck>;
export type VolumeLeaseBody = z.infer<typeof VolumeLease>;
export type VolumeSnapshotBody = z.infer<typeof VolumeSnapshot>;
export type VolumeSnapshotListBody = z.infer<typeof VolumeSnapshotList>;
export type VolumeSnapshotDeletionBody = z.infer<typeof VolumeSnapshotDeletion>;
