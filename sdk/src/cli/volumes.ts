// `ringstore volume …`: a namespace's block volumes (docs/volumes.md): create, list, describe and delete them; read
// a byte range (of the volume or of a snapshot) to a file or standard output, write one from a file or standard
// input, trim one. A write or a trim attaches as the writer `cli-<host>-<pid>` for the time it takes, then detaches.

import { addServeCommand, cliHolder } from './volume-serve';
import { addSnapshotCommands, snapshotSizeOf } from './volume-snapshots';
import { type FileHandle, open } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import type { VolumeDescription, VolumeInfo } from '../commands';
import { VOLUME_BLOCK_BYTES, VOLUME_IO_BYTES_MAX } from '../limits';
import type { Volume } from '../volume';
import { CommandFailure, pageOf, parseInteger } from './arguments';
import type { CliOutput, CommandGroupContext } from './command-group';
import { describeError, table } from './format';

const BINARY_UNITS = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 } as const;

/**
 * A byte count as the volume commands take it: a whole number of bytes, or one with a binary suffix K, M, G or T
 * (1K = 1024; `KiB` and `KB` read as K).
 *
 * @example
 * ```ts
 * parseByteCount('64M'); // 67108864
 * ```
 */
export function parseByteCount(raw: string): number {
  const match = /^(\d+)\s*(?:([KMGT])(?:i?B)?|B)?$/i.exec(raw.trim());
  const unit = match?.[2] === undefined ? 1 : BINARY_UNITS[match[2].toUpperCase() as keyof typeof BINARY_UNITS];
  const bytes = Number(match?.[1]) * unit;
  if (match === null || !Number.isSafeInteger(bytes)) {
    throw new InvalidArgumentError('expected a number of bytes, or one with a binary suffix K, M, G or T (1K = 1024)');
  }
  return bytes;
}

/**
 * A volume's size: a byte count ({@link parseByteCount}) that is a positive multiple of 4096.
 *
 * @example
 * ```ts
 * parseVolumeSize('1G'); // 1073741824
 * ```
 */
export function parseVolumeSize(raw: string): number {
  const bytes = parseByteCount(raw);
  if (bytes === 0 || bytes % VOLUME_BLOCK_BYTES !== 0) {
    throw new InvalidArgumentError(`a volume's size is a multiple of ${VOLUME_BLOCK_BYTES} bytes (4K), e.g. 64M or 1G`);
  }
  return bytes;
}

const count = (value: number): string => value.toLocaleString('en-US');

/**
 * Bytes in binary units, as the volume commands show a size: `512 bytes`, `4 KiB`, `1.5 GiB`.
 *
 * @example
 * ```ts
 * formatBytes(1536 * 1024 ** 2); // '1.5 GiB'
 * ```
 */
export function formatBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let unit = -1;
  while (unit + 1 < units.length && bytes >= 1024 ** (unit + 2)) unit += 1;
  if (unit < 0) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const value = bytes / 1024 ** (unit + 1);
  return `${Number.isInteger(value) ? value : value.toFixed(1).replace(/\.0$/, '')} ${units[unit]!}`;
}

/** Who writes the volume now: the lease's holder and epoch while it is live. */
function writerOf(volume: VolumeInfo, nowMs: number): string {
  const { lease } = volume;
  if (lease === undefined) return volume.epoch === 0 ? 'none (never attached)' : `none (epoch ${volume.epoch})`;
  const live = Date.parse(lease.expiresAt) > nowMs;
  return `${lease.holder}, epoch ${lease.epoch}, lease ${live ? 'until' : 'expired at'} ${lease.expiresAt}`;
}

/**
 * A page of volumes as a table (name, size, state, writer, creation), with a count line.
 *
 * @example
 * ```ts
 * console.log(formatVolumes((await client.listVolumes()).volumes));
 * ```
 */
export function formatVolumes(volumes: readonly VolumeInfo[], nowMs = Date.now()): string {
  const counted = `${volumes.length} ${volumes.length === 1 ? 'volume' : 'volumes'}`;
  if (volumes.length === 0) return counted;
  const rows = [['NAME', 'SIZE', 'STATE', 'WRITER', 'CREATED']];
  for (const volume of volumes) {
    const lease = volume.lease !== undefined && Date.parse(volume.lease.expiresAt) > nowMs ? volume.lease : undefined;
    const writer = lease === undefined ? '-' : `${lease.holder} (epoch ${lease.epoch})`;
    rows.push([volume.name, formatBytes(volume.sizeBytes), volume.state, writer, volume.createdAt]);
  }
  return `${table(rows)}\n${counted}`;
}

/**
 * A described volume, one fact per line.
 *
 * @example
 * ```ts
 * console.log(formatVolume(await client.describeVolume('disk')));
 * ```
 */
export function formatVolume(volume: VolumeDescription, nowMs = Date.now()): string {
  const share = volume.sizeBytes === 0 ? 0 : (volume.allocatedBytes / volume.sizeBytes) * 100;
  const names = volume.snapshots.map((snapshot) => snapshot.name).join(', ');
  return [
    `volume     ${volume.name}`,
    `size       ${formatBytes(volume.sizeBytes)} (${count(volume.sizeBytes)} bytes, ${count(volume.sizeBytes / volume.blockBytes)} blocks of ${volume.blockBytes})`,
    `allocated  ${formatBytes(volume.allocatedBytes)} (${count(volume.allocatedBytes)} bytes, ${share.toFixed(1)}%)`,
    `state      ${stateOf(volume)}`,
    `created    ${volume.createdAt}`,
    `writer     ${writerOf(volume, nowMs)}`,
    `snapshots  ${volume.snapshots.length === 0 ? 'none' : `${names} (${formatBytes(volume.snapshotBytes)} of block copies)`}`,
    ...(volume.origin
      ? [`origin     ${volume.origin.volume}@${volume.origin.snapshot} (its first ${formatBytes(volume.origin.sizeBytes)}, copy-on-write)`]
      : []),
    ...volume.snapshots
      .filter((snapshot) => (snapshot.clones ?? []).length > 0)
      .map((snapshot) => `clones     of ${snapshot.name}: ${snapshot.clones!.join(', ')}`),
  ].join('\n');
}

function stateOf(volume: VolumeDescription): string {
  if (volume.state === 'deleting') return 'deleting (ringstore volume rm finishes it)';
  if (volume.state === 'creating') return 'creating (ringstore volume clone with the same arguments finishes it)';
  return volume.state;
}

/** How long the CLI's lease lasts; renewed when half of it has passed. */
const LEASE_SECONDS = 30;

/** Writes `chunk` and waits for a full output to drain (standard output piped to a slow reader). */
async function writeOut(output: CliOutput, chunk: Uint8Array): Promise<void> {
  const stream = output as CliOutput & { once?: (event: 'drain', listener: () => void) => unknown };
  if (output.write(chunk) === false && typeof stream.once === 'function') {
    await new Promise<void>((resolve) => stream.once!('drain', resolve));
  }
}

/**
 * Runs `work` as the volume's writer: attached as {@link cliHolder} (renewed by `keepAlive` when half the lease
 * has passed), detached after it whatever happened. A failure to detach after `work` succeeded is reported as such.
 */
async function asWriter<T>(
  volume: Volume,
  call: CommandGroupContext['call'],
  work: (keepAlive: () => Promise<void>) => Promise<T>,
  done: (result: T) => string,
): Promise<T> {
  await volume.attach({ holder: cliHolder(), leaseSeconds: LEASE_SECONDS }, call());
  let renewedAt = Date.now();
  const keepAlive = async (): Promise<void> => {
    if (Date.now() - renewedAt < (LEASE_SECONDS * 1000) / 2) return;
    await volume.renew(call());
    renewedAt = Date.now();
  };
  let result: T;
  try {
    result = await work(keepAlive);
  } catch (error) {
    // Without the call's signal: a write stopped by Ctrl-C still lets go of the volume.
    await volume.detach().catch(() => undefined);
    throw error;
  }
  try {
    await volume.detach(call());
  } catch (error) {
    throw new CommandFailure(`${done(result)}, but the volume could not be detached: ${describeError(error)}; its lease ends by itself`);
  }
  return result;
}

/** The chunks of a file (opened here, so that one that cannot be read fails before the attach), or of standard input for `-`. */
async function sourceOf(source: string, stdin: NodeJS.ReadableStream | undefined): Promise<AsyncIterable<Buffer | string>> {
  if (source === '-') {
    if (stdin === undefined) throw new CommandFailure('- reads the bytes from standard input, which carries the commands here');
    return stdin;
  }
  try {
    return (await open(source, 'r')).createReadStream({ highWaterMark: VOLUME_IO_BYTES_MAX });
  } catch (err) {
    throw new CommandFailure(`cannot read ${source}: ${(err as Error).message}`);
  }
}

/** Writes the bytes of `source` at `offset`, one request per VOLUME_IO_BYTES_MAX bytes; answers how many. */
async function writeFrom(
  volume: Volume,
  offset: number,
  source: AsyncIterable<Buffer | string>,
  options: { call: CommandGroupContext['call']; keepAlive: () => Promise<void> },
): Promise<number> {
  let written = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async (bytes: Buffer): Promise<void> => {
    await options.keepAlive();
    await volume.write(offset + written, bytes, options.call());
    written += bytes.byteLength;
  };
  try {
    for await (const chunk of source) {
      pending.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      pendingBytes += pending.at(-1)!.byteLength;
      if (pendingBytes < VOLUME_IO_BYTES_MAX) continue;
      let whole = Buffer.concat(pending);
      for (; whole.byteLength >= VOLUME_IO_BYTES_MAX; whole = whole.subarray(VOLUME_IO_BYTES_MAX)) {
        await flush(whole.subarray(0, VOLUME_IO_BYTES_MAX));
      }
      pending = [whole];
      pendingBytes = whole.byteLength;
    }
    if (pendingBytes > 0) await flush(Buffer.concat(pending));
  } catch (error) {
    if (written === 0) throw error;
    throw new CommandFailure(`${describeError(error)}; the ${count(written)} bytes before it were written, from offset ${offset}`);
  }
  return written;
}

/**
 * How much `volume read` reads without --length: from --offset to the end of the volume when that is at most this.
 *
 * @example
 * ```ts
 * formatBytes(VOLUME_READ_WHOLE_BYTES_MAX); // '16 MiB'
 * ```
 */
export const VOLUME_READ_WHOLE_BYTES_MAX = 16 * 1024 * 1024;

interface ReadOptions {
  offset: number;
  length?: number;
  out?: string;
  snapshot?: string;
}

/** `volume read`: the range to --out or to standard output, one request per VOLUME_IO_BYTES_MAX bytes. */
async function readVolume(context: CommandGroupContext, name: string, options: ReadOptions): Promise<void> {
  const { client, call, out, session } = context;
  const isTerminal = (session.stdout as { isTTY?: boolean }).isTTY === true;
  if (options.out === undefined && isTerminal) {
    throw new CommandFailure('volume read writes raw bytes: give --out <file>, or send standard output to a file or a pipe');
  }
  const ringstore = await client();
  const volume = ringstore.volume(name);
  const { snapshot } = options;
  let length = options.length;
  if (length === undefined) {
    const sizeBytes = snapshot === undefined ? (await volume.describe(call())).sizeBytes : await snapshotSizeOf(volume, snapshot, call);
    if (options.offset >= sizeBytes) {
      throw new CommandFailure(`offset ${options.offset} is past the end of volume ${name} (${sizeBytes} bytes)`);
    }
    length = sizeBytes - options.offset;
    if (length > VOLUME_READ_WHOLE_BYTES_MAX) {
      throw new CommandFailure(
        `volume ${name} holds ${formatBytes(length)} from offset ${options.offset}: give --length (at most ${formatBytes(VOLUME_READ_WHOLE_BYTES_MAX)} is read without it)`,
      );
    }
  }
  // The file is opened once the first part has been read, so that a refused read leaves no file behind.
  let file: FileHandle | undefined;
  let read = 0;
  try {
    // Once at least: --length 0 still makes an empty --out file.
    do {
      const want = Math.min(VOLUME_IO_BYTES_MAX, length - read);
      const at = options.offset + read;
      const part = snapshot === undefined ? await volume.read(at, want, call()) : await volume.readSnapshot(snapshot, at, want, call());
      if (options.out === undefined) await writeOut(session.stdout, part);
      else await (file ??= await open(options.out, 'w')).write(part);
      read += part.byteLength;
      if (part.byteLength < want) break;
    } while (read < length);
  } finally {
    await file?.close();
  }
  if (options.out !== undefined) out(`wrote ${count(read)} bytes of ${name} (from offset ${options.offset}) to ${options.out}`);
}

/** `volume create|ls|describe|rm`: the volumes themselves. */
function addRecordCommands(group: Command, { client, call, out }: CommandGroupContext): void {
  group
    .command('create')
    .description('create a sparse volume: nothing is stored until written, unwritten bytes read as zeros')
    .argument('<name>', 'the volume name: letters, digits, _ . - (64 at most), starting with a letter or digit')
    .argument('<size>', 'its size: bytes, or with a binary suffix K, M, G or T (64M, 1G); a multiple of 4096', parseVolumeSize)
    .option('--json', 'print the volume as JSON')
    .action(async (name: string, size: number, options: { json?: boolean }) => {
      const created = await (await client()).createVolume(name, size, call());
      out(
        options.json === true
          ? JSON.stringify(created, null, 2)
          : `created volume ${created.name}: ${formatBytes(created.sizeBytes)} (${count(created.sizeBytes)} bytes)`,
      );
    });
  group
    .command('ls')
    .alias('list')
    .description("the namespace's volumes, in name order")
    .option('--limit <n>', 'volumes per page (1 to 1000, default 100)', parseInteger(1, 1000))
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print the page as JSON, with its cursor')
    .action(async (options: { limit?: number; cursor?: string; json?: boolean }) => {
      const page = await (await client()).listVolumes(pageOf(options), call());
      if (options.json === true) {
        out(JSON.stringify(page, null, 2));
        return;
      }
      out(formatVolumes(page.volumes));
      if (page.cursor !== undefined) {
        out(`more: ringstore volume ls${options.limit === undefined ? '' : ` --limit ${options.limit}`} --cursor ${page.cursor}`);
      }
    });
  group
    .command('describe')
    .description('a volume: size, bytes allocated (counted: a large, full volume takes a while), state, writer')
    .argument('<name>')
    .option('--json', 'print it as JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      const volume = await (await client()).describeVolume(name, call());
      out(options.json === true ? JSON.stringify(volume, null, 2) : formatVolume(volume));
    });
  group
    .command('rm')
    .alias('delete')
    .description('delete a volume and its blocks (2,000 a request, showing progress); it serves nothing from the start')
    .argument('<name>')
    .action(async (name: string) => {
      const deleted = await (
        await client()
      ).deleteVolume(name, { ...call(), onProgress: (blocks) => out(`deleting ${name}: ${count(blocks)} blocks removed so far`) });
      out(`deleted volume ${name} (${count(deleted.blocksDeleted)} blocks removed)`);
    });
}

/** `volume read|write|trim`: its bytes. */
function addDataCommands(group: Command, context: CommandGroupContext): void {
  const { client, call, out, session } = context;
  group
    .command('read')
    .description('write a byte range of the volume to --out or to standard output, raw; unwritten bytes read as zeros')
    .argument('<name>')
    .option('--offset <bytes>', 'where the range starts (default 0; K, M, G, T suffixes as create takes)', parseByteCount, 0)
    .option(
      '--length <bytes>',
      `how many bytes (default: to the end, when that is at most ${formatBytes(VOLUME_READ_WHOLE_BYTES_MAX)})`,
      parseByteCount,
    )
    .option('--out <file>', 'write the bytes to this file instead of standard output')
    .option('--snapshot <name>', 'read this snapshot of the volume: its bytes when it was taken')
    .action((name: string, options: ReadOptions) => readVolume(context, name, options));
  group
    .command('write')
    .description(
      `write a file's bytes (or standard input's, with - or no file) at --offset, ${formatBytes(VOLUME_IO_BYTES_MAX)} a request, each atomic`,
    )
    .argument('<name>')
    .argument('[file]', 'the file to write, or - for standard input (the default)', '-')
    .requiredOption('--offset <bytes>', 'where the bytes go (any byte offset; K, M, G, T suffixes)', parseByteCount)
    .action(async (name: string, file: string, options: { offset: number }) => {
      const volume = (await client()).volume(name);
      const source = await sourceOf(file, session.stdin);
      const done = (written: number) => `wrote ${count(written)} bytes to ${name} at offset ${options.offset}`;
      const written = await asWriter(volume, call, (keepAlive) => writeFrom(volume, options.offset, source, { call, keepAlive }), done);
      out(done(written));
    });
  group
    .command('trim')
    .description('trim a byte range: it reads as zeros, the blocks it covers whole are freed')
    .argument('<name>')
    .requiredOption('--offset <bytes>', 'where the range starts (K, M, G, T suffixes)', parseByteCount)
    .requiredOption('--length <bytes>', 'how many bytes (K, M, G, T suffixes)', parseByteCount)
    .action(async (name: string, options: { offset: number; length: number }) => {
      const volume = (await client()).volume(name);
      const done = () => `trimmed ${count(options.length)} bytes of ${name} at offset ${options.offset}`;
      await asWriter(volume, call, () => volume.trim(options.offset, options.length, call()), done);
      out(done());
    });
}

/**
 * Adds `volume create|ls|describe|rm|read|write|trim|serve|snapshot|snapshots|rm-snapshot` to `program`.
 *
 * @example
 * ```ts
 * addVolumeCommands(program, { client, call, out, session });
 * ```
 */
export function addVolumeCommands(program: Command, context: CommandGroupContext): void {
  const group = program
    .command('volume')
    .description("block volumes: a namespace's sparse disks of 4 KiB blocks (docs/volumes.md)")
    .addHelpText(
      'after',
      [
        '',
        `Reads and writes of more than ${formatBytes(VOLUME_IO_BYTES_MAX)} are sent as consecutive requests: each is atomic, not the whole.`,
        `write and trim attach as the volume's one writer (cli-<host>-<pid>) while they run, then detach.`,
        'Examples:',
        '  ringstore volume create disk 64M',
        '  ringstore volume write disk --offset 1M ./image.bin',
        '  ringstore volume read disk --offset 1M --length 4K --out ./head.bin',
        '  ringstore volume describe disk',
        '  ringstore volume trim disk --offset 0 --length 2M',
        '  ringstore volume snapshot disk before-upgrade',
        '  ringstore volume read disk --snapshot before-upgrade --length 4K --out ./then.bin',
        '  ringstore volume serve disk --port 10809   # then: qemu-io -f raw nbd://127.0.0.1:10809/disk',
        '  ringstore volume rm disk',
      ].join('\n'),
    );
  addRecordCommands(group, context);
  addDataCommands(group, context);
  addServeCommand(group, context);
  addSnapshotCommands(group, context);
}
