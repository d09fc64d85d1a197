// Spawns engine processes (JVMs, redis-server) that cannot outlive this Node process,
// keeps the tail of their output for error messages, and stops them with bounded waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** How long a child gets between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 5_000;
/** How long we wait for the exit after SIGKILL before declaring the child unkillable. */
const KILL_WAIT_MS = 5_000;
/** Characters of combined stdout/stderr kept per child for error messages. */
const OUTPUT_TAIL_CHARS = 16_000;
/** Lines of output quoted in error messages. */
export const OUTPUT_TAIL_LINES = 25;

/**
 * How a child is tied to our lifetime when we die abruptly (SIGKILL, OOM):
 * - `pdeathsig`: `setpriv --pdeathsig KILL` (util-linux) asks the kernel to SIGKILL the child when
 *   its parent dies; exact and free, Linux only.
 * - `watchdog`: `sh` forks a watcher and then `exec`s the engine (so the engine keeps the pid we
 *   spawned); the watcher polls our pid once a second and SIGKILLs the engine when we are gone.
 */
export type OrphanGuard = 'pdeathsig' | 'watchdog';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all (e.g. ENOENT). */
  error?: Error;
}

export interface SpawnManagedOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Defaults to `pdeathsig` where setpriv exists, else `watchdog`. */
  orphanGuard?: OrphanGuard;
  stopGraceMs?: number;
}

export interface ManagedChild {
  readonly name: string;
  /** Pid of the engine itself (not of a wrapper). */
  readonly pid: number | undefined;
  /** Resolves once the engine has exited (never rejects). */
  readonly exited: Promise<ExitInfo>;
  exitInfo(): ExitInfo | undefined;
  /** Last lines of combined stdout/stderr. */
  outputTail(lines?: number): string;
  /** SIGTERM, then SIGKILL after the grace period; resolves when the engine has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Finds an executable on PATH, or undefined. @example which('redis-server') */
export function which(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

let defaultGuard: OrphanGuard | undefined;
/** The orphan guard used when none is asked for. @example defaultOrphanGuard() // 'pdeathsig' on Debian */
export function defaultOrphanGuard(): OrphanGuard {
  defaultGuard ??= process.platform === 'linux' && which('setpriv') ? 'pdeathsig' : 'watchdog';
  return defaultGuard;
}

// $1 is our pid; "$@" after the shift is the engine command line. `$$` inside the subshell is the
// pid of the outer shell, which becomes the engine after `exec`. The watcher detaches its stdio so it
// never holds our pipes open, and exits by itself within a second once the engine is gone.
const WATCHDOG_SCRIPT = [
  'parent=$1; shift',
  '( trap "" INT TERM HUP',
  '  while kill -0 "$parent" 2>/dev/null; do',
  '    sleep 1',
  '    kill -0 $$ 2>/dev/null || exit 0',
  '  done',
  '  kill -KILL $$ 2>/dev/null',
  ') </dev/null >/dev/null 2>&1 &',
  'exec "$@"',
].join('\n');

/**
 * `command args` wrapped so that it dies with this process (the orphan guard's wrapper); the wrapper execs the
 * command, so the spawned pid is the command's own.
 *
 * @example
 * const { file, argv } = guardedCommand(defaultOrphanGuard(), process.execPath, ['main.js']);
 */
export function guardedCommand(guard: OrphanGuard, command: string, args: string[]): { file: string; argv: string[] } {
  if (guard === 'pdeathsig') return { file: 'setpriv', argv: ['--pdeathsig', 'KILL', '--', command, ...args] };
  return { file: 'sh', argv: ['-c', WATCHDOG_SCRIPT, 'ringstore-watchdog', String(process.pid), command, ...args] };
}

function delay(ms: number): { promise: Promise<'timeout'>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone
  }
}

/**
 * Spawns `command args` as an engine process tied to this Node process.
 * The child runs in its own process group so a terminal Ctrl-C reaches only us; the caller decides
 * when engines stop (and calls {@link ManagedChild.stop}).
 *
 * @example
 * const child = spawnManaged('redis', 'redis-server', ['--port', '6400']);
 * await child.stop();
 */
export function spawnManaged(name: string, command: string, args: string[], options: SpawnManagedOptions = {}): ManagedChild {
  const guard = options.orphanGuard ?? defaultOrphanGuard();
  const { file, argv } = guardedCommand(guard, command, args);
  const graceMs = options.stopGraceMs ?? STOP_GRACE_MS;
  let tail = '';
  let exit: ExitInfo | undefined;

  const proc: ChildProcess = spawn(file, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const append = (chunk: Buffer): void => {
    tail += chunk.toString('utf8');
    if (tail.length > OUTPUT_TAIL_CHARS) tail = tail.slice(-OUTPUT_TAIL_CHARS);
  };
  // Always drain the pipes: a JVM blocks once a pipe buffer is full.
  proc.stdout?.on('data', append);
  proc.stderr?.on('data', append);

  const exited = new Promise<ExitInfo>((resolve) => {
    proc.once('error', (error) => {
      // 'error' without 'exit' means the spawn itself failed.
      if (proc.pid === undefined) {
        exit = { code: null, signal: null, error };
        resolve(exit);
      }
    });
    proc.once('exit', (code, sig) => {
      exit = { code, signal: sig };
      resolve(exit);
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const pid = proc.pid;
      if (pid === undefined || exit) {
        cleanupGroup(pid);
        return;
      }
      signal(pid, 'SIGTERM');
      const grace = delay(graceMs);
      const first = await Promise.race([exited, grace.promise]);
      grace.cancel();
      if (first === 'timeout') {
        signal(-pid, 'SIGKILL');
        signal(pid, 'SIGKILL');
        const wait = delay(KILL_WAIT_MS);
        const second = await Promise.race([exited, wait.promise]);
        wait.cancel();
        if (second === 'timeout') throw new Error(`${name} (pid ${pid}) did not exit after SIGKILL`);
      }
      cleanupGroup(pid);
    })();
    return stopping;
  };
  // The watchdog shell shares the engine's process group; reap it now rather than within a second.
  const cleanupGroup = (pid: number | undefined): void => {
    if (pid !== undefined && guard === 'watchdog') signal(-pid, 'SIGKILL');
  };

  return {
    name,
    get pid() {
      return proc.pid;
    },
    exited,
    exitInfo: () => exit,
    outputTail: (lines = OUTPUT_TAIL_LINES) => tail.trimEnd().split('\n').slice(-lines).join('\n'),
    stop,
  };
}

/** One-line description of how a child ended, for error messages. @example describeExit({ code: 1, signal: null }) */
/** Whether a process exists (EPERM: it exists but belongs to someone else). Leftover temp files are named by pid. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function describeExit(info: ExitInfo): string {
  if (info.error) return `could not be started (${info.error.message})`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${String(info.code)}`;
}
