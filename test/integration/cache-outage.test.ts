// A Redis (L2 cache) outage degrades reads to DynamoDB, never to errors, through the whole stack.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCloudProcess } from '../support/local-cloud-process';

function childRedisPids(parentPid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(parentPid), 'redis-server'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

describe('L2 cache outage', () => {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-outage-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('keeps answering reads and writes after redis-server dies', async () => {
    // L1 off, so every eventual read needs L2 or DynamoDB.
    const cloud = await startLocalCloudProcess({ home, env: { RINGSTORE_L1_ENTRIES_MAX: '0' } });
    try {
      const headers = { 'x-api-key': cloud.apiKey };
      expect((await fetch(`${cloud.url}/v1/kv/before?consistency=strong`, { method: 'PUT', headers, body: 'cached' })).status).toBe(200);
      expect(await (await fetch(`${cloud.url}/v1/kv/before`, { headers })).text()).toBe('cached');

      const pids = childRedisPids(cloud.pid);
      expect(pids).toHaveLength(1);
      process.kill(pids[0]!, 'SIGKILL');

      expect(await (await fetch(`${cloud.url}/v1/kv/before`, { headers })).text()).toBe('cached');
      // A strong write is on every available replica when acknowledged, so any replica serves it now.
      expect((await fetch(`${cloud.url}/v1/kv/after?consistency=strong`, { method: 'PUT', headers, body: 'written' })).status).toBe(200);
      const read = await fetch(`${cloud.url}/v1/kv/after`, { headers });
      expect(read.status).toBe(200);
      expect(await read.text()).toBe('written');
    } finally {
      await cloud.stop();
    }
  }, 120_000);
});
