// The OpenAPI operations of the block volume routes (docs/volumes.md). schemas/openapi.ts gathers them with the others.
import * as z from 'zod';
import { error, json, jsonBody, type Operation } from './openapi-helpers';
import { volumeLimits } from './topology';
import {
  AttachVolumeBody,
  CreateSnapshotBody,
  CreateVolumeBody,
  ResizeVolumeBody,
  TrimVolumeBody,
  VolumeDeletion,
  VolumeDescription,
  VolumeLease,
  VolumeList,
  Volume,
  VolumeParam,
  VolumeSnapshot,
  VolumeSnapshotDeletion,
  VolumeSnapshotList,
  VolumeSnapshotParam,
  VolumeWriteAck,
} from './volumes';

const { ioBytesMax, blockBytes, deleteBlocksPerRequest, snapshotsMax } = volumeLimits;
const bytesContent = { 'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } } };
const snapshotNotFound = error('No volume (volume.notFound) or no snapshot (volume.snapshotNotFound) of that name');
const unfinished = error(
  'The snapshot’s creation or deletion was cut short (volume.snapshotUnfinished): the same request again finishes it',
);
const notFound = error('No volume of that name (volume.notFound)');
const hasClones = (what: string) =>
  error(`Live clones read ${what} (volume.hasClones, details.clones): delete them first; nothing is changed`);
const deleting = error('The volume is being deleted (volume.deleting): DELETE it again to finish');
const unavailable = error('A block could not be read or written strongly (shard.unavailable, shard.failingOver: retryable)');
const fencedError = error(
  'The epoch is not the volume’s any more: another writer attached (volume.fenced, details.currentEpoch); nothing is written',
);
const overQuota = error(
  "The namespace's storage quota has no room for the size (quota.bytes, details.bytesMax): a volume counts for its whole size; nothing is changed",
);
const atomic = `at most ${ioBytesMax} bytes, at any offset, applied at one instant: a reader sees all of it or none`;

export const volumeOperations: Record<string, Operation> = {
  listVolumes: {
    summary: "List the namespace's volumes, in name order",
    responses: { 200: json(VolumeList, 'A page of volumes') },
  },
  createVolume: {
    summary:
      `Create a sparse volume of ${blockBytes}-byte blocks (nothing is stored until written, unwritten bytes read as zeros), ` +
      'or a clone of a snapshot (from): copy-on-write, it reads as the snapshot until written',
    request: { body: jsonBody(CreateVolumeBody, { name: 'disk', sizeBytes: 1_073_741_824 }) },
    responses: {
      201: json(Volume, 'Created'),
      400: error(
        `A bad name (volume.nameInvalid) or size (volume.sizeInvalid: a multiple of ${blockBytes}, a clone's at least its snapshot's)`,
      ),
      404: error('From: no volume (volume.notFound) or no snapshot (volume.snapshotNotFound) of that name'),
      409: error(
        'A volume of that name exists (volume.exists); a clone of that name whose creation was cut short is finished by the same request; ' +
          'the snapshot from is unfinished (volume.snapshotUnfinished)',
      ),
      429: overQuota,
    },
  },
  describeVolume: {
    summary: 'Describe a volume: its size, state and the bytes its written blocks hold',
    request: { params: VolumeParam },
    responses: { 200: json(VolumeDescription, 'The volume'), 404: notFound },
  },
  deleteVolume: {
    summary: `Delete a volume with its blocks, up to ${deleteBlocksPerRequest} blocks a request: call again while it answers 202`,
    request: { params: VolumeParam },
    responses: {
      200: json(VolumeDeletion, 'Deleted: the name is free'),
      202: json(VolumeDeletion, 'Blocks remain: DELETE again to go on (the volume serves nothing meanwhile)'),
      404: notFound,
      409: hasClones('its snapshots'),
    },
  },
  readVolume: {
    summary: `Read a byte range (Range: bytes=first-last, first- or -count), ${atomic}`,
    request: {
      params: VolumeParam,
      headers: z.object({ range: z.string().optional().meta({ description: 'One byte range; none: the whole volume (if small enough)' }) }),
    },
    responses: {
      200: {
        description: 'The whole volume (no Range)',
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      206: {
        description: 'The range, with Content-Range',
        headers: { 'Content-Range': { schema: { type: 'string' } } },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      400: error('A Range of several ranges, another unit, or last before first'),
      404: notFound,
      409: deleting,
      413: error(`The range is over ${ioBytesMax} bytes (volume.ioTooLarge, details.max): read it in parts`),
      416: error('The range starts past the end (volume.rangeNotSatisfiable, details.sizeBytes)'),
      503: unavailable,
    },
  },
  writeVolume: {
    summary: `Write the body at ?offset= with the writer's ?epoch=, ${atomic}; partial blocks are merged with what they hold`,
    request: {
      params: VolumeParam,
      body: { description: 'The bytes', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
    },
    responses: {
      200: json(VolumeWriteAck, 'Written: durable on the blocks’ owners and replicas'),
      404: notFound,
      409: fencedError,
      413: error(`The body is over ${ioBytesMax} bytes (volume.ioTooLarge, details.max): nothing is written`),
      416: error('The range ends past the end of the volume (volume.rangeNotSatisfiable): nothing is written'),
      503: unavailable,
    },
  },
  trimVolume: {
    summary: `Trim a byte range (TRIM, WRITE_ZEROES): whole blocks are freed, partial ones zeroed; ${atomic}`,
    request: { params: VolumeParam, body: jsonBody(TrimVolumeBody, { offset: 0, length: 65_536, epoch: 1 }) },
    responses: {
      200: json(VolumeWriteAck, 'Trimmed: the range reads as zeros'),
      404: notFound,
      409: fencedError,
      416: error('The range ends past the end of the volume: nothing is trimmed'),
      503: unavailable,
    },
  },
  resizeVolume: {
    summary:
      'Grow a volume (the new bytes read as zeros; the writer stays attached) or shrink it (detached, nothing written past the ' +
      'new end; its writer epoch moves on)',
    request: { params: VolumeParam, body: jsonBody(ResizeVolumeBody, { sizeBytes: 2_147_483_648 }) },
    responses: {
      200: json(Volume, 'Resized'),
      400: error('A bad size (volume.sizeInvalid)'),
      404: notFound,
      409: error(
        'Shrinking an attached volume (volume.leaseHeld), or past written blocks (volume.shrinkBelowData, details.dataAtByte): ' +
          'nothing is changed',
      ),
      429: overQuota,
    },
  },
  attachVolume: {
    summary:
      'Attach a writer: its lease and the epoch its writes carry. The holder of a live lease renews it (same epoch); anyone ' +
      'else takes a new epoch once the lease has expired, and the previous writer can land nothing once this answers',
    request: { params: VolumeParam, body: jsonBody(AttachVolumeBody, { holder: 'host-a', leaseSeconds: 30 }) },
    responses: {
      200: json(VolumeLease, 'Attached (or renewed)'),
      404: notFound,
      409: error('Another holder’s lease is live (volume.leaseHeld, details.holder and details.expiresAt), or the volume is being deleted'),
    },
  },
  detachVolume: {
    summary: 'Detach the writer of ?epoch=: another holder may attach at once',
    request: { params: VolumeParam },
    responses: {
      200: json(z.object({ name: z.string(), detached: z.literal(true) }), 'Detached'),
      404: notFound,
      409: fencedError,
    },
  },
  listSnapshots: {
    summary: "List the volume's snapshots, oldest first",
    request: { params: VolumeParam },
    responses: { 200: json(VolumeSnapshotList, 'The snapshots'), 404: notFound },
  },
  createSnapshot: {
    summary:
      'Take a snapshot: the volume as it is at one instant, kept while the volume changes (copy-on-write per block: a block ' +
      'is copied at its first change after it). Writes go on meanwhile; a write in flight lands wholly before or after it',
    request: { params: VolumeParam, body: jsonBody(CreateSnapshotBody, { name: 'before-upgrade' }) },
    responses: {
      201: json(VolumeSnapshot, 'Taken (or a creation cut short, finished)'),
      400: error('A bad name (volume.nameInvalid)'),
      404: notFound,
      409: error(
        `A snapshot of that name exists (volume.snapshotExists), the volume has ${snapshotsMax} (volume.snapshotLimit), ` +
          'or that name is being deleted (volume.snapshotUnfinished)',
      ),
      503: unavailable,
    },
  },
  deleteSnapshot: {
    summary: 'Delete a snapshot with the block copies only it read; cut short, DELETE it again to finish',
    request: { params: VolumeSnapshotParam },
    responses: { 200: json(VolumeSnapshotDeletion, 'Deleted'), 404: snapshotNotFound, 409: hasClones('it'), 503: unavailable },
  },
  readSnapshot: {
    summary: `Read a byte range of a snapshot (Range as for the volume), at most ${ioBytesMax} bytes: the volume's bytes when it was taken`,
    request: {
      params: VolumeSnapshotParam,
      headers: z.object({
        range: z.string().optional().meta({ description: 'One byte range; none: the whole snapshot (if small enough)' }),
      }),
    },
    responses: {
      200: { description: 'The whole snapshot (no Range)', content: bytesContent },
      206: {
        description: 'The range, with Content-Range',
        headers: { 'Content-Range': { schema: { type: 'string' } } },
        content: bytesContent,
      },
      400: error('A Range of several ranges, another unit, or last before first'),
      404: snapshotNotFound,
      409: unfinished,
      413: error(`The range is over ${ioBytesMax} bytes (volume.ioTooLarge, details.max): read it in parts`),
      416: error("The range starts past the snapshot's end (volume.rangeNotSatisfiable, details.sizeBytes)"),
      503: unavailable,
    },
  },
};
