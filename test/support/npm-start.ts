// `npm start` as the package script runs it, for the suites that study the launcher itself (its lock, its
// command line): on `home`, a free port, and the repository's engine jars.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..');

export interface NpmStart {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function spawnNpmStart(home: string, args: readonly string[] = []): NpmStart {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'cdk', 'local', 'main.ts'), ...args], {
    cwd: repoRoot,
    env: {
      ...process.env,
      RINGSTORE_HOME: home,
      RINGSTORE_PORT: '0',
      RINGSTORE_VENDOR_DIR: process.env.RINGSTORE_VENDOR_DIR ?? join(repoRoot, '.ringstore', 'vendor'),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}
