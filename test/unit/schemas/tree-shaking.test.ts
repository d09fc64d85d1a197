// The shared schema modules are tree-shakable: every top-level value built by a call is marked
// `/* @__PURE__ */`, so a handler's bundle builds only the schemas it parses with (the authorizer none of the
// API's responses). An unmarked schema would be built at every handler's cold start; this finds it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..', '..');
/** The schema modules the Lambda handlers import (the OpenAPI modules are only the generator's). */
const handlerSchemaModules = ['api.ts', 'dr-messages.ts', 'kv-batch.ts', 'kv-increment.ts', 'volumes.ts', 'watch.ts'];

/** The top-level constants of a module whose value is computed by a call or `new`, and not marked pure. */
function unmarkedCalls(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const unmarked: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const value = declaration.initializer;
      if (!value || !(ts.isCallExpression(value) || ts.isNewExpression(value))) continue;
      // The trivia between `=` and the value: where esbuild reads the annotation.
      if (!text.slice(value.pos, value.getStart(source)).includes('/* @__PURE__ */')) unmarked.push(declaration.name.getText(source));
    }
  }
  return unmarked;
}

describe('the schema modules handlers import', () => {
  it.each(handlerSchemaModules)('%s marks every top-level schema it builds as pure', (name) => {
    expect(unmarkedCalls(join(root, 'schemas', name))).toEqual([]);
  });

  it('finds an unmarked schema', () => {
    const file = join(root, 'schemas', 'watch.ts');
    const unmarked = readFileSync(file, 'utf8').replaceAll('/* @__PURE__ */ ', '');

    expect(unmarkedCalls(file, unmarked)).toEqual(['WatchQuery', 'WatchChange', 'WatchResponse']);
  });

  it('leaves out of a bundle the schemas it does not use', async () => {
    const result = await build({
      stdin: {
        contents: "import { ReadValueQuery } from './schemas/api'; export const parse = (q: unknown) => ReadValueQuery.parse(q);",
        resolveDir: root,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      external: ['zod'],
      logLevel: 'silent',
    });
    const bundle = result.outputFiles[0]!.text;

    expect(bundle).toContain('id: "Consistency"');
    // Response schemas, request bodies of other routes and other modules' schemas: none is built.
    for (const id of ['PromotionReport', 'RebalanceRequest', 'TxnRequest', 'WatchResponse', 'Error'])
      expect(bundle).not.toContain(`id: "${id}"`);
  });
});
