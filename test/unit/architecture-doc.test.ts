// docs/architecture.md describes the tree as it is: every source folder and every core module is named in it,
// so a new module or folder lands with its line in the doc (issue: the doc had drifted by 16 core files).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** Every folder under `dir`, itself included, as a path relative to the repository. */
function foldersUnder(dir: string): string[] {
  const entries = readdirSync(join(root, dir), { withFileTypes: true });
  return [dir, ...entries.filter((entry) => entry.isDirectory()).flatMap((entry) => foldersUnder(join(dir, entry.name)))];
}

describe('docs/architecture.md', () => {
  it('names every source folder (lambdas/, cdk/, sdk/src/, schemas/)', () => {
    const folders = ['lambdas', 'cdk', join('sdk', 'src'), 'schemas'].flatMap(foldersUnder).map((dir) => relative(root, join(root, dir)));
    expect(folders.filter((dir) => !doc.includes(dir))).toEqual([]);
  });

  it('names every module of lambdas/core, in backticks', () => {
    const modules = readdirSync(join(root, 'lambdas', 'core')).filter((file) => file.endsWith('.ts'));
    expect(modules.length).toBeGreaterThan(30);
    expect(modules.filter((file) => !doc.includes(`\`${file}\``))).toEqual([]);
  });
});
