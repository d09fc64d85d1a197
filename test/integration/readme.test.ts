// The README's curl and CLI examples, run as written against the local cloud, twice in a row (a user
// re-runs the tour): every request must succeed both times, from a fresh namespace.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseUrl, freshNamespace } from './support';

const run = promisify(execFile);
const repoRoot = join(__dirname, '..', '..');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The lines of the bash block that follows `heading` in the README, continuations joined, comment lines dropped. */
function commandsAfter(heading: string): string[] {
  const start = readme.indexOf(`${heading}\n\n\`\`\`bash\n`);
  if (start < 0) throw new Error(`README has no bash block after "${heading}"`);
  const bodyStart = readme.indexOf('\n', readme.indexOf('```bash', start)) + 1;
  const body = readme.slice(bodyStart, readme.indexOf('\n```', bodyStart - 1));
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

/** The README's placeholders (`rs_3f9c…`, the default port) replaced by this cloud's. */
const localised = (line: string, key: string) => line.replace('http://127.0.0.1:4510', baseUrl()).replace(/rs_[0-9a-f]+…/, key);

describe('README examples', () => {
  it('shows a content type on every curl that sends a body', () => {
    const sending = commandsAfter('With curl:').filter((line) => /--data|-d '/.test(line));
    expect(sending.length).toBeGreaterThan(0);
    for (const line of sending) expect({ line, contentType: /-H '?content-type: /i.test(line) }).toEqual({ line, contentType: true });
  });

  it('runs every curl example twice in a row, each answering 2xx', async () => {
    // Prepare: the README's `export` line is what this test sets; curl prints each status instead of the body.
    const { key } = await freshNamespace('readme-curl');
    const lines = commandsAfter('With curl:').filter((line) => !line.startsWith('export '));
    const requests = lines.filter((line) => line.startsWith('curl ')).length;
    const curlHome = mkdtempSync(join(tmpdir(), 'ringstore-readme-'));
    writeFileSync(join(curlHome, '.curlrc'), 'silent\nshow-error\noutput = /dev/null\nwrite-out = "%{http_code}\\n"\n');
    const script = ['set -eu', ...lines].join('\n');
    for (const round of [1, 2]) {
      // Act
      const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, RS: baseUrl(), KEY: key, CURL_HOME: curlHome } });
      // Assess
      const statuses = stdout.trim().split('\n');
      expect({ round, count: statuses.length }).toEqual({ round, count: requests });
      statuses.forEach((status, i) =>
        expect({ round, command: lines.filter((l) => l.startsWith('curl '))[i], status }).toMatchObject({
          status: expect.stringMatching(/^2\d\d$/),
        }),
      );
    }
  }, 60_000);

  it('runs every CLI example twice in a row, each exiting 0', async () => {
    // Prepare: the interactive prompt (`npx ringstore` alone) waits for input and is left out.
    const { key } = await freshNamespace('readme-cli');
    const lines = commandsAfter('With the CLI:')
      .map((line) => localised(line.replace(/\s+#.*$/, ''), key))
      .filter((line) => line.trim() !== 'npx ringstore');
    expect(lines.length).toBeGreaterThanOrEqual(6);
    const env = { ...process.env, RINGSTORE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'ringstore-readme-cli-')) };
    // The first round runs each line as written, through npx. The second, a user re-running the tour on what the first
    // left, runs the bin npx resolved (asked of npx itself): npm's own start is 2 CPU-s of each npx command.
    let resolvedBin: string | undefined;
    for (const round of [1, 2]) {
      // Act and assess: each command on its own, so a failure names it.
      let cwd = repoRoot;
      for (const line of lines) {
        const [, dir, written] = /^(?:cd (\S+) && )?(.*)$/.exec(line)!;
        if (dir) cwd = join(cwd, dir);
        if (round === 2 && resolvedBin === undefined) {
          resolvedBin = (await run('npx', ['--no-install', '-c', 'command -v ringstore'], { cwd, env })).stdout.trim();
          expect(resolvedBin).toMatch(/\/ringstore$/);
        }
        const command = round === 2 ? written!.replace(/^npx ringstore\b/, `'${resolvedBin}'`) : written!;
        const outcome = await run('bash', ['-c', command], { cwd, env }).then(
          () => 0,
          (error: unknown) => {
            const failed = error as { code?: number; stderr?: string };
            return `${failed.code}: ${failed.stderr}`;
          },
        );
        expect({ round, command: line, outcome }).toEqual({ round, command: line, outcome: 0 });
      }
    }
  }, 180_000);
});
