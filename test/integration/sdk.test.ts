// The SDK and CLI against the real local cloud: what their users see.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NotFoundError, PreconditionFailedError, RingstoreClient, ValidationError } from '../../sdk/src';
import { baseUrl, freshNamespace, randomBytes } from './support';

const run = promisify(execFile);
let client: RingstoreClient;
let apiKeyOfTest: string;

beforeAll(async () => {
  apiKeyOfTest = (await freshNamespace('sdk')).key;
  client = new RingstoreClient({ endpoint: baseUrl(), apiKey: apiKeyOfTest });
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('SDK', () => {
  it('puts and gets a 10 MiB value transparently (upload flow and 303)', async () => {
    const bytes = randomBytes(10 * 1024 * 1024, 99);
    const written = await client.put('ten-mib', bytes);
    expect(written.version).toBe(1);
    const read = await client.get('ten-mib');
    expect(read.value.byteLength).toBe(bytes.byteLength);
    expect(sha(read.value)).toBe(sha(bytes));
    expect(read.version).toBe(1);
  });

  it('maps server errors to typed errors', async () => {
    await expect(client.get('missing')).rejects.toBeInstanceOf(NotFoundError);
    await client.put('once', 'a', { ifNoneMatch: '*' });
    await expect(client.put('once', 'b', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(client.put('x', 'y', { ttlSeconds: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it('lists every key across pages and reads the ring', async () => {
    for (let i = 0; i < 7; i += 1) await client.put(`page/${i}`, String(i));
    const keys: string[] = [];
    for await (const page of client.listAll({ prefix: 'page/', limit: 3 })) keys.push(...page.items.map((item) => item.key));
    expect(keys).toEqual(Array.from({ length: 7 }, (_, i) => `page/${i}`));
    const ring = await client.ring();
    expect(ring.shards).toHaveLength(4);
  });
});

describe('CLI', () => {
  const bin = join(__dirname, '..', '..', 'sdk', 'bin', 'ringstore');
  const env = () => ({ ...process.env, RINGSTORE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'ringstore-cli-')) });

  it('connects, puts, gets, lists the keyrange and deletes', async () => {
    const configured = env();
    await run(process.execPath, [bin, 'connect', baseUrl(), apiKeyOfTest], { env: configured });
    await run(process.execPath, [bin, 'put', 'cli-key', 'cli value'], { env: configured });
    const got = await run(process.execPath, [bin, 'get', 'cli-key'], { env: configured });
    expect(got.stdout.trim()).toBe('cli value');
    const ring = await run(process.execPath, [bin, 'keyrange'], { env: configured });
    expect(ring.stdout).toMatch(/epoch/i);
    await run(process.execPath, [bin, 'delete', 'cli-key'], { env: configured });
    const missing = await run(process.execPath, [bin, 'get', 'cli-key'], { env: configured }).catch((error: unknown) => error);
    expect((missing as { code: number }).code).toBe(1);
    expect((missing as { stderr: string }).stderr).toMatch(/not found/);
  }, 90_000);

  it('runs a transaction, and reports an abort with its reason and key and exit code 1', async () => {
    const configured = { ...env(), RINGSTORE_ENDPOINT: baseUrl(), RINGSTORE_API_KEY: apiKeyOfTest };
    const committed = await run(
      process.execPath,
      [bin, 'txn', 'put', 'cli-txn/a', 'one', 'if', '0', 'put', 'cli-txn/b', 'two', 'get', 'cli-txn/a'],
      { env: configured },
    );
    expect(committed.stdout).toMatch(/^wrote\s+cli-txn\/a\s+version 1$/m);
    // A read of the transaction's own write carries the version that write committed as.
    expect(committed.stdout).toMatch(/^read\s+cli-txn\/a\s+version 1\s+one$/m);
    const aborted = await run(process.execPath, [bin, 'txn', 'put', 'cli-txn/c', 'x', 'check', 'cli-txn/b', '5'], {
      env: configured,
    }).catch((error: unknown) => error);
    expect((aborted as { code: number }).code).toBe(1);
    expect((aborted as { stderr: string }).stderr).toMatch(/transaction aborted \(precondition\) on key "cli-txn\/b"/);
    await expect(client.get('cli-txn/c', { consistency: 'strong' })).rejects.toBeInstanceOf(NotFoundError);
  }, 90_000);
});
