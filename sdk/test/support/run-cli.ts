// Runs the real `ringstore` bin as a child process in an empty home: nothing from the developer's own
// environment or ~/.config leaks into the run, only what the test gives.

import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(__dirname, '..', '..', 'bin', 'ringstore');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `ringstore <args>` with HOME = `home`, the config under `<home>/config`, `env` on top and `input` on stdin. */
export function runCli(home: string, args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, RINGSTORE_CONFIG_DIR: join(home, 'config'), ...options.env },
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
