// The NBD server against real clients (qemu-io, nbdinfo, nbdcopy; ext4 made and checked with e2fsprogs) and a raw
// socket for what the tools do not send: a memory device behind it, so what each request did can be read back.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BlockDevice, NbdServer } from '../src/nbd/server';
import { qemuIo, tool } from './support/nbd-tools';

const MiB = 1024 * 1024;

/** A device in memory that records the sizes of the calls it takes. */
class MemoryDevice implements BlockDevice {
  readonly bytes: Uint8Array;
  readonly calls: Array<{ op: string; offset: number; length: number }> = [];
  constructor(
    readonly sizeBytes: number,
    readonly readOnly = false,
    readonly ioBytesMax = 256 * 1024,
  ) {
    this.bytes = new Uint8Array(sizeBytes);
  }
  async read(offset: number, length: number) {
    this.calls.push({ op: 'read', offset, length });
    return this.bytes.slice(offset, offset + length);
  }
  async write(offset: number, data: Uint8Array) {
    this.calls.push({ op: 'write', offset, length: data.length });
    this.bytes.set(data, offset);
  }
  async trim(offset: number, length: number) {
    this.calls.push({ op: 'trim', offset, length });
    this.bytes.fill(0, offset, offset + length);
  }
}

let server: NbdServer;
let disk: MemoryDevice;
let snapshot: MemoryDevice;
let url: string;
const work = mkdtempSync(join(tmpdir(), 'ringstore-nbd-'));

beforeAll(async () => {
  disk = new MemoryDevice(64 * MiB);
  snapshot = new MemoryDevice(4 * MiB, true);
  snapshot.bytes.fill(7);
  server = new NbdServer({
    exports: [
      { name: 'disk', device: disk },
      { name: 'snap', description: 'read-only', device: snapshot },
    ],
  });
  await server.listen({ port: 0 });
  url = `nbd://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the NBD server, to real clients', () => {
  it('answers the handshake: size, block sizes and what the export takes (nbdinfo)', async () => {
    const info = JSON.parse((await tool('nbdinfo', ['--json', `${url}/disk`])).stdout) as {
      protocol: string;
      exports: Array<Record<string, unknown>>;
    };
    expect(info.protocol).toBe('newstyle-fixed');
    expect(info.exports[0]).toMatchObject({
      'export-size': 64 * MiB,
      block_size_minimum: 1,
      block_size_preferred: 4096,
      block_size_maximum: 256 * 1024,
      is_read_only: false,
      can_trim: true,
      can_zero: true,
      can_flush: true,
      can_fua: true,
      can_multi_conn: true,
    });
    const listed = (await tool('nbdinfo', ['--list', '--json', url])).stdout;
    expect((JSON.parse(listed) as { exports: Array<{ 'export-name': string }> }).exports.map((e) => e['export-name'])).toEqual([
      'disk',
      'snap',
    ]);
  });

  it('writes patterns at aligned and unaligned offsets and reads them back (qemu-io)', async () => {
    const output = await qemuIo(`${url}/disk`, [
      'write -P 0xab 1000 5000',
      'write -P 0xcd 8192 4096',
      'write -P 0x11 1048575 300000',
      'read -P 0xab 1000 5000',
      'read -P 0xcd 8192 4096',
      'read -P 0x11 1048575 300000',
      'aio_write -P 0x22 4194304 65536',
      'aio_write -P 0x33 4259840 65536',
      'aio_flush',
      'read -P 0x22 4194304 65536',
      'read -P 0x33 4259840 65536',
      'flush',
    ]);
    expect(output).not.toMatch(/failed|error|Pattern verification/i);
    expect(disk.bytes.subarray(1000, 6000).every((byte) => byte === 0xab)).toBe(true);
    expect(disk.bytes[999]).toBe(0);
    // The 300,000-byte write went to the device in parts of its atomic maximum (256 KiB), in order.
    const parts = disk.calls.filter((call) => call.op === 'write' && call.offset >= 1048575 && call.offset < 1048575 + 300000);
    expect(parts.map((part) => part.length)).toEqual([256 * 1024, 300000 - 256 * 1024]);
  });

  it('trims and writes zeros: the range reads as zeros, freed unless the client asks for no hole', async () => {
    await qemuIo(`${url}/disk`, ['write -P 0x44 20971520 65536']);
    const from = disk.calls.length;
    const output = await qemuIo(`${url}/disk`, [
      'discard 20971520 4096',
      // -z alone asks for allocated zeros (NO_HOLE): written as data; -u lets the server free them.
      'write -z 20975616 4096',
      'write -z -u 20979712 4096',
      'read -P 0 20971520 12288',
      'read -P 0x44 20983808 4096',
    ]);
    expect(output).not.toMatch(/failed|error|Pattern verification/i);
    const calls = disk.calls.slice(from).filter((call) => call.op !== 'read');
    expect(calls).toEqual([
      { op: 'trim', offset: 20971520, length: 4096 },
      { op: 'write', offset: 20975616, length: 4096 },
      { op: 'trim', offset: 20979712, length: 4096 },
    ]);
  });

  it('copies an ext4 image in and out whole, and the copy checks clean (mkfs.ext4 -d, nbdcopy, e2fsck)', async () => {
    const files = join(work, 'files');
    mkdirSync(join(files, 'docs'), { recursive: true });
    for (let n = 0; n < 20; n += 1) writeFileSync(join(files, 'docs', `file-${n}.txt`), `file ${n}\n`.repeat(200 + n * 37));
    const image = join(work, 'in.img');
    await tool('mkfs.ext4', ['-q', '-F', '-d', files, image, '16M']);
    await tool('nbdcopy', [image, `${url}/disk`]);
    const out = join(work, 'out.img');
    await tool('nbdcopy', [`${url}/disk`, out]);
    const copied = readFileSync(out).subarray(0, 16 * MiB);
    expect(Buffer.compare(copied, readFileSync(image))).toBe(0);
    writeFileSync(join(work, 'check.img'), copied);
    const check = await tool('e2fsck', ['-fn', join(work, 'check.img')]);
    expect(check.stdout).toMatch(/clean|files/);
    expect(check.stdout).not.toMatch(/error|corrupt/i);
  });

  it('serves a read-only export: reads answer, a writable open is refused', async () => {
    expect(await qemuIo(`${url}/snap`, ['read -P 7 0 65536'], ['-r'])).not.toMatch(/failed|error|Pattern verification/i);
    await expect(qemuIo(`${url}/snap`, ['write -P 1 0 4096'])).rejects.toThrow(/Permission denied|read-only/i);
    expect(snapshot.calls.filter((call) => call.op !== 'read')).toEqual([]);
  });
});

/** A raw client for what the tools never send: it speaks the handshake by hand. */
class RawClient {
  private readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private closed = false;
  private wake: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const client = new RawClient(socket);
    await client.read(18);
    socket.write(Buffer.from([0, 0, 0, 3]));
    return client;
  }

  async read(length: number): Promise<Buffer> {
    while (this.buffered.length < length) {
      if (this.closed) throw new Error('closed');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const taken = this.buffered.subarray(0, length);
    this.buffered = this.buffered.subarray(length);
    return taken;
  }

  async isClosed(): Promise<boolean> {
    for (let n = 0; n < 50 && !this.closed; n += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.closed;
  }

  option(option: number, data: Buffer = Buffer.alloc(0)): void {
    const header = Buffer.alloc(16);
    header.writeBigUInt64BE(0x49484156454f5054n, 0);
    header.writeUInt32BE(option, 8);
    header.writeUInt32BE(data.length, 12);
    this.socket.write(Buffer.concat([header, data]));
  }

  /** One option reply: its type and data. */
  async optionReply(): Promise<{ type: number; data: Buffer }> {
    const header = await this.read(20);
    return { type: header.readUInt32BE(12), data: await this.read(header.readUInt32BE(16)) };
  }

  async go(name: string): Promise<void> {
    const data = Buffer.alloc(4 + name.length + 2);
    data.writeUInt32BE(name.length, 0);
    data.write(name, 4);
    this.option(7, data);
    for (;;) if ((await this.optionReply()).type === 1) return;
  }

  request(type: number, offset: number, length: number, cookie: bigint, payload?: Buffer): void {
    const header = Buffer.alloc(28);
    header.writeUInt32BE(0x25609513, 0);
    header.writeUInt16BE(type, 6);
    header.writeBigUInt64BE(cookie, 8);
    header.writeBigUInt64BE(BigInt(offset), 16);
    header.writeUInt32BE(length, 24);
    this.socket.write(payload ? Buffer.concat([header, payload]) : header);
  }

  async reply(): Promise<{ error: number; cookie: bigint }> {
    const header = await this.read(16);
    return { error: header.readUInt32BE(4), cookie: header.readBigUInt64BE(8) };
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('the NBD server, by hand', () => {
  it('refuses an unknown export (GO: NBD_REP_ERR_UNKNOWN; EXPORT_NAME: the connection ends) and options it does not offer', async () => {
    const client = await RawClient.open(server.port);
    const data = Buffer.alloc(4 + 7 + 2);
    data.writeUInt32BE(7, 0);
    data.write('missing', 4);
    client.option(7, data);
    expect((await client.optionReply()).type).toBe(2 ** 31 + 6);
    client.option(8);
    expect((await client.optionReply()).type).toBe(2 ** 31 + 1);
    client.option(3, Buffer.from('x'));
    expect((await client.optionReply()).type).toBe(2 ** 31 + 3);
    client.option(1, Buffer.from('missing'));
    expect(await client.isClosed()).toBe(true);
  });

  it('answers requests past the end and unknown commands with an error, and serves the next ones; DISC ends it', async () => {
    const client = await RawClient.open(server.port);
    await client.go('disk');
    client.request(0, 64 * MiB - 10, 20, 1n);
    expect(await client.reply()).toEqual({ error: 22, cookie: 1n });
    client.request(1, 64 * MiB - 1, 2, 2n, Buffer.from([1, 2]));
    expect(await client.reply()).toEqual({ error: 28, cookie: 2n });
    client.request(42, 0, 0, 3n);
    expect(await client.reply()).toEqual({ error: 22, cookie: 3n });
    client.request(1, 100, 3, 4n, Buffer.from([9, 9, 9]));
    expect(await client.reply()).toEqual({ error: 0, cookie: 4n });
    client.request(0, 100, 3, 5n);
    expect(await client.reply()).toEqual({ error: 0, cookie: 5n });
    expect([...(await client.read(3))]).toEqual([9, 9, 9]);
    client.request(2, 0, 0, 6n);
    expect(await client.isClosed()).toBe(true);
    const reader = await RawClient.open(server.port);
    await reader.go('snap');
    reader.request(1, 0, 1, 7n, Buffer.from([1]));
    expect(await reader.reply()).toEqual({ error: 1, cookie: 7n });
    reader.request(4, 0, 4096, 8n);
    expect(await reader.reply()).toEqual({ error: 1, cookie: 8n });
    reader.close();
  });

  it("answers a device's failure with its errno, and keeps serving", async () => {
    const failing: BlockDevice = {
      sizeBytes: MiB,
      readOnly: false,
      ioBytesMax: 4096,
      read: async () => {
        throw new Error('shard unavailable');
      },
      write: async () => {
        throw Object.assign(new Error('fenced'), { code: 'volume.fenced' });
      },
      trim: async () => undefined,
    };
    const lines: string[] = [];
    const own = new NbdServer({
      exports: [{ name: 'failing', device: failing }],
      errnoOf: (error) => ((error as { code?: string }).code === 'volume.fenced' ? 1 : 5),
      log: (line) => lines.push(line),
    });
    await own.listen({ port: 0 });
    try {
      const client = await RawClient.open(own.port);
      await client.go('failing');
      client.request(0, 0, 10, 1n);
      expect(await client.reply()).toEqual({ error: 5, cookie: 1n });
      client.request(1, 0, 1, 2n, Buffer.from([1]));
      expect(await client.reply()).toEqual({ error: 1, cookie: 2n });
      client.request(4, 0, 4096, 3n);
      expect(await client.reply()).toEqual({ error: 0, cookie: 3n });
      expect(lines.join('\n')).toMatch(/READ at 0 \(10 bytes\) failed: shard unavailable/);
      client.close();
    } finally {
      await own.close();
    }
  });
});
