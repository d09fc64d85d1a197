// `npm run openapi`: writes schemas/openapi.json from the zod schemas (a unit test fails if it is stale).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from './openapi';

export const openApiPath = join(__dirname, 'openapi.json');

if (require.main === module) {
  writeFileSync(openApiPath, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
  console.log(`wrote ${openApiPath}`);
}
