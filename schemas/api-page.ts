// A self-contained, human-readable API page rendered from the OpenAPI document.
// Redoc would pull React and ~30 MB of dependencies into a Lambda bundle and needs a CDN or a
// second route for its script; a server-rendered page with no script serves the same purpose here.

type Json = Record<string, unknown>;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A field of the document as text: the document is loosely typed JSON, and a missing field renders empty. */
const text = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

const block = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

function renderOperation(path: string, method: string, operation: Json): string {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  const body = (operation.requestBody as Json | undefined)?.content;
  const responses = (operation.responses as Record<string, Json> | undefined) ?? {};
  const id = text(operation.operationId) || `${method}-${path}`;
  return `<section id="${escapeHtml(id)}">
  <h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
  <p>${escapeHtml(text(operation.summary))}</p>
  ${
    parameters.length
      ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>description</th></tr>${parameters
          .map(
            (p) =>
              `<tr><td><code>${escapeHtml(text(p.name))}</code></td><td>${escapeHtml(text(p.in))}</td><td>${p.required ? 'yes' : ''}</td><td>${escapeHtml(text((p.schema as Json | undefined)?.description) || text(p.description))}</td></tr>`,
          )
          .join('')}</table>`
      : ''
  }
  ${body ? `<h4>Request body</h4>${block(body)}` : ''}
  <h4>Responses</h4><table>${Object.entries(responses)
    .map(([status, response]) => `<tr><td><b>${escapeHtml(status)}</b></td><td>${escapeHtml(text(response.description))}</td></tr>`)
    .join('')}</table>
</section>`;
}

export function apiPageHtml(document: Json): string {
  const info = document.info as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  const sections = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => renderOperation(path, method, operation)),
  );
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(text(info.title))}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
section{border-top:1px solid #ddd;padding:.5em 0}
.m{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;padding:2px 6px;font-size:.85em}
.get{background:#2b7bb9}.put{background:#c77c02}.post{background:#2f9e44}.delete{background:#c92a2a}.head{background:#777}
pre{background:#f6f8fa;padding:.6em;overflow:auto;font-size:.85em}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
</style></head><body>
<h1>${escapeHtml(text(info.title))} <small>${escapeHtml(text(info.version))}</small></h1>
<p>${escapeHtml(text(info.description))}</p>
<p>The machine-readable document is at <a href="/openapi.json">/openapi.json</a>.</p>
<h2>Operations</h2>
${sections.join('\n')}
<h2>Schemas</h2>
${Object.entries(schemas)
  .map(([name, schema]) => `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>${block(schema)}`)
  .join('\n')}
</body></html>`;
}
