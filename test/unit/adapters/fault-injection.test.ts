// Fault injection exists for tests only: plans are validated, crash points fire exactly as armed,
// outages make a table fail like an outage, and a production bundle refuses the flag.
import { isRingstoreError } from '../../../lambdas/core/errors';
import { CrashInjectedError } from '../../../lambdas/core/faults';
import { FaultController, FaultyShardStore } from '../../../lambdas/adapters/fault-injection';
import { faultInjectionRequested, loadConfig } from '../../../lambdas/config';
import { MemoryShardStore } from '../../support/memory-ports';

describe('FaultController', () => {
  it('crashes at an armed point after the given number of reaches, the given number of times', () => {
    const faults = new FaultController();
    faults.apply({ crashes: [{ point: 'write.afterOwner', after: 1, times: 2 }] });
    const outcomes = Array.from({ length: 5 }, () => {
      try {
        faults.reach('write.afterOwner');
        return 'passed';
      } catch (error) {
        return error instanceof CrashInjectedError ? 'crashed' : 'other';
      }
    });
    expect(outcomes).toEqual(['passed', 'crashed', 'crashed', 'passed', 'passed']);
    expect(faults.status().crashed).toEqual({ 'write.afterOwner': 2 });
    expect(faults.status().reached).toEqual({ 'write.afterOwner': 5 });
  });

  it('refuses a plan with an unknown crash point or field, and keeps the previous plan', () => {
    const faults = new FaultController();
    faults.apply({ broken: ['strongReadFromReplica'] });
    expect(() => faults.apply({ crashes: [{ point: 'write.nowhere' }] })).toThrow();
    expect(() => faults.apply({ downshards: ['x'] })).toThrow();
    expect(faults.isBroken('strongReadFromReplica')).toBe(true);
  });

  it('takes a shard table down: every call to it fails as unavailable, other tables work', async () => {
    const faults = new FaultController();
    const store = new FaultyShardStore(new MemoryShardStore(), faults);
    faults.apply({ downShards: ['shard-1'] });
    const error = await store.get('shard-1', 'ns', 'k', { consistent: true }).catch((e: unknown) => e);
    expect(isRingstoreError(error, 'shard.unavailable') && error.retryable).toBe(true);
    await expect(store.get('shard-2', 'ns', 'k', { consistent: true })).resolves.toBeUndefined();
    faults.apply({});
    await expect(store.get('shard-1', 'ns', 'k', { consistent: true })).resolves.toBeUndefined();
  });
});

describe('the test flag', () => {
  it('is off unless set, on when set in a test run, and refused by a production bundle', () => {
    expect(faultInjectionRequested(undefined, undefined)).toBe(false);
    expect(faultInjectionRequested('1', undefined)).toBe(true);
    expect(() => faultInjectionRequested('1', 'true')).toThrow(/refused in a production bundle/);
    expect(faultInjectionRequested('0', 'true')).toBe(false);
    expect(loadConfig({ RINGSTORE_FAULT_INJECTION: '1' }).faultInjection).toBe(true);
    expect(loadConfig({}).faultInjection).toBe(false);
    expect(() => loadConfig({ RINGSTORE_FAULT_INJECTION: 'yes' })).toThrow(/RINGSTORE_FAULT_INJECTION/);
  });
});
