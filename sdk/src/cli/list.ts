// `ringstore list`: keys under a prefix, page by page up to --limit, and with --values each key's value, read a few
// at a time and printed in key order as each is ready, so memory holds a few values rather than the listing's.

import { type Command } from 'commander';
import type { RingstoreClient } from '../client';
import type { GetCommandOutput, ListItem } from '../commands';
import { NotFoundError } from '../errors';
import { LIST_ALL_PAGES_MAX, LIST_LIMIT_MAX } from '../limits';
import { parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatList, showKey } from './format';
import { inlineValue, outputFormatOf, outputOption, valueJson, type OutputFormat } from './format-json';

/** Values `list --values` reads at once. */
export const LIST_VALUES_CONCURRENCY = 8;

/** What `list --values` shows for a key deleted between the listing and the read of its value. */
export const DELETED_SINCE_LISTED = '<deleted since listed>';

interface ListOptions {
  limit?: number;
  cursor?: string;
  json?: boolean;
  output?: OutputFormat;
  values?: boolean;
}

/**
 * A word as a POSIX shell reads it back: as is when safe, else single-quoted (for the commands the CLI prints).
 *
 * @example
 * ```ts
 * shellWord("it's"); // `'it'\''s'`
 * ```
 */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The listing's items up to --limit, and the cursor of the next key when there are more. */
async function listItems(
  ringstore: RingstoreClient,
  prefix: string | undefined,
  options: ListOptions,
  call: CommandGroupContext['call'],
): Promise<{ items: ListItem[]; cursor?: string }> {
  const items: ListItem[] = [];
  // Each page asks for no more than is still wanted, so the last page's cursor is the next key to show.
  let cursor = options.cursor;
  for (let pages = 0; pages < LIST_ALL_PAGES_MAX; pages++) {
    const limit = Math.min((options.limit ?? Number.MAX_SAFE_INTEGER) - items.length, LIST_LIMIT_MAX);
    const page = await ringstore.list({
      ...call(),
      limit,
      ...(prefix === undefined ? {} : { prefix }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    items.push(...page.items);
    cursor = page.cursor;
    if (cursor === undefined || (options.limit !== undefined && items.length >= options.limit)) break;
  }
  return cursor === undefined ? { items } : { items, cursor };
}

/** The `more:` line: the command that lists the keys after these. */
function moreLine(prefix: string | undefined, options: ListOptions, cursor: string): string {
  return [
    'more: ringstore list',
    ...(prefix === undefined ? [] : [shellWord(prefix)]),
    ...(options.limit === undefined ? [] : ['--limit', String(options.limit)]),
    ...(options.values === true ? ['--values'] : []),
    '--cursor',
    shellWord(cursor),
  ].join(' ');
}

/**
 * `work` applied to each item, at most `width` at once, yielded in the items' order. A rejection is thrown when its
 * turn comes; the reads still in flight then finish unobserved.
 *
 * @example
 * ```ts
 * for await (const item of inOrder(keys, 8, (key) => client.get(key))) console.log(item.text());
 * ```
 */
export async function* inOrder<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): AsyncGenerator<R> {
  const started: Promise<R>[] = [];
  const start = (item: T): void => {
    const promise = work(item);
    // Handled here so that a failure behind the one thrown is no unhandled rejection; it is thrown in its turn.
    promise.catch(() => undefined);
    started.push(promise);
  };
  let next = 0;
  while (next < items.length && started.length < width) start(items[next++] as T);
  while (started.length > 0) {
    const result = await (started.shift() as Promise<R>);
    if (next < items.length) start(items[next++] as T);
    yield result;
  }
}

/** A listed key's value; `undefined` when the key was deleted after it was listed. */
async function valueOf(
  ringstore: RingstoreClient,
  item: ListItem,
  call: CommandGroupContext['call'],
): Promise<GetCommandOutput | undefined> {
  try {
    return await ringstore.get(item.key, call());
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Writes items as `JSON.stringify(items, null, 2)` would, one at a time. */
function jsonArrayWriter(write: (text: string) => void): { item: (value: unknown) => void; end: () => void } {
  let count = 0;
  return {
    item: (value) => write(`${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(value, null, 2).replace(/^/gm, '  ')}`),
    end: () => write(count === 0 ? '[]\n' : '\n]\n'),
  };
}

/** Prints each item with its value: `key<TAB>value` lines, or a JSON array whose items gain `value` (or `deleted`). */
async function printWithValues(
  ringstore: RingstoreClient,
  items: readonly ListItem[],
  format: OutputFormat,
  { call, out, session }: CommandGroupContext,
): Promise<void> {
  const json = jsonArrayWriter((text) => void session.stdout.write(text));
  const reads = inOrder(items, LIST_VALUES_CONCURRENCY, async (item) => ({ item, got: await valueOf(ringstore, item, call) }));
  for await (const { item, got } of reads) {
    if (format === 'json') json.item(got === undefined ? { ...item, deleted: true } : valueJson(got));
    else out(`${showKey(item.key)}\t${got === undefined ? DELETED_SINCE_LISTED : inlineValue(got.contentType, got.value)}`);
  }
  if (format === 'json') json.end();
}

/**
 * Adds `list [prefix]` (alias `ls`) to `program`.
 *
 * @example
 * ```ts
 * addListCommand(program, { client, call, out, session });
 * ```
 */
export function addListCommand(program: Command, context: CommandGroupContext): void {
  const { client, call, out, session } = context;
  program
    .command('list')
    .alias('ls')
    .description('list keys, optionally under a prefix; with --limit, a "more:" line gives the command for the next keys')
    .argument('[prefix]', 'only keys starting with this')
    .option('--limit <n>', 'show at most n keys', parseInteger(1))
    .option('--cursor <cursor>', 'continue after the keys a previous list showed (its "more:" line)')
    .option('--values', `read each key's value too (${LIST_VALUES_CONCURRENCY} at a time): key<TAB>value lines, or "value" in --json`)
    .option('--json', 'print the items as JSON (the "more:" line goes to stderr)')
    .addOption(outputOption())
    .action(async (prefix: string | undefined, options: ListOptions) => {
      const format = outputFormatOf(options);
      const ringstore = await client();
      const { items, cursor } = await listItems(ringstore, prefix, options, call);
      const more = cursor === undefined ? undefined : moreLine(prefix, options, cursor);
      if (options.values === true) await printWithValues(ringstore, items, format, context);
      else if (format === 'json') out(JSON.stringify(items, null, 2));
      else out(formatList(items));
      if (more !== undefined && format === 'json') session.stderr.write(`${more}\n`);
      else if (more !== undefined) out(more);
    });
}
