// `ringstore txn …`: running ops atomically (docs/transactions.md): the ops as words or a JSON file (parsed by
// txn-ops.ts), the values they put read as `put` reads them, the outcome or the abort reported.

import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Consistency, TransactOp } from '../commands';
import { TransactionAbortedError } from '../errors';
import { TXN_CONFLICT_RETRIES_MAX, TXN_TIMEOUT_MS_MAX, TXN_TIMEOUT_MS_MIN } from '../limits';
import { CommandFailure, consistencyOption, parseInteger, valueArgument } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatTransaction, parseTxnFile, parseTxnWords, transactionJson, TXN_GRAMMAR } from './txn-ops';

interface TxnOptions {
  file?: string;
  timeout?: number;
  conflictRetries?: number;
  consistency?: Consistency;
  json?: boolean;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The text of an ops file; `-` is standard input, when it does not carry the commands. */
async function readOpsFile(file: string, stdin: NodeJS.ReadableStream | undefined): Promise<string> {
  if (file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new CommandFailure(`cannot read ${file}: ${(err as Error).message}`);
    }
  }
  if (stdin === undefined) throw new CommandFailure('--file - reads stdin, which is busy with commands here: give a file');
  return readAll(stdin);
}

/** Ops the user wrote wrong are a usage error, reported without a stack or a code. */
function txnInput<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new CommandFailure((err as Error).message);
  }
}

/** The ops given as words or in a file (with the file's timeout), a put's @path or @- value read as `put` reads it. */
async function opsOf(
  words: string[],
  file: string | undefined,
  stdin: NodeJS.ReadableStream | undefined,
): Promise<{ ops: TransactOp[]; timeoutMs?: number }> {
  if (file !== undefined) {
    if (words.length > 0) throw new CommandFailure('give the ops either as words or with --file, not both');
    const text = await readOpsFile(file, stdin);
    return txnInput(() => parseTxnFile(text));
  }
  if (words.length === 0) throw new CommandFailure(`no ops: ${TXN_GRAMMAR.join(' | ')} (or --file)`);
  const ops = await Promise.all(
    txnInput(() => parseTxnWords(words)).map(async (op) => {
      if (op.op !== 'put' || typeof op.value !== 'string') return op;
      const read = await valueArgument(op.value, stdin);
      const contentType = read.contentType === undefined ? {} : { contentType: read.contentType };
      return { ...op, value: read.body, ...contentType };
    }),
  );
  return { ops };
}

/** Runs the transaction; with --json an abort is printed as JSON too, before it fails the command. */
async function runTxn({ client, call, out, session }: CommandGroupContext, words: string[], options: TxnOptions): Promise<void> {
  const read = await opsOf(words, options.file, session.stdin);
  const ops = read.ops;
  const timeoutMs = options.timeout ?? read.timeoutMs;
  const ringstore = await client();
  try {
    const output = await ringstore.transact(ops, {
      ...call(),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(options.conflictRetries === undefined ? {} : { conflictRetries: options.conflictRetries }),
      ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
    });
    out(options.json === true ? JSON.stringify(transactionJson(output), null, 2) : formatTransaction(output, ops));
  } catch (err) {
    if (options.json === true && err instanceof TransactionAbortedError) {
      out(
        JSON.stringify(
          { status: 'aborted', reason: err.reason, key: err.key, txid: err.txid, code: err.code, message: err.message },
          null,
          2,
        ),
      );
    }
    throw err;
  }
}

/**
 * Adds `txn` to `program`.
 *
 * @example
 * ```ts
 * addTxnCommands(program, { client, call, out, session });
 * ```
 */
export function addTxnCommands(program: Command, context: CommandGroupContext): void {
  program
    .command('txn')
    .description('run ops atomically: all commit or none does')
    .argument('[ops...]', TXN_GRAMMAR.join(' | '))
    .option('--file <path>', 'read the ops from a JSON file ("-": stdin): {"ops": [...]} as the REST API takes it, or just the array')
    .option(
      '--timeout <ms>',
      `deadline of the transaction (${TXN_TIMEOUT_MS_MIN}..${TXN_TIMEOUT_MS_MAX} ms; server default 5000)`,
      parseInteger(TXN_TIMEOUT_MS_MIN, TXN_TIMEOUT_MS_MAX),
    )
    .option(
      '--conflict-retries <n>',
      `run again up to n times after an abort by conflict (0..${TXN_CONFLICT_RETRIES_MAX})`,
      parseInteger(0, TXN_CONFLICT_RETRIES_MAX),
    )
    .addOption(consistencyOption())
    .option('--json', 'print the outcome as JSON, as the REST API answers it (values base64)')
    .addHelpText(
      'after',
      [
        '',
        'Ops are words: get <key> | put <key> <value> [if <version>] | delete <key> [if <version>] | check <key> <version>.',
        '"if <version>" and check require the key to be at that version before the transaction (0: absent).',
        "A put value is text, @path for a file's bytes, or @@text for text starting with @. Quote keys and values",
        'with spaces; put "--" before the ops if a value starts with "-".',
        '',
        'Examples:',
        '  ringstore txn put a 1 put b hello',
        '  ringstore txn get a put b world if 1 delete a check c 0',
        '  ringstore txn put balance/a 90 if 0 put balance/b 110 if 0 --timeout 2000',
        '  ringstore txn --file ops.json --json',
        '  echo \'[{"op":"get","key":"b"}]\' | ringstore txn --file -',
        '',
        'On an abort nothing is written; the error names the reason and the key, and the exit code is 1.',
      ].join('\n'),
    )
    .action((words: string[], options: TxnOptions) => runTxn(context, words, options));
}
