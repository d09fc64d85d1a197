// The fault suites' bounded drive to an event they must see (test/fault/support.ts, docs/testing.md, "Not vacuous by
// construction"): it stops once the event happened, and a bound that passes fails naming the event and what was seen.
import { describeFaults, driveUntil, NeverHappenedError } from './support';

describe('driveUntil', () => {
  it('steps until the event happened and answers how many steps it took (0: it had happened already)', async () => {
    let steps = 0;
    const taken = await driveUntil(
      'three steps',
      async () => steps >= 3,
      async () => void (steps += 1),
      { stepsMax: 10, boundMs: 5_000 },
    );
    const none = await driveUntil(
      'nothing to do',
      async () => true,
      async () => void (steps += 1),
      { stepsMax: 10, boundMs: 5_000 },
    );

    expect({ taken, none, steps }).toEqual({ taken: 3, none: 0, steps: 3 });
  });

  it('fails at its bound with a NeverHappenedError that names the event, the bound and what the run saw instead', async () => {
    const status = { crashes: [], downShards: [], broken: [], reached: { 'txn.afterBegin': 4 }, crashed: {} };

    const error = await driveUntil(
      'a crash at txn.afterBegin',
      async () => false,
      async () => {},
      {
        stepsMax: 4,
        boundMs: 5_000,
        explain: async () => describeFaults(status),
      },
    ).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(NeverHappenedError);
    expect((error as Error).message).toBe(
      'a crash at txn.afterBegin never happened: 4 steps in ' +
        /\d+ ms/.exec((error as Error).message)![0] +
        ' (bounds: 4 steps, 5000 ms); reached {"txn.afterBegin":4}, crashed {}, armed []',
    );
  });
});
