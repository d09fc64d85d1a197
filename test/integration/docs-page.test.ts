// GET /docs in headless Chromium against the local cloud: the reference renders offline, from our own
// script, with no console errors, and lists every route of the topology with its curl sample.
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';
import { routes } from '../../schemas/topology';
import { buildOpenApiDocument } from '../../schemas/openapi';
import { baseUrl, call } from './support';

/** Debian's chromium; RINGSTORE_CHROMIUM names another. Never downloaded: the machines have no internet. */
const chromiumPath = process.env.RINGSTORE_CHROMIUM ?? '/usr/bin/chromium';

function summaryOf(path: string, method: string): string {
  const paths = buildOpenApiDocument().paths as Record<string, Record<string, { summary?: string }>>;
  return paths[path]?.[method.toLowerCase()]?.summary ?? '';
}

describe('the API reference page in a browser', () => {
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) {
      throw new Error(
        `no Chromium at ${chromiumPath}: install Debian's chromium (apt-get install --no-install-recommends chromium; .ci/run does) or set RINGSTORE_CHROMIUM`,
      );
    }
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await puppeteer.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('serves the renderer itself, as JavaScript, with a cache header', async () => {
    const response = await call('/docs/reference.js', { key: null });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect((await response.text()).length).toBeGreaterThan(100_000);
  });

  it('renders every route with its summary and a curl sample, loading nothing from elsewhere and logging no error', async () => {
    // Prepare
    const page = await browser!.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('requestfailed', (request) => errors.push(`${request.url()}: ${request.failure()?.errorText}`));
    page.on('response', (answer) => {
      if (answer.status() >= 400) errors.push(`${answer.url()}: ${answer.status()}`);
    });
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(baseUrl()) && !/^(data|blob):/.test(url)) foreign.push(url);
    });

    // Act
    const response = await page.goto(`${baseUrl()}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('[data-section-id]', { timeout: 20_000 });
    // The in-page function sees DOM elements; this project compiles without the DOM library, hence the shape.
    const rendered = await page.$$eval('[data-section-id]', (sections) =>
      (sections as unknown as { dataset: { sectionId?: string }; innerText: string }[]).map((section) => ({
        id: section.dataset.sectionId ?? '',
        text: section.innerText,
      })),
    );

    // Assess
    expect(response?.status()).toBe(200);
    expect({ errors, foreign }).toEqual({ errors: [], foreign: [] });
    const missing = routes.filter((route) => {
      const section = rendered.find((s) => s.id.endsWith(`/operation/${route.operationId}`));
      return !section || !section.text.includes(summaryOf(route.path, route.method)) || !section.text.includes('curl');
    });
    expect(missing.map((r) => `${r.method} ${r.path} (${r.operationId})`)).toEqual([]);
    await page.close();
  });
});
