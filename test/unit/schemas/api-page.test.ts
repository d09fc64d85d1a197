// The API reference: every operation has a curl sample built from its route, examples that parse, the
// "Always 400" placeholders last, and a page that embeds the document safely and loads only our script.
import { apiPageHtml, apiPageScriptPath, offlineApiPageScript } from '../../../schemas/api-page';
import { buildOpenApiDocument, curlSample } from '../../../schemas/openapi';
import { routes } from '../../../schemas/topology';

type Operation = { operationId: string; tags: string[]; 'x-codeSamples'?: { lang: string; source: string }[] };

describe('the OpenAPI document as a reference', () => {
  const document = buildOpenApiDocument();
  const operations = Object.values(document.paths ?? {}).flatMap((methods) => Object.values(methods as Record<string, Operation>));

  it('gives every route a curl sample with its method, path and the key it needs', () => {
    for (const route of routes) {
      const operation = operations.find((o) => o.operationId === route.operationId);
      const source = operation?.['x-codeSamples']?.[0]?.source ?? '';

      expect({ id: route.operationId, curl: source.startsWith('curl ') }).toEqual({ id: route.operationId, curl: true });
      expect(source).toContain(`$RS${route.path.split('{')[0]}`);
      if (route.method !== 'GET') expect(source).toMatch(route.method === 'HEAD' ? / -I / : new RegExp(` -X ${route.method} `));
      expect(source.includes('x-api-key: $ADMIN_KEY')).toBe('admin' in route && route.admin);
      expect(source.includes('x-api-key')).toBe(route.authorized);
    }
  });

  it('sends a JSON body on every operation that takes one, quoted for the shell', () => {
    const transact = routes.find((r) => r.operationId === 'transact')!;
    const withQuote = curlSample(transact, {
      request: { body: { content: { 'application/json': { example: { ops: [{ op: 'get', key: "it's" }] } } } } },
      responses: {},
    });

    expect(withQuote).toContain(`--data '{"ops":[{"op":"get","key":"it'\\''s"}]}'`);
    const jsonBodies = operations.filter((o) => o['x-codeSamples']?.[0]?.source.includes('application/json'));
    expect(jsonBodies.map((o) => o.operationId).sort()).toEqual(
      [
        'createUpload',
        'commitUpload',
        'incrementValue',
        'batchGet',
        'transact',
        'createVolume',
        'trimVolume',
        'attachVolume',
        'resizeVolume',
        'createSnapshot',
        'createApiKey',
        'createPrincipalMapping',
        'rotateApiKey',
        'putNamespaceSettings',
        'startFailover',
        'promote',
        'offerLostValues',
        'reconcileLostKey',
        'startRebalance',
        'setRebalanceRate',
      ].sort(),
    );
  });

  it('refuses a path parameter without an example value', () => {
    const route = { method: 'GET', path: '/v1/things/{thingId}', handler: 'admin', operationId: 'x', authorized: true } as const;

    expect(() => curlSample(route, { responses: {} })).toThrow(/thingId/);
  });

  it('lists the "Always 400" placeholders last, under their own tag, which comes last', () => {
    const invalid = operations.filter((o) => o.tags.includes('invalid')).map((o) => o.operationId);

    expect(invalid.sort()).toEqual(['deleteEmptyKey', 'putEmptyKey']);
    expect(document.tags?.at(-1)?.name).toBe('invalid');
  });
});

describe('the API reference page', () => {
  it('embeds the document so that no text in it can close the script, and loads the renderer relative to /docs', () => {
    const html = apiPageHtml({
      info: { title: 'T <x>' },
      paths: { '/a': { get: { summary: '</script><script>alert(1)</script>' } } },
    } as never);

    expect(html).not.toContain('</script><script>alert(1)');
    expect(html).toContain('\\u003c/script>');
    expect(html).toContain(`<script src="${apiPageScriptPath}"></script>`);
    expect(html).toContain('<title>T &lt;x&gt;</title>');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serves a script with no address outside this API in it', () => {
    const script = offlineApiPageScript('a("https://cdn.redoc.ly/redoc/logo-mini.svg");b()');

    expect(script).not.toContain('https://');
    expect(script).toContain('data:image/svg+xml');
  });
});
