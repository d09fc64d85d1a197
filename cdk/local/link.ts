// The network between two local regions (docs/dr.md, "Locally"): a Toxiproxy proxy in front of each of
// the backup's engines the primary reaches, with an injected latency and an optional bandwidth limit,
// so that value size costs what it costs between real regions; cut() is a partition, heal() ends it.
import * as z from 'zod';
import { freePort, LOCAL_HOST } from './engines/free-port';
import { EngineStartError } from './engines/ready';
import { ensureToxiproxy, startToxiproxy, type StartedToxiproxy } from './engines/toxiproxy';
import { startWithStack } from './resource-stack';

export interface RegionLinkOptions {
  /** Where toxiproxy-server is built and kept (`.ringstore/bin`). */
  binDir: string;
  /** name -> the upstream's `http://127.0.0.1:<port>` URL. */
  upstreams: Record<string, string>;
  /**
   * Latency added to each direction, ms (default 5: the reference's "5 ms between sites" taken as the
   * one-way delay, so a request and its answer cost 10 ms more).
   */
  latencyMs?: number;
  /** Bandwidth of each direction, KB/s (1 KB = 1000 bytes, as Toxiproxy counts); undefined: unlimited. */
  bandwidthKBps?: number;
  log?: (line: string) => void;
}

export interface RegionLink {
  /** name -> the URL that reaches the upstream through the link. */
  endpoints: Record<string, string>;
  /** Sets the latency added to each direction, ms (a whole number). */
  setLatency(ms: number): Promise<void>;
  /** Sets the bandwidth of each direction, KB/s (a whole number above 0); undefined: unlimited. */
  setBandwidth(kBps: number | undefined): Promise<void>;
  /**
   * A partition: the proxies stop listening and close the connections they carry. Clients see a refused
   * connection or a reset at once, not the silence of a real partition, so they fail without waiting for
   * their timeouts; what they can and cannot know about a request in flight is the same.
   */
  cut(): Promise<void>;
  /** Ends a partition: the proxies listen again on the same ports, with the same toxics. */
  heal(): Promise<void>;
  /** Stops toxiproxy-server; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

export const defaultLinkLatencyMs = 5;

/** Bound on one call to Toxiproxy's API (the server gives up on its own side after 25 s). */
const API_CALL_TIMEOUT_MS = 10_000;
/** How many times toxiproxy-server is started on a fresh port when the picked one was taken meanwhile. */
const PORT_ATTEMPTS = 3;

/**
 * Toxiproxy's directions: `upstream` is client -> server (the primary's requests, carrying the uploaded
 * values), `downstream` is server -> client (the answers). Each toxic is set on both, as a real link delays
 * and limits both ways.
 */
type Stream = 'upstream' | 'downstream';
const streams: readonly Stream[] = ['upstream', 'downstream'];

/** The part of Toxiproxy's proxy JSON we read: the address it actually listens on (we ask for port 0). */
const createdProxy = z.object({ listen: z.string() });

function checkLatencyMs(ms: number): number {
  // Toxiproxy decodes the attribute into an int64: a fraction would be a 400 with a JSON error.
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`region link: latencyMs must be a whole number >= 0, got ${ms}`);
  return ms;
}

function checkBandwidthKBps(kBps: number | undefined): number | undefined {
  // Toxiproxy reads a rate of 0 as "unlimited", the opposite of what it says; cut() is the way to stop traffic.
  if (kBps !== undefined && (!Number.isInteger(kBps) || kBps <= 0)) {
    throw new RangeError(`region link: bandwidthKBps must be a whole number > 0 or undefined, got ${kBps}`);
  }
  return kBps;
}

async function startServerOnFreePort(binary: string): Promise<StartedToxiproxy> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startToxiproxy({ binary, port: await freePort() });
    } catch (error) {
      // The port picked was free a moment ago; another process may have bound it since.
      if (!(error instanceof EngineStartError && error.exitedEarly) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

type ToxiproxyCall = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<unknown>;
interface Upstream {
  name: string;
  upstream: URL;
}

/** One call to Toxiproxy's API at `api`, bounded; its JSON answer (undefined when empty). */
function toxiproxyCaller(api: string): ToxiproxyCall {
  return async (method, path, body) => {
    const response = await fetch(`${api}${path}`, {
      method,
      signal: AbortSignal.timeout(API_CALL_TIMEOUT_MS),
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path} answered ${response.status}: ${text.trim()}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
}

const proxyPath = (name: string) => `/proxies/${encodeURIComponent(name)}`;
const toxicName = (kind: 'latency' | 'bandwidth', stream: Stream) => `${kind}-${stream}`;

/** A proxy per upstream, with `latencyMs` on both directions; name -> the URL that reaches it through the proxy. */
async function createProxies(call: ToxiproxyCall, upstreams: readonly Upstream[], latencyMs: number): Promise<Record<string, string>> {
  const endpoints: Record<string, string> = {};
  for (const { name, upstream } of upstreams) {
    // Port 0: Toxiproxy binds a free port itself and answers with it, so no port can be taken meanwhile;
    // a re-enabled proxy (heal) listens on that same port again.
    const created = createdProxy.parse(
      await call('POST', '/proxies', { name, listen: `${LOCAL_HOST}:0`, upstream: upstream.host, enabled: true }),
    );
    endpoints[name] = `${upstream.protocol}//${created.listen}`;
    for (const stream of streams) {
      await call('POST', `${proxyPath(name)}/toxics`, {
        name: toxicName('latency', stream),
        type: 'latency',
        stream,
        toxicity: 1,
        attributes: { latency: latencyMs, jitter: 0 },
      });
    }
  }
  return endpoints;
}

/** The link's latency, bandwidth, cut and heal, over the proxies of `upstreams`. */
function linkControls(
  call: ToxiproxyCall,
  upstreams: readonly Upstream[],
): Pick<RegionLink, 'setLatency' | 'setBandwidth' | 'cut' | 'heal'> {
  // The bandwidth toxics that exist, `<proxy>/<stream>`: a limit is a toxic added, changed or removed.
  const bandwidthToxics = new Set<string>();
  // Updates use PATCH: Toxiproxy 2.6+ still takes POST for them but logs it as deprecated.
  const forEachToxic = async (action: (name: string, stream: Stream) => Promise<void>) => {
    for (const { name } of upstreams) for (const stream of streams) await action(name, stream);
  };
  return {
    setLatency: async (ms) => {
      checkLatencyMs(ms);
      await forEachToxic(async (name, stream) => {
        await call('PATCH', `${proxyPath(name)}/toxics/${toxicName('latency', stream)}`, { attributes: { latency: ms, jitter: 0 } });
      });
    },
    setBandwidth: async (kBps) => {
      checkBandwidthKBps(kBps);
      await forEachToxic(async (name, stream) => {
        const key = `${name}/${stream}`;
        const toxic = toxicName('bandwidth', stream);
        if (kBps === undefined) {
          if (bandwidthToxics.has(key)) await call('DELETE', `${proxyPath(name)}/toxics/${toxic}`);
          bandwidthToxics.delete(key);
        } else if (bandwidthToxics.has(key)) {
          await call('PATCH', `${proxyPath(name)}/toxics/${toxic}`, { attributes: { rate: kBps } });
        } else {
          await call('POST', `${proxyPath(name)}/toxics`, {
            name: toxic,
            type: 'bandwidth',
            stream,
            toxicity: 1,
            attributes: { rate: kBps },
          });
          bandwidthToxics.add(key);
        }
      });
    },
    cut: async () => {
      for (const { name } of upstreams) await call('PATCH', proxyPath(name), { enabled: false });
    },
    heal: async () => {
      for (const { name } of upstreams) await call('PATCH', proxyPath(name), { enabled: true });
    },
  };
}

/**
 * Starts toxiproxy-server (building it first if needed) and one proxy per upstream, each adding
 * `latencyMs` to both directions and, when set, limiting both directions to `bandwidthKBps`.
 *
 * @example
 * const link = await startRegionLink({ binDir: '.ringstore/bin', upstreams: { sqs: backup.engines.sqsEndpoint } });
 * const sqsThroughLink = link.endpoints.sqs;
 * await link.cut(); // a partition
 * await link.heal();
 */
export async function startRegionLink(options: RegionLinkOptions): Promise<RegionLink> {
  const latencyMs = checkLatencyMs(options.latencyMs ?? defaultLinkLatencyMs);
  const initialBandwidthKBps = checkBandwidthKBps(options.bandwidthKBps);
  const upstreams: Upstream[] = Object.entries(options.upstreams).map(([name, url]) => {
    const upstream = new URL(url);
    if (upstream.port === '') throw new Error(`region link: upstream ${name} (${url}) must name its port`);
    return { name, upstream };
  });
  const binary = await ensureToxiproxy({ binDir: options.binDir, ...(options.log ? { log: options.log } : {}) });
  return startWithStack(options.log ?? (() => undefined), async (stack) => {
    const server = stack.use(await startServerOnFreePort(binary), (started) => started.stop());
    const call = toxiproxyCaller(server.api);
    const endpoints = await createProxies(call, upstreams, latencyMs);
    const link: RegionLink = { endpoints, ...linkControls(call, upstreams), stop: () => stack.disposeAll() };
    if (initialBandwidthKBps !== undefined) await link.setBandwidth(initialBandwidthKBps);
    options.log?.(
      `region link up: ${upstreams.map(({ name }) => `${name} ${endpoints[name]}`).join(', ')}; ` +
        `${latencyMs} ms each way, ${initialBandwidthKBps === undefined ? 'unlimited' : `${initialBandwidthKBps} KB/s`}`,
    );
    return link;
  });
}
