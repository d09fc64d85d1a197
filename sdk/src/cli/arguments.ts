// The CLI's arguments and options that its command groups share: parsers of option values, the value argument
// (text, @file, @-), --consistency, a page's --limit/--cursor, and the usage failure they report.

import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { InvalidArgumentError, Option } from 'commander';

/**
 * A failure the CLI reports as `error: <message>` without a code (usage, local files).
 *
 * @example
 * ```ts
 * throw new CommandFailure('give the ops either as words or with --file, not both');
 * ```
 */
export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/**
 * A parser of an integer option from `min` to `max`; anything else is refused naming the range.
 *
 * @example
 * ```ts
 * program.option('--ttl <seconds>', 'expire after this many seconds', parseInteger(1));
 * ```
 */
export function parseInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min || Number(raw) > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER ? `expected an integer >= ${min}` : `expected an integer from ${min} to ${max}`,
      );
    }
    return Number(raw);
  };
}

// A small table is enough: the content type only matters for how `get` shows the value later.
const contentTypeByExtension: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
};

/**
 * A value argument: text, `@path` (the file's bytes, typed by extension), `@-` (standard input's bytes, as
 * `redis-cli -x` takes them) or `@@text` (the text `@text`).
 *
 * @example
 * ```ts
 * const { body, contentType } = await valueArgument('@./photo.png');
 * ```
 */
export async function valueArgument(
  value: string,
  stdin?: NodeJS.ReadableStream,
): Promise<{ body: Uint8Array | string; contentType?: string }> {
  if (value.startsWith('@@')) return { body: value.slice(1) };
  if (!value.startsWith('@')) return { body: value };
  if (value === '@-') {
    if (stdin === undefined) throw new CommandFailure('@- reads the value from standard input, which carries the commands here');
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return { body: new Uint8Array(Buffer.concat(chunks)), contentType: 'application/octet-stream' };
  }
  const path = value.slice(1);
  try {
    return { body: await readFile(path), contentType: contentTypeByExtension[extname(path).toLowerCase()] ?? 'application/octet-stream' };
  } catch (err) {
    throw new CommandFailure(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * The --consistency option of the reads and writes that take one.
 *
 * @example
 * ```ts
 * program.command('get').addOption(consistencyOption());
 * ```
 */
export function consistencyOption(): Option {
  return new Option('--consistency <level>', 'read/write consistency').choices(['eventual', 'strong']);
}

/**
 * The page a paged listing's --limit and --cursor ask for.
 *
 * @example
 * ```ts
 * await admin.lostKeys(pageOf(options), call());
 * ```
 */
export function pageOf(options: { limit?: number; cursor?: string }): { limit?: number; cursor?: string } {
  return {
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  };
}
