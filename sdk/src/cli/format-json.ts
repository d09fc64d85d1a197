// How `get` and `list` show values: the -o/--output choice (text or json), a value as one JSON object (text as
// is, anything else base64) and as one line of text.

import { Option } from 'commander';
import type { GetCommandOutput, ListItem } from '../commands';
import { bytesToBase64 } from '../encoding';
import { CommandFailure } from './arguments';
import { isTextual } from './format';

/**
 * What `-o` accepts, as etcdctl's `-w` and the AWS CLI's `--output`; `text` is the default.
 *
 * @example
 * ```ts
 * OUTPUT_FORMATS.includes('json'); // true
 * ```
 */
export const OUTPUT_FORMATS = ['text', 'json'] as const;

/**
 * One of {@link OUTPUT_FORMATS}.
 *
 * @example
 * ```ts
 * const format: OutputFormat = 'json';
 * ```
 */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The `-o, --output <format>` option; commander refuses any other value, naming the allowed ones.
 *
 * @example
 * ```ts
 * program.command('get').option('--json').addOption(outputOption());
 * ```
 */
export function outputOption(): Option {
  return new Option('-o, --output <format>', 'text (the default) or json (the same as --json)').choices(OUTPUT_FORMATS);
}

/**
 * The format `--json` and `-o` ask for together; `--json -o text` is refused rather than one silently winning.
 *
 * @example
 * ```ts
 * outputFormatOf({ output: 'json' }); // 'json'
 * ```
 */
export function outputFormatOf(options: { json?: boolean; output?: OutputFormat }): OutputFormat {
  if (options.json === true && options.output === 'text')
    throw new CommandFailure('--json and -o text ask for different outputs: give one');
  return options.json === true ? 'json' : (options.output ?? 'text');
}

/**
 * A value as `get --json` prints it: the fields of a listing item, then the value.
 *
 * @example
 * ```ts
 * const shown: ValueJson = { key: 'k', version: 1, size: 2, contentType: 'text/plain', value: 'hi' };
 * ```
 */
export interface ValueJson extends ListItem {
  /** The value as text, or base64 when `encoding` says so. */
  value: string;
  /** Present for a value that is not text (by content type and bytes), or not valid UTF-8. */
  encoding?: 'base64';
}

function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A value read by `get` as one JSON object: the listing's fields (key, version, size, content type, expiry) and the
 * value, as a string when it is text in UTF-8, else base64 with `encoding: 'base64'`, so no byte is lost.
 *
 * @example
 * ```ts
 * JSON.stringify(valueJson(await client.get('greeting')));
 * // {"key":"greeting","version":1,"size":11,"contentType":"text/plain; charset=utf-8","value":"hello world"}
 * ```
 */
export function valueJson(item: Pick<GetCommandOutput, 'key' | 'version' | 'contentType' | 'expiresAt' | 'value'>): ValueJson {
  return {
    key: item.key,
    version: item.version,
    size: item.value.byteLength,
    contentType: item.contentType,
    ...(item.expiresAt === undefined ? {} : { expiresAt: item.expiresAt }),
    ...jsonValue(item.contentType, item.value),
  };
}

/**
 * A value's bytes as the CLI's JSON carries them: the text itself when it is text in UTF-8, else base64 with
 * `encoding: 'base64'`, so no byte is lost.
 *
 * @example
 * ```ts
 * jsonValue('image/png', new Uint8Array([0x89, 0x50])); // { value: 'iVA=', encoding: 'base64' }
 * ```
 */
export function jsonValue(contentType: string, bytes: Uint8Array): Pick<ValueJson, 'value' | 'encoding'> {
  const text = isTextual(contentType, bytes) ? utf8Text(bytes) : undefined;
  return text === undefined ? { value: bytesToBase64(bytes), encoding: 'base64' } : { value: text };
}

/**
 * What `mget` prints for a key that is absent, deleted or expired; a value with this text is printed quoted.
 *
 * @example
 * ```ts
 * inlineValue('text/plain', new TextEncoder().encode(NOT_FOUND)); // '"(not found)"'
 * ```
 */
export const NOT_FOUND = '(not found)';

/**
 * A value on one line, as `list --values` and `mget` show it: text as is, JSON-quoted when it would break the line or be
 * mistaken for a quoted or `<…>` value or for `(not found)`; anything else as `<N bytes of type>`.
 *
 * @example
 * ```ts
 * inlineValue('text/plain', new TextEncoder().encode('a\nb')); // '"a\\nb"'
 * ```
 */
export function inlineValue(contentType: string, value: Uint8Array): string {
  if (!isTextual(contentType, value)) return `<${value.byteLength} bytes of ${contentType}>`;
  const text = new TextDecoder().decode(value);
  const ambiguous =
    /[\u0000-\u001f\u007f]/.test(text) || text === '' || text.trim() !== text || /^"|^<.*>$/s.test(text) || text === NOT_FOUND;
  return ambiguous ? JSON.stringify(text) : text;
}
