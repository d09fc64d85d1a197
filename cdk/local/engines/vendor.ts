// Fetches the Java engines from Maven Central into the vendor directory on first use.
// A fetch builds a temporary directory and renames it into place, so an interrupted fetch leaves
// no half-filled directory behind and is simply retried on the next start.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeExit, pidAlive, spawnManaged, which } from './child';

/** Bound on one Maven run (a cold ~/.m2 downloads about 90 MB). */
export const FETCH_TIMEOUT_MS = 10 * 60_000;
const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';
const COMPLETE_MARKER = '.complete';
const TEMP_PREFIX = '.fetch-';

export interface MavenArtifact {
  /** Human name for progress messages. */
  label: string;
  groupId: string;
  artifactId: string;
  version: string;
  /** Files that must be present after the fetch (the main jar, native libraries). */
  requiredFiles: string[];
}

/** Where an artifact lives once fetched: `<vendorDir>/<artifactId>-<version>/`. */
export function artifactDir(vendorDir: string, artifact: MavenArtifact): string {
  return join(vendorDir, `${artifact.artifactId}-${artifact.version}`);
}

/** Whether the artifact has been completely fetched already. @example isFetched(vendorDir, DYNAMODB_LOCAL) */
export function isFetched(vendorDir: string, artifact: MavenArtifact): boolean {
  const dir = artifactDir(vendorDir, artifact);
  return existsSync(join(dir, COMPLETE_MARKER)) && artifact.requiredFiles.every((f) => existsSync(join(dir, f)));
}

/** A pom whose only job is to name the artifact so `dependency:copy-dependencies` copies its closure. */
export function fetchPom(artifact: MavenArtifact): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ringstore.local</groupId>
  <artifactId>fetch-${artifact.artifactId}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>${artifact.groupId}</groupId>
      <artifactId>${artifact.artifactId}</artifactId>
      <version>${artifact.version}</version>
    </dependency>
  </dependencies>
</project>
`;
}

async function runMaven(cwd: string, outputDir: string): Promise<void> {
  const mvn = process.platform === 'win32' ? 'mvn.cmd' : 'mvn';
  if (!which(mvn)) {
    throw new Error('Maven (mvn) is not on PATH; it is needed once to fetch the local engines (Java 17+ and Maven 3.8+)');
  }
  const args = [
    '-B',
    '-q',
    '-Dstyle.color=never',
    '-f',
    join(cwd, 'pom.xml'),
    `${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
    `-DoutputDirectory=${outputDir}`,
    '-DincludeScope=runtime',
  ];
  // Managed like the engines, so a killed `npm start` does not leave Maven's JVM running.
  const child = spawnManaged('mvn', mvn, args, { cwd });
  const timer = setTimeout(() => void child.stop().catch(() => undefined), FETCH_TIMEOUT_MS);
  const exit = await child.exited.finally(() => clearTimeout(timer));
  if (exit.code === 0) return;
  const why = exit.signal === 'SIGTERM' || exit.signal === 'SIGKILL' ? `timed out after ${FETCH_TIMEOUT_MS} ms` : describeExit(exit);
  throw new Error(`mvn ${args.join(' ')} ${why}\n${child.outputTail(30)}`);
}

// Temp dirs are named `.fetch-<artifactId>-<pid>-<random>`; those of dead processes are leftovers.
async function removeStaleTemps(vendorDir: string, artifact: MavenArtifact): Promise<void> {
  const prefix = `${TEMP_PREFIX}${artifact.artifactId}-`;
  for (const entry of await readdir(vendorDir)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || !pidAlive(pid)) await rm(join(vendorDir, entry), { recursive: true, force: true });
  }
}

// One Maven at a time per process: concurrent runs race on the same files in ~/.m2.
let queue: Promise<unknown> = Promise.resolve();

/**
 * Makes sure `artifact` and its runtime dependencies are in `<vendorDir>/<artifactId>-<version>/`
 * and returns that directory. Fetches with Maven only when missing.
 *
 * @example
 * const dir = await ensureArtifact(DYNAMODB_LOCAL, '.ringstore/vendor', console.log);
 */
export function ensureArtifact(artifact: MavenArtifact, vendorDir: string, log: (line: string) => void = () => {}): Promise<string> {
  const run = async (): Promise<string> => {
    const dir = artifactDir(vendorDir, artifact);
    if (isFetched(vendorDir, artifact)) return dir;
    await mkdir(vendorDir, { recursive: true });
    await removeStaleTemps(vendorDir, artifact);
    log(`fetching ${artifact.label} ${artifact.version} with Maven (first start only)…`);
    const started = Date.now();
    const temp = await mkdtemp(join(vendorDir, `${TEMP_PREFIX}${artifact.artifactId}-${process.pid}-`));
    try {
      await writeFile(join(temp, 'pom.xml'), fetchPom(artifact));
      const lib = join(temp, 'lib');
      await runMaven(temp, lib);
      const missing = artifact.requiredFiles.filter((f) => !existsSync(join(lib, f)));
      if (missing.length > 0) throw new Error(`Maven fetched ${artifact.label} but these files are missing: ${missing.join(', ')}`);
      await writeFile(join(lib, COMPLETE_MARKER), `${artifact.groupId}:${artifact.artifactId}:${artifact.version}\n`);
      // Another process may have finished the same fetch meanwhile; its copy is as good as ours.
      if (!isFetched(vendorDir, artifact)) {
        // An incomplete directory (e.g. copied by hand) is replaced.
        await rm(dir, { recursive: true, force: true });
        try {
          await rename(lib, dir);
        } catch (e) {
          if (!isFetched(vendorDir, artifact)) throw e;
        }
      }
      log(`fetched ${artifact.label} ${artifact.version} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return dir;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}
