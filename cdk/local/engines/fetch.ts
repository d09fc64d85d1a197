// Fetches the Java engines into .ringstore/vendor ahead of time (CI runs this before the tests, so
// the Maven download is not counted against test timeouts). Usage: npx tsx cdk/local/engines/fetch.ts [vendorDir]
import { resolve } from 'node:path';
import { DYNAMODB_LOCAL } from './dynamodb-local';
import { ELASTICMQ } from './elasticmq';
import { artifactDir, ensureArtifact, type MavenArtifact } from './vendor';

/** The engines startEngines fetches on first start. */
export const JAVA_ENGINES: readonly MavenArtifact[] = [DYNAMODB_LOCAL, ELASTICMQ];

/** Default vendor directory: `<repo>/.ringstore/vendor`. */
export const DEFAULT_VENDOR_DIR = resolve(__dirname, '../../../.ringstore/vendor');

/**
 * Fetches every Java engine not yet in `vendorDir`, one after the other (Maven runs are serialized).
 *
 * @example
 * await fetchEngines('.ringstore/vendor', console.log);
 */
export async function fetchEngines(vendorDir: string = DEFAULT_VENDOR_DIR, log: (line: string) => void = () => {}): Promise<string[]> {
  const dirs: string[] = [];
  for (const artifact of JAVA_ENGINES) dirs.push(await ensureArtifact(artifact, vendorDir, log));
  return dirs;
}

if (require.main === module) {
  const vendorDir = resolve(process.argv[2] ?? DEFAULT_VENDOR_DIR);
  fetchEngines(vendorDir, (line) => console.log(line)).then(
    () => {
      for (const a of JAVA_ENGINES) console.log(`${a.label} ${a.version}: ${artifactDir(vendorDir, a)}`);
    },
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    },
  );
}
