// CDK context parsing: defaults from topology, coercion of command-line strings, fail-fast messages.
import { defaults } from '../../schemas/topology';
import { assertDeploymentTarget, contextKeys, parseConfig, readContext, retiredContextKeys, shardCountMax } from '../../cdk/stacks/config';

describe('parseConfig', () => {
  it('defaults to topology', () => {
    const config = parseConfig({});

    expect(config).toMatchObject({
      stage: defaults.stage,
      shardCount: defaults.shardCount,
      replicationFactor: defaults.replicationFactor,
      vnodesPerShard: defaults.vnodesPerShard,
      l2EvictionPolicy: 'allkeys-lru',
      cacheNodeType: 'cache.t4g.small',
    });
  });

  it.each(['allkeys-lru', 'allkeys-lfu'])('takes l2EvictionPolicy=%s', (policy) => {
    expect(parseConfig({ l2EvictionPolicy: policy }).l2EvictionPolicy).toBe(policy);
  });

  it('takes the failover settings, with automatic failover and 3 probes 100 ms apart by default', () => {
    expect(parseConfig({})).toMatchObject({ autoFailover: true, failoverConfirmProbes: 3, failoverConfirmIntervalMs: 100 });
    expect(parseConfig({ autoFailover: 'false', failoverConfirmProbes: '5', failoverConfirmIntervalMs: '250' })).toMatchObject({
      autoFailover: false,
      failoverConfirmProbes: 5,
      failoverConfirmIntervalMs: 250,
    });
    expect(() => parseConfig({ failoverConfirmProbes: '0' })).toThrow(/failoverConfirmProbes/);
  });

  it('takes another cache node type', () => {
    expect(parseConfig({ cacheNodeType: 'cache.r7g.large' }).cacheNodeType).toBe('cache.r7g.large');
  });

  it('accepts the strings `cdk -c key=value` passes', () => {
    const config = parseConfig({ stage: 'dev', shardCount: '8', replicationFactor: '2', manageApiGatewayAccountRole: 'false' });

    expect(config).toMatchObject({ stage: 'dev', shardCount: 8, replicationFactor: 2, manageApiGatewayAccountRole: false });
  });

  it.each([
    [{ shardCount: '0' }, 'shardCount'],
    [{ shardCount: String(shardCountMax + 1) }, 'shardCount'],
    [{ shardCount: '2.5' }, 'shardCount'],
    [{ shardCount: '2', replicationFactor: '3' }, 'replicationFactor'],
    [{ stage: 'Prod' }, 'stage'],
    [{ l2EvictionPolicy: 'lru' }, 'l2EvictionPolicy'],
    // Policies that could evict nothing or only TTL'd keys are refused: every L2 entry is disposable.
    [{ l2EvictionPolicy: 'volatile-lru' }, 'l2EvictionPolicy'],
    [{ l2EvictionPolicy: 'noeviction' }, 'l2EvictionPolicy'],
    [{ cacheNodeType: 't4g.small' }, 'cacheNodeType'],
    [{ cacheNodeType: 'cache.t4g.small; rm' }, 'cacheNodeType'],
    [{ logLevel: 'TRACE' }, 'logLevel'],
    [{ drBackupRegion: 'Europe' }, 'drBackupRegion'],
    [{ drBackupRegion: 'eu-west' }, 'drBackupRegion'],
    [{ drBackupRegion: 'eu-west-1 ' }, 'drBackupRegion'],
    [{ drBackupRegion: '' }, 'drBackupRegion'],
  ])('refuses %j, naming %s', (raw, key) => {
    expect(() => parseConfig(raw)).toThrow(new RegExp(`-c ${key}:`));
  });

  it('has no DR backup region unless one is given', () => {
    expect(parseConfig({}).drBackupRegion).toBeUndefined();
    expect(contextKeys).toContain('drBackupRegion');
  });

  it.each(['eu-west-1', 'us-east-1', 'ap-southeast-7', 'us-gov-west-1', 'eu-central-2'])('takes drBackupRegion=%s', (region) => {
    expect(parseConfig({ drBackupRegion: region }).drBackupRegion).toBe(region);
  });

  it("refuses a DR backup in the primary's own region, when the primary's region is known", () => {
    expect(() => parseConfig({ drBackupRegion: 'eu-west-1' }, { region: 'eu-west-1' })).toThrow(
      /-c drBackupRegion: eu-west-1 is the primary's region too/,
    );
    expect(parseConfig({ drBackupRegion: 'eu-west-1' }, { region: 'eu-central-1' }).drBackupRegion).toBe('eu-west-1');
    expect(parseConfig({ drBackupRegion: 'eu-west-1' }, {}).drBackupRegion).toBe('eu-west-1');
  });

  it('checks the primary region learnt after parsing the same way', () => {
    const config = parseConfig({ drBackupRegion: 'us-west-2' });

    expect(() => assertDeploymentTarget(config, { region: 'us-west-2' })).toThrow(/-c drBackupRegion: us-west-2 is the primary's region/);
    expect(() => assertDeploymentTarget(config, { region: 'us-east-1' })).not.toThrow();
    expect(() => assertDeploymentTarget(parseConfig({}), { region: 'us-west-2' })).not.toThrow();
  });

  it.each(Object.keys(retiredContextKeys))('refuses the retired key %s, saying what replaced it', (key) => {
    expect(() => parseConfig({ [key]: 'allkeys-lru' })).toThrow(
      new RegExp(`-c ${key}: no longer read; .*(l2EvictionPolicy|cacheNodeType)`),
    );
  });

  it('reports a retired key and a bad value together', () => {
    expect(() => parseConfig({ cacheEvictionPolicy: 'allkeys-lfu', l2EvictionPolicy: 'lfu' })).toThrow(
      /-c cacheEvictionPolicy:[^]*-c l2EvictionPolicy:/,
    );
  });

  it('reads exactly its keys from the context', () => {
    const context: Record<string, unknown> = { shardCount: 6, unrelated: 'x', '@aws-cdk/core:flag': true };

    const raw = readContext((key) => context[key]);

    expect(raw).toEqual({ shardCount: 6 });
    expect(contextKeys).toEqual(expect.arrayContaining(['stage', 'l2EvictionPolicy', 'cacheNodeType']));
  });

  it('reads retired keys too, so that they are refused rather than ignored', () => {
    const context: Record<string, unknown> = { cacheEvictionPolicy: 'allkeys-lfu' };

    const raw = readContext((key) => context[key]);

    expect(raw).toEqual({ cacheEvictionPolicy: 'allkeys-lfu' });
    expect(() => parseConfig(raw)).toThrow(/-c cacheEvictionPolicy:/);
  });
});
