// The block volume routes (docs/volumes.md): create, list, describe and delete a namespace's volumes; read a byte
// range (HTTP Range), write one at `?offset=`, trim one; take, list, read and delete snapshots. Each read or write is
// one call into the volume service.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ListVolumesQuery, VolumeEpochQuery, WriteVolumeQuery } from '../../schemas/api';
import {
  AttachVolumeBody,
  CreateSnapshotBody,
  CreateVolumeBody,
  ResizeVolumeBody,
  TrimVolumeBody,
  VolumeParam,
  VolumeSnapshotParam,
  type VolumeBody,
  type VolumeLeaseBody,
  type VolumeSnapshotBody,
} from '../../schemas/volumes';
import type { RequestPrincipal } from '../core/auth';
import type { QuotaOptions, VolumeLease, VolumeRecord, VolumeService, VolumeSnapshot } from '../core/volumes';
import { contentRange, parseByteRange } from '../http/byte-range';
import { httpErrors } from '../http/errors';
import { flushMetrics, type MetricsSink } from '../http/metrics';
import { bodyBytes, headersOf, jsonBody, parseWith, principalOf } from '../http/request';
import { bytes, json } from '../http/response';
import { type Operation, router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

export interface VolumesDeps {
  volumes: VolumeService;
  guards: RequestGuardDeps;
  logger: Logger;
  /** Flushed after every request: replica copies, the requests a failover refused, key-sync durations. */
  metrics: readonly MetricsSink[];
}

/** A volume as the API answers it: its record without the id that names its blocks. */
function volumeBody({ name, sizeBytes, blockBytes, createdAtMs, state, epoch, lease, origin }: VolumeRecord): VolumeBody {
  const created = new Date(createdAtMs).toISOString();
  return {
    name,
    sizeBytes,
    blockBytes,
    createdAt: created,
    state,
    epoch,
    ...(lease ? { lease: leaseBody(lease) } : {}),
    ...(origin ? { origin: { volume: origin.volume, snapshot: origin.snapshot, sizeBytes: origin.sizeBytes } } : {}),
  };
}

function leaseBody({ holder, epoch, expiresAtMs }: VolumeLease): VolumeLeaseBody {
  return { holder, epoch, expiresAt: new Date(expiresAtMs).toISOString() };
}

function snapshotBody({ name, sizeBytes, createdAtMs, state, clones }: VolumeSnapshot): VolumeSnapshotBody {
  const cloned = clones && clones.length > 0 ? { clones: clones.map((clone) => clone.volume) } : {};
  return { name, sizeBytes, createdAt: new Date(createdAtMs).toISOString(), state, ...cloned };
}

const volumeOf = (event: APIGatewayProxyEvent) => parseWith(VolumeParam, event.pathParameters, 'path').volume;
const snapshotOf = (event: APIGatewayProxyEvent) => parseWith(VolumeSnapshotParam, event.pathParameters, 'path');

/** A byte range answered as the HTTP Range asked: the whole (200) or a part (206, with Content-Range). */
function rangeAnswer(range: string | undefined, read: { bytes: Uint8Array; offset: number; sizeBytes: number }) {
  const answered = { offset: read.offset, length: read.bytes.byteLength };
  const headers = {
    'content-type': 'application/octet-stream',
    'accept-ranges': 'bytes',
    ...(range === undefined ? {} : { 'content-range': contentRange(answered, read.sizeBytes) }),
  };
  return bytes(range === undefined ? 200 : 206, read.bytes, headers);
}

export function volumesHandler({ volumes, guards, logger, metrics }: VolumesDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
    .use(flushMetrics(...metrics))
    .handler(
      router('volumes', {
        listVolumes: async (event) => {
          const { limit, cursor } = parseWith(ListVolumesQuery, event.queryStringParameters, 'query');
          const page = await volumes.list(principalOf(event).namespace, { limit, ...(cursor ? { cursor } : {}) });
          return json(200, { volumes: page.volumes.map(volumeBody), ...(page.cursor ? { cursor: page.cursor } : {}) });
        },
        createVolume: async (event) => {
          const body = parseWith(CreateVolumeBody, jsonBody(event), 'body');
          const principal = principalOf(event);
          return json(201, volumeBody(await volumes.create(principal.namespace, body, quotaOf(principal))));
        },
        describeVolume: async (event) => {
          const view = await volumes.describe(principalOf(event).namespace, volumeOf(event));
          const snapshots = (view.snapshots ?? []).map(snapshotBody);
          return json(200, { ...volumeBody(view), allocatedBytes: view.allocatedBytes, snapshotBytes: view.snapshotBytes, snapshots });
        },
        deleteVolume: async (event) => {
          const principal = principalOf(event);
          const deletion = await volumes.delete(principal.namespace, volumeOf(event), quotaOf(principal));
          return json(deletion.status === 'deleted' ? 200 : 202, deletion);
        },
        readVolume: async (event) => {
          const range = headersOf(event).range;
          const read = await volumes.readRange(principalOf(event).namespace, volumeOf(event), (size) => parseByteRange(range, size));
          return rangeAnswer(range, read);
        },
        writeVolume: async (event) => {
          const { offset, epoch } = parseWith(WriteVolumeQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const ack = await volumes.write(principal.namespace, volumeOf(event), offset, bodyBytes(event), {
            epoch,
            drMode: principal.drMode,
          });
          return json(200, ack);
        },
        trimVolume: async (event) => {
          const { offset, length, epoch } = parseWith(TrimVolumeBody, jsonBody(event), 'body');
          const principal = principalOf(event);
          return json(200, await volumes.trim(principal.namespace, volumeOf(event), offset, length, { epoch, drMode: principal.drMode }));
        },
        resizeVolume: async (event) => {
          const { sizeBytes } = parseWith(ResizeVolumeBody, jsonBody(event), 'body');
          const principal = principalOf(event);
          return json(200, volumeBody(await volumes.resize(principal.namespace, volumeOf(event), sizeBytes, quotaOf(principal))));
        },
        attachVolume: async (event) => {
          const body = parseWith(AttachVolumeBody, jsonBody(event), 'body');
          return json(200, leaseBody(await volumes.attach(principalOf(event).namespace, volumeOf(event), body)));
        },
        detachVolume: async (event) => {
          const { epoch } = parseWith(VolumeEpochQuery, event.queryStringParameters, 'query');
          const name = volumeOf(event);
          await volumes.detach(principalOf(event).namespace, name, epoch);
          return json(200, { name, detached: true });
        },
        ...snapshotRoutes(volumes),
      }),
    );
}

/** A volume's size counts against its namespace's storage quota, when it has one (docs/volumes.md, "Quotas"). */
function quotaOf(principal: RequestPrincipal): QuotaOptions {
  return principal.storage ? { storageQuota: principal.storage } : {};
}

/** The snapshot routes (docs/volumes.md, "Snapshots"): take, list, delete, read a byte range of one. */
function snapshotRoutes(volumes: VolumeService): Record<'listSnapshots' | 'createSnapshot' | 'deleteSnapshot' | 'readSnapshot', Operation> {
  return {
    listSnapshots: async (event) => {
      const snapshots = await volumes.listSnapshots(principalOf(event).namespace, volumeOf(event));
      return json(200, { snapshots: snapshots.map(snapshotBody) });
    },
    createSnapshot: async (event) => {
      const { name } = parseWith(CreateSnapshotBody, jsonBody(event), 'body');
      return json(201, snapshotBody(await volumes.createSnapshot(principalOf(event).namespace, volumeOf(event), name)));
    },
    deleteSnapshot: async (event) => {
      const { volume, snapshot } = snapshotOf(event);
      return json(200, await volumes.deleteSnapshot(principalOf(event).namespace, volume, snapshot));
    },
    readSnapshot: async (event) => {
      const range = headersOf(event).range;
      const { volume, snapshot } = snapshotOf(event);
      const read = await volumes.readSnapshotRange(principalOf(event).namespace, volume, snapshot, (size) => parseByteRange(range, size));
      return rangeAnswer(range, read);
    },
  };
}
