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
  return new JsonScanner(text).firstError();
}

/** A scanner of one JSON text; each part's reader returns the error it met, or undefined once its part was read. */
class JsonScanner {
  private at = 0;

  constructor(private readonly text: string) {}

  firstError(): JsonSyntaxError | undefined {
    const problem = this.value();
    if (problem) return problem;
    this.skipWhitespace();
    return this.at < this.text.length ? this.fail('the end of the text after one value') : undefined;
  }

  private fail(expected: string): JsonSyntaxError {
    const before = this.text.slice(0, this.at).split('\n');
    return { position: this.at, line: before.length, column: before[before.length - 1]!.length + 1, expected };
  }

  private skipWhitespace(): void {
    while (this.at < this.text.length && whitespace.has(this.text[this.at]!)) this.at += 1;
  }

  /** A string: no raw control character (below U+0020), escapes from the grammar's list. */
  private string(): boolean {
    const { text } = this;
    if (text[this.at] !== '"') return false;
    this.at += 1;
    while (this.at < text.length) {
      const next = text[this.at]!;
      if (next === '"') {
        this.at += 1;
        return true;
      }
      if (next.charCodeAt(0) < 0x20) return false;
      if (next !== '\\') this.at += 1;
      else if (escapes.has(text[this.at + 1] ?? '')) this.at += 2;
      else if (text[this.at + 1] === 'u' && hexDigits.test(text.slice(this.at + 2, this.at + 6))) this.at += 6;
      else return false;
    }
    return false;
  }

  private match(pattern: RegExp): boolean {
    pattern.lastIndex = this.at;
    if (!pattern.test(this.text)) return false;
    this.at = pattern.lastIndex;
    return true;
  }

  private value(): JsonSyntaxError | undefined {
    this.skipWhitespace();
    const next = this.text[this.at];
    if (next === '{') return this.members();
    if (next === '[') return this.elements();
    if (next === '"') return this.string() ? undefined : this.fail('a string closed by "');
    for (const literal of ['true', 'false', 'null']) {
      if (this.text.startsWith(literal, this.at)) {
        this.at += literal.length;
        return undefined;
      }
    }
    return this.match(numberPattern) ? undefined : this.fail('a value');
  }

  private members(): JsonSyntaxError | undefined {
    this.at += 1;
    this.skipWhitespace();
    if (this.text[this.at] === '}') return void (this.at += 1);
    for (;;) {
      this.skipWhitespace();
      if (!this.string()) return this.fail('a property name in double quotes');
      this.skipWhitespace();
      if (this.text[this.at] !== ':') return this.fail("':' after a property name");
      this.at += 1;
      const problem = this.value();
      if (problem) return problem;
      this.skipWhitespace();
      if (this.text[this.at] === '}') return void (this.at += 1);
      if (this.text[this.at] !== ',') return this.fail("',' or '}' after a property value");
      this.at += 1;
    }
  }

  private elements(): JsonSyntaxError | undefined {
    this.at += 1;
    this.skipWhitespace();
    if (this.text[this.at] === ']') return void (this.at += 1);
    for (;;) {
      const problem = this.value();
      if (problem) return problem;
      this.skipWhitespace();
      if (this.text[this.at] === ']') return void (this.at += 1);
      if (this.text[this.at] !== ',') return this.fail("',' or ']' after an array element");
      this.at += 1;
    }
  }
}
