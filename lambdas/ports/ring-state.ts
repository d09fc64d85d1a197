// The ring as the control table stores it: shards, replication factor, virtual nodes and the fencing epoch.

export type ShardStatus = 'active';

export interface RingShard {
  id: number;
  table: string;
  status: ShardStatus;
}

/** What the control table stores under the ring record; the epoch fences every change. */
export interface RingState {
  epoch: number;
  replicationFactor: number;
  vnodesPerShard: number;
  shards: RingShard[];
}
