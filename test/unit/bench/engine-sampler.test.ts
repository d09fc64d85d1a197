import { sqliteThreadState } from '../../../bench/engine-sampler';

// jstack's thread blocks, as DynamoDB Local 2.6.1's show them (trimmed).
const thread = (name: string, state: string, frames: string[]) =>
  [`"${name}" #42 prio=5 os_prio=0 cpu=1.00ms elapsed=9.00s tid=0x1 nid=0x2 runnable`, `   java.lang.Thread.State: ${state}`]
    .concat(frames.map((frame) => `\tat ${frame}(Native Method)`))
    .join('\n');
const dump = (...blocks: string[]) => ['Full thread dump OpenJDK 64-Bit Server VM:', ...blocks].join('\n\n');
const jetty = thread('qtp1-12', 'RUNNABLE', ['sun.nio.ch.EPoll.wait']);
const sqlite = (state: string, ...frames: string[]) => thread('SQLiteQueue[shared-local-instance.db]', state, frames);

describe('sqliteThreadState (a jstack sample of DynamoDB Local)', () => {
  it('sorts the SQLite thread by what it runs', () => {
    const job = 'com.amazonaws.services.dynamodbv2.local.shared.access.sqlite.AmazonDynamoDBOfflineSQLiteJob.job';
    expect(sqliteThreadState(dump(jetty, sqlite('RUNNABLE', 'com.almworks.sqlite4java._SQLiteManualJNI.sqlite3_exec', job)))).toBe(
      'commit',
    );
    expect(sqliteThreadState(dump(sqlite('RUNNABLE', 'com.almworks.sqlite4java._SQLiteSwiggedJNI.sqlite3_step', job)))).toBe('sqlite');
    expect(sqliteThreadState(dump(sqlite('RUNNABLE', 'com.fasterxml.jackson.core.json.UTF8StreamJsonParser.findName', job)))).toBe('java');
    expect(sqliteThreadState(dump(sqlite('TIMED_WAITING', 'java.lang.Object.wait')))).toBe('idle');
    expect(sqliteThreadState(dump(sqlite('BLOCKED', job)))).toBe('blocked');
  });

  it('finds nothing in a dump without the SQLite thread', () => {
    expect(sqliteThreadState(dump(jetty))).toBeUndefined();
    expect(sqliteThreadState('')).toBeUndefined();
  });
});
