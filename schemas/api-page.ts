// The API reference page: Redoc renders the OpenAPI document in the browser, from a script this API
// serves itself (GET /docs/reference.js), so the page works on a machine with no internet.

/** Where the page loads the renderer from, relative to /docs (see apiPageHtml). */
export const apiPageScriptPath = 'docs/reference.js';

/** The one address outside this API that Redoc's bundle loads (its logo in the menu's "API docs by Redocly" link). */
const redocLogoUrl = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** An empty image in its place: offline the request would fail and log an error (the link itself stays). */
const emptyImage = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';

/**
 * Redoc's browser bundle as GET /docs/reference.js serves it: with no address outside this API left in it,
 * so the page makes no request a machine without internet would fail.
 *
 * @example
 * const script = offlineApiPageScript(readBundledFile(apiPageScriptFile));
 */
export const offlineApiPageScript = (script: string) => script.replaceAll(redocLogoUrl, emptyImage);

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * JSON that can sit inside a <script> element: `<` is escaped, so no text of the document (a
 * description with `</script>`) can end the element; U+2028/2029 are escaped for older parsers.
 */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * The HTML of GET /docs. The document is embedded rather than fetched: behind an API Gateway stage
 * (`/prod/docs`) an absolute `/openapi.json` would miss, and the relative script path resolves under the
 * stage (`/prod/docs/reference.js`) as it does locally.
 *
 * @example
 * const page = apiPageHtml(buildOpenApiDocument());
 */
export function apiPageHtml(document: { info: { title: string } }): string {
  const options = {
    // Request samples (our curl lines) and response samples open beside each operation.
    expandResponses: '200,201,202',
    hideDownloadButton: false,
    jsonSampleExpandLevel: 3,
    pathInMiddlePanel: true,
    requiredPropsFirst: true,
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<link rel="icon" href="data:,">
<style>body{margin:0}</style>
</head><body>
<noscript>This page needs JavaScript. The machine-readable API document is at <a href="openapi.json">/openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="${apiPageScriptPath}"></script>
<script>
Redoc.init(${scriptJson(document)}, ${scriptJson(options)}, document.getElementById('reference'));
</script>
</body></html>`;
}
