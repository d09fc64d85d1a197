// `ringstore incr <key> [by]`: adds to a key's counter atomically (`POST /v1/kv/{key}/increment`) and prints the new
// value, or the whole answer with --json.

import { type Command, InvalidArgumentError } from 'commander';
import type { Consistency } from '../commands';
import { consistencyOption, parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';

/**
 * The `by` argument: a whole number, negative to decrement, within the safe integers.
 *
 * @example
 * ```ts
 * parseBy('-5'); // -5
 * ```
 */
export function parseBy(raw: string): number {
  const by = Number(raw);
  if (!/^[+-]?\d+$/.test(raw) || !Number.isSafeInteger(by)) {
    throw new InvalidArgumentError(`expected an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`);
  }
  return by;
}

/**
 * Adds `incr <key> [by]` to `program`.
 *
 * @example
 * ```ts
 * addIncrCommand(program, { client, call, out, session });
 * ```
 */
export function addIncrCommand(program: Command, { client, call, out }: CommandGroupContext): void {
  program
    .command('incr')
    .description('add to a counter atomically and print its new value (a missing key counts as 0; the key holds decimal text)')
    .argument('<key>', 'the key')
    .argument('[by]', 'the integer to add, default 1; negative decrements (write -- before a negative one: incr k -- -5)', parseBy)
    .option('--if-match <version>', 'increment only if the current version is this one', parseInteger(0))
    .option('--json', 'print the answer as JSON: key, version, value, consistency (and copies for a strong write)')
    .addOption(consistencyOption())
    .action(async (key: string, by: number | undefined, options: { ifMatch?: number; json?: boolean; consistency?: Consistency }) => {
      const ringstore = await client();
      const ack = await ringstore.increment(key, by ?? 1, {
        ...call(),
        ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
        ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
      });
      out(options.json === true ? JSON.stringify(ack, null, 2) : String(ack.value));
    });
}
