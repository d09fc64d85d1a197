// The consistent-hash ring: virtual nodes of N shards on a 32-bit token circle.
// A key's owner is the first vnode clockwise from its token; replicas are the next RF-1 distinct shards.
//
// The hash is documented rather than taken from a hashing library: token = the first 32 bits
// (big-endian) of MD5(namespace, 0x00, key), as Cassandra's RandomPartitioner does with MD5.
// It is stable across languages and releases, which matters more here than speed: a token is
// stored with every item (the `tok` attribute), so the function can never change.
// Ring libraries on npm (hashring, consistent-hash) hide the token ranges and replica walk
// that the ring API, rebalancing and anti-entropy need, so the walk is written here.
import type { MovePhase, RingShard, RingState, RingStore } from '../ports';
import { createHash } from 'node:crypto';
import { invariant } from './errors';
import { shardSchema, volumeNamespaceSuffix } from '../../schemas/topology';

export const tokenBits = 32;
export const tokenSpace = 2 ** tokenBits;

export interface TokenRange {
  /** Exclusive lower bound; the first range wraps around from the last vnode token. */
  start: number;
  /** Inclusive upper bound: the vnode token. */
  end: number;
  owner: number;
  /** Owner first, then its successors on the ring. */
  replicas: number[];
  /** Present while a failover replaces the owner (see RingState.fenced). */
  fenced?: true;
  /** Replicas added to the range that are still being backfilled: they take writes, they do not count as copies. */
  backfilling?: number[];
  /** Present during a rebalance for a range whose replicas change (docs/rebalancing.md). */
  move?: RangeMoveView;
}

/** How far a range's move has come, and its replicas (owner first) before and after the rebalance. */
export interface RangeMoveView {
  /** `planned`: not begun, `from` serves it; then `copying` and `moved` (RingState.moves). */
  phase: 'planned' | MovePhase;
  from: number[];
  to: number[];
}

function copyOfMove(move: RangeMoveView): RangeMoveView {
  return { phase: move.phase, from: [...move.from], to: [...move.to] };
}

function md5Token(text: string): number {
  return createHash('md5').update(text).digest().readUInt32BE(0);
}

/**
 * The ring token of a key in a namespace. A volume keyspace (`volumeNamespaceSuffix`) places each key by its
 * placement group, the part before its first `/`: the blocks of a group share one token, so one range and one
 * shard, and a write among them commits in one atomic write (docs/volumes.md, "Placement").
 */
export function tokenOf(namespace: string, key: string): number {
  return md5Token(`${namespace}\u0000${placementOf(namespace, key)}`);
}

function placementOf(namespace: string, key: string): string {
  if (!namespace.endsWith(volumeNamespaceSuffix)) return key;
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** The token of vnode `vnode` of shard `shardId`. */
export function vnodeToken(shardId: number, vnode: number): number {
  return md5Token(`shard-${shardId}#vnode-${vnode}`);
}

/** The token bucket (top 8 bits) that partitions the token-ordered index. */
export function tokenBucket(token: number): number {
  return token >>> 24;
}

/**
 * The listing bucket of a key: its token's low bits, so a shard's keys (a few token ranges) spread
 * evenly over the buckets of the write-sharded listing index.
 */
export function listingBucketOf(token: number): number {
  return token % shardSchema.keyIndex.buckets;
}

export function initialRingState(options: {
  shardCount: number;
  replicationFactor: number;
  vnodesPerShard: number;
  tableName: (shardId: number) => string;
}): RingState {
  const { shardCount, replicationFactor, vnodesPerShard, tableName } = options;
  invariant(Number.isInteger(shardCount) && shardCount >= 1, 'shardCount must be a positive integer');
  invariant(Number.isInteger(replicationFactor) && replicationFactor >= 1, 'replicationFactor must be >= 1');
  invariant(Number.isInteger(vnodesPerShard) && vnodesPerShard >= 1, 'vnodesPerShard must be >= 1');
  return {
    epoch: 1,
    replicationFactor,
    vnodesPerShard,
    shards: Array.from({ length: shardCount }, (_, id) => ({ id, table: tableName(id), status: 'active' as const })),
  };
}

const noTables: ReadonlySet<string> = new Set();

interface Vnode {
  token: number;
  shard: number;
}

/** A range being copied to a shard that is not its owner now (it owns the range after its cut-over). */
function copiesToNewOwner(move: RangeMoveView): boolean {
  return move.phase === 'copying' && move.to[0] !== move.from[0];
}
/** An immutable, indexed view of a RingState. */
export class Ring {
  readonly state: RingState;
  private readonly vnodes: Vnode[];
  private readonly shardsById: Map<number, RingShard>;
  /** Replica set per vnode index, computed once: lookups are a binary search and an array read. */
  private readonly replicaSets: number[][];
  private readonly fencedEnds: ReadonlySet<number>;
  /** Per vnode index: added replicas still being backfilled (absent for almost every range). */
  private readonly backfilling: ReadonlyMap<number, readonly number[]>;
  /** Per vnode index, during a rebalance: the ranges whose replicas change. */
  private readonly moves: ReadonlyMap<number, RangeMoveView>;
  /**
   * Whether a rebalance is copying a range to a new owner: until it is cut over, a ring read is trusted
   * for a shorter lease (ring-source: cutoverLeaseMs), so that the cut-over's fence waits less. Computed
   * once: every lease asks.
   */
  readonly copyingToNewOwners: boolean;

  constructor(state: RingState) {
    invariant(state.shards.length > 0, 'a ring needs at least one shard');
    this.state = state;
    this.shardsById = new Map(state.shards.map((shard) => [shard.id, shard]));
    invariant(this.shardsById.size === state.shards.length, 'shard ids must be unique');
    this.vnodes = state.shards
      .flatMap((shard) => Array.from({ length: state.vnodesPerShard }, (_, v) => ({ token: vnodeToken(shard.id, v), shard: shard.id })))
      // Ties (astronomically rare) are broken by shard id so every process builds the same ring.
      .sort((a, b) => a.token - b.token || a.shard - b.shard);
    const replicaCount = Math.min(state.replicationFactor, state.shards.length);
    const owners = new Map((state.owners ?? []).map(({ end, owner }) => [end, owner]));
    const added = new Map<number, number[]>();
    for (const { end, shard } of state.addedReplicas ?? []) added.set(end, [...(added.get(end) ?? []), shard]);
    const backfilling = new Map<number, number[]>();
    const moves = new Map<number, RangeMoveView>();
    const base = this.rebalancing
      ? this.rebalancedReplicaSets(moves, backfilling)
      : this.vnodes.map((_, index) => this.walkDistinct(index, replicaCount));
    this.moves = moves;
    this.copyingToNewOwners = [...moves.values()].some(copiesToNewOwner);
    this.replicaSets = this.vnodes.map((vnode, index) => {
      // The vnode walk's RF shards (or a rebalance's), then any replica a failover added (re-replication) after them.
      const walk = [...base[index]!];
      for (const shard of added.get(vnode.token) ?? []) {
        invariant(this.shardsById.has(shard), `shard ${shard} added to the range ending at ${vnode.token} is not on the ring`);
        if (!walk.includes(shard)) walk.push(shard);
      }
      const owner = owners.get(vnode.token);
      if (owner === undefined) return walk;
      // A failover's choice is always one of the range's own replicas, so the replica set is unchanged.
      invariant(walk.includes(owner), `range ending at ${vnode.token} cannot be owned by shard ${owner}: not one of its replicas`);
      return [owner, ...walk.filter((shard) => shard !== owner)];
    });
    for (const { end, shard, ready } of state.addedReplicas ?? []) {
      if (ready) continue;
      const index = this.vnodes.findIndex((vnode) => vnode.token === end);
      invariant(index >= 0, `no token range ends at ${end}`);
      invariant(
        this.replicaSets[index]![0] !== shard,
        `the range ending at ${end} cannot be owned by shard ${shard}: it is still being backfilled`,
      );
      backfilling.set(index, [...(backfilling.get(index) ?? []), shard]);
    }
    this.backfilling = backfilling;
    invariant(owners.size === (state.owners ?? []).length, 'a range has at most one moved owner');
    const vnodeTokens = new Set(this.vnodes.map((vnode) => vnode.token));
    for (const end of [...owners.keys(), ...(state.fenced ?? [])]) {
      invariant(vnodeTokens.has(end), `no token range ends at ${end}`);
    }
    this.fencedEnds = new Set(state.fenced ?? []);
  }

  get epoch(): number {
    return this.state.epoch;
  }

  /** True while shards join or leave (a rebalance between its start and its finish). */
  get rebalancing(): boolean {
    return this.state.shards.some((shard) => shard.status !== 'active');
  }

  /** The ranges whose replicas a rebalance changes, in token order (none outside a rebalance). */
  movingRanges(): TokenRange[] {
    return [...this.moves.keys()].map((index) => this.rangeAt(index));
  }

  /**
   * The table of the owner a copying range is moving to, when that is not its owner now: its copies are
   * written listed (only owners' copies are in the listing index), so that they show once it owns them.
   */
  incomingOwnerTableOf(token: number): string | undefined {
    if (this.moves.size === 0) return undefined;
    const move = this.moves.get(this.vnodeIndexOf(token));
    return move && copiesToNewOwner(move) ? this.shard(move.to[0]!).table : undefined;
  }

  get shards(): readonly RingShard[] {
    return this.state.shards;
  }

  shard(id: number): RingShard {
    const shard = this.shardsById.get(id);
    invariant(shard, `shard ${id} is not on the ring`);
    return shard;
  }

  /** The shard that owns a token: its vnode's shard, unless a failover moved the range. */
  ownerOf(token: number): RingShard {
    return this.shard(this.replicaSets[this.vnodeIndexOf(token)]![0]!);
  }

  /**
   * Owner first, then the other replicas: the next distinct shards clockwise, RF in all (fewer if there
   * are fewer shards). A range a failover moved keeps the same replicas with its new owner first.
   */
  replicasOf(token: number): RingShard[] {
    return this.replicaSets[this.vnodeIndexOf(token)]!.map((id) => this.shard(id));
  }

  /**
   * The replicas that count as copies: owner first, without the added replicas still being backfilled.
   * Eventual reads and a strong write's acknowledgement use these; writes go to every replica.
   */
  servingReplicasOf(token: number): RingShard[] {
    const index = this.vnodeIndexOf(token);
    const pending = this.backfilling.get(index);
    const replicas = this.replicaSets[index]!;
    return (pending ? replicas.filter((id) => !pending.includes(id)) : replicas).map((id) => this.shard(id));
  }

  /** The tables of the token's added replicas still being backfilled: none for almost every range. */
  backfillingTablesOf(token: number): ReadonlySet<string> {
    const pending = this.backfilling.get(this.vnodeIndexOf(token));
    return pending ? new Set(pending.map((id) => this.shard(id).table)) : noTables;
  }

  /** Every shard in vnode-walk order from the range ending at `end` (its replicas first): where re-replication looks. */
  successorsOf(end: number): number[] {
    return this.walkDistinct(this.vnodeIndexOf(end), this.shardsById.size);
  }

  /** Every token range in token order; together they cover the whole token space exactly once. */
  ranges(): TokenRange[] {
    return this.vnodes.map((_, index) => this.rangeAt(index));
  }

  /** The token range a token falls in. */
  rangeOf(token: number): TokenRange {
    return this.rangeAt(this.vnodeIndexOf(token));
  }

  /** True when the shard owns at least one token range (a failover may have taken all of them). */
  ownsAnyRange(shardId: number): boolean {
    return this.replicaSets.some((replicas) => replicas[0] === shardId);
  }

  /** True while a failover replaces the owner of the token's range: no write or strong read is served. */
  isFenced(token: number): boolean {
    return this.fencedEnds.size > 0 && this.fencedEnds.has(this.vnodes[this.vnodeIndexOf(token)]!.token);
  }

  private rangeAt(index: number): TokenRange {
    const replicas = this.replicaSets[index]!;
    return {
      start: index === 0 ? this.vnodes[this.vnodes.length - 1]!.token : this.vnodes[index - 1]!.token,
      end: this.vnodes[index]!.token,
      owner: replicas[0]!,
      replicas: [...replicas],
      ...(this.fencedEnds.has(this.vnodes[index]!.token) ? { fenced: true } : {}),
      ...(this.backfilling.has(index) ? { backfilling: [...this.backfilling.get(index)!] } : {}),
      ...(this.moves.has(index) ? { move: copyOfMove(this.moves.get(index)!) } : {}),
    };
  }

  /**
   * During a rebalance: each range's replicas on the ring before it (without the joining shards) and after
   * it (without the leaving ones), computed on the ring of every shard so that each range has one set of
   * each. A range whose sets differ is served by `from` until its move is `moved`; while it is `copying`
   * the shards of `to` that are not in `from` take its writes as replicas being backfilled.
   */
  private rebalancedReplicaSets(moves: Map<number, RangeMoveView>, backfilling: Map<number, number[]>): number[][] {
    const { replicationFactor, vnodesPerShard } = this.state;
    const sideOf = (without: 'joining' | 'leaving') =>
      new Ring({
        epoch: this.state.epoch,
        replicationFactor,
        vnodesPerShard,
        shards: this.state.shards.filter((shard) => shard.status !== without).map((shard) => ({ ...shard, status: 'active' as const })),
      });
    const before = sideOf('joining');
    const after = sideOf('leaving');
    const phases = new Map((this.state.moves ?? []).map(({ end, phase }) => [end, phase]));
    const sets = this.vnodes.map(({ token }, index) => {
      const from = before.replicaIdsOf(token);
      const to = after.replicaIdsOf(token);
      if (from.length === to.length && from.every((shard, at) => to[at] === shard)) return from;
      const phase = phases.get(token) ?? 'planned';
      phases.delete(token);
      moves.set(index, { phase, from, to });
      if (phase === 'moved') return to;
      if (phase === 'planned') return from;
      const incoming = to.filter((shard) => !from.includes(shard));
      if (incoming.length > 0) backfilling.set(index, incoming);
      return [...from, ...incoming];
    });
    invariant(phases.size === 0, `moves name ranges that do not move: ${[...phases.keys()].join(', ')}`);
    return sets;
  }

  /** The replica set (shard ids, owner first) of a token's range. */
  private replicaIdsOf(token: number): number[] {
    return this.replicaSets[this.vnodeIndexOf(token)]!;
  }

  private vnodeIndexOf(token: number): number {
    invariant(Number.isInteger(token) && token >= 0 && token < tokenSpace, `token ${token} is outside the ring`);
    // First vnode whose token is >= the key's token; past the last one the ring wraps to index 0.
    let low = 0;
    let high = this.vnodes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.vnodes[mid]!.token < token) low = mid + 1;
      else high = mid;
    }
    return low === this.vnodes.length ? 0 : low;
  }

  private walkDistinct(startIndex: number, count: number): number[] {
    const chosen: number[] = [];
    for (let step = 0; step < this.vnodes.length && chosen.length < count; step += 1) {
      const shard = this.vnodes[(startIndex + step) % this.vnodes.length]!.shard;
      if (!chosen.includes(shard)) chosen.push(shard);
    }
    return chosen;
  }
}

/** The ring record a workflow step acts on; there is always one once the bootstrap ran. */
export async function readRingState(store: Pick<RingStore, 'readRing'>): Promise<RingState> {
  const state = await store.readRing();
  if (!state) throw new Error('no ring in the control table: run the bootstrap');
  return state;
}
