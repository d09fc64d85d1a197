// A serializability checker for histories of read-write transactions over versioned keys: builds
// Adya's direct serialization graph (ww, wr, rw edges) and searches it for cycles (G0, G1c, G2), plus
// the non-cyclic anomalies a read can show on its own (G1a aborted read, reads of versions no one wrote).
//
// Why this is what Elle checks, for this model. Elle (Kingsbury & Alvaro, VLDB 2020) infers a version
// order for each key from what reads show (list-append traces, or for registers only a partial order)
// and then looks for cycles in Adya's DSG; its soundness hinges on inferring only dependencies that
// must hold. Here the owner shard assigns every version as an integer, one higher than the last, and
// a transaction's answer and every read name the version, so the version order of each key is known
// exactly, not inferred: it is the integer order. Every write puts a value naming its transaction, so
// each observed version has a known writer. With a total, known version order, the DSG below is
// exactly Adya's (Adya 1999, §3): ww from the writer of a version to the writer of the next one, wr
// from the writer of the version a transaction read to that reader, rw from a reader to the writer of
// the version after the one it read. Adya's theorem then says the committed history is serializable
// (PL-3) iff there is no G0, G1a, G1b, G1c or G2, which is what `checkSerializable` reports. G1b
// (reading an intermediate version) cannot be expressed separately in this model (a transaction
// installs one version per key); a read of a version its writer did not install is reported instead.
//
// Soundness with gaps (no false alarms). Versions written by transactions whose outcome is unknown and
// that nobody read are not known; an edge is then drawn to the next *known* version's writer, which is
// the composition of the real edge with ww edges through the unknown writers (all of them committed
// transactions, since only committed writes get versions), so every cycle found is a cycle of the real
// DSG. An unknown-outcome transaction is counted as committed once one of its writes was read (its
// writes are then all committed: atomicity is checked separately); its own reads are unknown and add no
// edges. Aborted transactions are left out, except to recognise reads of their writes (G1a).

/** The version of a key before any write: absent. Its writer is the initial transaction. */
export const initialTxn = 'T0';

export interface ReadObservation {
  key: string;
  /** The version read; 0: absent, never written. */
  version: number;
  /** Whose write was read (from the value); undefined for version 0 or when the value names no one. */
  writer?: string;
}

export interface WriteObservation {
  key: string;
  /** The version the write installed, when the answer said so. */
  version?: number;
}

export interface TxnObservation {
  id: string;
  /** committed: the client was told so; unknown: no answer (it may have committed or not). */
  outcome: 'committed' | 'unknown';
  /** Reads of the state before the transaction (not of its own writes): gets and checks. */
  reads: ReadObservation[];
  writes: WriteObservation[];
}

export interface History {
  txns: TxnObservation[];
  /** Ids of transactions known to have aborted (their writes must never be read). */
  aborted?: string[];
  /** Versions seen outside any transaction of the history, e.g. a final read: key, version, writer. */
  observations?: Array<{ key: string; version: number; writer: string }>;
}

export type EdgeKind = 'ww' | 'wr' | 'rw';

export interface Edge {
  from: string;
  to: string;
  kind: EdgeKind;
  key: string;
  /** The version the edge is about: the one written (ww to), read (wr), or read then overwritten (rw). */
  version: number;
}

export type AnomalyKind = 'G0' | 'G1a' | 'G1c' | 'G2' | 'versionConflict' | 'unknownVersion';

export interface Anomaly {
  kind: AnomalyKind;
  /** For cycles: the edges around it, each `to` the next `from`. */
  cycle?: Edge[];
  message: string;
}

export interface CheckResult {
  serializable: boolean;
  anomalies: Anomaly[];
  /** Transactions in the graph (committed, and unknown ones found committed), and its edges. */
  nodes: number;
  edges: number;
}

/**
 * Checks a history for the anomalies that make it non-serializable.
 *
 * @example
 * const result = checkSerializable({ txns: [
 *   { id: 'A', outcome: 'committed', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'y', version: 1 }] },
 *   { id: 'B', outcome: 'committed', reads: [{ key: 'y', version: 0 }], writes: [{ key: 'x', version: 1 }] },
 * ] });
 * result.anomalies[0]?.kind; // 'G2' (write skew)
 */
export function checkSerializable(history: History): CheckResult {
  const anomalies: Anomaly[] = [];
  const aborted = new Set(history.aborted ?? []);
  const byId = new Map(history.txns.map((txn) => [txn.id, txn]));
  // Who installed each version of each key: from the answers, then from what reads show.
  const writers = new Map<string, Map<number, string>>();
  const install = (key: string, version: number, writer: string, source: string) => {
    const versions = writers.get(key) ?? new Map<number, string>();
    writers.set(key, versions);
    const known = versions.get(version);
    if (known !== undefined && known !== writer) {
      anomalies.push({ kind: 'versionConflict', message: `${key}@${version} was installed by ${known}, but ${source} says ${writer}` });
      return;
    }
    versions.set(version, writer);
  };
  for (const txn of history.txns) {
    if (txn.outcome !== 'committed') continue;
    for (const write of txn.writes) if (write.version !== undefined) install(write.key, write.version, txn.id, `the answer of ${txn.id}`);
  }
  const committed = new Set(history.txns.filter((txn) => txn.outcome === 'committed').map((txn) => txn.id));
  const reads = [
    ...history.txns.filter((txn) => txn.outcome === 'committed').flatMap((txn) => txn.reads.map((read) => ({ reader: txn.id, read }))),
    ...(history.observations ?? []).map((read) => ({ reader: undefined, read })),
  ];
  for (const { reader, read } of reads) {
    const who = reader ?? 'an observation';
    if (read.version === 0) continue;
    if (read.writer === undefined) continue;
    if (aborted.has(read.writer)) {
      anomalies.push({ kind: 'G1a', message: `${who} read ${read.key}@${read.version}, written by ${read.writer}, which aborted` });
      continue;
    }
    const writer = byId.get(read.writer);
    if (!writer && read.writer !== initialTxn) {
      anomalies.push({
        kind: 'unknownVersion',
        message: `${who} read ${read.key}@${read.version} from ${read.writer}, a transaction not in the history`,
      });
      continue;
    }
    if (writer && !writer.writes.some((write) => write.key === read.key)) {
      anomalies.push({
        kind: 'unknownVersion',
        message: `${who} read ${read.key}@${read.version} from ${read.writer}, which never wrote ${read.key}`,
      });
      continue;
    }
    const own = writer?.writes.find((write) => write.key === read.key);
    if (own?.version !== undefined && own.version !== read.version && writer?.outcome === 'committed') {
      anomalies.push({
        kind: 'unknownVersion',
        message: `${who} read ${read.key}@${read.version} from ${read.writer}, which installed ${read.key}@${own.version}`,
      });
      continue;
    }
    // A write of an unknown-outcome transaction was read: it committed.
    committed.add(read.writer);
    install(read.key, read.version, read.writer, `a read by ${who}`);
  }

  // The graph: committed transactions (and T0), with edges from the known version order.
  const edges: Edge[] = [];
  const ordered = new Map<string, Array<[number, string]>>();
  for (const [key, versions] of writers) {
    const list = [...versions].filter(([, writer]) => committed.has(writer)).sort((a, b) => a[0] - b[0]);
    ordered.set(key, [[0, initialTxn], ...list.filter(([version]) => version > 0)]);
  }
  const versionsOf = (key: string) => ordered.get(key) ?? [[0, initialTxn]];
  for (const [key, list] of ordered) {
    for (let i = 1; i < list.length; i += 1) {
      const [, from] = list[i - 1]!;
      const [version, to] = list[i]!;
      if (from !== to) edges.push({ from, to, kind: 'ww', key, version });
    }
  }
  for (const txn of history.txns) {
    if (txn.outcome !== 'committed') continue;
    for (const read of txn.reads) {
      const list = versionsOf(read.key);
      const readWriter = read.version === 0 ? initialTxn : list.find(([version]) => version === read.version)?.[1];
      if (readWriter !== undefined && readWriter !== txn.id)
        edges.push({ from: readWriter, to: txn.id, kind: 'wr', key: read.key, version: read.version });
      // The next known version: its writer overwrote what this transaction read. If that is the
      // reader itself, the ww edges from its own version carry the order on.
      const next = list.find(([version]) => version > read.version);
      if (next && next[1] !== txn.id) edges.push({ from: txn.id, to: next[1], kind: 'rw', key: read.key, version: read.version });
    }
  }

  // Cycles, by class: G0 among ww edges, G1c among ww and wr, G2 with rw (each SCC reported once).
  const explained = new Set<string>();
  const classes: Array<[AnomalyKind, EdgeKind[]]> = [
    ['G0', ['ww']],
    ['G1c', ['ww', 'wr']],
    ['G2', ['ww', 'wr', 'rw']],
  ];
  for (const [kind, kinds] of classes) {
    const subset = edges.filter((edge) => kinds.includes(edge.kind));
    for (const component of stronglyConnected(subset)) {
      const signature = [...component].sort().join(',');
      if ([...explained].some((seen) => isSubsetSignature(seen, component))) continue;
      explained.add(signature);
      const cycle = findCycle(component, subset);
      anomalies.push({ kind, cycle, message: `${kind} cycle: ${describeCycle(cycle)}` });
    }
  }
  const nodes = new Set([initialTxn, ...committed]).size;
  return { serializable: anomalies.length === 0, anomalies, nodes, edges: edges.length };
}

export function describeCycle(cycle: Edge[]): string {
  return cycle.map((edge) => `${edge.from} -${edge.kind} ${edge.key}@${edge.version}-> `).join('') + (cycle[0]?.from ?? '');
}

/** A component already reported (under a stricter class) that lies inside this one. */
function isSubsetSignature(signature: string, component: Set<string>): boolean {
  return signature.split(',').every((node) => component.has(node));
}

/** Tarjan's algorithm, iterative: the components with a cycle (more than one node). */
function stronglyConnected(edges: Edge[]): Array<Set<string>> {
  const out = new Map<string, string[]>();
  for (const edge of edges) out.set(edge.from, [...(out.get(edge.from) ?? []), edge.to]);
  const nodes = new Set(edges.flatMap((edge) => [edge.from, edge.to]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: Array<Set<string>> = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const successors = out.get(frame.node) ?? [];
      if (frame.next < successors.length) {
        const successor = successors[frame.next]!;
        frame.next += 1;
        if (!index.has(successor)) {
          index.set(successor, counter);
          low.set(successor, counter);
          counter += 1;
          stack.push(successor);
          onStack.add(successor);
          work.push({ node: successor, next: 0 });
        } else if (onStack.has(successor)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(successor)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = new Set<string>();
        for (;;) {
          const node = stack.pop()!;
          onStack.delete(node);
          component.add(node);
          if (node === frame.node) break;
        }
        if (component.size > 1) components.push(component);
      }
    }
  }
  return components;
}

/** A shortest cycle through the component's first node, by breadth-first search inside it. */
function findCycle(component: Set<string>, edges: Edge[]): Edge[] {
  const inside = edges.filter((edge) => component.has(edge.from) && component.has(edge.to));
  const start = [...component].sort()[0]!;
  const cameBy = new Map<string, Edge>();
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head]!;
    for (const edge of inside.filter((candidate) => candidate.from === node)) {
      if (edge.to === start) {
        const cycle = [edge];
        for (let at = node; at !== start; at = cameBy.get(at)!.from) cycle.unshift(cameBy.get(at)!);
        return cycle;
      }
      if (!cameBy.has(edge.to)) {
        cameBy.set(edge.to, edge);
        queue.push(edge.to);
      }
    }
  }
  throw new Error(`no cycle through ${start} in a strongly connected component`);
}
