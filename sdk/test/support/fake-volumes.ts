// The fake Ringstore's block volumes (fake-server.ts dispatches /v1/volumes here), as docs/volumes.md and
// lambdas/handlers/volumes.ts answer them: sparse 4 KiB blocks in memory, one HTTP Range per read (206 and
// Content-Range), writes at ?offset=&epoch=, trims, resumable deletes, one writer's lease with its epoch, and
// snapshots (kept whole: a fake need not copy on write).

import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendJson } from './fake-server';

const BLOCK = 4096;
const IO_MAX = 256 * 1024;
const SIZE_MAX = 2 ** 44;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

interface FakeLease {
  holder: string;
  epoch: number;
  expiresAtMs: number;
}

/** A volume as the fake keeps it: its record and its written blocks by index. */
export interface FakeVolume {
  name: string;
  sizeBytes: number;
  createdAt: string;
  state: 'active' | 'deleting';
  epoch: number;
  lease?: FakeLease;
  blocks: Map<number, Buffer>;
  snapshots: Map<string, FakeSnapshot>;
  /** Of a clone: the snapshot it was made from (the fake copies its blocks). */
  origin?: { volume: string; snapshot: string; sizeBytes: number };
}

/** A snapshot as the fake keeps it: the volume's size and blocks when it was taken, and the volumes cloned from it. */
interface FakeSnapshot {
  sizeBytes: number;
  createdAt: string;
  blocks: Map<number, Buffer>;
  clones: Set<string>;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const integer = (raw: string | null, name: string, min: number): number => {
  if (raw === null || !/^\d+$/.test(raw) || Number(raw) < min) {
    throw new Refusal(400, 'request.invalid', `query ${name}: must be an integer of ${min} or more`, { field: name, in: 'query' });
  }
  return Number(raw);
};

/** Every namespace's volumes. `deleteBlocksPerRequest` and `now` are the tests' to change. */
export class FakeVolumes {
  readonly byNamespace = new Map<string, Map<string, FakeVolume>>();
  /** Blocks one DELETE removes before it answers 202 (the server's 2,000). */
  deleteBlocksPerRequest = 2_000;
  now: () => number = () => Date.now();

  /** The volume `name` of `namespace`, if any. */
  get(namespace: string, name: string): FakeVolume | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** `/v1/volumes/<rest…>` of `namespace`. */
  handle(req: RecordedRequest, res: ServerResponse, namespace: string, rest: readonly string[]): void {
    const volumes = this.byNamespace.get(namespace) ?? new Map<string, FakeVolume>();
    this.byNamespace.set(namespace, volumes);
    try {
      const [answer, status = 200, headers] = this.route(req, volumes, rest);
      if (answer instanceof Buffer) {
        res.writeHead(status, { 'content-type': 'application/octet-stream', 'content-length': answer.byteLength, ...headers });
        res.end(answer);
      } else sendJson(res, status, answer);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const body = {
        error: { code: error.code, message: error.message, retryable: false, ...(error.details ? { details: error.details } : {}) },
      };
      sendJson(res, error.status, body);
    }
  }

  private route(
    req: RecordedRequest,
    volumes: Map<string, FakeVolume>,
    rest: readonly string[],
  ): [unknown, number?, Record<string, string>?] {
    const [rawName, part, extra] = rest;
    if (rawName === undefined || rawName === '') {
      if (req.method === 'GET') return [this.list(req, volumes)];
      if (req.method === 'POST') return [this.view(this.create(req, volumes)), 201];
      throw new Refusal(404, 'route.notFound', 'no such route');
    }
    const name = decodeURIComponent(rawName);
    if (!NAME.test(name)) throw new Refusal(400, 'volume.nameInvalid', `volume name ${JSON.stringify(name)} must match ${NAME}`);
    const volume = volumes.get(name);
    if (volume === undefined) throw new Refusal(404, 'volume.notFound', `no volume ${name}`);
    const route = `${req.method} ${part ?? ''}${extra === undefined ? '' : '/…'}`;
    switch (route) {
      case 'GET ':
        return [
          { ...this.view(volume), allocatedBytes: volume.blocks.size * BLOCK, snapshotBytes: 0, snapshots: this.snapshotsOf(volume) },
        ];
      case 'GET snapshots':
        return [{ snapshots: this.snapshotsOf(volume) }];
      case 'POST snapshots':
        return [this.takeSnapshot(req, volume), 201];
      case 'DELETE snapshots/…': {
        const { name: snapshot, clones } = this.snapshotOf(volume, extra!);
        if (clones.size > 0)
          throw new Refusal(409, 'volume.hasClones', `clones read it: ${[...clones].join(', ')}`, { clones: [...clones] });
        volume.snapshots.delete(snapshot);
        return [{ name: snapshot, copiesDeleted: 0 }];
      }
      case 'GET snapshots/…':
        if (rest[3] !== 'data') throw new Refusal(404, 'route.notFound', 'no such route');
        return this.read(req, this.snapshotOf(volume, extra!));
      case 'DELETE ':
        return this.delete(volumes, volume);
      case 'GET data':
        return this.read(req, this.active(volume));
      case 'PUT data': {
        const offset = integer(req.query.get('offset'), 'offset', 0);
        this.writable(volume, integer(req.query.get('epoch'), 'epoch', 1));
        this.inRange(volume, offset, req.body.byteLength);
        this.apply(volume, offset, req.body.byteLength, (block, from, to, at) => req.body.copy(block, from, at, at + to - from));
        return [{ offset, length: req.body.byteLength }];
      }
      case 'POST trim': {
        const { offset, length, epoch } = JSON.parse(req.body.toString('utf8') || '{}') as Record<string, number | undefined>;
        if (offset === undefined || length === undefined || epoch === undefined) {
          throw new Refusal(400, 'request.invalid', 'body: offset, length and epoch are required');
        }
        this.writable(volume, epoch);
        this.inRange(volume, offset, length);
        this.trim(volume, offset, length);
        return [{ offset, length }];
      }
      case 'POST lease':
        return [this.attach(req, this.active(volume))];
      case 'DELETE lease': {
        const epoch = integer(req.query.get('epoch'), 'epoch', 1);
        if (volume.lease?.epoch !== epoch) throw this.fenced(volume, epoch);
        delete volume.lease;
        return [{ name, detached: true }];
      }
      default:
        throw new Refusal(404, 'route.notFound', 'no such route');
    }
  }

  private snapshotsOf(volume: FakeVolume): unknown[] {
    return [...volume.snapshots].map(([name, { sizeBytes, createdAt, clones }]) => ({
      name,
      sizeBytes,
      createdAt,
      state: 'ready',
      ...(clones.size > 0 ? { clones: [...clones] } : {}),
    }));
  }

  private snapshotOf(volume: FakeVolume, raw: string): FakeSnapshot & { name: string } {
    const name = decodeURIComponent(raw);
    const snapshot = volume.snapshots.get(name);
    if (snapshot === undefined) throw new Refusal(404, 'volume.snapshotNotFound', `volume ${volume.name} has no snapshot named ${name}`);
    return { ...snapshot, name };
  }

  private takeSnapshot(req: RecordedRequest, volume: FakeVolume): unknown {
    const { name } = JSON.parse(req.body.toString('utf8') || '{}') as { name?: string };
    if (typeof name !== 'string' || !NAME.test(name)) throw new Refusal(400, 'volume.nameInvalid', `snapshot name must match ${NAME}`);
    if (volume.snapshots.has(name)) throw new Refusal(409, 'volume.snapshotExists', `volume ${volume.name} has a snapshot named ${name}`);
    const blocks = new Map([...volume.blocks].map(([index, block]) => [index, Buffer.from(block)]));
    const snapshot: FakeSnapshot = {
      sizeBytes: volume.sizeBytes,
      createdAt: new Date(this.now()).toISOString(),
      blocks,
      clones: new Set(),
    };
    volume.snapshots.set(name, snapshot);
    return { name, sizeBytes: snapshot.sizeBytes, createdAt: snapshot.createdAt, state: 'ready' };
  }

  private view({ blocks: _blocks, snapshots: _snapshots, lease, ...record }: FakeVolume): Record<string, unknown> {
    return {
      ...record,
      blockBytes: BLOCK,
      ...(lease ? { lease: { holder: lease.holder, epoch: lease.epoch, expiresAt: new Date(lease.expiresAtMs).toISOString() } } : {}),
    };
  }

  private list(req: RecordedRequest, volumes: Map<string, FakeVolume>): unknown {
    const limit = req.query.has('limit') ? integer(req.query.get('limit'), 'limit', 1) : 100;
    const after = req.query.get('cursor');
    const start = after === null ? undefined : Buffer.from(after, 'base64url').toString('utf8');
    const names = [...volumes.keys()].filter((name) => start === undefined || name > start).sort();
    const page = names.slice(0, limit);
    const more = names.length > limit ? { cursor: Buffer.from(page.at(-1)!, 'utf8').toString('base64url') } : {};
    return { volumes: page.map((name) => this.view(volumes.get(name)!)), ...more };
  }

  private create(req: RecordedRequest, volumes: Map<string, FakeVolume>): FakeVolume {
    const body = JSON.parse(req.body.toString('utf8') || '{}') as {
      name?: string;
      sizeBytes?: number;
      from?: { volume: string; snapshot: string };
    };
    const { name, from } = body;
    if (typeof name !== 'string' || !NAME.test(name)) throw new Refusal(400, 'volume.nameInvalid', `volume name must match ${NAME}`);
    const source = from === undefined ? undefined : volumes.get(from.volume);
    if (from !== undefined && source === undefined) throw new Refusal(404, 'volume.notFound', `no volume named ${from.volume}`);
    const snapshot = from === undefined ? undefined : this.snapshotOf(source!, encodeURIComponent(from.snapshot));
    const sizeBytes = body.sizeBytes ?? snapshot?.sizeBytes;
    if (
      typeof sizeBytes !== 'number' ||
      !Number.isSafeInteger(sizeBytes) ||
      sizeBytes < BLOCK ||
      sizeBytes > SIZE_MAX ||
      sizeBytes % BLOCK ||
      sizeBytes < (snapshot?.sizeBytes ?? 0)
    ) {
      throw new Refusal(400, 'volume.sizeInvalid', `sizeBytes must be a multiple of ${BLOCK} from ${BLOCK} to ${SIZE_MAX}`);
    }
    if (volumes.has(name)) throw new Refusal(409, 'volume.exists', `volume ${name} exists`);
    const volume: FakeVolume = {
      name,
      sizeBytes,
      createdAt: new Date().toISOString(),
      state: 'active',
      epoch: 0,
      blocks: new Map([...(snapshot?.blocks ?? [])].map(([index, block]) => [index, Buffer.from(block)])),
      snapshots: new Map(),
      ...(snapshot ? { origin: { volume: from!.volume, snapshot: snapshot.name, sizeBytes: snapshot.sizeBytes } } : {}),
    };
    volumes.set(name, volume);
    source?.snapshots.get(snapshot!.name)!.clones.add(name);
    return volume;
  }

  private delete(volumes: Map<string, FakeVolume>, volume: FakeVolume): [unknown, number] {
    const clones = [...volume.snapshots.values()].flatMap((snapshot) => [...snapshot.clones]);
    if (clones.length > 0) throw new Refusal(409, 'volume.hasClones', `clones read it: ${clones.join(', ')}`, { clones });
    if (volume.state === 'active') {
      volume.state = 'deleting';
      volume.epoch += 1;
      delete volume.lease;
    }
    let blocksDeleted = 0;
    for (const index of [...volume.blocks.keys()].slice(0, this.deleteBlocksPerRequest)) {
      volume.blocks.delete(index);
      blocksDeleted += 1;
    }
    if (volume.blocks.size > 0) return [{ name: volume.name, status: 'deleting', blocksDeleted }, 202];
    volumes.delete(volume.name);
    if (volume.origin) volumes.get(volume.origin.volume)?.snapshots.get(volume.origin.snapshot)?.clones.delete(volume.name);
    return [{ name: volume.name, status: 'deleted', blocksDeleted }, 200];
  }

  private active(volume: FakeVolume): FakeVolume {
    if (volume.state === 'deleting') throw new Refusal(409, 'volume.deleting', `volume ${volume.name} is being deleted: DELETE it again`);
    return volume;
  }

  private fenced(volume: FakeVolume, epoch: number): Refusal {
    return new Refusal(409, 'volume.fenced', `epoch ${epoch} of volume ${volume.name} was taken over (epoch ${volume.epoch})`, {
      epoch,
      currentEpoch: volume.epoch,
    });
  }

  private writable(volume: FakeVolume, epoch: number): void {
    this.active(volume);
    if (volume.epoch !== epoch) throw this.fenced(volume, epoch);
  }

  private inRange(volume: Pick<FakeVolume, 'sizeBytes'>, offset: number, length: number): void {
    if (length > IO_MAX) throw new Refusal(413, 'volume.ioTooLarge', `at most ${IO_MAX} bytes (got ${length})`, { max: IO_MAX, length });
    if (offset + length > volume.sizeBytes) {
      throw new Refusal(416, 'volume.rangeNotSatisfiable', `past the end (${volume.sizeBytes} bytes)`, { sizeBytes: volume.sizeBytes });
    }
  }

  /** `change(block, from, to, at)` on each block `length` bytes at `offset` cover: bytes [from, to) of it, `at` into the range. */
  private apply(
    volume: FakeVolume,
    offset: number,
    length: number,
    change: (block: Buffer, from: number, to: number, at: number) => void,
  ): void {
    for (let at = 0; at < length;) {
      const index = Math.floor((offset + at) / BLOCK);
      const from = (offset + at) % BLOCK;
      const to = Math.min(BLOCK, from + length - at);
      const block = volume.blocks.get(index) ?? Buffer.alloc(BLOCK);
      change(block, from, to, at);
      volume.blocks.set(index, block);
      at += to - from;
    }
  }

  /** Blocks the range covers whole are freed; the covered bytes of a partial one are zeroed. */
  private trim(volume: FakeVolume, offset: number, length: number): void {
    for (let at = 0; at < length;) {
      const index = Math.floor((offset + at) / BLOCK);
      const from = (offset + at) % BLOCK;
      const to = Math.min(BLOCK, from + length - at);
      if (to - from === BLOCK) volume.blocks.delete(index);
      else volume.blocks.get(index)?.fill(0, from, to);
      at += to - from;
    }
  }

  /** A Range of the volume, or of one of its snapshots. */
  private read(req: RecordedRequest, volume: Pick<FakeVolume, 'sizeBytes' | 'blocks'>): [Buffer, number, Record<string, string>] {
    const header = req.headers.range;
    let offset = 0;
    let length = volume.sizeBytes;
    if (header !== undefined) {
      const match = /^bytes=(\d*)-(\d*)$/.exec(header.replace(/\s+/g, ''));
      if (!match || (match[1] === '' && match[2] === '')) throw new Refusal(400, 'request.invalid', 'Range must be one byte range');
      const size = volume.sizeBytes;
      if (match[1] === '') {
        length = Math.min(Number(match[2]), size);
        offset = size - length;
      } else {
        offset = Number(match[1]);
        if (offset >= size)
          throw new Refusal(416, 'volume.rangeNotSatisfiable', `Range ${header} starts past the end`, { sizeBytes: size });
        length = (match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)) - offset + 1;
      }
    }
    this.inRange(volume, offset, length);
    const bytes = Buffer.alloc(length);
    for (let at = 0; at < length;) {
      const index = Math.floor((offset + at) / BLOCK);
      const from = (offset + at) % BLOCK;
      const to = Math.min(BLOCK, from + length - at);
      volume.blocks.get(index)?.copy(bytes, at, from, to);
      at += to - from;
    }
    if (header === undefined) return [bytes, 200, { 'accept-ranges': 'bytes' }];
    return [bytes, 206, { 'accept-ranges': 'bytes', 'content-range': `bytes ${offset}-${offset + length - 1}/${volume.sizeBytes}` }];
  }

  private attach(req: RecordedRequest, volume: FakeVolume): unknown {
    const { holder, leaseSeconds = 30 } = JSON.parse(req.body.toString('utf8') || '{}') as { holder?: string; leaseSeconds?: number };
    if (typeof holder !== 'string' || holder === '' || holder.length > 128)
      throw new Refusal(400, 'request.invalid', 'body holder: 1 to 128 characters');
    if (!Number.isSafeInteger(leaseSeconds) || leaseSeconds < 1 || leaseSeconds > 300) {
      throw new Refusal(400, 'request.invalid', 'body leaseSeconds: must be an integer from 1 to 300');
    }
    const nowMs = this.now();
    const held = volume.lease && volume.lease.expiresAtMs > nowMs ? volume.lease : undefined;
    if (held && held.holder !== holder) {
      const expiresAt = new Date(held.expiresAtMs).toISOString();
      throw new Refusal(409, 'volume.leaseHeld', `volume ${volume.name} is attached to ${held.holder} until ${expiresAt}`, {
        holder: held.holder,
        expiresAt,
      });
    }
    if (!(held !== undefined && held.epoch === volume.epoch)) volume.epoch += 1;
    volume.lease = { holder, epoch: volume.epoch, expiresAtMs: nowMs + leaseSeconds * 1000 };
    return { holder, epoch: volume.epoch, expiresAt: new Date(volume.lease.expiresAtMs).toISOString() };
  }
}
