// The NBD protocol's numbers and the encodings of what the server sends (the NetworkBlockDevice project's
// doc/proto.md): the fixed newstyle handshake, option replies, and simple replies in the transmission phase.
// Written here because no npm package implements an NBD server; only what the server uses is named.

/** `NBDMAGIC`, the first 8 bytes a server sends. */
export const NBD_MAGIC = 0x4e42444d41474943n;
/** `IHAVEOPT`: after NBD_MAGIC in newstyle, and before every option a client sends. */
export const IHAVEOPT = 0x49484156454f5054n;
/** Before every option reply. */
export const OPTION_REPLY_MAGIC = 0x3e889045565a9n;
export const REQUEST_MAGIC = 0x25609513;
export const SIMPLE_REPLY_MAGIC = 0x67446698;

/** Handshake flags (server) and client flags. */
export const FLAG_FIXED_NEWSTYLE = 1 << 0;
export const FLAG_NO_ZEROES = 1 << 1;
export const FLAG_C_FIXED_NEWSTYLE = 1 << 0;
export const FLAG_C_NO_ZEROES = 1 << 1;

export const Option = {
  EXPORT_NAME: 1,
  ABORT: 2,
  LIST: 3,
  STARTTLS: 5,
  INFO: 6,
  GO: 7,
  STRUCTURED_REPLY: 8,
} as const;

export const Reply = {
  ACK: 1,
  SERVER: 2,
  INFO: 3,
  ERR_UNSUP: 2 ** 31 + 1,
  ERR_POLICY: 2 ** 31 + 2,
  ERR_INVALID: 2 ** 31 + 3,
  ERR_UNKNOWN: 2 ** 31 + 6,
} as const;

export const Info = { EXPORT: 0, NAME: 1, DESCRIPTION: 2, BLOCK_SIZE: 3 } as const;

/** Transmission flags: what the export takes. */
export const Transmission = {
  HAS_FLAGS: 1 << 0,
  READ_ONLY: 1 << 1,
  SEND_FLUSH: 1 << 2,
  SEND_FUA: 1 << 3,
  SEND_TRIM: 1 << 5,
  SEND_WRITE_ZEROES: 1 << 6,
  CAN_MULTI_CONN: 1 << 8,
} as const;

export const Command = { READ: 0, WRITE: 1, DISC: 2, FLUSH: 3, TRIM: 4, CACHE: 5, WRITE_ZEROES: 6 } as const;

export const CommandFlag = { FUA: 1 << 0, NO_HOLE: 1 << 1 } as const;

/** The errors a simple reply carries (errno values, as the protocol fixes them). */
export const NbdError = { EPERM: 1, EIO: 5, ENOMEM: 12, EINVAL: 22, ENOSPC: 28, EOVERFLOW: 75, ENOTSUP: 95, ESHUTDOWN: 108 } as const;

/** The largest payload a client may send or ask for when no block size was agreed (the protocol's 32 MiB). */
export const PAYLOAD_BYTES_MAX = 32 * 1024 * 1024;

/** The server's first 18 bytes: NBDMAGIC, IHAVEOPT, its handshake flags. */
export function greeting(): Buffer {
  const buffer = Buffer.alloc(18);
  buffer.writeBigUInt64BE(NBD_MAGIC, 0);
  buffer.writeBigUInt64BE(IHAVEOPT, 8);
  buffer.writeUInt16BE(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES, 16);
  return buffer;
}

/** One option reply: its header and `data`. */
export function optionReply(option: number, type: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(20);
  header.writeBigUInt64BE(OPTION_REPLY_MAGIC, 0);
  header.writeUInt32BE(option, 8);
  header.writeUInt32BE(type, 12);
  header.writeUInt32BE(data.length, 16);
  return Buffer.concat([header, data]);
}

/** NBD_INFO_EXPORT: the size and transmission flags. */
export function exportInfo(sizeBytes: number, flags: number): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt16BE(Info.EXPORT, 0);
  data.writeBigUInt64BE(BigInt(sizeBytes), 2);
  data.writeUInt16BE(flags, 10);
  return data;
}

/** NBD_INFO_BLOCK_SIZE: the minimum, preferred and maximum request sizes. */
export function blockSizeInfo(minimum: number, preferred: number, maximum: number): Buffer {
  const data = Buffer.alloc(14);
  data.writeUInt16BE(Info.BLOCK_SIZE, 0);
  data.writeUInt32BE(minimum, 2);
  data.writeUInt32BE(preferred, 6);
  data.writeUInt32BE(maximum, 10);
  return data;
}

/** NBD_INFO_NAME or NBD_INFO_DESCRIPTION: a UTF-8 text. */
export function textInfo(type: typeof Info.NAME | typeof Info.DESCRIPTION, text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const data = Buffer.alloc(2 + bytes.length);
  data.writeUInt16BE(type, 0);
  bytes.copy(data, 2);
  return data;
}

/** NBD_REP_SERVER's data for one export of NBD_OPT_LIST. */
export function serverEntry(name: string): Buffer {
  const bytes = Buffer.from(name, 'utf8');
  const data = Buffer.alloc(4 + bytes.length);
  data.writeUInt32BE(bytes.length, 0);
  bytes.copy(data, 4);
  return data;
}

/** What NBD_OPT_EXPORT_NAME answers (no option reply header): the size and the transmission flags. */
export function exportNameReply(sizeBytes: number, flags: number, noZeroes: boolean): Buffer {
  const buffer = Buffer.alloc(noZeroes ? 10 : 134);
  buffer.writeBigUInt64BE(BigInt(sizeBytes), 0);
  buffer.writeUInt16BE(flags, 8);
  return buffer;
}

/** A simple reply's header (the data of a successful read follows it). */
export function simpleReply(error: number, cookie: bigint): Buffer {
  const buffer = Buffer.alloc(16);
  buffer.writeUInt32BE(SIMPLE_REPLY_MAGIC, 0);
  buffer.writeUInt32BE(error, 4);
  buffer.writeBigUInt64BE(cookie, 8);
  return buffer;
}

/** A request of the transmission phase (its 28-byte header). */
export interface NbdRequest {
  flags: number;
  type: number;
  cookie: bigint;
  offset: number;
  length: number;
}

/** The request header at the start of `header` (28 bytes), or undefined when its magic is wrong. */
export function parseRequest(header: Buffer): NbdRequest | undefined {
  if (header.readUInt32BE(0) !== REQUEST_MAGIC) return undefined;
  const offset = header.readBigUInt64BE(16);
  return {
    flags: header.readUInt16BE(4),
    type: header.readUInt16BE(6),
    cookie: header.readBigUInt64BE(8),
    // Past 2^53 no export of ours reaches: kept as the largest safe integer, answered out of range.
    offset: offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(offset),
    length: header.readUInt32BE(24),
  };
}
