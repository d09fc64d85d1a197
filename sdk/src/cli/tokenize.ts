// Splits an interactive or piped command line into words the way a POSIX shell would for the
// simple cases: whitespace separates, quotes group, backslash escapes.

/**
 * Splits a line into words. Single quotes keep everything literally; double quotes allow
 * `\"` and `\\`; outside quotes a backslash escapes the next character. An unclosed quote is
 * an error.
 *
 * @example
 * ```ts
 * tokenize(`put "my key" 'hello world' --ttl 60`); // ['put', 'my key', 'hello world', '--ttl', '60']
 * ```
 */
export function tokenize(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line.charAt(i);
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) word += line.charAt(++i);
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && i + 1 < line.length) {
      word += line.charAt(++i);
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new Error(`unclosed ${quote === '"' ? 'double' : 'single'} quote`);
  if (inWord) words.push(word);
  return words;
}
