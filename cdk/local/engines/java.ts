// Finds the JVM and holds what makes the Java engines start quickly: flags and class data sharing.
import { existsSync, readdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { pidAlive, which, type ExitInfo } from './child';

/**
 * Flags that cut JVM start-up of the local engines (measured on 2 cores, both JVMs in parallel:
 * 3.0 s without, 2.3 s with the first four, 1.9 s with all):
 * C1 only (no C2 work), the serial collector (no GC threads), no perf-data file, and no bytecode
 * verification of the engines' own jars (they come from Maven Central; JDK classes are still
 * verified). IgnoreUnrecognizedVMOptions keeps a future JDK that drops a flag from refusing to start.
 */
export const QUICK_START_JVM_FLAGS = [
  '-XX:+IgnoreUnrecognizedVMOptions',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xss1m',
  '-XX:-UsePerfData',
];
/** Verification off; not used on a CDS training run (an archive dumped unverified would be refused later). */
export const NO_VERIFY_JVM_FLAGS = ['-XX:+UnlockDiagnosticVMOptions', '-XX:-BytecodeVerificationRemote'];

/**
 * The `java` to run: `$JAVA_HOME/bin/java` when set, else `java` on PATH.
 * Throws a message that names what to install when there is none.
 *
 * @example
 * spawnManaged('DynamoDB Local', javaExecutable(), ['-version']);
 */
export function javaExecutable(): string {
  const home = process.env['JAVA_HOME'];
  if (home) {
    const candidate = join(home, 'bin', 'java');
    if (existsSync(candidate)) return candidate;
  }
  const onPath = which('java');
  if (onPath) return onPath;
  throw new Error('java is not on PATH (and JAVA_HOME is not set): the local engines need Java 17+');
}

export interface ClassDataSharing {
  /** JVM flags for this run. */
  flags: string[];
  /** True when this run records the archive (it is written when the JVM exits on SIGTERM). */
  training: boolean;
  /**
   * Call with the JVM's exit: moves a complete archive into place, drops a partial one, or one from
   * a run that never got ready (`keep` false), which would have recorded too few classes.
   */
  afterExit(exit: ExitInfo, keep: boolean): void;
}

/**
 * AppCDS for an engine (JDK 13+ dynamic archive): when `archive` exists the JVM maps the engine's
 * classes from it, pre-parsed and pre-verified (ElasticMQ: ~1.5 s → ~0.8 s alone). Otherwise this
 * run is the training run: the JVM writes the archive to a temporary file when it exits cleanly
 * (dumping takes ~3 s, so give its stop a longer grace), and {@link ClassDataSharing.afterExit}
 * renames it into place. A stale or foreign archive (other JDK build, other class path) is ignored by
 * the JVM, which then starts normally. DynamoDB Local cannot use CDS: its manifest puts `.` on the
 * class path, and CDS refuses non-empty directories.
 *
 * The archive is `<libDir>.<jdk key>.jsa` next to `libDir`; pass `libDir` as a real path (the archive
 * records the class path, and a symlinked vendor dir would not match it).
 *
 * @example
 * const cds = classDataSharing(realpathSync('.ringstore/vendor/elasticmq-server_2.13-1.7.1'), javaExecutable());
 */
export function classDataSharing(libDir: string, java: string): ClassDataSharing {
  const dir = dirname(libDir);
  const base = basename(libDir);
  // An archive only fits the JDK build that wrote it: key it by the java binary, so a JDK upgrade
  // trains a new one instead of silently running without.
  const javaFile = realpathSync(java);
  const javaStat = statSync(javaFile);
  const key = createHash('sha256').update(`${javaFile}:${javaStat.size}:${javaStat.mtimeMs}`).digest('hex').slice(0, 12);
  const archive = join(dir, `${base}.${key}.jsa`);
  const tempPrefix = `${base}.${key}.jsa.`;
  for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
    if (!entry.startsWith(`${base}.`)) continue;
    if (entry.endsWith('.tmp')) {
      // Temp archives are `<archive>.<pid>.<random>.tmp`; those of dead processes are leftovers.
      const pid = entry.startsWith(tempPrefix) ? Number(entry.slice(tempPrefix.length).split('.')[0]) : NaN;
      if (!Number.isInteger(pid) || !pidAlive(pid)) rmSync(join(dir, entry), { force: true });
    } else if (entry.endsWith('.jsa') && entry !== basename(archive)) {
      rmSync(join(dir, entry), { force: true }); // written by another JDK build
    }
  }
  if (existsSync(archive)) {
    return { flags: [`-XX:SharedArchiveFile=${archive}`, ...NO_VERIFY_JVM_FLAGS], training: false, afterExit: () => {} };
  }
  const temp = `${archive}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  return {
    flags: [`-XX:ArchiveClassesAtExit=${temp}`],
    training: true,
    afterExit: (exit, keep) => {
      try {
        // Killed by a signal (SIGKILL after the grace, or our own death) means a possibly partial file.
        if (keep && exit.signal === null && existsSync(temp) && !existsSync(archive)) renameSync(temp, archive);
      } finally {
        rmSync(temp, { force: true });
      }
    },
  };
}
