// Finds the JVM and holds the JVM flags shared by the Java engines.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { which } from './child';

/**
 * Flags that cut JVM start-up for short-lived local engines: C1 only (no C2 warm-up work),
 * the serial collector (no GC threads to spin up on 2 cores), class data sharing left on.
 * Measured in cdk/local/engines: see the report in index.ts.
 */
export const QUICK_START_JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xss1m', '-XX:-UsePerfData'];

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
