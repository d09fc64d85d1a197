// `ringstore watch [prefix]`: the namespace's changes (client.watch) printed one line each as they arrive, as text or
// JSON lines, until Ctrl-C, which prints the command that resumes after the last change shown.

import type { Command } from 'commander';
import type { WatchChange } from '../commands';
import { type RingstoreError, WatchCursorExpiredError } from '../errors';
import { CommandFailure } from './arguments';
import type { CommandGroupContext, Session } from './command-group';
import { describeError, isTextual, showKey, truncate } from './format';
import { inlineValue, jsonValue, outputFormatOf, outputOption, type OutputFormat } from './format-json';
import { shellWord } from './list';
import { formatBytes } from './volumes';

/** Characters of a transaction id a text line shows: enough to tell a transaction's changes from another's. */
export const WATCH_TXID_SHOWN_CHARS = 16;

/** The widest operation (`delete`, `expire`): operations are padded to it so that keys line up. */
const OPERATION_CHARS = 6;

interface WatchCliOptions {
  cursor?: string;
  json?: boolean;
  output?: OutputFormat;
}

/**
 * A change as one line of text: operation, key, version; for a put its size, content type and, when it is text
 * and came with the change, its value as `list --values` shows it; the transaction's id, cut, when it has one.
 *
 * @example
 * ```ts
 * const value = new TextEncoder().encode('ok');
 * changeLine({ key: 'orders/1', version: 3, operation: 'put', contentType: 'text/plain', size: 2, value, cursor: 'c' });
 * // 'put     orders/1  v3  2 bytes  text/plain  ok'
 * ```
 */
export function changeLine(change: WatchChange): string {
  const parts = [change.operation.padEnd(OPERATION_CHARS), showKey(change.key), `v${change.version}`];
  if (change.operation === 'put') parts.push(formatBytes(change.size), change.contentType);
  if (change.txid !== undefined) parts.push(`txn ${truncate(change.txid, WATCH_TXID_SHOWN_CHARS)}`);
  if (change.operation === 'put' && change.expiresAt !== undefined) parts.push(`expires ${change.expiresAt}`);
  if (change.value !== undefined && isTextual(change.contentType, change.value)) parts.push(inlineValue(change.contentType, change.value));
  return parts.join('  ');
}

/**
 * A change as one JSON object (`watch --json` prints one per line): the fields of the REST answer, the value as the
 * CLI's JSON carries values (text, or base64 with `encoding: 'base64'`), and the cursor that continues after it.
 *
 * @example
 * ```ts
 * JSON.stringify(changeJson(change));
 * // {"key":"orders/1","version":3,"operation":"put","size":2,"contentType":"text/plain","value":"ok","cursor":"w1.…"}
 * ```
 */
export function changeJson(change: WatchChange): Record<string, unknown> {
  const { key, version, operation, size, contentType, value, valueOmitted, txid, modifiedAt, expiresAt, cursor } = change;
  return {
    key,
    version,
    operation,
    size,
    contentType,
    ...(value === undefined ? {} : jsonValue(contentType, value)),
    ...(valueOmitted === true ? { valueOmitted } : {}),
    ...(txid === undefined ? {} : { txid }),
    ...(modifiedAt === undefined ? {} : { modifiedAt }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    cursor,
  };
}

/** The command that watches again from `cursor`, with the same prefix and output. */
function resumeCommand(prefix: string, format: OutputFormat, cursor: string): string {
  return [
    'ringstore watch',
    ...(prefix === '' ? [] : [shellWord(prefix)]),
    '--cursor',
    shellWord(cursor),
    ...(format === 'json' ? ['--json'] : []),
  ].join(' ');
}

/** What the CLI says of a cursor past the feed's retention: what may be lost, and where it can go on from. */
function expiredMessage(err: WatchCursorExpiredError, prefix: string, format: OutputFormat): string {
  const retention = err.retentionSeconds === undefined ? '' : ` (${err.retentionSeconds / 3600} h)`;
  const from =
    err.oldestCursor === undefined
      ? 'watch from now'
      : `continue from the oldest cursor still served: ${resumeCommand(prefix, format, err.oldestCursor)}`;
  return `the cursor is older than the change feed's retention${retention}: changes after it may be gone. Re-read the keys you follow, then ${from} (${err.code})`;
}

/**
 * A signal that aborts on Ctrl-C: the interactive session's (its signal), else the process's SIGINT or SIGTERM, so
 * that a watch run alone, or from piped commands, stops cleanly and says where it stood.
 */
function interruption(session: Session): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  const { signal } = session;
  if (signal !== undefined) {
    if (signal.aborted) stop();
    signal.addEventListener('abort', stop, { once: true });
    return { signal: controller.signal, dispose: () => signal.removeEventListener('abort', stop) };
  }
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** Prints the changes until Ctrl-C, then the command that resumes after the last one shown, on stderr. */
async function watchChanges(context: CommandGroupContext, prefix: string, options: WatchCliOptions): Promise<void> {
  const { session } = context;
  const format = outputFormatOf(options);
  const ringstore = await context.client();
  const stop = interruption(session);
  const changes = ringstore.watch(prefix, {
    abortSignal: stop.signal,
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    // Said on stderr, so that a watch that cannot reach the server does not look like a quiet feed.
    onRetry: (err: RingstoreError) => void session.stderr.write(`watch: ${describeError(err)}; trying again from the last cursor\n`),
  });
  try {
    for await (const change of changes) {
      session.stdout.write(`${format === 'json' ? JSON.stringify(changeJson(change)) : changeLine(change)}\n`);
    }
  } catch (err) {
    if (err instanceof WatchCursorExpiredError) throw new CommandFailure(expiredMessage(err, prefix, format));
    throw err;
  } finally {
    stop.dispose();
  }
  // The loop ends only when stopped: say where to go on from.
  session.stderr.write(
    changes.cursor === undefined
      ? 'stopped watching before the first answer: nothing to resume from (watching again starts from now)\n'
      : `stopped watching; resume with: ${resumeCommand(prefix, format, changes.cursor)}\n`,
  );
}

/**
 * Adds `watch [prefix]` to `program`.
 *
 * @example
 * ```ts
 * addWatchCommand(program, { client, call, out, session });
 * ```
 */
export function addWatchCommand(program: Command, context: CommandGroupContext): void {
  program
    .command('watch')
    .description('print the changes of keys under a prefix (put, delete, expire) as they happen, one line each, until Ctrl-C')
    .argument('[prefix]', 'only keys starting with this (default: the whole namespace)', '')
    .option('--cursor <cursor>', 'continue after this position (a change\'s "cursor" in --json, or the one Ctrl-C printed)')
    .option('--json', 'print one JSON object per line and change, with its cursor (the value as text, or base64 when it is not text)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      [
        '',
        "Without --cursor it starts from now. Each key's changes come in version order; a change delivered again is",
        'dropped. Ctrl-C stops and prints, on stderr, the command that resumes after the last change shown; a cursor',
        "stays valid for the feed's retention (24 h by default), across failovers, rebalances and restarts. Network",
        'failures and throttling are retried from the last cursor (said on stderr).',
        '',
        'Examples:',
        '  ringstore watch orders/',
        '  ringstore watch --json',
        '  ringstore watch orders/ --cursor w1.eyJuIjoi…',
      ].join('\n'),
    )
    .action((prefix: string, options: WatchCliOptions) => watchChanges(context, prefix, options));
}
