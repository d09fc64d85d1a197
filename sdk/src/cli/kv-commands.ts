// The commands on one key: put, get, head, delete (list, mget and incr have modules of their own).

import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Consistency } from '../commands';
import { NotFoundError } from '../errors';
import { CommandFailure, consistencyOption, parseInteger, valueArgument } from './arguments';
import type { CommandGroupContext } from './command-group';
import { describeError, isTextual, showKey } from './format';
import { outputFormatOf, outputOption, valueJson, type OutputFormat } from './format-json';

/** Adds `put`, `get`, `head` and `delete` to `program`. */
export function addKvCommands(program: Command, context: CommandGroupContext): void {
  addPutCommand(program, context);
  addGetCommand(program, context);
  addHeadAndDeleteCommands(program, context);
}

function addPutCommand(program: Command, context: CommandGroupContext): void {
  const { client, call, out, session } = context;
  program
    .command('put')
    .description('store a value: text, @path to read a file, @- to read standard input (@@text stores "@text")')
    .argument('<key>', 'the key')
    .argument('<value>', 'the value as text, or @file')
    .option('--ttl <seconds>', 'expire after this many seconds', parseInteger(1))
    .option('--content-type <type>', 'content type to store (default: text/plain for text, by extension or octet-stream for files)')
    .option('--if-match <version>', 'write only if the current version is this one', parseInteger(0))
    .option('--if-absent', 'write only if the key does not exist (If-None-Match: *)')
    .addOption(consistencyOption())
    .action(
      async (
        key: string,
        value: string,
        options: {
          ttl?: number;
          contentType?: string;
          ifMatch?: number;
          ifAbsent?: boolean;
          consistency?: Consistency;
        },
      ) => {
        const read = await valueArgument(value, session.stdin);
        const body = read.body;
        const contentType = options.contentType ?? read.contentType;
        const ringstore = await client();
        const result = await ringstore.put(key, body, {
          ...call(),
          ...(contentType === undefined ? {} : { contentType }),
          ...(options.ttl === undefined ? {} : { ttlSeconds: options.ttl }),
          ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
          ...(options.ifAbsent === true ? { ifNoneMatch: '*' as const } : {}),
          ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
        });
        out(`stored ${showKey(result.key)} (version ${result.version}${copiesNote(result)})`);
      },
    );
}

function addGetCommand(program: Command, context: CommandGroupContext): void {
  const { client, call, out, session } = context;
  program
    .command('get')
    .description('print a value (text, or with its metadata as JSON with --json), or write it to a file with --out')
    .argument('<key>', 'the key')
    .option('--out <file>', 'write the value to this file instead of printing it')
    .option('--json', 'print the value and its metadata as one JSON object (the value as text, or base64 when it is not text)')
    .addOption(outputOption())
    .addOption(consistencyOption())
    .action(async (key: string, options: { out?: string; json?: boolean; output?: OutputFormat; consistency?: Consistency }) => {
      const format = outputFormatOf(options);
      if (format === 'json' && options.out !== undefined) {
        throw new CommandFailure('--out writes the value to a file, --json prints it: give one');
      }
      const ringstore = await client();
      const item = await withKey(key, () =>
        ringstore.get(key, { ...call(), ...(options.consistency === undefined ? {} : { consistency: options.consistency }) }),
      );
      if (options.out !== undefined) {
        await writeFile(options.out, item.value);
        out(`wrote ${item.value.byteLength} bytes to ${options.out} (${item.contentType}, version ${item.version})`);
        return;
      }
      if (format === 'json') {
        out(JSON.stringify(valueJson(item), null, 2));
        return;
      }
      if (!isTextual(item.contentType, item.value)) {
        throw new CommandFailure(
          `${showKey(key)} holds ${item.value.byteLength} bytes of ${item.contentType}; use --out <file> to save it`,
        );
      }
      const text = item.text();
      session.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    });
}

function addHeadAndDeleteCommands(program: Command, context: CommandGroupContext): void {
  const { client, call, out } = context;
  program
    .command('head')
    .description("show a value's metadata: version, size, content type, expiry")
    .argument('<key>', 'the key')
    .action(async (key: string) => {
      const ringstore = await client();
      const meta = await withKey(key, () => ringstore.head(key, call()));
      out(
        [
          `key           ${showKey(meta.key)}`,
          `version       ${meta.version}`,
          `size          ${meta.size === undefined ? '?' : `${meta.size} bytes`}`,
          `content-type  ${meta.contentType}`,
          `expires       ${meta.expiresAt ?? '-'}`,
        ].join('\n'),
      );
    });

  program
    .command('delete')
    .alias('del')
    .description('delete a key')
    .argument('<key>', 'the key')
    .option('--if-match <version>', 'delete only if the current version is this one', parseInteger(0))
    .addOption(consistencyOption())
    .action(async (key: string, options: { ifMatch?: number; consistency?: Consistency }) => {
      const ringstore = await client();
      const result = await withKey(key, () =>
        ringstore.delete(key, {
          ...call(),
          ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
          ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
        }),
      );
      out(`deleted ${showKey(result.key)} (version ${result.version}${copiesNote(result)})`);
    });
}

/** `action`, with a 404 for `key` said as the CLI says it. */
async function withKey<T>(key: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof NotFoundError) throw new CommandFailure(describeError(err, key));
    throw err;
  }
}

/** Strong writes say how many shards held the version when acknowledged. */
function copiesNote(result: { consistency: Consistency; copies?: number }): string {
  return result.consistency === 'strong' && result.copies !== undefined ? `; strong, on ${result.copies} shards` : '';
}
