// The serializability checker (test/serializability/check.ts) on hand-built histories: each known
// anomaly is found and named, and serial histories (also with unknown outcomes) never raise an alarm.
import fc from 'fast-check';
import { type History, type TxnObservation, checkSerializable } from '../../serializability/check';

const txn = (
  id: string,
  reads: Array<[string, number, string?]>,
  writes: Array<[string, number?]>,
  outcome: TxnObservation['outcome'] = 'committed',
): TxnObservation => ({
  id,
  outcome,
  reads: reads.map(([key, version, writer]) => ({ key, version, ...(writer === undefined ? {} : { writer }) })),
  writes: writes.map(([key, version]) => ({ key, ...(version === undefined ? {} : { version }) })),
});

const kinds = (history: History) => checkSerializable(history).anomalies.map((anomaly) => anomaly.kind);

describe('serializability checker', () => {
  it('passes a clean history: a chain of read-modify-writes, a reader between them, a blind write', () => {
    const history: History = {
      txns: [
        txn(
          'A',
          [['x', 0]],
          [
            ['x', 1],
            ['y', 1],
          ],
        ),
        txn(
          'R',
          [
            ['x', 1, 'A'],
            ['y', 1, 'A'],
          ],
          [],
        ),
        txn('B', [['x', 1, 'A']], [['x', 2]]),
        txn('C', [], [['y', 2]]),
        txn(
          'D',
          [
            ['x', 2, 'B'],
            ['y', 2, 'C'],
          ],
          [['x', 3]],
        ),
      ],
    };
    expect(checkSerializable(history)).toMatchObject({ serializable: true, anomalies: [] });
  });

  it('finds write skew (G2): each reads what the other writes, both commit', () => {
    const history: History = {
      txns: [
        txn(
          'A',
          [
            ['x', 0],
            ['y', 0],
          ],
          [['x', 1]],
        ),
        txn(
          'B',
          [
            ['x', 0],
            ['y', 0],
          ],
          [['y', 1]],
        ),
      ],
    };
    const result = checkSerializable(history);
    expect(result.anomalies.map((anomaly) => anomaly.kind)).toEqual(['G2']);
    expect(result.anomalies[0]!.cycle!.map((edge) => edge.kind)).toEqual(['rw', 'rw']);
  });

  it('finds a lost update (G2): both read x@1 and both write x', () => {
    const history: History = {
      txns: [txn('W', [], [['x', 1]]), txn('A', [['x', 1, 'W']], [['x', 2]]), txn('B', [['x', 1, 'W']], [['x', 3]])],
    };
    expect(kinds(history)).toEqual(['G2']);
  });

  it('finds a dirty read of an aborted write (G1a)', () => {
    const history: History = { txns: [txn('B', [['x', 1, 'A']], [])], aborted: ['A'] };
    expect(kinds(history)).toEqual(['G1a']);
  });

  it('finds circular information flow (G1c) and a write cycle (G0)', () => {
    const g1c: History = { txns: [txn('A', [['y', 1, 'B']], [['x', 1]]), txn('B', [['x', 1, 'A']], [['y', 1]])] };
    expect(kinds(g1c)).toEqual(['G1c']);
    const g0: History = {
      txns: [
        txn(
          'A',
          [],
          [
            ['x', 1],
            ['y', 2],
          ],
        ),
        txn(
          'B',
          [],
          [
            ['x', 2],
            ['y', 1],
          ],
        ),
      ],
    };
    expect(kinds(g0)).toEqual(['G0']);
  });

  it('finds the read-only anomaly: a reader sees a later writer but not an earlier one it depends on', () => {
    // W1 reads x@1 and writes y; W2 overwrites x; R sees W2's x and the y from before W1.
    const history: History = {
      txns: [
        txn(
          'I',
          [],
          [
            ['x', 1],
            ['y', 1],
          ],
        ),
        txn('W1', [['x', 1, 'I']], [['y', 2]]),
        txn('W2', [], [['x', 2]]),
        txn(
          'R',
          [
            ['x', 2, 'W2'],
            ['y', 1, 'I'],
          ],
          [],
        ),
      ],
    };
    expect(kinds(history)).toEqual(['G2']);
  });

  it('reports two writers of one version, and a read of a version its writer did not install', () => {
    expect(kinds({ txns: [txn('A', [], [['x', 1]]), txn('B', [], [['x', 1]])] })).toEqual(['versionConflict']);
    expect(kinds({ txns: [txn('A', [], [['x', 1]]), txn('B', [['x', 2, 'A']], [])] })).toEqual(['unknownVersion']);
  });

  it('counts an unknown-outcome transaction only once a read shows its write, and never invents edges through gaps', () => {
    // U's outcome is unknown and its version of x unobserved; C wrote x later. R read x@1: R -> C.
    const gap: History = {
      txns: [txn('A', [], [['x', 1]]), txn('U', [], [['x']], 'unknown'), txn('C', [], [['x', 3]]), txn('R', [['x', 1, 'A']], [['y', 1]])],
    };
    expect(checkSerializable(gap)).toMatchObject({ serializable: true, nodes: 4 });
    // V's write was read, so V committed: its write closes a write-skew cycle with A.
    const seen: History = {
      txns: [txn('A', [['y', 0]], [['x', 1]]), txn('V', [['x', 0]], [['y']], 'unknown'), txn('R', [['y', 1, 'V']], [])],
    };
    // V's own reads are unknown (no answer), so only A -rw-> V is known: no cycle.
    expect(checkSerializable(seen)).toMatchObject({ serializable: true, nodes: 4 });
    const seenWithObservation: History = {
      ...seen,
      txns: [
        ...seen.txns,
        txn(
          'S',
          [
            ['x', 0],
            ['y', 1, 'V'],
          ],
          [],
        ),
      ],
    };
    // S read x before A and y after V: S -rw-> A -rw-> V -wr-> S.
    expect(kinds(seenWithObservation)).toEqual(['G2']);
  });

  it('never flags a serial execution, whatever outcomes are unknown (property)', () => {
    const keys = ['a', 'b', 'c'];
    const op = fc.record({ reads: fc.subarray(keys), writes: fc.subarray(keys), unknown: fc.boolean(), lost: fc.boolean() });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 25 }), (ops) => {
        // Run the transactions one after another on a versioned store, recording what each saw.
        const store = new Map<string, { version: number; writer: string }>();
        const txns: TxnObservation[] = [];
        ops.forEach((spec, n) => {
          const id = `T${n + 1}`;
          // A lost unknown-outcome transaction never happened; a kept one committed, unanswered.
          if (spec.unknown && spec.lost) {
            txns.push(
              txn(
                id,
                [],
                spec.writes.map((key) => [key]),
                'unknown',
              ),
            );
            return;
          }
          const reads = spec.reads.map((key): [string, number, string?] => {
            const current = store.get(key);
            return current ? [key, current.version, current.writer] : [key, 0];
          });
          const writes = spec.writes.map((key): [string, number] => {
            const version = (store.get(key)?.version ?? 0) + 1;
            store.set(key, { version, writer: id });
            return [key, version];
          });
          txns.push(
            spec.unknown
              ? txn(
                  id,
                  [],
                  writes.map(([key]) => [key]),
                  'unknown',
                )
              : txn(id, reads, writes),
          );
        });
        const observations = [...store].map(([key, { version, writer }]) => ({ key, version, writer }));
        expect(checkSerializable({ txns, observations }).anomalies).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
