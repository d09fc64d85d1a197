// A small Redis client: RESP2 over one TCP (or TLS) socket, for the few commands the L2 cache sends (AUTH,
// HMGET, EVALSHA falling back to EVAL, QUIT). Commands are pipelined on the one connection, each bounded by
// a timeout; while disconnected a command fails at once (a cache miss beats a stalled request), and the
// connection is made again in the background with a capped backoff.
//
// Written here rather than taken from ioredis, which the cache used before: a data handler loads its Redis
// client at every cold start, and ioredis (its command table, cluster and sentinel support, offline queue)
// added about 20 ms to the init of a bundle that needs four commands of it (docs/benchmarks.md, "Cold
// starts", where the bench measures both clients side by side). The protocol subset is small and fixed,
// and the integration suite runs this client against redis-server with its ACL user.
import { createHash } from 'node:crypto';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** A reply: a status (`+OK`) as a string, a bulk string as bytes, an integer, an array, or null. */
export type RespReply = string | Buffer | number | null | RespReply[];

/** An error reply (`-ERR ...`, `-NOPERM ...`): the command reached Redis and was refused. */
export class RespError extends Error {
  override readonly name = 'RespError';
}

/** The connection is not ready (connecting, reconnecting or closed), or was lost with the command on it. */
export class RespUnavailableError extends Error {
  override readonly name = 'RespUnavailableError';
}

export type RespArgument = string | Buffer | number;

/** A command as RESP sends it: an array of bulk strings. */
export function encodeCommand(args: readonly RespArgument[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg), 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

type Parsed = { reply: RespReply | RespError; next: number } | undefined;

/** Replies from a byte stream that arrives in chunks of any size: each complete reply, in order. */
export class RespParser {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<RespReply | RespError> {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const replies: Array<RespReply | RespError> = [];
    let offset = 0;
    for (;;) {
      const parsed = this.parse(offset);
      if (!parsed) break;
      replies.push(parsed.reply);
      offset = parsed.next;
    }
    this.buffer = this.buffer.subarray(offset);
    return replies;
  }

  /** The reply starting at `offset`, or undefined while it is incomplete. */
  private parse(offset: number): Parsed {
    const lineEnd = this.buffer.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const type = String.fromCharCode(this.buffer[offset]!);
    const line = this.buffer.toString('utf8', offset + 1, lineEnd);
    const afterLine = lineEnd + 2;
    switch (type) {
      case '+':
        return { reply: line, next: afterLine };
      case '-':
        return { reply: new RespError(line), next: afterLine };
      case ':':
        return { reply: Number(line), next: afterLine };
      case '$': {
        const length = Number(line);
        if (length < 0) return { reply: null, next: afterLine };
        if (this.buffer.length < afterLine + length + 2) return undefined;
        // Copied out: the reply outlives the receive buffer it came in.
        return { reply: Buffer.from(this.buffer.subarray(afterLine, afterLine + length)), next: afterLine + length + 2 };
      }
      case '*': {
        const count = Number(line);
        if (count < 0) return { reply: null, next: afterLine };
        const items: RespReply[] = [];
        let next = afterLine;
        for (let i = 0; i < count; i += 1) {
          const item = this.parse(next);
          if (!item) return undefined;
          // An error inside an array (EXEC's) is kept as its message; the cache sends no such command.
          items.push(item.reply instanceof RespError ? item.reply.message : item.reply);
          next = item.next;
        }
        return { reply: items, next };
      }
      default:
        throw new RespError(`not a RESP reply (type byte ${JSON.stringify(type)})`);
    }
  }
}

export interface RespClientOptions {
  /** The ACL user to authenticate as; without it no AUTH is sent. */
  username?: string;
  /** The password of the moment, read at every (re)connection (an IAM token is renewed between them). */
  password?: () => string | undefined;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Wait before reconnection attempt `attempt` (0 first). */
  retryDelayMs: (attempt: number) => number;
  /** Wait for `connect()` before connecting (a password to fetch first); else it connects at once. */
  lazyConnect?: boolean;
}

interface PendingCommand {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
  /** Answered already (timed out): its reply, when it comes, is dropped. */
  settled: boolean;
}

type State = 'idle' | 'connecting' | 'ready' | 'closed';

export class RespClient {
  private readonly host: string;
  private readonly port: number;
  private readonly tls: boolean;
  private state: State = 'idle';
  private socket: Socket | undefined;
  private parser = new RespParser();
  private pending: PendingCommand[] = [];
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly readyListeners: Array<() => void> = [];
  private readonly scriptShas = new Map<string, string>();

  constructor(
    url: string,
    private readonly options: RespClientOptions,
  ) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error(`not a Redis URL: ${url}`);
    this.tls = parsed.protocol === 'rediss:';
    this.host = parsed.hostname;
    this.port = parsed.port ? Number(parsed.port) : 6379;
    if (!options.lazyConnect) this.connect();
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Calls `listener` once, the next time the connection is ready. */
  onceReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  /** Starts connecting unless connected, connecting or closed. */
  connect(): void {
    if (this.state !== 'idle') return;
    this.state = 'connecting';
    const socket = this.tls
      ? connectTls({ host: this.host, port: this.port, servername: this.host })
      : connectTcp({ host: this.host, port: this.port });
    this.socket = socket;
    socket.setNoDelay(true);
    const connectTimer = setTimeout(() => socket.destroy(new RespUnavailableError('connect timed out')), this.options.connectTimeoutMs);
    connectTimer.unref();
    socket.once(this.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(connectTimer);
      void this.handshake(socket);
    });
    socket.on('data', (chunk: Buffer) => this.received(socket, chunk));
    // Every failure ends in 'close', which fails what is pending and schedules the next attempt.
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(connectTimer);
      this.lost(socket);
    });
  }

  /** Sends one command; rejects at once while not connected, with a RespError when Redis refuses it. */
  command(args: readonly RespArgument[]): Promise<RespReply> {
    if (this.state !== 'ready' || !this.socket) return Promise.reject(new RespUnavailableError('Redis is not connected'));
    return this.send(this.socket, args);
  }

  /** Runs a Lua script by its digest, sending the script itself only when Redis does not hold it yet. */
  async evalScript(script: string, keys: readonly RespArgument[], args: readonly RespArgument[]): Promise<RespReply> {
    let sha = this.scriptShas.get(script);
    if (!sha) {
      sha = createHash('sha1').update(script).digest('hex');
      this.scriptShas.set(script, sha);
    }
    try {
      return await this.command(['EVALSHA', sha, keys.length, ...keys, ...args]);
    } catch (error) {
      if (!(error instanceof RespError) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.command(['EVAL', script, keys.length, ...keys, ...args]);
    }
  }

  /** Ends the connection (QUIT when connected) and stops reconnecting. */
  async close(): Promise<void> {
    const { socket, state } = this;
    this.state = 'closed';
    clearTimeout(this.reconnectTimer);
    if (!socket) return;
    if (state === 'ready') await this.send(socket, ['QUIT']).catch(() => undefined);
    socket.destroy();
  }

  private async handshake(socket: Socket): Promise<void> {
    try {
      const password = this.options.password?.();
      if (this.options.username !== undefined && password !== undefined) {
        await this.send(socket, ['AUTH', this.options.username, password]);
      }
    } catch {
      socket.destroy(); // refused or timed out: the next attempt reads the password again
      return;
    }
    if (this.socket !== socket || this.state !== 'connecting') return;
    this.state = 'ready';
    this.attempt = 0;
    for (const listener of this.readyListeners.splice(0)) listener();
  }

  private send(socket: Socket, args: readonly RespArgument[]): Promise<RespReply> {
    return new Promise<RespReply>((resolve, reject) => {
      const pending: PendingCommand = { resolve, reject, settled: false };
      pending.timer = setTimeout(() => {
        // Its reply may still come: the slot stays, so later replies match their commands.
        pending.settled = true;
        reject(new RespUnavailableError(`no reply from Redis within ${this.options.commandTimeoutMs} ms`));
      }, this.options.commandTimeoutMs);
      pending.timer.unref();
      this.pending.push(pending);
      socket.write(encodeCommand(args));
    });
  }

  private received(socket: Socket, chunk: Buffer): void {
    let replies: Array<RespReply | RespError>;
    try {
      replies = this.parser.push(chunk);
    } catch {
      socket.destroy(); // a stream that is not RESP cannot be resynchronised
      return;
    }
    for (const reply of replies) {
      const pending = this.pending.shift();
      if (!pending || pending.settled) continue;
      pending.settled = true;
      clearTimeout(pending.timer);
      if (reply instanceof RespError) pending.reject(reply);
      else pending.resolve(reply);
    }
  }

  /** The socket closed: whatever waited on it fails, and unless closed on purpose the next attempt is scheduled. */
  private lost(socket: Socket): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.parser = new RespParser();
    for (const pending of this.pending.splice(0)) {
      if (pending.settled) continue;
      pending.settled = true;
      clearTimeout(pending.timer);
      pending.reject(new RespUnavailableError('the connection to Redis was lost'));
    }
    if (this.state === 'closed') return;
    this.state = 'idle';
    this.reconnectTimer = setTimeout(() => this.connect(), this.options.retryDelayMs(this.attempt++));
    this.reconnectTimer.unref();
  }
}
