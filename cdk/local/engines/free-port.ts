// Picks free TCP ports on the loopback interface with the listen(0) trick.
// All ports of one call are held open together, so they are distinct from each other.
import { createServer, type Server } from 'node:net';

/** Loopback address every local engine binds to. */
export const LOCAL_HOST = '127.0.0.1';

function listenOnFreePort(host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Returns `count` distinct ports that were free a moment ago on `host`.
 * There is a small window between closing the probe socket and the engine binding it;
 * callers that picked a port this way retry once with a fresh port if the engine fails to bind.
 *
 * @example
 * const [dynamodbPort, sqsPort] = await freePorts(2);
 */
export async function freePorts(count: number, host: string = LOCAL_HOST): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnFreePort(host));
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('free-port: unexpected address type');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** One free port on `host`. @example const port = await freePort(); */
export async function freePort(host: string = LOCAL_HOST): Promise<number> {
  const [port] = await freePorts(1, host);
  if (port === undefined) throw new Error('free-port: no port returned');
  return port;
}
