// The link between two local regions (cdk/local/link.ts): through Toxiproxy, an echo server answers the
// same bytes, later by the configured latency each way, slower under a bandwidth limit, not at all when cut.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { type RegionLink, startRegionLink } from '../../cdk/local/link';

/** Latency of each direction in this suite: large enough to stand out of a busy machine's noise. */
const LATENCY_MS = 20;
/** Bound on a request while the link is cut: a refused or silent connection must not hang the suite. */
const CUT_ABORT_MS = 2_000;
/** The first run builds toxiproxy-server with Go (~35 s on a cold module cache, more on a busy machine). */
const START_TIMEOUT_MS = 180_000;

let echo: Server;
let direct: string;
let link: RegionLink;

beforeAll(async () => {
  // GET answers "pong"; POST / answers the body; POST /count answers how many bytes came (a short answer,
  // so an upload's time is the upload's).
  echo = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (request.method === 'GET') response.end('pong');
      else if (request.url === '/count') response.end(String(body.byteLength));
      else response.end(body);
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  direct = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  link = await startRegionLink({
    binDir: join(__dirname, '..', '..', '.ringstore', 'bin'),
    upstreams: { echo: direct },
    latencyMs: LATENCY_MS,
  });
}, START_TIMEOUT_MS);

afterAll(async () => {
  await link?.stop();
  echo?.closeAllConnections();
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function roundTripMs(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  expect(await response.text()).toBe('pong');
  return performance.now() - started;
}

/** Sends one GET on `socket`; resolves 'answered' on the first byte back, 'no answer' on close, error or timeout. */
function exchange(socket: Socket, timeoutMs: number): Promise<'answered' | 'no answer'> {
  return new Promise((resolve) => {
    const done = (outcome: 'answered' | 'no answer') => {
      clearTimeout(timer);
      socket.off('data', onData).off('close', onEnd).off('error', onEnd);
      resolve(outcome);
    };
    const onData = () => done('answered');
    const onEnd = () => done('no answer');
    const timer = setTimeout(onEnd, timeoutMs);
    socket.on('data', onData).on('close', onEnd).on('error', onEnd);
    socket.write('GET / HTTP/1.1\r\nHost: echo\r\n\r\n');
  });
}

describe('the region link', () => {
  it('passes requests and answers through unchanged', async () => {
    // Prepare
    const body = 'hello across regions';
    // Act
    const response = await fetch(link.endpoints.echo!, { method: 'POST', body });
    // Assess
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(body);
  });

  it('adds its latency to each direction, so a round trip costs twice the latency more', async () => {
    // Prepare: a first request each way opens the connections (and warms the code paths) outside the measure
    await roundTripMs(direct);
    await roundTripMs(link.endpoints.echo!);
    // Act: interleaved, so a slow moment of the machine hits both sides alike
    const directMs: number[] = [];
    const linkedMs: number[] = [];
    for (let sample = 0; sample < 5; sample += 1) {
      directMs.push(await roundTripMs(direct));
      linkedMs.push(await roundTripMs(link.endpoints.echo!));
    }
    // Assess: 2 x 20 ms expected; the slack only absorbs noise (a functional check of the toxic, not a benchmark)
    expect(median(linkedMs) - median(directMs)).toBeGreaterThanOrEqual(2 * LATENCY_MS - 10);
  });

  it('limits the bandwidth of an upload when asked, and lifts the limit', async () => {
    // Prepare: 200 KB (204,800 bytes) at 100 KB/s (Toxiproxy's KB is 1000 bytes) is about 2 s
    const upload = new Uint8Array(200 * 1024);
    await link.setBandwidth(100);
    try {
      // Act
      const started = performance.now();
      const response = await fetch(`${link.endpoints.echo!}/count`, { method: 'POST', body: upload });
      const received = await response.text();
      const limitedMs = performance.now() - started;
      // Assess
      expect(received).toBe(String(upload.byteLength));
      expect(limitedMs).toBeGreaterThanOrEqual(1_500);
    } finally {
      await link.setBandwidth(undefined);
    }
    // Act: without the limit the same upload is quick again
    const started = performance.now();
    await (await fetch(`${link.endpoints.echo!}/count`, { method: 'POST', body: upload })).text();
    // Assess
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('stops new and existing connections when cut, and passes again once healed', async () => {
    // Prepare: a connection opened and used through the link before the cut
    const { hostname, port } = new URL(link.endpoints.echo!);
    const existing = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => existing.once('connect', resolve).once('error', reject));
    try {
      expect(await exchange(existing, CUT_ABORT_MS)).toBe('answered');
      // Act
      await link.cut();
      const onExisting = await exchange(existing, CUT_ABORT_MS);
      const onNew = await fetch(link.endpoints.echo!, { signal: AbortSignal.timeout(CUT_ABORT_MS) }).then(
        () => 'answered',
        () => 'no answer',
      );
      await link.heal();
      const afterHeal = await (await fetch(link.endpoints.echo!, { signal: AbortSignal.timeout(CUT_ABORT_MS) })).text();
      // Assess
      expect(onExisting).toBe('no answer');
      expect(onNew).toBe('no answer');
      expect(afterHeal).toBe('pong');
    } finally {
      existing.destroy();
      await link.heal();
    }
  });
});
