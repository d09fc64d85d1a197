// Pure parts of the CLI: word splitting, flag scanning, which connection wins, ring layout, txn ops.

import { resolveConnection } from '../src/cli/connection';
import { formatRing, rangeSize } from '../src/cli/format';
import { formatDrStatus } from '../src/cli/format-dr';
import { completerOf, scanGlobalFlags } from '../src/cli/main';
import { buildProgram, commandNames } from '../src/cli/program';
import { tokenize } from '../src/cli/tokenize';
import { formatTransaction, parseTxnFile, parseTxnWords } from '../src/cli/txn-ops';
import type { TransactOp } from '../src/commands';
import { FAKE_RING } from './support/fake-server';

describe('tokenize', () => {
  it.each([
    ['get k', ['get', 'k']],
    ['  put   k   v  ', ['put', 'k', 'v']],
    [`put "my key" 'a "quoted" value'`, ['put', 'my key', 'a "quoted" value']],
    ['put k "say \\"hi\\""', ['put', 'k', 'say "hi"']],
    ['put a\\ b c', ['put', 'a b', 'c']],
    ['put k ""', ['put', 'k', '']],
    ['', []],
  ])('splits %j', (line, words) => {
    expect(tokenize(line)).toEqual(words);
  });

  it('refuses an unclosed quote', () => {
    expect(() => tokenize('put "k v')).toThrow('unclosed double quote');
  });
});

describe('tab completion', () => {
  const names = commandNames(
    buildProgram({ env: {}, flags: {}, stdout: { write: () => true }, stderr: { write: () => true }, quit: false }),
  );

  it('completes every command of the program and its aliases', () => {
    for (const name of [
      'keys',
      'namespace',
      'audit',
      'dr',
      'failover',
      'principals',
      'rebalance',
      'txn',
      'del',
      'ls',
      'quit',
      'exit',
      'help',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('completes the command word only', () => {
    const complete = completerOf(names);
    expect(complete('pri')).toEqual([['principals'], 'pri']);
    expect(complete('d')[0]).toEqual(['del', 'delete', 'disconnect', 'dr']);
    expect(complete('get gre')).toEqual([[], 'get gre']);
  });
});

describe('scanGlobalFlags', () => {
  it('separates global flags from the command, in both spellings', () => {
    expect(scanGlobalFlags(['--endpoint', 'http://x', '--api-key=k=1', 'get', 'a'])).toEqual({
      flags: { endpoint: 'http://x', apiKey: 'k=1' },
      rest: ['get', 'a'],
    });
    expect(scanGlobalFlags(['--endpoint', 'http://x'])).toEqual({ flags: { endpoint: 'http://x' }, rest: [] });
  });
});

describe('resolveConnection', () => {
  const saved = { endpoint: 'http://saved', apiKey: 'saved-key' };

  it('prefers session, then flags, then environment, then the saved file', () => {
    const env = { RINGSTORE_ENDPOINT: 'http://env', RINGSTORE_API_KEY: 'env-key' };

    expect(resolveConnection({ session: { endpoint: 'http://s', apiKey: 's' }, flags: { endpoint: 'http://f' }, env, saved })).toEqual({
      endpoint: 'http://s',
      apiKey: 's',
    });
    expect(resolveConnection({ flags: { endpoint: 'http://f', apiKey: 'f' }, env, saved })).toEqual({ endpoint: 'http://f', apiKey: 'f' });
    expect(resolveConnection({ flags: {}, env, saved })).toEqual({ endpoint: 'http://env', apiKey: 'env-key' });
    expect(resolveConnection({ flags: {}, env: {}, saved })).toEqual(saved);
    expect(resolveConnection({ flags: {}, env: {} })).toBeUndefined();
  });

  it('never sends the saved key to another endpoint', () => {
    expect(resolveConnection({ flags: {}, env: { RINGSTORE_ENDPOINT: 'http://env' }, saved })).toEqual({ endpoint: 'http://env' });
    expect(resolveConnection({ flags: { endpoint: 'http://f' }, env: {}, saved })).toEqual({ endpoint: 'http://f' });
  });
});

describe('ring layout', () => {
  it('sizes ranges as (start, end] with wrap-around', () => {
    expect(rangeSize(10, 20, 32)).toBe(10);
    expect(rangeSize(2 ** 32 - 6, 5, 32)).toBe(11);
    expect(rangeSize(7, 7, 32)).toBe(2 ** 32);
  });

  it('warns when the ranges do not cover the token space', () => {
    const broken = { ...FAKE_RING, ranges: FAKE_RING.ranges.slice(1) };

    expect(formatRing(FAKE_RING)).not.toContain('warning');
    expect(formatRing(broken)).toContain(`warning: the ranges cover ${2 ** 32 - 2 ** 29} tokens, not ${2 ** 32}`);
  });
});

describe('txn ops', () => {
  it('parses words with fixed arity, so keys and values may hold any character', () => {
    expect(parseTxnWords(['get', 'a', 'put', 'b=1', 'x@3 if', 'delete', 'if', 'if', '0', 'check', 'put', '3', 'del', 'e'])).toEqual([
      { op: 'get', key: 'a' },
      { op: 'put', key: 'b=1', value: 'x@3 if' },
      { op: 'delete', key: 'if', ifVersion: 0 },
      { op: 'check', key: 'put', ifVersion: 3 },
      { op: 'delete', key: 'e' },
    ]);
    expect(parseTxnWords(['put', 'k', 'v', 'if', '7', 'get', 'k'])).toEqual([
      { op: 'put', key: 'k', value: 'v', ifVersion: 7 },
      { op: 'get', key: 'k' },
    ]);
  });

  it.each([
    [['get'], 'get needs a key'],
    [['put', 'k'], 'put k needs a value'],
    [['check', 'k'], 'check k needs a version'],
    [['check', 'k', 'three'], 'version must be an integer >= 0'],
    [['put', 'k', 'v', 'if'], 'needs a version'],
    [['increment', 'k'], 'unknown op "increment"'],
  ])('refuses %j', (words, message) => {
    expect(() => parseTxnWords(words)).toThrow(message);
  });

  it('reads a JSON file as the REST body or a bare array, decoding base64 values', () => {
    expect(parseTxnFile('{"ops":[{"op":"put","key":"a","value":"aGk=","encoding":"base64","ifVersion":0}],"timeoutMs":900}')).toEqual({
      ops: [{ op: 'put', key: 'a', value: new Uint8Array([104, 105]), ifVersion: 0 }],
      timeoutMs: 900,
    });
    expect(parseTxnFile('[{"op":"put","key":"a","value":"text"},{"op":"get","key":"b"}]')).toEqual({
      ops: [
        { op: 'put', key: 'a', value: 'text' },
        { op: 'get', key: 'b' },
      ],
    });
    expect(() => parseTxnFile('{"op":"get"}')).toThrow('expected {"ops": [...]} or an array of ops');
    expect(() => parseTxnFile('not json')).toThrow('the ops are not JSON');
    expect(() => parseTxnFile('[{"op":"put","key":"a","value":"x","encoding":"hex"}]')).toThrow('ops[0].encoding');
  });

  it('lays out writes (deletes as deleted) and reads, quoting what would break the line', () => {
    const text = (value: string) => new TextEncoder().encode(value);
    const found = (key: string, bytes: Uint8Array, contentType: string, version?: number) => ({
      key,
      found: true as const,
      value: bytes,
      contentType,
      ...(version === undefined ? {} : { version }),
      text: () => new TextDecoder().decode(bytes),
      json: <T>() => JSON.parse(new TextDecoder().decode(bytes)) as T,
    });

    const ops: TransactOp[] = [
      { op: 'get', key: 'a' },
      { op: 'put', key: 'b', value: 'two\nlines' },
      { op: 'get', key: 'b' },
      { op: 'delete', key: 'c' },
      { op: 'put', key: 'd', value: 'x' },
      { op: 'delete', key: 'd' },
      { op: 'get', key: 'bin' },
      { op: 'get', key: 'gone' },
    ];

    const shown = formatTransaction(
      {
        txid: 't-1',
        writes: [
          { key: 'b', version: 4 },
          { key: 'c', version: 2 },
          { key: 'd', version: 7 },
        ],
        reads: [
          found('a', text('hello'), 'text/plain', 3),
          found('b', text('two\nlines'), 'text/plain'),
          found('bin', new Uint8Array([0, 1, 2]), 'application/octet-stream', 1),
          { key: 'gone', found: false },
        ],
      },
      ops,
    );

    expect(shown.split('\n')).toEqual([
      'committed t-1 (3 writes, 4 reads)',
      'wrote    b     version 4',
      'deleted  c     version 2',
      'deleted  d     version 7',
      'read     a     version 3  hello',
      'read     b     this txn   "two\\nlines"',
      'read     bin   version 1  <3 bytes of application/octet-stream>',
      'read     gone  not found',
    ]);
  });
});

describe('DR status', () => {
  it('shows a primary, its backup, and its initial sync', () => {
    const text = formatDrStatus({
      role: 'primary',
      state: 'backup',
      epoch: 0,
      backupReachable: true,
      sync: { status: 'running', nextRange: 3, ranges: 64, keys: 120, startedAtMs: 0, updatedAtMs: 0 },
    });

    expect(text).toBe('primary; its backup is backup (epoch 0)\ninitial sync running: 3 of 64 ranges, 120 keys shipped');
  });

  it('says when a primary cannot reach its backup, and when a region has no DR', () => {
    expect(formatDrStatus({ role: 'primary', backupReachable: false })).toContain('cannot be reached');
    expect(formatDrStatus({ role: 'none' })).toBe('this region has no disaster-recovery role');
  });
});
