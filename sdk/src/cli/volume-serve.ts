// `ringstore volume serve <name>`: exports a volume over NBD (sdk/src/nbd), so that standard tools use it as a disk
// (qemu, nbd-client, nbdcopy, fio's nbd engine). Writable exports hold the volume's lease for as long as they run;
// Ctrl-C (SIGINT) or SIGTERM stops serving and detaches.
import type { Command } from 'commander';
import { NbdServer } from '../nbd/server';
import { VolumeDevice, volumeErrnoOf } from '../nbd/volume-device';
import type { CommandGroupContext } from './command-group';
import { hostname } from 'node:os';
import { parseInteger } from './arguments';

/**
 * The writer a write or trim of the CLI attaches as: this host and process (at most 128 characters).
 *
 * @example
 * ```ts
 * cliHolder(); // 'cli-build-host-41532'
 * ```
 */
export function cliHolder(): string {
  return `cli-${hostname()}-${process.pid}`.slice(0, 128);
}

interface ServeOptions {
  port: number;
  host: string;
  socket?: string;
  readOnly?: boolean;
  snapshot?: string;
  holder?: string;
  leaseSeconds: number;
}

/** The URI a client opens the export with. */
function uriOf(where: string, options: ServeOptions, name: string): string {
  return options.socket ? `nbd+unix:///${name}?socket=${options.socket}` : `nbd://${where}/${name}`;
}

/** Serves until Ctrl-C or SIGTERM; answers once the server is closed and the lease ended. */
async function serve(context: CommandGroupContext, name: string, options: ServeOptions): Promise<void> {
  const { session } = context;
  const log = (line: string) => session.stderr.write(`${line}\n`);
  // Listened for from the start: a Ctrl-C while attaching, or the moment a user (or a script) has read the URI, still
  // stops and detaches, instead of meeting the default action, which ends the process at once.
  const stop = untilStopped(session.signal);
  try {
    await serveUntil(context, name, options, stop.stopped, log);
  } finally {
    stop.dispose();
  }
}

/** A promise that resolves on Ctrl-C (the session's, or SIGINT) or SIGTERM, and the removal of its listeners. */
function untilStopped(signal: AbortSignal | undefined): { stopped: Promise<void>; dispose: () => void } {
  let resolveStop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve));
  const stop = () => resolveStop();
  signal?.addEventListener('abort', stop, { once: true });
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    stopped,
    dispose: () => {
      signal?.removeEventListener('abort', stop);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

async function serveUntil(
  context: CommandGroupContext,
  name: string,
  options: ServeOptions,
  stopped: Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const client = await context.client();
  const device = await VolumeDevice.open(client.volume(name), {
    readOnly: options.readOnly === true,
    ...(options.snapshot === undefined ? {} : { snapshot: options.snapshot }),
    holder: options.holder ?? cliHolder(),
    leaseSeconds: options.leaseSeconds,
    log,
  });
  // A snapshot is exported as <volume>@<snapshot>: its own name, so a client cannot take it for the volume.
  const exported = options.snapshot === undefined ? name : `${name}@${options.snapshot}`;
  const what = options.snapshot === undefined ? `volume ${name}` : `snapshot ${options.snapshot} of volume ${name}`;
  const server = new NbdServer({ exports: [{ name: exported, device }], errnoOf: volumeErrnoOf, log });
  try {
    const where = await server.listen(options.socket ? { path: options.socket } : { port: options.port, host: options.host });
    context.out(`serving ${what} (${device.sizeBytes} bytes${device.readOnly ? ', read-only' : ''}) at ${uriOf(where, options, exported)}`);
    const stops = device.readOnly ? 'Ctrl-C stops serving' : 'Ctrl-C stops serving and detaches';
    context.out(`  qemu-io -f raw ${uriOf(where, options, exported)} -c 'read 0 4096'    (${stops})`);
    await stopped;
  } finally {
    await server.close();
    await device.close();
    context.out(`stopped serving ${what}${device.readOnly ? '' : ' and detached'}`);
  }
}

/**
 * Adds `volume serve` to the `volume` group.
 *
 * @example
 * ```ts
 * addServeCommand(group, context);
 * ```
 */
export function addServeCommand(group: Command, context: CommandGroupContext): void {
  group
    .command('serve')
    .description('export a volume over NBD (qemu, nbd-client, nbdcopy, fio): its writer while it runs, until Ctrl-C')
    .argument('<name>')
    .option('--port <n>', 'TCP port (default 10809, the NBD port; 0: any free one)', parseInteger(0, 65535), 10809)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--socket <path>', 'listen on a Unix socket instead of TCP')
    .option('--read-only', 'serve it read-only: no lease is taken, writes are refused')
    .option('--snapshot <name>', 'serve this snapshot of the volume, read-only, as export <volume>@<snapshot>')
    .option('--holder <name>', 'who attaches, as another holder is told (default cli-<host>-<pid>)')
    .option('--lease-seconds <n>', 'the lease length, renewed at a third of it (1 to 300)', parseInteger(1, 300), 30)
    .action((name: string, options: ServeOptions) => serve(context, name, options));
}
