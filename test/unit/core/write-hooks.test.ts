// The points where a capability hooks into the KV path (lambdas/core/write-hooks.ts): what a write hook sees
// and when, what its refusal does, the owner writer chosen per request, and the read gate.
import { RingstoreError } from '../../../lambdas/core/errors';
import { type OwnerWriter, type WriteHooks } from '../../../lambdas/core/write-hooks';
import { limits } from '../../../schemas/topology';
import { ManualClock, MemoryShardStore, memoryReplication, staticRing, memoryKv } from '../../support/memory-ports';
import { codeOf } from '../../support/errors';
import { text } from '../../support/bytes';

function setup(parts: { writeHooks?: WriteHooks; owners?: (shards: MemoryShardStore) => OwnerWriter } = {}) {
  const shards = new MemoryShardStore();
  const clock = new ManualClock();
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({
    shards,
    ring: staticRing(4),
    clock,
    limits,
    replication,
    health,
    ...(parts.writeHooks ? { writeHooks: parts.writeHooks } : {}),
    ...(parts.owners ? { owners: parts.owners(shards) } : {}),
  });
  return { kv, shards };
}

describe('write hooks', () => {
  it('are asked before a write and again before its acknowledgement, and see the stored item with the request settings', async () => {
    const calls: string[] = [];
    const hooks: WriteHooks = {
      assertWritable: async () => void calls.push('assertWritable'),
      stored: async (item, settings) => void calls.push(`stored ${item.key} v${item.version} ${settings.drMode ?? '-'}`),
    };
    const { kv } = setup({ writeHooks: hooks });
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain', drMode: 'async' });
    await kv.delete('ns', 'k', { consistency: 'strong' });
    expect(calls).toEqual(['assertWritable', 'stored k v1 async', 'assertWritable', 'assertWritable', 'stored k v2 -', 'assertWritable']);
  });

  it('a refusal before the write stores nothing; a failed stored hook is the answer though the owner holds the write', async () => {
    let writable = false;
    let storedFails = false;
    const { kv } = setup({
      writeHooks: {
        assertWritable: async () => {
          if (!writable) throw new RingstoreError('dr.demoted', 'this region may not acknowledge writes');
        },
        stored: async () => {
          if (storedFails) throw new RingstoreError('dr.backupUnreachable', 'the backup could not be told', { retryable: true });
        },
      },
    });
    expect(await codeOf(kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain' }))).toBe('dr.demoted');
    writable = true;
    expect(await codeOf(kv.get('ns', 'k', 'strong'))).toBe('kv.notFound');
    storedFails = true;
    expect(await codeOf(kv.put('ns', 'k', { value: text('b'), contentType: 'text/plain', consistency: 'strong' }))).toBe(
      'dr.backupUnreachable',
    );
    const read = await kv.get('ns', 'k', 'strong');
    expect(read.kind === 'value' && new TextDecoder().decode(read.value)).toBe('b');
  });
});

describe('the owner writer', () => {
  it('writes every owner copy of a write, with the request settings it came with', async () => {
    const seen: string[] = [];
    const owners = (shards: MemoryShardStore): OwnerWriter => ({
      write: async (table, write, settings) => {
        seen.push(`${write.key} ${write.content ? 'put' : 'delete'} ${settings.storageQuota?.keysMax ?? '-'}`);
        return shards.write(table, write);
      },
    });
    const { kv } = setup({ owners });
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain', storageQuota: { keysMax: 5 } });
    await kv.delete('ns', 'k', {});
    expect(seen).toEqual(['k put 5', 'k delete -']);
    expect(await codeOf(kv.get('ns', 'k', 'strong'))).toBe('kv.notFound');
  });
});
