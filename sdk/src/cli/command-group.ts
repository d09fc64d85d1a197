// What a command-group module (keys.ts, dr.ts, rebalance.ts, …) is given by the CLI run it belongs to: the run's
// state, and the client, call options and output that program.ts builds from it once.

import type { RingstoreClient, SendOptions } from '../client';
import type { CliEnv, Connection } from './connection';

/**
 * Where the CLI writes; process streams in production, buffers in tests.
 *
 * @example
 * ```ts
 * const output: CliOutput = { write: (text) => process.stdout.write(text) };
 * ```
 */
export interface CliOutput {
  write(chunk: string | Uint8Array): unknown;
}

/**
 * State shared by the commands of one CLI run (one command, or a whole interactive session).
 *
 * @example
 * ```ts
 * const session: Session = { env: process.env, flags: {}, stdout: process.stdout, stderr: process.stderr, quit: false };
 * ```
 */
export interface Session {
  env: CliEnv;
  /** `--endpoint` / `--api-key` / `--debug` given when the CLI started; `--debug` then holds for every command of the run. */
  flags: { endpoint?: string; apiKey?: string; debug?: boolean };
  /** Set by `connect` during this run; beats flags, environment and file. */
  connected?: Connection;
  stdout: CliOutput;
  stderr: CliOutput;
  /** Set by `quit`/`exit`. */
  quit: boolean;
  /** Aborts the command in flight (Ctrl-C in the interactive session). */
  signal?: AbortSignal;
  /** Standard input, when a command may read it (`txn --file -`); absent when stdin carries the commands. */
  stdin?: NodeJS.ReadableStream;
}

/**
 * What a command group needs of the CLI run it belongs to.
 *
 * @example
 * ```ts
 * addKeyCommands(program, { client, call, out, session });
 * ```
 */
export interface CommandGroupContext {
  client: () => Promise<RingstoreClient>;
  call: () => SendOptions;
  out: (text: string) => void;
  /** The run itself, read when a command acts: its stdin (`txn --file -`), its Ctrl-C signal and stdout (`rebalance --watch`). */
  session: Session;
}
