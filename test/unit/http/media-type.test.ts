// Content-Type as stored with a value: a media type (RFC 9110 §8.3.1), or a 400 naming the field.
import fc from 'fast-check';
import { CommitUploadBody, CreateUploadBody, MediaType, PutValueHeaders, mediaTypePattern } from '../../../schemas/api';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { parseWith } from '../../../lambdas/http/request';
import { limits } from '../../../schemas/topology';

const accepts = (value: string) => MediaType.safeParse(value).success;

function errorOf(action: () => unknown) {
  try {
    action();
    return undefined;
  } catch (error) {
    return isRingstoreError(error) ? { code: error.code, details: error.details } : error;
  }
}

describe('MediaType', () => {
  it.each([
    'text/plain',
    'text/plain; charset=utf-8',
    'text/plain;charset=UTF-8',
    'text/plain ; charset=utf-8 ; format=flowed',
    'text/plain;',
    'application/vnd.api+json',
    'application/octet-stream',
    'multipart/form-data; boundary="a b;c=d"',
    'text/plain; title="say \\"hi\\""',
    'image/svg+xml',
    '*/*',
  ])('accepts %j', (value) => {
    expect(accepts(value)).toBe(true);
  });

  it.each([
    '0',
    'text',
    'a/b/c',
    '/plain',
    'text/',
    'text /plain',
    'text/ plain',
    ' text/plain',
    'text/plain; charset',
    'text/plain; =utf-8',
    'text/plain; charset = utf-8',
    'text/plain; charset="utf-8',
    'text/plain\u0001',
    'text/plain; a="\u0007"',
    'text/plain\r\nx-injected: 1',
    't\u00ebxt/plain',
    'text/plain; name="\u043a\u043b\u044e\u0447"',
    `text/${'x'.repeat(limits.contentTypeCharsMax)}`,
  ])('refuses %j', (value) => {
    expect(accepts(value)).toBe(false);
  });

  it('accepts every type/subtype made of tokens, with token or quoted parameters', () => {
    const tchar = fc.constantFrom(...Array.from("!#$%&'*+-.^_`|~09AZaz"));
    const token = fc.string({ unit: tchar, minLength: 1, maxLength: 8 });
    const quoted = fc.string({ unit: fc.constantFrom('a', ' ', ';', '=', ',', '\\"', '\\\\', '/'), maxLength: 6 }).map((s) => `"${s}"`);
    const parameter = fc
      .tuple(fc.constantFrom('', ' ', '\t'), token, fc.oneof(token, quoted))
      .map(([ows, name, value]) => `;${ows}${name}=${value}`);
    fc.assert(
      fc.property(token, token, fc.array(parameter, { maxLength: 4 }), (type, subtype, parameters) => {
        expect(mediaTypePattern.test(`${type}/${subtype}${parameters.join('')}`)).toBe(true);
      }),
    );
  });

  it('fails fast on long near-misses (no backtracking blow-up)', () => {
    const nearMisses = [
      `a/b${'; \t; '.repeat(60)}\u0001`,
      `a/b${';  '.repeat(80)}=`,
      `a/b; x="${'\\"'.repeat(120)}`,
      `a/b${'; x=y '.repeat(40)}"`,
    ];
    for (const value of nearMisses) {
      const started = performance.now();
      expect(mediaTypePattern.test(value)).toBe(false);
      expect(performance.now() - started).toBeLessThan(50);
    }
  });
});

describe('where a content type is read', () => {
  it('PUT: the Content-Type header, defaulting when missing or empty, else a 400 naming content-type', () => {
    expect(parseWith(PutValueHeaders, {}, 'header')).toEqual({ 'content-type': 'application/octet-stream' });
    expect(parseWith(PutValueHeaders, { 'content-type': '' }, 'header')).toEqual({ 'content-type': 'application/octet-stream' });
    expect(parseWith(PutValueHeaders, { 'content-type': 'text/plain; charset=utf-8' }, 'header')).toEqual({
      'content-type': 'text/plain; charset=utf-8',
    });
    expect(errorOf(() => parseWith(PutValueHeaders, { 'content-type': '0' }, 'header'))).toEqual({
      code: 'request.invalid',
      details: { field: 'content-type', in: 'header' },
    });
  });

  it('uploads: contentType of the create and the commit bodies, with the same rule', () => {
    const sha256 = 'a'.repeat(64);
    expect(parseWith(CreateUploadBody, {}, 'body')).toEqual({ contentType: 'application/octet-stream' });
    expect(parseWith(CommitUploadBody, { sha256, contentType: 'video/mp4' }, 'body')).toMatchObject({ contentType: 'video/mp4' });
    expect(errorOf(() => parseWith(CreateUploadBody, { contentType: 'text' }, 'body'))).toMatchObject({
      code: 'request.invalid',
      details: { field: 'contentType' },
    });
    expect(errorOf(() => parseWith(CommitUploadBody, { sha256, contentType: 'a/b/c' }, 'body'))).toMatchObject({
      code: 'request.invalid',
      details: { field: 'contentType' },
    });
  });
});
