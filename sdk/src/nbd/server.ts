// An NBD server (the NetworkBlockDevice project's doc/proto.md, fixed newstyle), so that standard tools use a block
// device of this process as a disk: qemu, nbd-client, nbdcopy, fio's nbd engine. `ringstore volume serve` exports a
// Ringstore volume through it. Requests are served concurrently (replies matched by cookie); a read or write larger
// than the device's atomic maximum is split, each part atomic on its own.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import {
  Command,
  CommandFlag,
  FLAG_C_FIXED_NEWSTYLE,
  FLAG_C_NO_ZEROES,
  IHAVEOPT,
  Info,
  NbdError,
  Option,
  PAYLOAD_BYTES_MAX,
  Reply,
  Transmission,
  blockSizeInfo,
  exportInfo,
  exportNameReply,
  greeting,
  optionReply,
  parseRequest,
  serverEntry,
  simpleReply,
  textInfo,
  type NbdRequest,
} from './protocol';
import { SocketReader } from './socket-reader';

/** What an export serves: a byte-addressed device. Writes are durable when they resolve (no write cache). */
export interface BlockDevice {
  readonly sizeBytes: number;
  readonly readOnly: boolean;
  /** The largest read or write the device applies at one instant; larger requests are split into parts of it. */
  readonly ioBytesMax: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  write(offset: number, data: Uint8Array): Promise<void>;
  /** Frees a range: it reads as zeros afterwards. */
  trim(offset: number, length: number): Promise<void>;
}

export interface NbdExport {
  name: string;
  description?: string;
  device: BlockDevice;
}

export interface NbdServerOptions {
  /** The exports by name; the first is also the default export (the empty name). */
  exports: readonly NbdExport[];
  /** Requests of one connection served at once. */
  inFlightMax?: number;
  /** What a device's failure answers (an errno of NbdError); EIO unless it says otherwise. */
  errnoOf?: (error: unknown) => number;
  /** One line per connection, refusal and failed request. */
  log?: (line: string) => void;
}

const optionBytesMax = 64 * 1024;
const preferredBlockBytes = 4096;

export class NbdServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: NbdServerOptions) {
    if (options.exports.length === 0) throw new Error('NbdServer: at least one export');
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.setNoDelay(true);
      new NbdConnection(socket, options).serve().catch((error: unknown) => {
        options.log?.(`nbd: connection ended: ${error instanceof Error ? error.message : String(error)}`);
        socket.destroy();
      });
    });
  }

  /** Listens on a TCP port (0: any free one) or a Unix socket path; answers where. */
  listen(target: { port: number; host?: string } | { path: string }): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      const listening = () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'string' ? address : `${(address as AddressInfo).address}:${(address as AddressInfo).port}`);
      };
      if ('path' in target) this.server.listen(target.path, listening);
      else this.server.listen(target.port, target.host ?? '127.0.0.1', listening);
    });
  }

  /** The TCP port it listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops listening and ends every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

class NbdConnection {
  private readonly reader: SocketReader;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly writes = new Set<Promise<void>>();
  private noZeroes = false;

  constructor(
    private readonly socket: Socket,
    private readonly options: NbdServerOptions,
  ) {
    this.reader = new SocketReader(socket);
  }

  async serve(): Promise<void> {
    this.socket.write(greeting());
    const clientFlags = (await this.reader.read(4)).readUInt32BE(0);
    if ((clientFlags & FLAG_C_FIXED_NEWSTYLE) === 0 || (clientFlags & ~(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) !== 0) {
      throw new Error(`client flags ${clientFlags} unsupported (fixed newstyle only)`);
    }
    this.noZeroes = (clientFlags & FLAG_C_NO_ZEROES) !== 0;
    const chosen = await this.negotiate();
    if (!chosen) return;
    this.options.log?.(`nbd: serving ${chosen.name || '(default)'} to ${this.socket.remoteAddress ?? 'a client'}`);
    await this.transmit(chosen.device);
  }

  /** Option haggling: the export the client chose, or undefined when it aborted. */
  private async negotiate(): Promise<NbdExport | undefined> {
    for (;;) {
      const header = await this.reader.read(16);
      if (header.readBigUInt64BE(0) !== IHAVEOPT) throw new Error('an option without IHAVEOPT');
      const option = header.readUInt32BE(8);
      const length = header.readUInt32BE(12);
      if (length > optionBytesMax) throw new Error(`option ${option} of ${length} bytes`);
      const data = await this.reader.read(length);
      switch (option) {
        case Option.EXPORT_NAME: {
          const chosen = this.exportNamed(data.toString('utf8'));
          // The protocol has no refusal here: an unknown name ends the connection.
          if (!chosen) throw new Error(`no export named ${data.toString('utf8')}`);
          this.socket.write(exportNameReply(chosen.device.sizeBytes, flagsOf(chosen.device), this.noZeroes));
          return chosen;
        }
        case Option.ABORT:
          this.socket.end(optionReply(option, Reply.ACK));
          return undefined;
        case Option.LIST:
          if (length !== 0) this.reply(option, Reply.ERR_INVALID);
          else {
            for (const entry of this.options.exports) this.reply(option, Reply.SERVER, serverEntry(entry.name));
            this.reply(option, Reply.ACK);
          }
          break;
        case Option.INFO:
        case Option.GO: {
          const chosen = this.answerInfo(option, data);
          if (chosen && option === Option.GO) return chosen;
          break;
        }
        default:
          // STARTTLS, structured replies, meta contexts, extended headers: not offered (simple replies only).
          this.reply(option, Reply.ERR_UNSUP);
      }
    }
  }

  /** NBD_OPT_INFO / NBD_OPT_GO: the export's information, or an error reply; the export when it was answered. */
  private answerInfo(option: number, data: Buffer): NbdExport | undefined {
    const nameLength = data.length >= 4 ? data.readUInt32BE(0) : -1;
    const requestsAt = 4 + nameLength;
    if (nameLength < 0 || data.length < requestsAt + 2 || data.length !== requestsAt + 2 + 2 * data.readUInt16BE(requestsAt)) {
      this.reply(option, Reply.ERR_INVALID);
      return undefined;
    }
    const name = data.subarray(4, requestsAt).toString('utf8');
    const chosen = this.exportNamed(name);
    if (!chosen) {
      this.reply(option, Reply.ERR_UNKNOWN, Buffer.from(`no export named ${name}`, 'utf8'));
      return undefined;
    }
    const requested = new Set<number>();
    for (let at = requestsAt + 2; at < data.length; at += 2) requested.add(data.readUInt16BE(at));
    const { device } = chosen;
    this.reply(option, Reply.INFO, exportInfo(device.sizeBytes, flagsOf(device)));
    // Always sent (a client may ignore it): requests of any size are taken, larger ones split.
    this.reply(option, Reply.INFO, blockSizeInfo(1, preferredBlockBytes, Math.min(device.ioBytesMax, PAYLOAD_BYTES_MAX)));
    if (requested.has(Info.NAME)) this.reply(option, Reply.INFO, textInfo(Info.NAME, chosen.name));
    if (requested.has(Info.DESCRIPTION) && chosen.description)
      this.reply(option, Reply.INFO, textInfo(Info.DESCRIPTION, chosen.description));
    this.reply(option, Reply.ACK);
    return chosen;
  }

  private async transmit(device: BlockDevice): Promise<void> {
    const inFlightMax = this.options.inFlightMax ?? 16;
    for (;;) {
      let request: NbdRequest | undefined;
      try {
        request = parseRequest(await this.reader.read(28));
      } catch {
        // The client went away without NBD_CMD_DISC: what it sent is still answered where it can be.
        await Promise.allSettled(this.inFlight);
        return;
      }
      if (!request) throw new Error('a request without its magic');
      if (request.type === Command.DISC) {
        await Promise.allSettled(this.inFlight);
        this.socket.end();
        return;
      }
      if (request.type === Command.WRITE && request.length > PAYLOAD_BYTES_MAX) {
        throw new Error(`a write of ${request.length} bytes, over the protocol's ${PAYLOAD_BYTES_MAX}`);
      }
      const payload = request.type === Command.WRITE ? await this.reader.read(request.length) : undefined;
      while (this.inFlight.size >= inFlightMax) await Promise.race(this.inFlight);
      this.start(device, request, payload);
    }
  }

  private start(device: BlockDevice, request: NbdRequest, payload: Buffer | undefined): void {
    // A flush answers once every write received before it has been answered (each is durable when answered).
    const before = request.type === Command.FLUSH ? [...this.writes] : [];
    const work = (async () => {
      await Promise.allSettled(before);
      const answer = await this.perform(device, request, payload).catch((error: unknown) => {
        this.options.log?.(`nbd: ${commandName(request.type)} at ${request.offset} (${request.length} bytes) failed: ${describe(error)}`);
        return { error: this.options.errnoOf?.(error) ?? NbdError.EIO };
      });
      if (this.socket.destroyed) return;
      const header = simpleReply(answer.error, request.cookie);
      this.socket.write('data' in answer && answer.data ? Buffer.concat([header, answer.data]) : header);
    })();
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    if (request.type === Command.WRITE || request.type === Command.TRIM || request.type === Command.WRITE_ZEROES) {
      this.writes.add(work);
      void work.finally(() => this.writes.delete(work));
    }
  }

  private async perform(device: BlockDevice, request: NbdRequest, payload: Buffer | undefined): Promise<{ error: number; data?: Buffer }> {
    const { type, offset, length } = request;
    const writing = type === Command.WRITE || type === Command.TRIM || type === Command.WRITE_ZEROES;
    if (writing && device.readOnly) return { error: NbdError.EPERM };
    const inRange = offset + length <= device.sizeBytes;
    switch (type) {
      case Command.READ: {
        if (!inRange) return { error: NbdError.EINVAL };
        if (length > PAYLOAD_BYTES_MAX) return { error: NbdError.EOVERFLOW };
        const parts = await Promise.all(partsOf(offset, length, device.ioBytesMax).map((part) => device.read(part.offset, part.length)));
        return { error: 0, data: Buffer.concat(parts) };
      }
      case Command.WRITE:
        if (!inRange) return { error: NbdError.ENOSPC };
        await forEachPart(offset, length, device.ioBytesMax, (part) =>
          device.write(part.offset, payload!.subarray(part.at, part.at + part.length)),
        );
        return { error: 0 };
      case Command.TRIM:
        if (!inRange) return { error: NbdError.EINVAL };
        await forEachPart(offset, length, device.ioBytesMax, (part) => device.trim(part.offset, part.length));
        return { error: 0 };
      case Command.WRITE_ZEROES: {
        if (!inRange) return { error: NbdError.ENOSPC };
        // NO_HOLE asks for the zeros to be allocated: written as data rather than freed.
        const noHole = (request.flags & CommandFlag.NO_HOLE) !== 0;
        await forEachPart(offset, length, device.ioBytesMax, (part) =>
          noHole ? device.write(part.offset, new Uint8Array(part.length)) : device.trim(part.offset, part.length),
        );
        return { error: 0 };
      }
      case Command.FLUSH:
        // Write-through: what was answered is durable; the writes before it were waited for in `start`.
        return { error: 0 };
      default:
        return { error: NbdError.EINVAL };
    }
  }

  private exportNamed(name: string): NbdExport | undefined {
    if (name === '') return this.options.exports[0];
    return this.options.exports.find((entry) => entry.name === name);
  }

  private reply(option: number, type: number, data?: Buffer): void {
    this.socket.write(optionReply(option, type, data));
  }
}

function flagsOf(device: BlockDevice): number {
  const writable = Transmission.SEND_FUA | Transmission.SEND_TRIM | Transmission.SEND_WRITE_ZEROES;
  // Every connection reads what any connection's answered writes left (the volume is strongly consistent): multi-conn.
  return (
    Transmission.HAS_FLAGS | Transmission.SEND_FLUSH | Transmission.CAN_MULTI_CONN | (device.readOnly ? Transmission.READ_ONLY : writable)
  );
}

/** A request split into parts of at most `partMax` bytes (`at`: the part's offset within the request). */
function partsOf(offset: number, length: number, partMax: number): Array<{ offset: number; length: number; at: number }> {
  const parts = [];
  for (let at = 0; at < length; at += partMax) parts.push({ offset: offset + at, length: Math.min(partMax, length - at), at });
  return parts;
}

/** The parts of a write in order, one after the other (a later part never lands before an earlier one fails). */
async function forEachPart(
  offset: number,
  length: number,
  partMax: number,
  work: (part: { offset: number; length: number; at: number }) => Promise<void>,
): Promise<void> {
  for (const part of partsOf(offset, length, partMax)) await work(part);
}

function commandName(type: number): string {
  return Object.entries(Command).find(([, value]) => value === type)?.[0] ?? `command ${type}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
