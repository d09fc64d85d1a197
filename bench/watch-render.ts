// Draws docs/benchmarks-watch.svg again from a saved run without measuring: `npx tsx bench/watch-render.ts
// [bench/results/watch-run-of-record.json]` (after a change to bench/watch-plot.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { benchRoot } from './environment';
import { renderWatchSvg, type SavedWatchRun, watchSvgPath } from './watch-plot';

async function main(): Promise<void> {
  const source = process.argv[2] ?? join(benchRoot, 'bench', 'results', 'watch-run-of-record.json');
  const saved = JSON.parse(await readFile(source, 'utf8')) as SavedWatchRun;
  await writeFile(watchSvgPath, await renderWatchSvg(saved));
  console.error(`drew ${watchSvgPath} from ${source}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
