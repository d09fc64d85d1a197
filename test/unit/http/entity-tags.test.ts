// If-Match / If-None-Match syntax (RFC 9110 §13.1.1–2, §8.8.3) and what the HTTP layer hands the core.
import fc from 'fast-check';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { type EntityTag, parseEntityTags, versionOfTag, versionsMatched } from '../../../lambdas/http/entity-tags';
import { conditionsOf } from '../../../lambdas/http/request';
import { etagOf } from '../../../lambdas/http/response';
import { limits } from '../../../schemas/topology';

const parse = (value: string) => parseEntityTags(value, limits.entityTagsMax);
const strong = (opaque: string): EntityTag => ({ weak: false, opaque });
const weak = (opaque: string): EntityTag => ({ weak: true, opaque });

describe('parseEntityTags', () => {
  it('reads *, one tag, and lists of strong and weak tags with optional whitespace', () => {
    expect(parse('*')).toEqual({ ok: true, condition: '*' });
    expect(parse(' *\t')).toEqual({ ok: true, condition: '*' });
    expect(parse('"3"')).toEqual({ ok: true, condition: [strong('3')] });
    expect(parse('"3", "5"')).toEqual({ ok: true, condition: [strong('3'), strong('5')] });
    expect(parse('"3",W/"5"')).toEqual({ ok: true, condition: [strong('3'), weak('5')] });
    expect(parse('W/"3" ,\t"5"')).toEqual({ ok: true, condition: [weak('3'), strong('5')] });
  });

  it('accepts tags this API never issues: they are well formed, and only fail to match', () => {
    expect(parse('"nope-0"')).toEqual({ ok: true, condition: [strong('nope-0')] });
    expect(parse('"abc", ""')).toEqual({ ok: true, condition: [strong('abc'), strong('')] });
    // A comma is an etagc: it separates list elements only outside the quotes.
    expect(parse('"a,b"')).toEqual({ ok: true, condition: [strong('a,b')] });
    expect(parse('"caf\u00e9"')).toEqual({ ok: true, condition: [strong('caf\u00e9')] });
  });

  it('ignores empty list elements, as a recipient must (RFC 9110 §5.6.1.2)', () => {
    expect(parse('"1", , "2"')).toEqual({ ok: true, condition: [strong('1'), strong('2')] });
    expect(parse(',"1",')).toEqual({ ok: true, condition: [strong('1')] });
  });

  it.each([
    ['3', 'no quotes'],
    ['"3', 'no closing quote'],
    ['3"', 'no opening quote'],
    ['W/3', 'a weak tag without quotes'],
    ['W/', 'a weak prefix alone'],
    ['w/"3"', 'a lowercase weak prefix'],
    ['*, "3"', '* in a list'],
    ['"3", *', '* in a list, last'],
    ['"3" "4"', 'tags without a comma'],
    ['"3"x', 'garbage after a tag'],
    ['"a b"', 'a space inside a tag'],
    ['"a\u0001"', 'a control character inside a tag'],
    ['"a"b"', 'a quote inside a tag'],
    ['', 'an empty value'],
    [' ', 'only whitespace'],
    [', ,', 'only empty elements'],
    ['yesterday', 'a word'],
  ])('refuses %j (%s)', (value) => {
    const parsed = parse(value);
    expect(parsed.ok).toBe(false);
  });

  it('names the problem', () => {
    expect(parse('3')).toMatchObject({ ok: false, problem: expect.stringContaining('double quotes') });
    expect(parse('"3')).toMatchObject({ ok: false, problem: expect.stringContaining('closing double quote') });
    expect(parse('w/"3"')).toMatchObject({ ok: false, problem: expect.stringContaining('W/ (uppercase)') });
    expect(parse('"a\u0001"')).toMatchObject({ ok: false, problem: expect.stringContaining('U+0001') });
  });

  it(`accepts up to ${limits.entityTagsMax} tags and refuses more`, () => {
    const tags = (count: number) => Array.from({ length: count }, (_, i) => `"${i + 1}"`).join(', ');
    expect(parse(tags(limits.entityTagsMax))).toMatchObject({ ok: true });
    expect(parse(tags(limits.entityTagsMax + 1))).toMatchObject({
      ok: false,
      problem: expect.stringContaining(`at most ${limits.entityTagsMax}`),
    });
  });

  // etagc = %x21 / %x23-7E (obs-text aside): any printable ASCII but the double quote.
  const etagc = fc
    .integer({ min: 0x21, max: 0x7e })
    .filter((code) => code !== 0x22)
    .map((code) => String.fromCharCode(code));
  const tag = fc.record({ weak: fc.boolean(), opaque: fc.string({ unit: etagc, maxLength: 12 }) });
  const ows = fc.constantFrom('', ' ', '\t', '  ');

  it('reads back any list it is given, whatever the whitespace and empty elements between tags', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(tag, ows, ows, fc.nat(2)), { minLength: 1, maxLength: limits.entityTagsMax }), (elements) => {
        const text = elements
          .map(([{ weak: isWeak, opaque }, before, after, empties], i) => {
            const separator = i === 0 ? '' : `${after},${`${before},`.repeat(empties)}`;
            return `${separator}${before}${isWeak ? 'W/' : ''}"${opaque}"`;
          })
          .join('');
        expect(parse(text)).toEqual({ ok: true, condition: elements.map(([t]) => t) });
      }),
    );
  });

  it('answers every string with tags or a problem, never by throwing', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('"', 'W', '/', ',', ' ', '*', '3', 'a', '\t', '\u0000'), maxLength: 24 }), (value) => {
        const parsed = parse(value);
        if (parsed.ok && parsed.condition !== '*') {
          for (const { opaque } of parsed.condition) expect(/["\s]/.test(opaque) || opaque.includes('\u0000')).toBe(false);
        }
      }),
    );
  });
});

describe('versions of entity tags', () => {
  it('reads back every ETag this API sends', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).filter((v) => String(v).length <= 15),
        (version) => {
          const parsed = parse(etagOf(version));
          expect(parsed.ok && parsed.condition !== '*' && versionOfTag(parsed.condition[0]!)).toBe(version);
        },
      ),
    );
  });

  it('finds no version in tags this API never sends', () => {
    for (const opaque of ['nope-0', 'abc', '', '0', '03', '-1', '1.5', '1e3', ' 1', '1234567890123456']) {
      expect(versionOfTag(strong(opaque))).toBeUndefined();
    }
  });

  it('compares strongly for If-Match (a weak tag matches nothing) and weakly for If-None-Match', () => {
    const tags = [weak('3'), strong('5'), strong('nope-0'), strong('5')];
    expect(versionsMatched(tags, 'strong')).toEqual([5]);
    expect(versionsMatched(tags, 'weak')).toEqual([3, 5]);
    expect(versionsMatched('*', 'strong')).toBe('*');
  });
});

function eventWith(headers: Record<string, string>, multiValueHeaders: Record<string, string[]> = {}): APIGatewayProxyEvent {
  return { headers, multiValueHeaders } as unknown as APIGatewayProxyEvent;
}

function errorOf(action: () => unknown) {
  try {
    action();
    return undefined;
  } catch (error) {
    return isRingstoreError(error) ? { code: error.code, details: error.details, message: error.message } : error;
  }
}

describe('conditionsOf', () => {
  it('hands the core the versions each header can match', () => {
    expect(conditionsOf(eventWith({}))).toEqual({});
    expect(conditionsOf(eventWith({ 'If-Match': '"3", "5"' }))).toEqual({ ifMatch: [3, 5] });
    expect(conditionsOf(eventWith({ 'if-match': '*' }))).toEqual({ ifMatch: '*' });
    expect(conditionsOf(eventWith({ 'if-match': 'W/"3"' }))).toEqual({ ifMatch: [] });
    expect(conditionsOf(eventWith({ 'if-match': '"nope-0"' }))).toEqual({ ifMatch: [] });
    expect(conditionsOf(eventWith({ 'If-None-Match': 'W/"3", "abc"' }))).toEqual({ ifNoneMatch: [3] });
    expect(conditionsOf(eventWith({ 'if-none-match': '*', 'if-match': '"2"' }))).toEqual({ ifMatch: [2], ifNoneMatch: '*' });
  });

  it('reads a header sent on several lines as one list', () => {
    const event = eventWith({ 'if-match': '"5"' }, { 'If-Match': ['"3"', '"5"'] });
    expect(conditionsOf(event)).toEqual({ ifMatch: [3, 5] });
  });

  it('refuses a malformed header with request.invalid naming it', () => {
    expect(errorOf(() => conditionsOf(eventWith({ 'if-match': '3' })))).toMatchObject({
      code: 'request.invalid',
      details: { field: 'if-match', in: 'header' },
    });
    expect(errorOf(() => conditionsOf(eventWith({ 'if-none-match': '"3' })))).toMatchObject({
      code: 'request.invalid',
      details: { field: 'if-none-match' },
    });
  });
});
