// The launcher users run: data survives a restart, and stopping leaves no engine process behind.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCloudProcess } from '../support/local-cloud-process';

// Engines of this test's home only (jars live in the shared vendor dir, data under the home).
function processesMentioning(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', text], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('npm start launcher', () => {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-restart-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('keeps data and keys across a restart and leaves no orphan engines', async () => {
    const first = await startLocalCloudProcess({ home });
    const put = await fetch(`${first.url}/v1/kv/durable`, { method: 'PUT', headers: { 'x-api-key': first.apiKey }, body: 'still here' });
    expect(put.status).toBe(200);
    const big = new Uint8Array(400_000).fill(42); // over the inline limit: kept in S3
    expect(
      (await fetch(`${first.url}/v1/kv/durable-big`, { method: 'PUT', headers: { 'x-api-key': first.apiKey }, body: big })).status,
    ).toBe(200);
    expect(processesMentioning(home).length).toBeGreaterThan(0);
    await first.stop();
    expect(processesMentioning(home)).toEqual([]);

    const second = await startLocalCloudProcess({ home });
    try {
      expect(second.apiKey).toBe(first.apiKey);
      const read = await fetch(`${second.url}/v1/kv/durable?consistency=strong`, { headers: { 'x-api-key': second.apiKey } });
      expect(await read.text()).toBe('still here');
      const readBig = await fetch(`${second.url}/v1/kv/durable-big`, { headers: { 'x-api-key': second.apiKey } });
      expect(Buffer.from(await readBig.arrayBuffer()).equals(Buffer.from(big))).toBe(true);
    } finally {
      await second.stop();
    }
    expect(processesMentioning(home)).toEqual([]);
  }, 180_000);
});
