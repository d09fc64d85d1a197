import { isRingstoreError } from '../../../lambdas/core/errors';
import { validateKey, validateNamespace } from '../../../lambdas/core/validation';
import { decodeCursor, encodeCursor } from '../../../lambdas/core/kv-listing';
import { compareKeys } from '../../../lambdas/core/listing';

const limits = { keyBytesMax: 1024 };

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return isRingstoreError(error) ? error.code : 'not a RingstoreError';
  }
}

describe('validateKey', () => {
  it('accepts 1 to 1024 bytes of UTF-8, counting bytes, not characters', () => {
    expect(codeOf(() => validateKey('a', limits))).toBeUndefined();
    expect(codeOf(() => validateKey('x'.repeat(1024), limits))).toBeUndefined();
    expect(codeOf(() => validateKey('é'.repeat(512), limits))).toBeUndefined();
    expect(codeOf(() => validateKey('é'.repeat(513), limits))).toBe('kv.keyInvalid');
  });

  it('rejects empty, oversized and ill-formed keys', () => {
    expect(codeOf(() => validateKey('', limits))).toBe('kv.keyInvalid');
    expect(codeOf(() => validateKey('x'.repeat(1025), limits))).toBe('kv.keyInvalid');
    expect(codeOf(() => validateKey('\ud800', limits))).toBe('kv.keyInvalid');
  });
});

describe('validateNamespace', () => {
  it('rejects the partition key separator', () => {
    expect(codeOf(() => validateNamespace('team-a'))).toBeUndefined();
    expect(codeOf(() => validateNamespace('a#b'))).toBe('request.invalid');
  });
});

describe('cursor', () => {
  it('round-trips and is bound to its prefix', () => {
    const cursor = encodeCursor('user/42', 'user/');
    expect(decodeCursor(cursor, 'user/')).toBe('user/42');
    expect(codeOf(() => decodeCursor(cursor, 'other/'))).toBe('kv.cursorInvalid');
  });

  it('rejects garbage', () => {
    expect(codeOf(() => decodeCursor('not-a-cursor', ''))).toBe('kv.cursorInvalid');
    expect(codeOf(() => decodeCursor(Buffer.from('{"after":1}').toString('base64url'), ''))).toBe('kv.cursorInvalid');
  });
});

describe('compareKeys', () => {
  it('orders by UTF-8 bytes like DynamoDB, not by UTF-16 code units', () => {
    // U+FF5E (3 UTF-8 bytes, EF BD 9E) sorts before U+1F600 (F0 9F 98 80) in bytes, after it in UTF-16.
    expect(compareKeys('\uff5e', '\u{1f600}')).toBeLessThan(0);
    expect('\uff5e' < '\u{1f600}').toBe(false);
  });
});
