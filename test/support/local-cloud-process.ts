// Starts `npm start`'s launcher as a child process on free ports and reads the facts it prints.
// Integration tests use the very launcher users run, in its own process (as Lambda is to API Gateway).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface LocalCloudProcess {
  url: string;
  apiKey: string;
  adminKey: string;
  pid: number;
  stop(): Promise<void>;
}

const root = join(__dirname, '..', '..');
/** Bounded wait for a start (the first start on a fresh machine may also fetch jars). */
export const startTimeoutMs = 240_000;

export async function startLocalCloudProcess(options: { home: string; env?: Record<string, string> }): Promise<LocalCloudProcess> {
  // `node --import tsx`, as `npm start` runs it: one process, so a signal reaches the launcher itself.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(root, 'cdk', 'local', 'main.ts')], {
    cwd: root,
    env: { ...process.env, RINGSTORE_PORT: '0', RINGSTORE_HOME: options.home, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  const facts = await new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`local cloud did not start in ${startTimeoutMs} ms:\n${stderr}`)), startTimeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of stdout.split('\n')) {
        const match = /^(API|API key|Admin key): (\S+)$/.exec(line.trim());
        if (match) found[match[1]!] = match[2]!;
      }
      if (found.API && found['API key'] && found['Admin key']) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local cloud exited with ${code} before it was ready:\n${stderr}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: facts.API!,
    apiKey: facts['API key']!,
    adminKey: facts['Admin key']!,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
