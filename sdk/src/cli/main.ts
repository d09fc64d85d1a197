// Entry of the `ringstore` CLI: one command from the arguments, else an interactive session on
// a terminal, else one command per line from piped stdin.

import { createInterface, type Interface } from 'node:readline';
import { resolveConnection, loadSavedConnection } from './connection';
import { describeError } from './format';
import { buildProgram, commandNames, runCommandLine, type CliOutput, type Session } from './program';
import { tokenize } from './tokenize';

/**
 * The process streams and environment the CLI runs with; tests pass their own.
 *
 * @example
 * ```ts
 * const io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
 * ```
 */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: CliOutput & NodeJS.WritableStream;
  stderr: CliOutput;
  env: Readonly<Record<string, string | undefined>>;
}

const GLOBAL_FLAGS: Readonly<Record<string, 'endpoint' | 'apiKey'>> = { '--endpoint': 'endpoint', '--api-key': 'apiKey' };

/**
 * Separates the global `--endpoint`/`--api-key`/`--debug` flags from the rest of the arguments, to tell
 * "no command" (start a session) from "a command". Words after `--` are the command's, whatever they look like.
 *
 * @example
 * ```ts
 * scanGlobalFlags(['--endpoint', 'http://x', 'get', 'k']);
 * // { flags: { endpoint: 'http://x' }, rest: ['get', 'k'] }
 * ```
 */
export function scanGlobalFlags(argv: readonly string[]): { flags: Session['flags']; rest: string[] } {
  const flags: Session['flags'] = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const [name = '', inline] = word.split(/=(.*)/s, 2);
    const field = GLOBAL_FLAGS[name];
    if (word === '--debug') flags.debug = true;
    else if (field !== undefined && inline !== undefined) flags[field] = inline;
    else if (field !== undefined && i + 1 < argv.length) flags[field] = argv[++i] ?? '';
    else rest.push(word);
  }
  return { flags, rest };
}

async function promptFor(session: Session): Promise<string> {
  try {
    const sources = { flags: session.flags, env: session.env, ...(session.connected ? { session: session.connected } : {}) };
    let connection = resolveConnection(sources);
    if (connection === undefined) {
      const saved = await loadSavedConnection(session.env);
      if (saved !== undefined) connection = resolveConnection({ ...sources, saved });
    }
    return connection === undefined ? 'ringstore> ' : `ringstore(${new URL(connection.endpoint).host})> `;
  } catch {
    return 'ringstore> ';
  }
}

/** Runs one line; blank lines and `#` comments do nothing. Resolves to the line's exit code. */
async function runLine(session: Session, line: string): Promise<number> {
  let words: string[];
  try {
    words = tokenize(line);
  } catch (err) {
    session.stderr.write(`error: ${describeError(err)}\n`);
    return 1;
  }
  if (words.length === 0 || words[0]?.startsWith('#') === true) return 0;
  return runCommandLine(session, words);
}

async function runPiped(session: Session, io: CliIo): Promise<number> {
  const lines = createInterface({ input: io.stdin, crlfDelay: Infinity, terminal: false });
  let failed = false;
  try {
    for await (const line of lines) {
      if ((await runLine(session, line)) !== 0) failed = true;
      if (session.quit) break;
    }
  } finally {
    lines.close();
  }
  return failed ? 1 : 0;
}

/** Completes the command word of a line from `names`; the words after it are left alone. */
export function completerOf(names: readonly string[]): (line: string) => [string[], string] {
  return (line) => {
    if (/\s/.test(line.trimStart())) return [[], line];
    const word = line.trimStart();
    const hits = names.filter((name) => name.startsWith(word));
    return [hits.length > 0 ? hits : [...names], word];
  };
}

function clearLine(rl: Interface): void {
  rl.write(null, { ctrl: true, name: 'e' });
  rl.write(null, { ctrl: true, name: 'u' });
}

async function runInteractive(session: Session, io: CliIo): Promise<number> {
  const completer = completerOf(commandNames(buildProgram(session)));
  const rl = createInterface({ input: io.stdin, output: io.stdout, terminal: true, completer, historySize: 1000 });
  let inFlight: AbortController | undefined;
  rl.on('SIGINT', () => {
    if (inFlight !== undefined) {
      inFlight.abort();
      return;
    }
    clearLine(rl);
    io.stdout.write('\n(type quit or press Ctrl-D to leave)\n');
    rl.prompt();
  });
  io.stdout.write('Ringstore CLI. Type "help" for commands, "quit" to leave.\n');
  rl.setPrompt(await promptFor(session));
  rl.prompt();
  try {
    for await (const line of rl) {
      inFlight = new AbortController();
      session.signal = inFlight.signal;
      await runLine(session, line);
      inFlight = undefined;
      delete session.signal;
      if (session.quit) break;
      rl.setPrompt(await promptFor(session));
      rl.prompt();
    }
  } finally {
    rl.close();
  }
  return 0;
}

/**
 * Runs the CLI and resolves to its exit code: with arguments, one command; with none, an
 * interactive session when stdin is a terminal, else one command per line of stdin (exit code
 * 1 if any line failed).
 *
 * @example
 * ```ts
 * process.exitCode = await run(process.argv.slice(2));
 * ```
 */
export async function run(
  argv: readonly string[],
  io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const { flags, rest } = scanGlobalFlags(argv);
  const session: Session = { env: io.env, flags, stdout: io.stdout, stderr: io.stderr, quit: false };
  // One command from the arguments may read stdin (txn --file -); piped lines are commands themselves.
  if (rest.length > 0) return runCommandLine({ ...session, stdin: io.stdin }, rest);
  return io.stdin.isTTY === true ? runInteractive(session, io) : runPiped(session, io);
}
