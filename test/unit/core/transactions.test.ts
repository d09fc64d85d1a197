// Transactions in the core: planning, 2PC with intents, wound-wait, readers meeting intents, recovery.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { startedRing } from '../../../lambdas/core/rebalance';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import { type TxnOutcome } from '../../../lambdas/ports';
import type { TxnOp } from '../../../lambdas/core/txn-plan';
import { L1Cache } from '../../../lambdas/core/l1-cache';
import { TwoLevelCache } from '../../../lambdas/core/two-level-cache';
import { ManualClock, memoryTxnWorld } from '../../support/memory-ports';
import { text } from '../../support/bytes';

const decode = (base64: string | undefined) => Buffer.from(base64 ?? '', 'base64').toString('utf8');
const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
const ownerOf = (key: string) => ring.ownerOf(tokenOf('ns', key)).table;

function setup(routedBy: Ring = ring) {
  const world = memoryTxnWorld(routedBy);
  const { txns, kv } = world;
  const run = async (ops: TxnOp[], consistency: 'eventual' | 'strong' = 'eventual') =>
    txns.runInProcess(await txns.plan('ns', ops, { consistency }));
  const valueOf = async (key: string) => {
    const read = await kv.get('ns', key, 'strong').catch((error: unknown) => {
      if (isRingstoreError(error, 'kv.notFound')) return undefined;
      throw error;
    });
    return read?.kind === 'value' ? { value: new TextDecoder().decode(read.value), version: read.item.version } : undefined;
  };
  return { ...world, run, valueOf };
}

const put = (key: string, value: string, ifVersion?: number): TxnOp => ({
  op: 'put',
  key,
  value: text(value),
  ...(ifVersion === undefined ? {} : { ifVersion }),
});

describe('planning', () => {
  it('refuses empty, oversized and self-contradicting transactions with a 400 naming the field', async () => {
    const { txns } = setup();
    const codeOf = (ops: TxnOp[]) =>
      txns.plan('ns', ops, { consistency: 'eventual' }).then(
        () => 'ok',
        (e: unknown) => (isRingstoreError(e) ? `${e.code} ${String(e.details?.field)}` : 'not a RingstoreError'),
      );
    expect(await codeOf([])).toBe('request.invalid ops');
    expect(await codeOf([{ op: 'check', key: 'a', ifVersion: 1 }, put('a', 'x', 2)])).toBe('request.invalid ops.1.ifVersion');
    expect(await codeOf([{ op: 'get', key: '' }])).toBe('request.invalid ops.0.key');
    expect(await codeOf(Array.from({ length: 1001 }, (_, i) => ({ op: 'get' as const, key: `k${i}` })))).toBe('request.invalid ops');
    expect(await codeOf([put('big', 'x'.repeat(400_000))])).toBe('kv.valueTooLarge ops.0.value');
  });

  it('spreads more than 100 keys over every shard (beyond one TransactWriteItems call)', async () => {
    const { txns, run, valueOf } = setup();
    const ops = Array.from({ length: 150 }, (_, i) => put(`many-${i}`, `v${i}`));
    const execution = await txns.plan('ns', ops, { consistency: 'eventual' });
    expect(execution.participants).toHaveLength(4);
    const outcome = await run(ops);
    expect(outcome.status).toBe('committed');
    expect(await valueOf('many-149')).toEqual({ value: 'v149', version: 1 });
  });
});

describe('commit and abort', () => {
  it('commits a read-write transaction atomically: new versions, the values read, several ops on one key', async () => {
    const { kv, run, valueOf } = setup();
    await kv.put('ns', 'a', { value: text('10'), contentType: 'text/plain' });
    const outcome = await run([
      { op: 'get', key: 'a' },
      put('a', '11'),
      { op: 'get', key: 'a' },
      put('b', 'new'),
      { op: 'delete', key: 'b' },
      put('b', 'again'),
    ]);
    expect(outcome.status).toBe('committed');
    const committed = outcome as Extract<TxnOutcome, { status: 'committed' }>;
    // The second read is the transaction's own write: it carries the version that write commits as.
    expect(committed.reads.map((read) => [read.key, read.found, read.version, decode(read.valueBase64)])).toEqual([
      ['a', true, 1, '10'],
      ['a', true, 2, '11'],
    ]);
    expect(committed.writes).toEqual(
      expect.arrayContaining([
        { key: 'a', version: 2 },
        { key: 'b', version: 1 },
      ]),
    );
    expect(await valueOf('a')).toEqual({ value: '11', version: 2 });
    expect(await valueOf('b')).toEqual({ value: 'again', version: 1 });
  });

  it('lists the writes in request order, though they are grouped by shard on the way', async () => {
    const { run } = setup();
    const keys = Array.from({ length: 12 }, (_, i) => `order-${11 - i}`);
    expect(new Set(keys.map(ownerOf)).size).toBeGreaterThan(1);
    const outcome = await run(keys.map((key) => put(key, key)));
    expect(outcome.status === 'committed' && outcome.writes.map((write) => write.key)).toEqual(keys);
  });

  it('aborts when a check fails, changes nothing and leaves no intent', async () => {
    const { kv, shards, run, valueOf } = setup();
    await kv.put('ns', 'a', { value: text('1'), contentType: 'text/plain' });
    const outcome = await run([put('a', '2'), { op: 'check', key: 'c', ifVersion: 3 }, put('b', 'x')]);
    expect(outcome).toMatchObject({ status: 'aborted', reason: 'precondition', key: 'c' });
    expect(await valueOf('a')).toEqual({ value: '1', version: 1 });
    expect(await valueOf('b')).toBeUndefined();
    for (const key of ['a', 'b', 'c']) expect(shards.peek(ownerOf(key), 'ns', key)?.intent).toBeUndefined();
  });

  it('aborts a delete of a missing key with notFound, and `ifVersion: 0` asserts absence', async () => {
    const { run } = setup();
    expect(await run([{ op: 'delete', key: 'ghost' }])).toMatchObject({ status: 'aborted', reason: 'notFound', key: 'ghost' });
    expect((await run([put('fresh', 'x', 0)])).status).toBe('committed');
    expect(await run([put('fresh', 'y', 0)])).toMatchObject({ status: 'aborted', reason: 'precondition', key: 'fresh' });
  });
});

describe('conflicts', () => {
  it('an older transaction wounds a younger one holding a key; a younger one aborts at an older one', async () => {
    const { txns, clock, records } = setup();
    const older = await txns.plan('ns', [put('k', 'old')], { consistency: 'eventual' });
    clock.now += 10;
    const younger = await txns.plan('ns', [put('k', 'young')], { consistency: 'eventual' });
    // The younger one locks first, then the older one arrives and wounds it.
    await txns.begin(younger);
    await txns.prepare(younger, ownerOf('k'));
    const outcome = await txns.runInProcess(older);
    expect(outcome.status).toBe('committed');
    expect((await records.find(younger.txid))?.status).toBe('aborted');
    // The younger one's decision follows its record.
    expect(await txns.decide(younger, [])).toMatchObject({ status: 'aborted' });
    // And the other way round: the older one holds the key, the younger one aborts with the key named.
    const holder = await txns.plan('ns', [put('k', 'hold')], { consistency: 'eventual' });
    await txns.begin(holder);
    await txns.prepare(holder, ownerOf('k'));
    clock.now += 10;
    expect(await txns.runInProcess(await txns.plan('ns', [put('k', 'late')], { consistency: 'eventual' }))).toMatchObject({
      status: 'aborted',
      reason: 'conflict',
      key: 'k',
    });
  });

  it('a pending intent never blocks a read: it sees the last committed value; a plain write gets a retryable 409', async () => {
    const { kv, txns, valueOf } = setup();
    await kv.put('ns', 'k', { value: text('committed'), contentType: 'text/plain' });
    const pending = await txns.plan('ns', [put('k', 'staged')], { consistency: 'eventual' });
    await txns.begin(pending);
    await txns.prepare(pending, ownerOf('k'));
    expect(await valueOf('k')).toEqual({ value: 'committed', version: 1 });
    const error = await kv.put('ns', 'k', { value: text('plain'), contentType: 'text/plain' }).catch((e: unknown) => e);
    expect(isRingstoreError(error, 'txn.conflict') && error.retryable).toBe(true);
  });

  it('a reader rolls a committed transaction forward when the coordinator died after deciding', async () => {
    const { txns, faults, valueOf, shards } = setup();
    faults.crashAt('txn.afterDecide');
    await expect(txns.runInProcess(await txns.plan('ns', [put('x', '1'), put('y', '2')], { consistency: 'eventual' }))).rejects.toThrow(
      'crash injected',
    );
    expect(shards.peek(ownerOf('x'), 'ns', 'x')?.intent).toBeDefined();
    expect(await valueOf('x')).toEqual({ value: '1', version: 1 });
    expect(shards.peek(ownerOf('x'), 'ns', 'x')?.intent).toBeUndefined();
  });
  it('write skew is refused by validation, and let through in broken mode txnSkipValidation', async () => {
    const skew = async (broken: boolean) => {
      const { kv, txns, faults } = setup();
      if (broken) faults.broken.add('txnSkipValidation');
      await kv.put('ns', 'x', { value: text('0'), contentType: 'text/plain' });
      await kv.put('ns', 'y', { value: text('0'), contentType: 'text/plain' });
      // A reads x and writes y, B reads y and writes x; both prepare before either validates.
      const a = await txns.plan('ns', [{ op: 'get', key: 'x' }, put('y', 'a')], { consistency: 'eventual' });
      const b = await txns.plan('ns', [{ op: 'get', key: 'y' }, put('x', 'b')], { consistency: 'eventual' });
      const outcomes = [];
      for (const execution of [a, b]) await txns.begin(execution);
      const prepared = await Promise.all(
        [a, b].map((execution) => Promise.all(execution.participants.map((participant) => txns.prepare(execution, participant.table)))),
      );
      for (const [n, execution] of [a, b].entries()) {
        const validated = await Promise.all(prepared[n]!.map((result) => txns.validate(execution, result.table, result)));
        outcomes.push((await txns.decide(execution, [...prepared[n]!, ...validated])).status);
      }
      return outcomes;
    };
    expect(await skew(false)).not.toEqual(['committed', 'committed']);
    expect(await skew(true)).toEqual(['committed', 'committed']);
  });

  it('a read-only transaction does not pass over a pending writer that already validated (no read-only anomaly)', async () => {
    // W1 reads x and writes y; it has validated x but not decided yet. W2 then overwrites x and commits,
    // so W1 must come before W2. A reader that saw W2's x and the y from before W1 would come after W2
    // and before W1: a cycle (Fekete et al.'s read-only anomaly). It must abort, or W1 must.
    const { kv, txns, clock, run } = setup();
    await kv.put('ns', 'x', { value: text('x1'), contentType: 'text/plain' });
    await kv.put('ns', 'y', { value: text('y1'), contentType: 'text/plain' });
    const w1 = await txns.plan('ns', [{ op: 'get', key: 'x' }, put('y', 'y2')], { consistency: 'eventual' });
    await txns.begin(w1);
    const prepared = await Promise.all(w1.participants.map((participant) => txns.prepare(w1, participant.table)));
    const validated = await Promise.all(prepared.map((result) => txns.validate(w1, result.table, result)));
    clock.now += 10;
    expect((await run([put('x', 'x2')])).status).toBe('committed');
    const reader = await run([
      { op: 'get', key: 'x' },
      { op: 'get', key: 'y' },
    ]);
    const w1Decision = await txns.decide(w1, [...prepared, ...validated]);
    const seen = reader.status === 'committed' ? reader.reads.map((read) => decode(read.valueBase64)) : [];
    expect({ w1: w1Decision.status, reader: reader.status, seen }).not.toEqual({
      w1: 'committed',
      reader: 'committed',
      seen: ['x2', 'y1'],
    });
  });
});

describe('recovery', () => {
  const boundaries = ['txn.afterBegin', 'txn.beforeIntent', 'txn.afterIntent', 'txn.afterPrepare', 'txn.afterDecide'] as const;

  it.each(boundaries.map((point) => [point]))(
    'after a coordinator crash at %s the sweeper leaves it all-or-nothing with no intent',
    async (point) => {
      const { txns, faults, clock, shards, valueOf } = setup();
      faults.crashAt(point, { after: point === 'txn.afterIntent' || point === 'txn.beforeIntent' ? 1 : 0 });
      const keys = ['p', 'q', 'r', 's', 't'];
      const execution = await txns.plan(
        'ns',
        keys.map((key) => put(key, point)),
        { consistency: 'eventual' },
      );
      await expect(txns.runInProcess(execution)).rejects.toThrow('crash injected');
      clock.now = execution.deadlineMs + 1;
      const report = await txns.sweep(0, clock.now, 100);
      expect(report.examined).toBe(1);
      const values = await Promise.all(keys.map(valueOf));
      const committed = point === 'txn.afterDecide';
      expect(values.every((value) => (committed ? value?.value === point : value === undefined))).toBe(true);
      for (const key of keys) expect(shards.peek(ownerOf(key), 'ns', key)?.intent).toBeUndefined();
    },
  );
});

describe('the recovery sweeper', () => {
  it('reads the keys of all the transactions it sweeps in one batch, and finishes only what is left', async () => {
    const { txns, faults, clock, shards, valueOf } = setup();
    await txns.runInProcess(await txns.plan('ns', [put('done-a', '1'), put('done-b', '1')], { consistency: 'eventual' }));
    faults.crashAt('txn.afterDecide', { after: 0 });
    const crashed = await txns.plan('ns', [put('left-a', '2'), put('left-b', '2')], { consistency: 'eventual' });
    await expect(txns.runInProcess(crashed)).rejects.toThrow('crash injected');
    clock.now = crashed.deadlineMs + 1;
    const before = shards.intentBatches;
    const report = await txns.sweep(0, clock.now, 100);
    expect(shards.intentBatches - before).toBe(1);
    expect(report).toMatchObject({ examined: 2, rolledForward: 2, cleared: 0, aborted: 0 });
    expect(await valueOf('left-a')).toEqual({ value: '2', version: 1 });
    expect(await valueOf('done-a')).toEqual({ value: '1', version: 1 });
  });
});

describe('bank invariant (seeded, in memory)', () => {
  it('concurrent transfers keep the total, and read-only transactions always see it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ from: fc.integer({ min: 0, max: 9 }), to: fc.integer({ min: 0, max: 9 }), amount: fc.integer({ min: 1, max: 30 }) }),
          { minLength: 5, maxLength: 30 },
        ),
        async (transfers) => {
          const { run } = setup();
          const accounts = Array.from({ length: 10 }, (_, i) => `acct-${i}`);
          await run(accounts.map((key) => put(key, '100')));
          const balanceOf = (outcome: TxnOutcome, key: string) =>
            outcome.status === 'committed' ? Number(decode(outcome.reads.find((read) => read.key === key)?.valueBase64)) : NaN;
          const transfer = async ({ from, to, amount }: { from: number; to: number; amount: number }) => {
            if (from === to) return;
            const read = await run([
              { op: 'get', key: accounts[from]! },
              { op: 'get', key: accounts[to]! },
            ]);
            if (read.status !== 'committed') return;
            const versions = new Map(read.reads.map((r) => [r.key, r.version!]));
            await run([
              put(accounts[from]!, String(balanceOf(read, accounts[from]!) - amount), versions.get(accounts[from]!)),
              put(accounts[to]!, String(balanceOf(read, accounts[to]!) + amount), versions.get(accounts[to]!)),
            ]);
          };
          const audits: number[] = [];
          const audit = async () => {
            const outcome = await run(accounts.map((key) => ({ op: 'get' as const, key })));
            if (outcome.status === 'committed') audits.push(accounts.reduce((sum, key) => sum + balanceOf(outcome, key), 0));
          };
          // Auditors keep reading while the transfers run, so their reads interleave with commits.
          let transfersDone = false;
          const auditor = async () => {
            for (let i = 0; i < 40 && !transfersDone; i += 1) await audit();
          };
          await Promise.all([Promise.all(transfers.map(transfer)).then(() => (transfersDone = true)), auditor(), auditor()]);
          await audit();
          expect(new Set(audits)).toEqual(new Set([1000]));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('one shard: one atomic write, no coordinator', () => {
  /** `count` keys owned by one shard. */
  const keysOnOneShard = (label: string, count: number) => {
    const keys: string[] = [];
    for (let i = 0; keys.length < count; i += 1) {
      const key = `${label}-${i}`;
      if (keys.length === 0 || ownerOf(key) === ownerOf(keys[0]!)) keys.push(key);
    }
    return keys;
  };
  const keysOnTwoShards = (label: string) => {
    const [first] = keysOnOneShard(label, 1);
    for (let i = 0; ; i += 1) if (ownerOf(`${label}-other-${i}`) !== ownerOf(first!)) return [first!, `${label}-other-${i}`];
  };
  const oneShard = async (setupResult: ReturnType<typeof setup>, ops: TxnOp[], consistency: 'eventual' | 'strong' = 'eventual') =>
    setupResult.txns.commitOnOneShard(await setupResult.txns.plan('ns', ops, { consistency }));

  it('commits a read-write transaction in one atomic write with no record and no intent', async () => {
    const context = setup();
    const [a, b] = keysOnOneShard('rw', 2);
    await context.kv.put('ns', a!, { value: text('10'), contentType: 'text/plain' });

    const outcome = await oneShard(context, [{ op: 'get', key: a! }, put(a!, '11'), put(b!, 'new')]);

    expect(outcome).toMatchObject({
      status: 'committed',
      writes: [
        { key: a, version: 2 },
        { key: b, version: 1 },
      ],
      reads: [{ key: a, found: true, version: 1 }],
    });
    expect(context.shards.atomicWrites).toBe(1);
    expect(context.records.records.size).toBe(0);
    expect(await context.valueOf(a!)).toEqual({ value: '11', version: 2 });
    expect(context.shards.peek(ownerOf(b!), 'ns', b!)?.intent).toBeUndefined();
  });

  it('answers a failed expectation as 2PC does, writing nothing', async () => {
    const context = setup();
    const [a, b] = keysOnOneShard('pre', 2);
    await context.kv.put('ns', a!, { value: text('x'), contentType: 'text/plain' });

    const stale = await oneShard(context, [put(a!, 'y', 5), put(b!, 'z')]);
    const missing = await oneShard(context, [{ op: 'delete', key: b! }]);

    expect(stale).toMatchObject({ status: 'aborted', reason: 'precondition', key: a });
    expect(missing).toMatchObject({ status: 'aborted', reason: 'notFound', key: b });
    expect(context.shards.atomicWrites).toBe(0);
    expect(await context.valueOf(b!)).toBeUndefined();
  });

  it('leaves to 2PC a transaction over several shards, or one that meets an intent or a key changed since it was read', async () => {
    const context = setup();
    expect(
      await oneShard(
        context,
        keysOnTwoShards('two').map((key) => put(key, 'v')),
      ),
    ).toBeUndefined();

    // A pending transaction's intent on a key: 2PC resolves it (wound-wait), the atomic path does not try.
    const [locked] = keysOnOneShard('locked', 1);
    const pending = await context.txns.plan('ns', [put(locked!, 'other')], { consistency: 'eventual' });
    await context.txns.begin(pending);
    await context.txns.prepare(pending, ownerOf(locked!));
    expect(await oneShard(context, [put(locked!, 'mine')])).toBeUndefined();
    expect(context.shards.peek(ownerOf(locked!), 'ns', locked!)?.intent?.txid).toBe(pending.txid);

    // A write lands between the read and the atomic write: refused as a whole, nothing written.
    const [raced, other] = keysOnOneShard('raced', 2);
    const getMany = context.shards.getMany.bind(context.shards);
    context.shards.getMany = async (...args) => {
      const items = await getMany(...args);
      await context.kv.put('ns', raced!, { value: text('racer'), contentType: 'text/plain' });
      return items;
    };
    expect(await oneShard(context, [{ op: 'get', key: raced! }, put(other!, 'w')])).toBeUndefined();
    expect(await context.valueOf(other!)).toBeUndefined();
    expect(await context.valueOf(raced!)).toEqual({ value: 'racer', version: 1 });
  });

  it("resolves a decided transaction's intent as a reader would and commits atomically; a read-only transaction leaves it to 2PC", async () => {
    // A two-phase commit is answered at its decision and leaves its intents to the applier: the client's next
    // transaction on those keys, sent at once, must not go to 2PC for it (and leave intents of its own in turn).
    const context = setup();
    const [a, b] = keysOnOneShard('decided', 2);
    const [c] = keysOnTwoShards('decided-far').filter((key) => ownerOf(key) !== ownerOf(a!));
    const { faults, shards, txns } = context;
    faults.crashAt('txn.afterDecide');
    const twoPhase = await txns.plan('ns', [put(a!, '1'), put(c!, '1')], { consistency: 'eventual' });
    await expect(txns.runInProcess(twoPhase)).rejects.toThrow('crash injected');
    expect(shards.peek(ownerOf(a!), 'ns', a!)?.intent?.txid).toBe(twoPhase.txid);

    expect(await oneShard(context, [{ op: 'get', key: a! }])).toBeUndefined();
    const outcome = await oneShard(context, [{ op: 'get', key: a! }, put(a!, '2'), put(b!, '2')]);

    expect(outcome).toMatchObject({
      status: 'committed',
      reads: [{ key: a, found: true, version: 1 }],
      writes: [
        { key: a, version: 2 },
        { key: b, version: 1 },
      ],
    });
    expect(shards.atomicWrites).toBe(1);
    expect(await context.valueOf(a!)).toEqual({ value: '2', version: 2 });
    expect(await context.valueOf(c!)).toEqual({ value: '1', version: 1 });
  });

  it('leaves to 2PC, while a rebalance runs, a write over two token ranges of one shard; one range, or reads only, stay atomic', async () => {
    // A one-shard write that lands late on a shard a cut-over has fenced is refused (not acknowledged),
    // but what it wrote stays; over two ranges, of which one is cut over, half a transfer would stay in force.
    const rebalancing = new Ring(startedRing(ring.state, { join: [4], leave: [] }, 'r1', (id) => `shard-${id}`));
    const context = setup(rebalancing);
    const rangeOf = (key: string) => rebalancing.rangeOf(tokenOf('ns', key)).end;
    const candidates = keysOnOneShard('moving', 40);
    const [first] = candidates;
    const sameRange = candidates.find((key) => key !== first && rangeOf(key) === rangeOf(first!));
    const otherRange = candidates.find((key) => rangeOf(key) !== rangeOf(first!));
    expect({ sameRange: sameRange !== undefined, otherRange: otherRange !== undefined }).toEqual({ sameRange: true, otherRange: true });

    expect(await oneShard(context, [put(first!, '1'), put(otherRange!, '1')])).toBeUndefined();
    expect(
      await oneShard(context, [
        { op: 'get', key: first! },
        { op: 'get', key: otherRange! },
      ]),
    ).toMatchObject({ status: 'committed' });
    expect(await oneShard(context, [put(first!, '1'), put(sameRange!, '1')])).toMatchObject({ status: 'committed' });
    expect(context.shards.atomicWrites).toBe(1);
    // The two-range transfer commits through the coordinator instead.
    expect(await context.run([put(first!, '2'), put(otherRange!, '2')])).toMatchObject({ status: 'committed' });
    expect(await context.valueOf(otherRange!)).toEqual({ value: '2', version: 1 });
    expect(context.records.records.size).toBe(1);
  });

  it('reads a read-only transaction at one instant and writes nothing', async () => {
    const context = setup();
    const [a, b] = keysOnOneShard('ro', 2);
    await context.kv.put('ns', a!, { value: text('A'), contentType: 'text/plain' });

    const outcome = await oneShard(context, [
      { op: 'get', key: a! },
      { op: 'get', key: b! },
    ]);

    expect(outcome).toMatchObject({
      status: 'committed',
      writes: [],
      reads: [
        { key: a, found: true, version: 1 },
        { key: b, found: false },
      ],
    });
    expect(context.shards.atomicWrites).toBe(0);
  });

  it('does not check keys it only reads when the broken mode is armed (the serializability suites must catch it)', async () => {
    const context = setup();
    const [readOnly, written] = keysOnOneShard('broken', 2);
    await context.kv.put('ns', readOnly!, { value: text('r'), contentType: 'text/plain' });
    const getMany = context.shards.getMany.bind(context.shards);
    context.shards.getMany = async (...args) => {
      const items = await getMany(...args);
      await context.kv.put('ns', readOnly!, { value: text('changed'), contentType: 'text/plain' });
      return items;
    };
    context.faults.broken.add('txnSkipValidation');

    expect(await oneShard(context, [{ op: 'get', key: readOnly! }, put(written!, 'w')])).toMatchObject({ status: 'committed' });
  });

  it('reports the version a key continues from after a delete, on both paths', async () => {
    const context = setup();
    const [atomic] = keysOnOneShard('after-delete', 1);
    for (const key of [atomic!, 'after-delete-2pc']) {
      await context.kv.put('ns', key, { value: text('1'), contentType: 'text/plain' });
      await context.kv.delete('ns', key, {});
    }

    const viaAtomic = await oneShard(context, [put(atomic!, 'again')]);
    const via2pc = await context.run([put('after-delete-2pc', 'again')]);

    expect(viaAtomic).toMatchObject({ status: 'committed', writes: [{ key: atomic, version: 3 }] });
    expect(via2pc).toMatchObject({ status: 'committed', writes: [{ key: 'after-delete-2pc', version: 3 }] });
    expect(await context.valueOf(atomic!)).toEqual({ value: 'again', version: 3 });
    expect(await context.valueOf('after-delete-2pc')).toEqual({ value: 'again', version: 3 });
  });

  it("copies a strong transaction's writes to the replicas before it answers", async () => {
    const context = setup();
    const [key] = keysOnOneShard('strong', 1);

    await oneShard(context, [put(key!, 's')], 'strong');

    const replicas = ring.replicasOf(tokenOf('ns', key!)).slice(1);
    for (const replica of replicas) expect(context.shards.peek(replica.table, 'ns', key!)?.version).toBe(1);
  });

  describe('the versions taken from the cache: one request when it is right, the read when it is not', () => {
    /** A world whose KV writes and transactions share one cache (this instance's L1 only). */
    const cachedSetup = () => {
      const cache = new TwoLevelCache(
        new L1Cache({ policy: 'lru', entriesMax: 100, bytesMax: 100_000, ttlMs: 60_000, clock: new ManualClock() }),
        undefined,
        60_000,
      );
      const world = memoryTxnWorld(ring, undefined, { cache });
      let reads = 0;
      const getMany = world.shards.getMany.bind(world.shards);
      world.shards.getMany = async (...args) => {
        reads += 1;
        return getMany(...args);
      };
      const { kv } = world;
      const valueOf = async (key: string) => {
        const read = await kv.get('ns', key, 'strong');
        return read.kind === 'value' ? { value: new TextDecoder().decode(read.value), version: read.item.version } : undefined;
      };
      return {
        ...world,
        cache,
        valueOf,
        reads: () => reads,
        oneShard: (ops: TxnOp[]) => oneShard({ ...world, run: async () => undefined as never, valueOf }, ops),
      };
    };
    const firstReadOf = (outcome: TxnOutcome | undefined) => (outcome?.status === 'committed' ? outcome.reads[0]?.valueBase64 : undefined);
    /** Writes `key` on its owner behind the cache's back, as another region's or a replayed write would. */
    const writeBehindCache = async (world: ReturnType<typeof cachedSetup>, key: string, value: string) => {
      const current = world.shards.peek(ownerOf(key), 'ns', key);
      const bytes = text(value);
      await world.shards.write(ownerOf(key), {
        namespace: 'ns',
        key,
        token: tokenOf('ns', key),
        content: { contentType: 'text/plain', size: bytes.byteLength, sha256: 'sha-' + value, value: bytes },
        precondition: current ? { kind: 'versionIn', versions: [current.version] } : { kind: 'absent' },
        nowSeconds: 1,
        modifiedAtMs: 1_000,
      });
    };

    it('commits a read-write transaction over cached keys by the atomic write alone, with the cached values read', async () => {
      const context = cachedSetup();
      const [a, b] = keysOnOneShard('cached', 2);
      await context.kv.put('ns', a!, { value: text('10'), contentType: 'text/plain' });
      await context.kv.put('ns', b!, { value: text('20'), contentType: 'text/plain' });
      await context.kv.delete('ns', b!, {});

      const outcome = await context.oneShard([{ op: 'get', key: a! }, put(a!, '11'), put(b!, 'back')]);

      expect(outcome).toMatchObject({
        status: 'committed',
        reads: [{ key: a, found: true, version: 1 }],
        writes: [
          { key: a, version: 2 },
          { key: b, version: 3 },
        ],
      });
      expect(decode(firstReadOf(outcome))).toBe('10');
      expect(context.reads()).toBe(0);
      expect(context.shards.atomicWrites).toBe(1);
      expect(await context.valueOf(a!)).toEqual({ value: '11', version: 2 });
      expect(await context.valueOf(b!)).toEqual({ value: 'back', version: 3 });
      // The cache holds what was written: the next transaction is one request again.
      expect(await context.oneShard([put(a!, '12'), put(b!, 'again')])).toMatchObject({ status: 'committed' });
      expect(context.reads()).toBe(0);
      expect(context.shards.atomicWrites).toBe(2);
    });

    it('reads the keys when an entry is stale: the atomic write refused as cached, the answer as read', async () => {
      const context = cachedSetup();
      const [a, b] = keysOnOneShard('stale', 2);
      await context.kv.put('ns', a!, { value: text('cached'), contentType: 'text/plain' });
      await context.kv.put('ns', b!, { value: text('b'), contentType: 'text/plain' });
      await writeBehindCache(context, a!, 'newer');

      const outcome = await context.oneShard([{ op: 'get', key: a! }, put(b!, 'b2')]);

      expect(outcome).toMatchObject({
        status: 'committed',
        reads: [{ key: a, found: true, version: 2 }],
        writes: [{ key: b, version: 2 }],
      });
      expect(decode(firstReadOf(outcome))).toBe('newer');
      expect(context.reads()).toBe(1);
      expect(context.shards.atomicWrites).toBe(2);
      expect(await context.valueOf(a!)).toEqual({ value: 'newer', version: 2 });
    });

    it('never aborts on what the cache says: a stale entry that fails an expectation is read, and the expectation judged on the read', async () => {
      const context = cachedSetup();
      const [a] = keysOnOneShard('expect', 1);
      await context.kv.put('ns', a!, { value: text('v1'), contentType: 'text/plain' });
      await writeBehindCache(context, a!, 'v2');

      expect(await context.oneShard([put(a!, 'v3', 2)])).toMatchObject({ status: 'committed', writes: [{ key: a, version: 3 }] });
      expect(context.shards.atomicWrites).toBe(1);
      // And a real failed expectation is still an abort, judged on the read.
      expect(await context.oneShard([put(a!, 'v4', 2)])).toMatchObject({ status: 'aborted', reason: 'precondition', key: a });
      expect(context.reads()).toBe(2);
      expect(await context.valueOf(a!)).toEqual({ value: 'v3', version: 3 });
    });

    it('reads the keys when an entry is missing, and a read-only transaction always', async () => {
      const context = cachedSetup();
      const [a, b] = keysOnOneShard('miss', 2);
      await context.kv.put('ns', a!, { value: text('a'), contentType: 'text/plain' });

      expect(await context.oneShard([put(a!, 'a2'), put(b!, 'fresh')])).toMatchObject({ status: 'committed' });
      expect(context.reads()).toBe(1);
      expect(context.shards.atomicWrites).toBe(1);
      expect(
        await context.oneShard([
          { op: 'get', key: a! },
          { op: 'get', key: b! },
        ]),
      ).toMatchObject({ status: 'committed' });
      expect(context.reads()).toBe(2);
    });
  });
});
