// Request bodies: malformed JSON is refused with where it stops being JSON, an unknown field is named before
// the required field it usually stands for, with the field it most likely meant, and a message never
// repeats the word it starts with.
import type { APIGatewayProxyEvent } from 'aws-lambda';
import fc from 'fast-check';
import { TxnBody } from '../../../schemas/api';
import { RingstoreError } from '../../../lambdas/core/errors';
import { jsonSyntaxError } from '../../../lambdas/http/json-syntax';
import { jsonBody, parseWith } from '../../../lambdas/http/request';

const eventWith = (body: string) => ({ body, isBase64Encoded: false }) as unknown as APIGatewayProxyEvent;

function refusalOf(run: () => unknown): { code: string; message: string; details?: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    if (error instanceof RingstoreError)
      return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
    throw error;
  }
  throw new Error('accepted');
}

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('jsonSyntaxError', () => {
  it('finds nothing wrong in any JSON text, compact or indented', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        expect(jsonSyntaxError(JSON.stringify(value, null, indent))).toBeUndefined();
      }),
    );
  });

  it('agrees with JSON.parse on any text, and places an error inside the text', () => {
    const jsonish = fc.string({ unit: fc.constantFrom(...'{}[]:,"\\ 0123-.eE+truefalsnl\n\tx'.split('')), maxLength: 24 });
    fc.assert(
      fc.property(
        fc.oneof(
          jsonish,
          fc.json().map((text) => text.slice(0, -1)),
        ),
        (text) => {
          const problem = jsonSyntaxError(text);
          expect(problem === undefined).toBe(parses(text));
          if (problem) expect(problem.position).toBeLessThanOrEqual(text.length);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it.each([
    ['{"ops": [}', { position: 9, line: 1, column: 10, expected: 'a value' }],
    ['{"ops": [1, 2,]}', { position: 14, line: 1, column: 15, expected: 'a value' }],
    ['{ops: []}', { position: 1, line: 1, column: 2, expected: 'a property name in double quotes' }],
    ['{"a": 1}\n{"b": 2}', { position: 9, line: 2, column: 1, expected: 'the end of the text after one value' }],
    ['{\n  "a": 1\n  "b": 2\n}', { position: 13, line: 3, column: 3, expected: "',' or '}' after a property value" }],
    ['[1, 2', { position: 5, line: 1, column: 6, expected: "',' or ']' after an array element" }],
  ])('places the error of %j', (text, expected) => {
    expect(jsonSyntaxError(text)).toEqual(expected);
  });
});

describe('a request body', () => {
  it('that is not JSON is refused with where it stops being JSON', () => {
    expect(refusalOf(() => jsonBody(eventWith('{"ops": [\n  {"op": "get", "key": "a"},\n]}')))).toEqual({
      code: 'request.invalid',
      message: 'body is not valid JSON: expected a value at line 3, column 1',
      details: { in: 'body', position: 39, line: 3, column: 1 },
    });
  });

  it.each([
    [[{ op: 'get', key: 'a' }], 'body: a transaction is an object, {"ops": [...]}, not a bare array of operations', 'body'],
    [{ operations: [{ op: 'get', key: 'a' }] }, 'body: unknown field operations; did you mean ops?', 'operations'],
    [{ ops: [{ op: 'get', key: 'a' }], timeoutMS: 500 }, 'body: unknown field timeoutMS; did you mean timeoutMs?', 'timeoutMS'],
    [{ ops: [{ op: 'put', key: 'a', vaule: 'x' }] }, 'body ops.0: unknown field vaule; did you mean value?', 'ops.0.vaule'],
    [{}, 'body ops: Invalid input: expected array, received undefined', 'ops'],
  ])('%j of a transaction is refused naming the field, and the one it most likely meant', (body, message, field) => {
    const refusal = refusalOf(() => parseWith(TxnBody, body, 'body'));
    expect(refusal).toMatchObject({ code: 'request.invalid', message, details: { field, in: 'body' } });
    expect(refusal.message).not.toMatch(/^(\w+) \1\b/);
  });
});
