// Where a JSON text stops being JSON (RFC 8259), for a 400 that points at it. JSON.parse says so in words
// that change between Node versions, and on Node 20 an unexpected token comes with no position at all; a
// scanner of the grammar's tokens is short and says the same on every version. Called only after JSON.parse
// has refused the text, so the happy path parses once.

/** The offset of the first character that cannot continue a JSON text, with what was expected there. */
export interface JsonSyntaxError {
  position: number;
  line: number;
  column: number;
  expected: string;
}

const whitespace = new Set([' ', '\t', '\n', '\r']);
const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const escapes = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const hexDigits = /^[0-9a-fA-F]{4}$/;

/** The first syntax error of `text`, or undefined when it is one JSON value. */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let at = 0;
  const fail = (expected: string): JsonSyntaxError => {
    const before = text.slice(0, at).split('\n');
    return { position: at, line: before.length, column: before[before.length - 1]!.length + 1, expected };
  };
  const skipWhitespace = () => {
    while (at < text.length && whitespace.has(text[at]!)) at += 1;
  };
  // A string: no raw control character (below U+0020), escapes from the grammar's list.
  const string = (): boolean => {
    if (text[at] !== '"') return false;
    at += 1;
    while (at < text.length) {
      const next = text[at]!;
      if (next === '"') {
        at += 1;
        return true;
      }
      if (next.charCodeAt(0) < 0x20) return false;
      if (next !== '\\') at += 1;
      else if (escapes.has(text[at + 1] ?? '')) at += 2;
      else if (text[at + 1] === 'u' && hexDigits.test(text.slice(at + 2, at + 6))) at += 6;
      else return false;
    }
    return false;
  };
  const match = (pattern: RegExp): boolean => {
    pattern.lastIndex = at;
    if (!pattern.test(text)) return false;
    at = pattern.lastIndex;
    return true;
  };
  // Each returns the error it met, or undefined once its part was read.
  const value = (): JsonSyntaxError | undefined => {
    skipWhitespace();
    const next = text[at];
    if (next === '{') return members();
    if (next === '[') return elements();
    if (next === '"') return string() ? undefined : fail('a string closed by "');
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return undefined;
      }
    }
    return match(numberPattern) ? undefined : fail('a value');
  };
  const members = (): JsonSyntaxError | undefined => {
    at += 1;
    skipWhitespace();
    if (text[at] === '}') return void (at += 1);
    for (;;) {
      skipWhitespace();
      if (!string()) return fail('a property name in double quotes');
      skipWhitespace();
      if (text[at] !== ':') return fail("':' after a property name");
      at += 1;
      const problem = value();
      if (problem) return problem;
      skipWhitespace();
      if (text[at] === '}') return void (at += 1);
      if (text[at] !== ',') return fail("',' or '}' after a property value");
      at += 1;
    }
  };
  const elements = (): JsonSyntaxError | undefined => {
    at += 1;
    skipWhitespace();
    if (text[at] === ']') return void (at += 1);
    for (;;) {
      const problem = value();
      if (problem) return problem;
      skipWhitespace();
      if (text[at] === ']') return void (at += 1);
      if (text[at] !== ',') return fail("',' or ']' after an array element");
      at += 1;
    }
  };
  const problem = value();
  if (problem) return problem;
  skipWhitespace();
  return at < text.length ? fail('the end of the text after one value') : undefined;
}
