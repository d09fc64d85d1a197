// `ringstore mget <key...>`: several keys read in batches of up to 100 (`POST /v1/batch/get`), printed in the order
// given: `key<TAB>value` lines as `list --values` prints them, or one JSON array.

import { type Command } from 'commander';
import type { BatchGetItem, Consistency } from '../commands';
import { BATCH_GET_KEYS_MAX } from '../limits';
import { consistencyOption } from './arguments';
import type { CommandGroupContext } from './command-group';
import { showKey } from './format';
import { inlineValue, NOT_FOUND, outputFormatOf, outputOption, valueJson, type OutputFormat } from './format-json';

/**
 * One key of `mget` as text: `key<TAB>value`, the value as `list --values` shows it, or {@link NOT_FOUND}.
 *
 * @example
 * ```ts
 * mgetLine({ key: 'gone', found: false }); // 'gone\t(not found)'
 * ```
 */
export function mgetLine(item: BatchGetItem): string {
  return `${showKey(item.key)}\t${item.found ? inlineValue(item.contentType, item.value) : NOT_FOUND}`;
}

/**
 * One key of `mget --json`: what `get --json` prints for a found key, `{ key, found: false }` for another.
 *
 * @example
 * ```ts
 * mgetJson({ key: 'gone', found: false }); // { key: 'gone', found: false }
 * ```
 */
export function mgetJson(item: BatchGetItem): object {
  return item.found ? valueJson(item) : { key: item.key, found: false };
}

/**
 * Adds `mget <key...>` to `program`.
 *
 * @example
 * ```ts
 * addMgetCommand(program, { client, call, out, session });
 * ```
 */
export function addMgetCommand(program: Command, { client, call, out }: CommandGroupContext): void {
  program
    .command('mget')
    .description(`print several values at once, in the order given (read ${BATCH_GET_KEYS_MAX} keys per request): key<TAB>value lines`)
    .argument('<keys...>', 'the keys (each at most once)')
    .option('--json', 'print a JSON array: each found key as get --json prints it, a missing one as {"key","found":false}')
    .addOption(outputOption())
    .addOption(consistencyOption())
    .action(async (keys: string[], options: { json?: boolean; output?: OutputFormat; consistency?: Consistency }) => {
      const format = outputFormatOf(options);
      const ringstore = await client();
      const items: BatchGetItem[] = [];
      for (let start = 0; start < keys.length; start += BATCH_GET_KEYS_MAX) {
        const batch = await ringstore.batchGet(keys.slice(start, start + BATCH_GET_KEYS_MAX), {
          ...call(),
          ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
        });
        items.push(...batch.items);
      }
      out(format === 'json' ? JSON.stringify(items.map(mgetJson), null, 2) : items.map(mgetLine).join('\n'));
    });
}
