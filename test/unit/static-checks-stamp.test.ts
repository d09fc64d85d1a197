// The fingerprint `npm test` remembers the static checks' last pass by (scripts/static-checks.mjs): it must change
// with any file the checks read (an edit, a new file, a deleted one) and not with what git ignores, or a changed
// tree would be let through unchecked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(__dirname, '..', '..', 'scripts', 'static-checks.mjs');

/** The fingerprint of `dir`, from the script itself (an ES module, run in a node of its own). */
function fingerprintOf(dir: string): string {
  const code = `const { treeFingerprint } = await import(${JSON.stringify(script)}); console.log(treeFingerprint(${JSON.stringify(dir)}) ?? 'none');`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }).trim();
}

describe('the static checks pass stamp', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ringstore-stamp-'));
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, '.gitignore'), 'ignored/\n');
    writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
    execFileSync('git', ['add', '.'], { cwd: dir });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is the same for the same tree, and changes with an edit, a new file or a deleted one', () => {
    const first = fingerprintOf(dir);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprintOf(dir)).toBe(first);

    writeFileSync(join(dir, 'a.ts'), 'export const a = 2;\n');
    const edited = fingerprintOf(dir);
    expect(edited).not.toBe(first);

    writeFileSync(join(dir, 'b.ts'), 'export const b = 1;\n'); // untracked, not ignored: the checks read it
    const added = fingerprintOf(dir);
    expect(added).not.toBe(edited);

    unlinkSync(join(dir, 'a.ts')); // still in git's index
    expect(fingerprintOf(dir)).not.toBe(added);
  });

  it('does not change with an ignored file', () => {
    const first = fingerprintOf(dir);
    execFileSync('mkdir', [join(dir, 'ignored')]);
    writeFileSync(join(dir, 'ignored', 'out.js'), 'built\n');
    expect(fingerprintOf(dir)).toBe(first);
  });

  it('is undefined outside a git checkout, so the checks run', () => {
    const plain = mkdtempSync(join(tmpdir(), 'ringstore-stamp-plain-'));
    try {
      writeFileSync(join(plain, 'a.ts'), 'export const a = 1;\n');
      expect(fingerprintOf(plain)).toBe('none');
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});
