// One `npm start` per data directory: two would share DynamoDB Local's files and corrupt each other's view.
// The lock is a file holding the owner's pid; a lock whose process is gone (a kill -9, a crash) is taken over.
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from './engines/child';

export const lockFileName = 'ringstore.lock';

/** Attempts to take a lock left by a dead process: one per stale lock found, so two starters racing cannot loop. */
const takeoverAttemptsMax = 3;

export class HomeLockedError extends Error {
  constructor(
    readonly home: string,
    readonly ownerPid: number,
  ) {
    super(
      `another Ringstore (pid ${ownerPid}) is running on the data directory ${home}: stop it first, ` +
        'or give this one its own directory with RINGSTORE_HOME',
    );
    this.name = 'HomeLockedError';
  }
}

export interface HomeLock {
  readonly path: string;
  /** Removes the lock if it is still this process's; safe to call more than once. */
  release(): void;
}

function ownerOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock of `home` (which must exist) for `pid`, or throws HomeLockedError naming the live owner. */
export function lockHome(home: string, pid: number = process.pid, alive: (pid: number) => boolean = pidAlive): HomeLock {
  const path = join(home, lockFileName);
  for (let attempt = 0; attempt <= takeoverAttemptsMax; attempt += 1) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${pid}\n`);
      closeSync(fd);
      return {
        path,
        release: () => {
          if (ownerOf(path) !== pid) return;
          try {
            unlinkSync(path);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = ownerOf(path);
    if (owner !== undefined && owner !== pid && alive(owner)) throw new HomeLockedError(home, owner);
    // Stale (its process is gone), unreadable, or our own pid from a previous life: take it over.
    try {
      unlinkSync(path);
    } catch {
      // Another starter removed it first; the next attempt decides.
    }
  }
  throw new Error(`could not take the lock ${path} after ${takeoverAttemptsMax} attempts: another start is racing for it`);
}
