// `npm start` as the package script runs it, for the suites that study the launcher itself (its lock, its
// command line): on `home`, a free port, and the repository's engine jars.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..');

/**
 * The node arguments of `npm start`, read from package.json's start script (`node <file> …`), so the tests start
 * the cloud exactly as users do. @example spawn(process.execPath, [...npmStartArgs(), '--fresh'])
 */
export function npmStartArgs(): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [program, ...args] = manifest.scripts.start.split(/\s+/);
  if (program !== 'node') throw new Error(`npm start runs ${program}, not node: ${manifest.scripts.start}`);
  return args.map((arg) => (arg.startsWith('-') ? arg : join(repoRoot, arg)));
}

export interface NpmStart {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function spawnNpmStart(home: string, args: readonly string[] = []): NpmStart {
  const child = spawn(process.execPath, [...npmStartArgs(), ...args], {
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
