// The replay command a failing fault test prints (test/fault/support.ts replayCommand) runs that one test:
// jest lists exactly its file, and its -t pattern matches its full name and no other test's of that file.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { replayCommand } from '../fault/support';

const root = join(__dirname, '..', '..');

/** The words of a command as a POSIX shell splits them (single quotes only, as replayCommand writes). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  for (const match of command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    words.push(match[1] !== undefined ? match[1].replace(/'\\''/g, "'") : match[2]!);
  return words;
}

describe('replay commands', () => {
  it.each([
    [
      'txn-bank.test.ts',
      'bank invariant across a failover transfers between 20 accounts on every shard keep the total while a shard fails over, and after it rejoins',
    ],
    [
      'txn-crash.test.ts',
      "transaction crash points txn.afterBegin: every transaction ends all or nothing, decided, with no intent left (it's [quoted])",
    ],
  ])('for %s select that one file, and a -t pattern that matches only that name', (file, name) => {
    // Prepare
    const command = replayCommand(7, { testPath: join(root, 'test', 'fault', file), currentTestName: name });
    const [env, npx, jest, ...args] = shellWords(command);
    expect([env, npx, jest]).toEqual(['RINGSTORE_FAULT_SEED=7', 'npx', 'jest']);

    // Act: jest lists the suites the command would run.
    const listed = execFileSync(process.execPath, [require.resolve('jest/bin/jest'), '--listTests', ...args], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);

    // Assess
    expect(listed).toEqual([join(root, 'test', 'fault', file)]);
    const pattern = new RegExp(args[args.indexOf('-t') + 1]!);
    expect(pattern.test(name)).toBe(true);
    expect(pattern.test(`${name} and more`)).toBe(false);
    expect(pattern.test(name.replace('.', 'x'))).toBe(name.includes('.') ? false : true);
  });
});
