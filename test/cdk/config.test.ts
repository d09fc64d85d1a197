// CDK context parsing: defaults from topology, coercion of command-line strings, fail-fast messages.
import { defaults } from '../../lambdas/topology';
import { contextKeys, parseConfig, readContext, shardCountMax } from '../../cdk/stacks/config';

describe('parseConfig', () => {
  it('defaults to topology', () => {
    const config = parseConfig({});

    expect(config).toMatchObject({
      stage: defaults.stage,
      shardCount: defaults.shardCount,
      replicationFactor: defaults.replicationFactor,
      vnodesPerShard: defaults.vnodesPerShard,
      cacheEvictionPolicy: 'allkeys-lru',
    });
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
    [{ cacheEvictionPolicy: 'lru' }, 'cacheEvictionPolicy'],
    [{ logLevel: 'TRACE' }, 'logLevel'],
  ])('refuses %j, naming %s', (raw, key) => {
    expect(() => parseConfig(raw)).toThrow(new RegExp(`-c ${key}:`));
  });

  it('reads exactly its keys from the context', () => {
    const context: Record<string, unknown> = { shardCount: 6, unrelated: 'x', '@aws-cdk/core:flag': true };

    const raw = readContext((key) => context[key]);

    expect(raw).toEqual({ shardCount: 6 });
    expect(contextKeys).toContain('stage');
  });
});
