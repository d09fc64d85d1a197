// Runs the `ringstore` CLI in an empty home: nothing from the developer's own environment or ~/.config leaks into
// the run, only what the test gives. `runCli` runs the CLI's entry (`run` of src/cli/main.ts, which the bin calls) in
// this process with the test's environment, standard input and outputs; `runBin` spawns the real bin, for what only
// a process shows (its exit code and error line, a signal, the AWS SDK's credential chain, which reads the process's
// own environment). A spawn costs a quarter of a CPU-second of node start and module loading: the CLI suites ran
// about two hundred of them.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { run } from '../../src/cli/main';

export const BIN = join(__dirname, '..', '..', 'bin', 'ringstore');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  env?: Record<string, string>;
  input?: string;
}

function environment(home: string, env: Record<string, string> | undefined): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, RINGSTORE_CONFIG_DIR: join(home, 'config'), ...env };
}

/** A standard output or error: what was written, decoded once at the end (a chunk may split a character). */
function capture(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** `ringstore <args>` with HOME = `home`, the config under `<home>/config`, `env` on top and `input` on stdin. */
export async function runCli(home: string, args: string[], options: CliRunOptions = {}): Promise<CliResult> {
  const stdout = capture();
  const stderr = capture();
  const stdin = Readable.from(options.input === undefined || options.input === '' ? [] : [Buffer.from(options.input)]);
  let code: number;
  try {
    code = await run(args, { stdin, stdout: stdout.stream, stderr: stderr.stream, env: environment(home, options.env) });
  } catch (err) {
    // What the bin does with an error `run` did not turn into an exit code (sdk/bin/ringstore).
    stderr.stream.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    code = 1;
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** As {@link runCli}, through the real bin in a child process started in `home`. */
export function runBin(home: string, args: string[], options: CliRunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home,
      env: environment(home, options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
