// The Node.js version the README promises, package.json's engines and the lockfile agree: every installed
// package that admits no Node 20 release is named in the README's note on the warning npm ci prints for it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(join(repoRoot, file), 'utf8')) as Record<string, unknown>;
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const supportedMajor = 20;

/** Whether one comparator (`>=22.0.0`, `^20.19.0`, `20`, `<21`) holds for some release of `major`. */
function comparatorAdmits(comparator: string, major: number): boolean {
  const match = /^(>=|>|<=|<|\^|~|=)?v?(\d+)(?:\.(\d+))?/.exec(comparator);
  if (!match) return true;
  const [, operator = '=', majorText, minorText] = match;
  const wanted = Number(majorText);
  switch (operator) {
    case '>=':
    case '>':
      return wanted <= major;
    case '<':
      return wanted > major || (wanted === major && Number(minorText ?? 0) > 0);
    case '<=':
      return wanted >= major;
    default:
      return wanted === major;
  }
}

/** Whether an npm engines range admits some release of `major`. */
function rangeAdmits(range: string, major: number): boolean {
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      // npm allows a space between an operator and its version (`>= 18.0.0`).
      .replace(/([<>]=?|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter((comparator) => comparator !== '')
      .every((comparator) => comparatorAdmits(comparator, major)),
  );
}

describe('supported Node.js version', () => {
  it('reads engine ranges as npm does for the cases the lockfile holds', () => {
    expect(rangeAdmits('>=22.0.0', 20)).toBe(false);
    expect(rangeAdmits('^20.19.0 || ^22.13.0 || >=24', 20)).toBe(true);
    expect(rangeAdmits('18 || 20 || >=22', 20)).toBe(true);
    expect(rangeAdmits('>=18 <20', 20)).toBe(false);
    expect(rangeAdmits('>= 18.0.0', 20)).toBe(true);
    expect(rangeAdmits('>= 22', 20)).toBe(false);
  });

  it('is the same in package.json and the README', () => {
    expect((readJson('package.json').engines as { node: string }).node).toBe(`>=${supportedMajor}`);
    expect(readme).toContain(`Node.js ${supportedMajor}+`);
  });

  it('names in the README every installed package whose engines exclude that version', () => {
    const packages = readJson('package-lock.json').packages as Record<string, { engines?: { node?: string } }>;
    const excluding = Object.entries(packages)
      .filter(([, entry]) => typeof entry.engines?.node === 'string' && !rangeAdmits(entry.engines.node, supportedMajor))
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(excluding.length).toBeGreaterThan(0);
    for (const name of excluding) expect({ name, named: readme.includes(`\`${name}\``) }).toEqual({ name, named: true });
    expect(readme).toContain('EBADENGINE');
  });

  it('polyfills the Node 22 API the local Step Functions engine calls', async () => {
    await import('../../cdk/local/state-machine');
    expect(typeof (Promise as unknown as { withResolvers?: unknown }).withResolvers).toBe('function');
  });
});
