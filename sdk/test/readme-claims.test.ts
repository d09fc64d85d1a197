// What the READMEs and docs/ say of responses and of the package, held to the sources that decide it:
// every status written beside an error code is the status the server answers it with (schemas/errors.ts),
// and the SDK README names exactly the package's dependencies.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodes, statusOf } from '../../schemas/errors';

const root = join(__dirname, '..', '..');
const documents = [
  'README.md',
  'sdk/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const serverCodes = new Set<string>(errorCodes);

/** Every "`409 txn.conflict`", "409 `txn.conflict`" or "`txn.conflict` 409" of a text: a code with its status. */
function statusClaims(text: string): Array<{ code: string; status: number; said: string }> {
  const claims: Array<{ code: string; status: number; said: string }> = [];
  for (const match of text.matchAll(/`?(\d{3}) `?([a-z]+\.[a-zA-Z]+)`/g)) {
    claims.push({ code: match[2]!, status: Number(match[1]), said: match[0] });
  }
  for (const match of text.matchAll(/`([a-z]+\.[a-zA-Z]+)` (\d{3})\b/g)) {
    claims.push({ code: match[1]!, status: Number(match[2]), said: match[0] });
  }
  return claims;
}

describe('what the documents say of responses', () => {
  it.each(documents)('%s: each error code written with a status is a server code answered with that status', (document) => {
    const claims = statusClaims(readFileSync(join(root, document), 'utf8'));
    const wrong = claims
      .filter(({ code, status }) => !serverCodes.has(code) || statusOf[code as keyof typeof statusOf] !== status)
      .map(
        ({ code, said }) =>
          `${said} (the server answers ${serverCodes.has(code) ? statusOf[code as keyof typeof statusOf] : 'no such code'})`,
      );
    expect(wrong).toEqual([]);
  });

  it('finds claims to check (the patterns still match how the documents write them)', () => {
    const claims = documents.flatMap((document) => statusClaims(readFileSync(join(root, document), 'utf8')));
    expect(claims.length).toBeGreaterThan(40);
  });
});

describe('what the SDK README says of the package', () => {
  it('names exactly its dependencies, and how many', () => {
    const readme = readFileSync(join(root, 'sdk', 'README.md'), 'utf8');
    const manifest = JSON.parse(readFileSync(join(root, 'sdk', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const sentence = /(\w+) dependencies: ([^.]+)\./.exec(readme.replace(/\s+/g, ' '));
    expect(sentence).not.toBeNull();
    const named = [...sentence![2]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]).sort();
    const counts = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
    expect({ named, count: sentence![1] }).toEqual({
      named: Object.keys(manifest.dependencies).sort(),
      count: counts[Object.keys(manifest.dependencies).length],
    });
  });
});
