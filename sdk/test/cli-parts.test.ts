// Pure parts of the CLI: word splitting, flag scanning, which connection wins, ring layout.

import { resolveConnection } from '../src/cli/connection';
import { formatRing, rangeSize } from '../src/cli/format';
import { scanGlobalFlags } from '../src/cli/main';
import { tokenize } from '../src/cli/tokenize';
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

    expect(resolveConnection({ session: { endpoint: 'http://s', apiKey: 's' }, flags: { endpoint: 'http://f' }, env, saved }))
      .toEqual({ endpoint: 'http://s', apiKey: 's' });
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
