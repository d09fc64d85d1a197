// The L2 cache's Redis client against a scripted server on a local socket: the RESP encoding and parsing
// (replies split anywhere across chunks), pipelined replies matched to their commands, a timed-out command
// whose late reply does not shift the next one's, failing fast while disconnected, reconnecting with AUTH.
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import {
  RespClient,
  RespError,
  RespParser,
  RespUnavailableError,
  encodeCommand,
  type RespReply,
} from '../../../lambdas/adapters/resp-client';

/**
 * A server that answers each complete command by `answer` (undefined: no reply), in command order as Redis does;
 * a reply with `after` is written once that promise resolves, and the replies behind it wait for it.
 */
interface ScriptedServer {
  url: string;
  commands: string[][];
  sockets: Set<Socket>;
  close(): Promise<void>;
}

function parseCommands(buffer: Buffer): { commands: string[][]; rest: Buffer } {
  const parser = new RespParser();
  const replies = parser.push(buffer) as RespReply[];
  const commands = replies.map((reply) => (reply as Buffer[]).map((part) => String(part)));
  // What the parser kept is an incomplete command: measured by what it consumed.
  const consumed = commands.reduce((sum, command) => sum + encodeCommand(command).length, 0);
  return { commands, rest: buffer.subarray(consumed) };
}

async function scriptedServer(answer: (command: string[]) => { reply?: string; after?: Promise<void> }): Promise<ScriptedServer> {
  const commands: string[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    let written = Promise.resolve();
    socket.on('data', (chunk) => {
      const parsed = parseCommands(Buffer.concat([buffered, chunk]));
      buffered = Buffer.from(parsed.rest);
      for (const command of parsed.commands) {
        commands.push(command);
        const { reply, after } = command[0] === 'QUIT' ? { reply: '+OK\r\n', after: undefined } : answer(command);
        if (reply === undefined) continue;
        written = written.then(async () => {
          await after;
          if (!socket.destroyed) socket.write(reply);
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    commands,
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const options = { connectTimeoutMs: 1_000, commandTimeoutMs: 200, retryDelayMs: () => 20 };

async function readyClient(url: string, extra: Partial<ConstructorParameters<typeof RespClient>[1]> = {}): Promise<RespClient> {
  const client = new RespClient(url, { ...options, ...extra });
  await new Promise<void>((resolve) => client.onceReady(resolve));
  return client;
}

describe('RESP encoding and parsing', () => {
  it('encodes a command as an array of bulk strings, bytes kept as they are', () => {
    expect(encodeCommand(['HMGET', 'rs:k', 'v']).toString()).toBe('*3\r\n$5\r\nHMGET\r\n$4\r\nrs:k\r\n$1\r\nv\r\n');
    expect(encodeCommand([Buffer.from([0, 13, 10, 255]), 7])).toEqual(
      Buffer.concat([Buffer.from('*2\r\n$4\r\n'), Buffer.from([0, 13, 10, 255]), Buffer.from('\r\n$1\r\n7\r\n')]),
    );
  });

  it('parses every reply type, whatever the chunks the stream arrives in', () => {
    const stream = Buffer.concat([
      Buffer.from('+OK\r\n-NOPERM no\r\n:42\r\n$-1\r\n*-1\r\n'),
      Buffer.from('*3\r\n$2\r\nab\r\n$-1\r\n*1\r\n:-7\r\n'),
      Buffer.from('$4\r\n'),
      Buffer.from([0, 13, 10, 255]),
      Buffer.from('\r\n'),
    ]);
    const expected = ['OK', 'NOPERM no', 42, null, null, [Buffer.from('ab'), null, [-7]], Buffer.from([0, 13, 10, 255])];
    const normalise = (replies: unknown[]) => replies.map((reply) => (reply instanceof RespError ? reply.message : reply));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), (cuts) => {
        const parser = new RespParser();
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const replies: unknown[] = [];
        let from = 0;
        for (const point of [...points, stream.length]) {
          replies.push(...parser.push(stream.subarray(from, point)));
          from = point;
        }
        expect(normalise(replies)).toEqual(expected);
        expect(replies[1]).toBeInstanceOf(RespError);
      }),
    );
  });
});

describe('RespClient', () => {
  let server: ScriptedServer | undefined;
  let client: RespClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('matches pipelined replies to their commands, in order', async () => {
    server = await scriptedServer(([, key]) => ({ reply: `$${key!.length}\r\n${key}\r\n` }));
    client = await readyClient(server.url);

    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => client!.command(['GET', `key-${i}`])));

    expect(replies.map(String)).toEqual(Array.from({ length: 50 }, (_, i) => `key-${i}`));
  });

  it('times a slow command out without shifting the replies of the commands after it', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server = await scriptedServer(([, key]) => ({ reply: `+${key}\r\n`, ...(key === 'slow' ? { after: held } : {}) }));
    client = await readyClient(server.url, { commandTimeoutMs: 1_000 });

    // Its reply is held until it has timed out.
    await expect(client.command(['GET', 'slow'])).rejects.toBeInstanceOf(RespUnavailableError);
    const after = client.command(['GET', 'after']);
    release();

    // The late reply fills the slow command's slot; the next command gets its own.
    await expect(after).resolves.toBe('after');
  });

  it('rejects an error reply as RespError, and the connection stays usable', async () => {
    server = await scriptedServer(([name]) => ({ reply: name === 'FLUSHALL' ? '-NOPERM this user has no permissions\r\n' : '+PONG\r\n' }));
    client = await readyClient(server.url);

    await expect(client.command(['FLUSHALL'])).rejects.toThrow(/NOPERM/);
    await expect(client.command(['PING'])).resolves.toBe('PONG');
  });

  it('authenticates each connection with the password of the moment, fails fast while away, and reconnects', async () => {
    let password = 'first';
    server = await scriptedServer(([name, , given]) => ({
      reply: name === 'AUTH' ? (given === password ? '+OK\r\n' : '-WRONGPASS invalid\r\n') : '+PONG\r\n',
    }));
    client = await readyClient(server.url, { username: 'ringstore-l2', password: () => password });
    await expect(client.command(['PING'])).resolves.toBe('PONG');

    // The connection drops; while it is away a command fails at once instead of waiting.
    password = 'second';
    const reconnected = new Promise<void>((resolve) => client!.onceReady(resolve));
    for (const socket of server.sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await expect(client.command(['PING'])).rejects.toBeInstanceOf(RespUnavailableError);
    expect(Date.now() - started).toBeLessThan(options.commandTimeoutMs);
    await reconnected;

    await expect(client.command(['PING'])).resolves.toBe('PONG');
    expect(server.commands.filter(([name]) => name === 'AUTH')).toEqual([
      ['AUTH', 'ringstore-l2', 'first'],
      ['AUTH', 'ringstore-l2', 'second'],
    ]);
  });

  it('runs a script by its digest and sends the script only when Redis answers NOSCRIPT', async () => {
    let loaded = false;
    server = await scriptedServer(([name]) => {
      if (name === 'EVALSHA') return { reply: loaded ? ':1\r\n' : '-NOSCRIPT No matching script\r\n' };
      loaded = true;
      return { reply: ':1\r\n' };
    });
    client = await readyClient(server.url);

    await expect(client.evalScript('return 1', ['rs:k'], [1])).resolves.toBe(1);
    await expect(client.evalScript('return 1', ['rs:k'], [2])).resolves.toBe(1);

    const sha = createHash('sha1').update('return 1').digest('hex');
    expect(server.commands).toEqual([
      ['EVALSHA', sha, '1', 'rs:k', '1'],
      ['EVAL', 'return 1', '1', 'rs:k', '1'],
      ['EVALSHA', sha, '1', 'rs:k', '2'],
    ]);
  });

  it('closes with QUIT and does not reconnect', async () => {
    server = await scriptedServer(() => ({ reply: '+OK\r\n' }));
    client = await readyClient(server.url);

    await client.close();
    await new Promise((resolve) => setTimeout(resolve, 80));

    expect(server.commands).toEqual([['QUIT']]);
    await expect(client.command(['PING'])).rejects.toBeInstanceOf(RespUnavailableError);
  });
});
