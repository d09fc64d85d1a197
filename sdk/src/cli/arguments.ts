// Parsers of the CLI's option values, shared by its command groups.

import { InvalidArgumentError } from 'commander';

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
