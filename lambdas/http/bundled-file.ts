// Reads a file a handler's spec lists in `bundledFiles` (schemas/topology.ts): in a Lambda it lies next to
// the bundle (the CDK copies it there), when run from the sources (local cloud, tests) it is in the repository.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The text of a bundled file, read once by the caller at start-up; a file in neither place fails then,
 * naming both, rather than on the first request.
 *
 * @example
 * const script = readBundledFile('node_modules/redoc/bundles/redoc.standalone.js');
 */
export function readBundledFile(file: string): string {
  // From __filename: tsx's loader gives some importers a wrong __dirname, never a wrong __filename.
  const here = path.dirname(__filename);
  const besideBundle = path.join(here, path.basename(file));
  const inRepository = path.resolve(here, '..', '..', file);
  for (const candidate of [besideBundle, inRepository]) if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
  throw new Error(`bundled file ${file} is missing: looked at ${besideBundle} and ${inRepository}`);
}
