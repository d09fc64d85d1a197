// The link between two local regions (cdk/local/link.ts): Toxiproxy in front of an upstream adds the
// configured latency each way, limits bandwidth, and cuts and heals the connection.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type RegionLink, startRegionLink } from '../../cdk/local/link';

let server: Server;
let direct: string;
let link: RegionLink;

beforeAll(async () => {
  // An echo server: answers with the request body (or "pong").
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => response.end(chunks.length ? Buffer.concat(chunks) : 'pong'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  direct = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  link = await startRegionLink({ binDir: join(__dirname, '..', '..', '.ringstore', 'bin'), upstreams: { echo: direct }, latencyMs: 20 });
}, 120_000);

afterAll(async () => {
  await link?.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

/** The median of a few round trips, ms (each on a new connection, as a cold request would be). */
async function medianRoundTripMs(url: string): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < 5; index += 1) {
    const started = performance.now();
    const response = await fetch(url, { headers: { connection: 'close' } });
    expect(await response.text()).toBe('pong');
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

describe('the region link', () => {
  it('adds its latency in each direction', async () => {
    // Act
    const directMs = await medianRoundTripMs(direct);
    const linkedMs = await medianRoundTripMs(link.endpoints.echo!);
    // Assess: at least a request and its answer each delayed 20 ms (a functional check, not a benchmark)
    expect(linkedMs - directMs).toBeGreaterThanOrEqual(35);
  });

  it('limits bandwidth when asked', async () => {
    // Prepare
    await link.setLatency(0);
    await link.setBandwidth(100);
    const body = new Uint8Array(200 * 1024);
    // Act
    const started = performance.now();
    const response = await fetch(link.endpoints.echo!, { method: 'POST', body });
    const echoed = await response.arrayBuffer();
    const elapsedMs = performance.now() - started;
    await link.setBandwidth(undefined);
    // Assess: 200 KB up and 200 KB back at 100 KB/s each way
    expect(echoed.byteLength).toBe(body.byteLength);
    expect(elapsedMs).toBeGreaterThanOrEqual(1_500);
  });

  it('cuts and heals', async () => {
    // Act
    await link.cut();
    const cut = await fetch(link.endpoints.echo!, { signal: AbortSignal.timeout(2_000) }).then(
      () => 'answered',
      () => 'failed',
    );
    await link.heal();
    const healed = await (await fetch(link.endpoints.echo!)).text();
    // Assess
    expect(cut).toBe('failed');
    expect(healed).toBe('pong');
  });
});
