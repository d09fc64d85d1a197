// Exact-length reads from a socket, as the NBD protocol's fixed-size headers and declared payloads need: the
// bytes that arrived are kept until a read takes them; a socket that ends mid-read fails the read.
import type { Socket } from 'node:net';

/** Past this many bytes waiting to be read, the socket is paused until a read takes them. */
const bufferedBytesMax = 64 * 1024 * 1024;

export class SocketReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private waiting: { length: number; resolve: (bytes: Buffer) => void; reject: (error: Error) => void } | undefined;
  private ended: Error | undefined;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered > bufferedBytesMax) socket.pause();
      this.settle();
    });
    const end = (error?: Error) => {
      this.ended ??= error ?? new Error('the connection closed');
      this.settle();
    };
    socket.on('end', () => end());
    socket.on('close', () => end());
    socket.on('error', (error) => end(error));
  }

  /** The next `length` bytes; rejects when the connection ends first. One read at a time. */
  read(length: number): Promise<Buffer> {
    if (this.waiting) return Promise.reject(new Error('SocketReader: one read at a time'));
    return new Promise((resolve, reject) => {
      this.waiting = { length, resolve, reject };
      this.settle();
    });
  }

  private settle(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    if (this.buffered >= waiting.length) {
      this.waiting = undefined;
      waiting.resolve(this.take(waiting.length));
      if (this.buffered <= bufferedBytesMax && this.socket.isPaused()) this.socket.resume();
    } else if (this.ended) {
      this.waiting = undefined;
      waiting.reject(this.ended);
    }
  }

  private take(length: number): Buffer {
    const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks.length = 0;
    const taken = whole.subarray(0, length);
    const rest = whole.subarray(length);
    this.buffered = rest.length;
    if (rest.length > 0) this.chunks.push(rest);
    return taken;
  }
}
