// Re-renders the tables, ratios and plots from saved results without measuring again:
// `npx tsx bench/render.ts [bench/results/latest.json]` (after a change to report.ts or plot.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderReplicationSvg, renderSvg, replicationSubtitleOf, replicationSvgPath, subtitleOf, svgPath } from './plot';
import { type CaseResult, markdownTables, ratios, ratioTable, replicationLines, type ReplicationResults, resultsTable } from './report';

interface SavedResults {
  results: CaseResult[];
  machine: { nproc: number; node: string; dynamodbLocal: string };
  settings: { valueBytes: number; rounds: number };
  ratios?: unknown;
  markdown?: unknown;
  replication?: ReplicationResults;
}

async function main(): Promise<void> {
  const source = process.argv[2] ?? join(__dirname, 'results', 'latest.json');
  const saved = JSON.parse(await readFile(source, 'utf8')) as SavedResults;
  const ratioRows = ratios(saved.results);
  const updated = { ...saved, ratios: ratioRows, markdown: markdownTables(saved.results, ratioRows) };
  await writeFile(source, `${JSON.stringify(updated, null, 2)}\n`);
  await writeFile(svgPath, await renderSvg(saved.results, subtitleOf(saved)));
  await writeFile(replicationSvgPath, await renderReplicationSvg(ratioRows, replicationSubtitleOf(saved)));
  console.log(resultsTable(saved.results));
  console.log('');
  console.log(ratioTable(ratioRows));
  console.log('');
  for (const line of replicationLines(saved.replication ?? {})) console.log(line);
  console.error(`re-rendered ${source}, ${svgPath} and ${replicationSvgPath}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
