// The linearizability checker itself: it must accept every linearizable history of the per-key
// register model and reject the classic violations, naming the key, before fault suites rely on it; and the same
// for the ranges model of a volume's byte ranges.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildLincheck, checkLinearizable, checkRangesLinearizable } from '../linearizability/check';
import {
  type History,
  HistoryRecorder,
  type HistoryOperation,
  type OkOutput,
  type OperationInput,
  type OperationOutput,
  type RangeOperation,
} from '../linearizability/history';

/** One operation with explicit times; `returnNs` omitted only for unknown outcomes. */
function op(
  clientId: number,
  key: string,
  input: OperationInput,
  output: OperationOutput,
  invokeNs: number,
  returnNs?: number,
): HistoryOperation {
  return returnNs === undefined ? { clientId, key, input, output, invokeNs } : { clientId, key, input, output, invokeNs, returnNs };
}
const write = (value: string): OperationInput => ({ op: 'write', value });
const read: OperationInput = { op: 'read' };
const ok = (version: number, value?: string): OperationOutput =>
  value === undefined ? { status: 'ok', version } : { status: 'ok', value, version };
const notFound: OperationOutput = { status: 'notFound' };
const preconditionFailed: OperationOutput = { status: 'preconditionFailed' };
const unknown: OperationOutput = { status: 'unknown' };
const history = (...operations: HistoryOperation[]): History => ({ operations });

beforeAll(async () => {
  await buildLincheck();
}, 300_000);

describe('lincheck accepts linearizable histories', () => {
  it('accepts a sequential history of every operation kind', async () => {
    // Prepare
    const h = history(
      op(0, 'k1', read, notFound, 0, 10),
      op(0, 'k1', { op: 'create', value: 'a' }, ok(1), 20, 30),
      op(0, 'k1', read, ok(1, 'a'), 40, 50),
      op(0, 'k1', { op: 'create', value: 'b' }, preconditionFailed, 60, 70),
      op(0, 'k1', { op: 'cas', value: 'c', ifVersion: 1 }, ok(2), 80, 90),
      op(0, 'k1', { op: 'cas', value: 'd', ifVersion: 1 }, preconditionFailed, 100, 110),
      op(0, 'k1', write('e'), ok(3), 120, 130),
      op(0, 'k1', read, ok(3, 'e'), 140, 150),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result).toEqual({ linearizable: true, operations: 8, keys: 1, failingKeys: [] });
  });

  it.each([
    ['a is applied first', { a: 1, b: 2 }],
    ['b is applied first', { a: 2, b: 1 }],
  ])('accepts overlapping writes and reads that see either one (%s)', async (_order, versions) => {
    // Prepare: two writes overlap in [10, 100]; a read inside the overlap sees the first applied,
    // a read after both sees the second.
    const [first, second] = versions.a === 1 ? (['a', 'b'] as const) : (['b', 'a'] as const);
    const h = history(
      op(0, 'k1', write('a'), ok(versions.a), 0, 100),
      op(1, 'k1', write('b'), ok(versions.b), 10, 110),
      op(2, 'k1', read, ok(1, first), 20, 30),
      op(2, 'k1', read, ok(2, second), 120, 130),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.linearizable).toBe(true);
  });

  it('accepts a read that overlaps a write and still sees the older value', async () => {
    // Prepare: the control for the stale-read case below; only the real-time order differs.
    const h = history(op(0, 'k1', write('a'), ok(1), 0, 10), op(1, 'k1', write('b'), ok(2), 20, 30), op(2, 'k1', read, ok(1, 'a'), 25, 50));

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.linearizable).toBe(true);
  });

  it('accepts an unknown write that nobody observed, even with a return time before later reads', async () => {
    // Prepare: the unknown write's returnNs (25) is meaningless; the reads after it miss the write.
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(1, 'k1', write('b'), unknown, 20, 25),
      op(2, 'k1', read, ok(1, 'a'), 30, 40),
      op(2, 'k1', read, ok(1, 'a'), 1_000, 1_010),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.linearizable).toBe(true);
  });

  it('accepts an unknown write that a later read observes', async () => {
    // Prepare
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(1, 'k1', write('b'), unknown, 20),
      op(2, 'k1', read, ok(1, 'a'), 30, 40),
      op(2, 'k1', read, ok(2, 'b'), 50, 60),
      op(3, 'k1', write('c'), ok(3), 70, 80),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.linearizable).toBe(true);
  });

  it('accepts delete and recreate, versions continuing from the tombstone', async () => {
    // Prepare
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(0, 'k1', { op: 'delete' }, ok(2), 20, 30),
      op(0, 'k1', read, notFound, 40, 50),
      op(0, 'k1', { op: 'delete' }, notFound, 60, 70),
      op(0, 'k1', { op: 'cas', value: 'x', ifVersion: 2 }, preconditionFailed, 80, 90),
      op(0, 'k1', { op: 'create', value: 'b' }, ok(3), 100, 110),
      op(0, 'k1', read, ok(3, 'b'), 120, 130),
      op(0, 'k1', { op: 'delete', ifVersion: 2 }, preconditionFailed, 140, 150),
      op(0, 'k1', { op: 'delete', ifVersion: 3 }, ok(4), 160, 170),
      op(0, 'k1', write('c'), ok(5), 180, 190),
      op(0, 'k1', read, ok(5, 'c'), 200, 210),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result).toEqual({ linearizable: true, operations: 11, keys: 1, failingKeys: [] });
  });
});

describe('lincheck rejects non-linearizable histories and names the key', () => {
  it('rejects a stale read that starts after a newer write completed', async () => {
    // Prepare
    const h = history(op(0, 'k1', write('a'), ok(1), 0, 10), op(1, 'k1', write('b'), ok(2), 20, 30), op(2, 'k1', read, ok(1, 'a'), 40, 50));

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result).toEqual({ linearizable: false, operations: 3, keys: 1, failingKeys: ['k1'] });
  });

  it.each([
    ['a later read finds nothing', op(1, 'k1', read, notFound, 20, 30)],
    ['a later write starts over at version 1', op(1, 'k1', write('b'), ok(1), 20, 30)],
  ])('rejects a lost acknowledged write: %s', async (_case, after) => {
    // Prepare
    const h = history(op(0, 'k1', write('a'), ok(1), 0, 10), after);

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.failingKeys).toEqual(['k1']);
    expect(result.linearizable).toBe(false);
  });

  it.each([
    ['as if it replaced version 1', 2],
    ['applied on top of version 2', 3],
  ])('rejects a cas that succeeded although another write changed the version first (%s)', async (_case, casVersion) => {
    // Prepare
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(1, 'k1', write('b'), ok(2), 20, 30),
      op(0, 'k1', { op: 'cas', value: 'c', ifVersion: 1 }, ok(casVersion), 40, 50),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result).toEqual({ linearizable: false, operations: 3, keys: 1, failingKeys: ['k1'] });
  });

  it('rejects a read that observes an unknown write before it was invoked', async () => {
    // Prepare: "unknown" lets the write happen any time after its invocation, not before.
    const h = history(op(0, 'k1', write('a'), ok(1), 0, 10), op(2, 'k1', read, ok(2, 'b'), 20, 30), op(1, 'k1', write('b'), unknown, 40));

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.failingKeys).toEqual(['k1']);
  });

  it('rejects a recreate that resets the version instead of continuing from the tombstone', async () => {
    // Prepare
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(0, 'k1', { op: 'delete' }, ok(2), 20, 30),
      op(0, 'k1', { op: 'create', value: 'b' }, ok(1), 40, 50),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result.failingKeys).toEqual(['k1']);
  });

  it('checks keys independently: only the bad key fails', async () => {
    // Prepare: k1 and k3 are fine; k2 has a stale read. Interleaved in time with each other.
    const h = history(
      op(0, 'k1', write('a'), ok(1), 0, 10),
      op(1, 'k2', write('a'), ok(1), 5, 15),
      op(2, 'k3', write('a'), ok(1), 8, 12),
      op(0, 'k2', write('b'), ok(2), 20, 30),
      op(1, 'k1', read, ok(1, 'a'), 20, 30),
      op(2, 'k2', read, ok(1, 'a'), 40, 50),
      op(1, 'k3', { op: 'delete' }, ok(2), 40, 50),
      op(0, 'k3', read, notFound, 60, 70),
    );

    // Act
    const result = await checkLinearizable(h);

    // Assess
    expect(result).toEqual({ linearizable: false, operations: 8, keys: 3, failingKeys: ['k2'] });
  });
});

describe('lincheck with recorded histories', () => {
  /** A store that applies every operation atomically at one instant between invocation and return. */
  class AtomicRegisterStore {
    private readonly keys = new Map<string, { exists: boolean; version: number; value: string }>();
    /** When set, reads are served from this snapshot taken earlier: a stale replica. */
    staleSnapshot: Map<string, { exists: boolean; version: number; value: string }> | undefined;

    snapshot(): Map<string, { exists: boolean; version: number; value: string }> {
      return new Map([...this.keys].map(([key, state]) => [key, { ...state }]));
    }

    /** Applies an operation the test expects to succeed. */
    applyOk(key: string, input: OperationInput): OkOutput {
      const output = this.apply(key, input);
      if (output.status !== 'ok') throw new Error(`${input.op} of ${key} should succeed, got ${output.status}`);
      return output;
    }

    apply(key: string, input: OperationInput): OperationOutput {
      const state = this.keys.get(key) ?? { exists: false, version: 0, value: '' };
      const next = (exists: boolean, value: string): OperationOutput => {
        this.keys.set(key, { exists, version: state.version + 1, value });
        return { status: 'ok', version: state.version + 1 };
      };
      switch (input.op) {
        case 'read': {
          const seen = this.staleSnapshot?.get(key) ?? (this.staleSnapshot ? undefined : state);
          return seen?.exists ? { status: 'ok', value: seen.value, version: seen.version } : { status: 'notFound' };
        }
        case 'write':
          return next(true, input.value);
        case 'cas':
          return state.exists && state.version === input.ifVersion ? next(true, input.value) : { status: 'preconditionFailed' };
        case 'create':
          return state.exists ? { status: 'preconditionFailed' } : next(true, input.value);
        case 'delete':
          if (input.ifVersion !== undefined && !(state.exists && state.version === input.ifVersion)) {
            return { status: 'preconditionFailed' };
          }
          return state.exists ? next(false, '') : { status: 'notFound' };
      }
    }
  }

  /** mulberry32: a small seeded PRNG, so a failing workload can be replayed from its seed. */
  function rng(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
  }

  const pause = (random: () => number) =>
    new Promise<void>((resolve) => (random() < 0.5 ? setImmediate(resolve) : setTimeout(resolve, Math.floor(random() * 2))));

  it('accepts a concurrent workload of 2000 operations with unknown outcomes on a linearizable store', async () => {
    // Prepare
    const seed = Number(process.env.LINCHECK_SEED ?? 20_240_601);
    const random = rng(seed);
    const store = new AtomicRegisterStore();
    const recorder = new HistoryRecorder();
    const clients = 10;
    const operationsPerClient = 200;
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
    const lastVersion = new Map<string, number>();

    // Act: each client invokes, waits, has the store apply atomically, waits, then completes;
    // 5% of writes time out, half of them after applying.
    await Promise.all(
      Array.from({ length: clients }, async (_, clientId) => {
        for (let i = 0; i < operationsPerClient; i += 1) {
          const key = keys[Math.floor(random() * keys.length)]!;
          const dice = random();
          const value = `c${clientId}-${i}`;
          const input: OperationInput =
            dice < 0.4
              ? { op: 'read' }
              : dice < 0.6
                ? { op: 'write', value }
                : dice < 0.8
                  ? { op: 'cas', value, ifVersion: lastVersion.get(key) ?? 0 }
                  : dice < 0.9
                    ? { op: 'create', value }
                    : { op: 'delete' };
          const handle = recorder.invoke(clientId, key, input);
          await pause(random);
          const timesOut = input.op !== 'read' && random() < 0.05;
          const appliedAnyway = random() < 0.5;
          if (timesOut && !appliedAnyway) {
            handle.unknown();
            continue;
          }
          const output = store.apply(key, input);
          if (output.status === 'ok' && output.version !== undefined) lastVersion.set(key, output.version);
          await pause(random);
          if (timesOut) handle.unknown();
          else if (output.status === 'ok') handle.ok(output);
          else if (output.status === 'unknown') handle.unknown();
          else handle.fail(output);
        }
      }),
    );
    const result = await checkLinearizable(recorder.toJSON());

    // Assess
    expect({ seed, result }).toEqual({
      seed,
      result: { linearizable: true, operations: clients * operationsPerClient, keys: keys.length, failingKeys: [] },
    });
  });

  it('rejects a recorded stale read from a lagging replica', async () => {
    // Prepare
    const store = new AtomicRegisterStore();
    const recorder = new HistoryRecorder();
    const first = recorder.invoke(0, 'k1', { op: 'write', value: 'a' });
    first.ok(store.applyOk('k1', { op: 'write', value: 'a' }));
    store.staleSnapshot = store.snapshot();
    const second = recorder.invoke(0, 'k1', { op: 'write', value: 'b' });
    second.ok(store.applyOk('k1', { op: 'write', value: 'b' }));

    // Act: the read starts after the second write returned, but the replica still has the first.
    const reader = recorder.invoke(1, 'k1', { op: 'read' });
    const seen = store.applyOk('k1', { op: 'read' });
    reader.ok(seen);
    const result = await checkLinearizable(recorder.toJSON());

    // Assess
    expect(seen).toEqual({ status: 'ok', value: 'a', version: 1 });
    expect(result).toEqual({ linearizable: false, operations: 3, keys: 1, failingKeys: ['k1'] });
  });

  it('records in-flight operations as unknown and refuses a second completion', () => {
    // Prepare
    const recorder = new HistoryRecorder();
    const done = recorder.invoke(0, 'k1', { op: 'write', value: 'a' });
    done.ok({ version: 1 });
    recorder.invoke(1, 'k1', { op: 'delete' });

    // Act
    const { operations } = recorder.toJSON();

    // Assess
    expect(operations.map((o) => o.output)).toEqual([{ status: 'ok', version: 1 }, { status: 'unknown' }]);
    expect(operations[0]!.returnNs).toBeGreaterThanOrEqual(operations[0]!.invokeNs);
    expect(operations[1]!.returnNs).toBeUndefined();
    expect(() => done.ok({ version: 2 })).toThrow(/already completed/);
  });
});

describe('lincheck options and input errors', () => {
  it('writes an HTML visualization naming the operations', async () => {
    // Prepare
    const dir = await mkdtemp(path.join(tmpdir(), 'lincheck-test-'));
    const htmlPath = path.join(dir, 'history.html');
    const h = history(op(0, 'k1', write('a'), ok(1), 0, 10), op(1, 'k1', read, notFound, 20, 30));

    try {
      // Act
      const result = await checkLinearizable(h, { visualizePath: htmlPath });

      // Assess
      expect(result.failingKeys).toEqual(['k1']);
      expect(existsSync(htmlPath)).toBe(true);
      expect(readFileSync(htmlPath, 'utf8')).toContain('k1: write(\\"a\\")');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('accepts an empty history', async () => {
    // Act
    const result = await checkLinearizable(history());

    // Assess
    expect(result).toEqual({ linearizable: true, operations: 0, keys: 0, failingKeys: [] });
  });

  it('refuses an outcome the operation cannot have', async () => {
    // Prepare: an unconditional write cannot fail its precondition.
    const h = history(op(0, 'k1', write('a'), preconditionFailed, 0, 10));

    // Act
    const check = checkLinearizable(h);

    // Assess
    await expect(check).rejects.toThrow(/operations\[0\].*preconditionFailed/);
  });
});

describe('the ranges model (a volume’s byte ranges, ranges.go)', () => {
  const writeRange = (clientId: number, id: number, first: number, last: number, invokeNs: number, returnNs: number): RangeOperation => ({
    clientId,
    key: 'v',
    input: { op: 'rangeWrite', first, last, id },
    output: { status: 'ok' },
    invokeNs,
    returnNs,
  });
  const readRange = (clientId: number, first: number, ids: number[], invokeNs: number, returnNs: number): RangeOperation => ({
    clientId,
    key: 'v',
    input: { op: 'rangeRead', first, last: first + ids.length - 1 },
    output: { status: 'ok', ids },
    invokeNs,
    returnNs,
  });

  it('accepts overlapping writes read back whole, the later one on top', async () => {
    const operations = [writeRange(0, 1, 0, 3, 0, 10), writeRange(1, 2, 2, 5, 20, 30), readRange(2, 0, [1, 1, 2, 2, 2, 2, 0], 40, 50)];

    expect(await checkRangesLinearizable({ operations })).toEqual({ linearizable: true, operations: 3, keys: 1, failingKeys: [] });
  });

  it('rejects a torn write, and a read of two instants during a write', async () => {
    const torn = [writeRange(0, 1, 0, 3, 0, 10), writeRange(1, 2, 0, 3, 20, 30), readRange(2, 0, [2, 2, 1, 1], 40, 50)];
    const twoInstants = [writeRange(0, 1, 0, 3, 0, 100), readRange(1, 0, [1, 1, 1, 1], 10, 20), readRange(2, 0, [0, 0, 0, 0], 30, 40)];

    expect(await checkRangesLinearizable({ operations: torn })).toMatchObject({ linearizable: false, failingKeys: ['v'] });
    expect(await checkRangesLinearizable({ operations: twoInstants })).toMatchObject({ linearizable: false, failingKeys: ['v'] });
  });

  it('lets a write of unknown outcome never have happened, and refuses a read with too few ids', async () => {
    const unknown: RangeOperation = {
      clientId: 0,
      key: 'v',
      input: { op: 'rangeWrite', first: 0, last: 3, id: 1 },
      output: { status: 'unknown' },
      invokeNs: 0,
    };

    expect(await checkRangesLinearizable({ operations: [unknown, readRange(1, 0, [0, 0, 0, 0], 10, 20)] })).toMatchObject({
      linearizable: true,
    });
    const short = { ...readRange(1, 0, [0, 0], 10, 20), input: { op: 'rangeRead' as const, first: 0, last: 3 } };
    await expect(checkRangesLinearizable({ operations: [short] })).rejects.toThrow(/operations\[0\].*4 output.ids/);
  });
});
