// The network between two local regions (docs/dr.md, "Locally"): a Toxiproxy proxy in front of each of
// the backup's engines the primary reaches, with an injected latency and an optional bandwidth limit,
// so that value size costs what it costs between real regions; cut() is a partition, heal() ends it.
import { ensureToxiproxy, startToxiproxy } from './engines/toxiproxy';
import { freePorts, LOCAL_HOST } from './engines/free-port';

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
  /** Bandwidth of each direction, KB/s; undefined: unlimited. */
  bandwidthKBps?: number;
  log?: (line: string) => void;
}

export interface RegionLink {
  /** name -> the URL that reaches the upstream through the link. */
  endpoints: Record<string, string>;
  setLatency(ms: number): Promise<void>;
  setBandwidth(kBps: number | undefined): Promise<void>;
  /** A partition: the proxies stop listening and drop the connections they carry. */
  cut(): Promise<void>;
  heal(): Promise<void>;
  stop(): Promise<void>;
}

export const defaultLinkLatencyMs = 5;

type Stream = 'upstream' | 'downstream';
const streams: readonly Stream[] = ['upstream', 'downstream'];

/**
 * Starts toxiproxy-server and one proxy per upstream.
 *
 * @example
 * const link = await startRegionLink({ binDir: '.ringstore/bin', upstreams: { sqs: backup.engines.sqsEndpoint } });
 * const sqsThroughLink = link.endpoints.sqs;
 */
export async function startRegionLink(options: RegionLinkOptions): Promise<RegionLink> {
  const binary = await ensureToxiproxy({ binDir: options.binDir, ...(options.log ? { log: options.log } : {}) });
  const names = Object.keys(options.upstreams);
  const [apiPort, ...listenPorts] = await freePorts(names.length + 1);
  if (apiPort === undefined || listenPorts.length !== names.length) throw new Error('the region link could not pick free ports');
  const server = await startToxiproxy({ binary, port: apiPort });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.api}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path} answered ${response.status}: ${await response.text()}`);
  };
  const toxicName = (kind: 'latency' | 'bandwidth', stream: Stream) => `${kind}-${stream}`;
  let bandwidth: number | undefined;
  try {
    const endpoints: Record<string, string> = {};
    for (const [index, name] of names.entries()) {
      const upstream = new URL(options.upstreams[name]!);
      const listen = `${LOCAL_HOST}:${listenPorts[index]!}`;
      await call('POST', '/proxies', { name, listen, upstream: upstream.host, enabled: true });
      for (const stream of streams) {
        await call('POST', `/proxies/${name}/toxics`, {
          name: toxicName('latency', stream),
          type: 'latency',
          stream,
          toxicity: 1,
          attributes: { latency: options.latencyMs ?? defaultLinkLatencyMs, jitter: 0 },
        });
      }
      endpoints[name] = `${upstream.protocol}//${listen}`;
    }
    const link: RegionLink = {
      endpoints,
      setLatency: async (ms) => {
        for (const name of names) {
          for (const stream of streams) {
            await call('POST', `/proxies/${name}/toxics/${toxicName('latency', stream)}`, { attributes: { latency: ms, jitter: 0 } });
          }
        }
      },
      setBandwidth: async (kBps) => {
        for (const name of names) {
          for (const stream of streams) {
            const toxic = toxicName('bandwidth', stream);
            if (bandwidth !== undefined) await call('DELETE', `/proxies/${name}/toxics/${toxic}`);
            if (kBps !== undefined) {
              await call('POST', `/proxies/${name}/toxics`, {
                name: toxic,
                type: 'bandwidth',
                stream,
                toxicity: 1,
                attributes: { rate: kBps },
              });
            }
          }
        }
        bandwidth = kBps;
      },
      cut: async () => {
        for (const name of names) await call('POST', `/proxies/${name}`, { enabled: false });
      },
      heal: async () => {
        for (const name of names) await call('POST', `/proxies/${name}`, { enabled: true });
      },
      stop: () => server.stop(),
    };
    if (options.bandwidthKBps !== undefined) await link.setBandwidth(options.bandwidthKBps);
    options.log?.(
      `region link up: ${names.map((name) => `${name} ${endpoints[name]}`).join(', ')}; ` +
        `${options.latencyMs ?? defaultLinkLatencyMs} ms each way, ${options.bandwidthKBps === undefined ? 'unlimited' : `${options.bandwidthKBps} KB/s`}`,
    );
    return link;
  } catch (error) {
    await server.stop();
    throw error;
  }
}
