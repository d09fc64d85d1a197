// curl's own SigV4 signer (`--aws-sigv4`, as docs/security.md suggests) against the local gateway: what it
// signs as SigV4 specifies is served. curl signs the query sorted and encoded, and the path encoded once
// more (as AWS's SDKs do for execute-api), only since 8.14; an older curl signs both as written, which
// API Gateway refuses as the local gateway does, and is asked here only for what it signs right.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureLocalIamUser, type LocalIamUser } from '../../cdk/local/local-iam';
import { RingstoreClient } from '../../sdk/src';
import { adminKey, baseUrl, freshNamespace } from './support';

const run = promisify(execFile);

/** The first curl that canonicalizes the path and query of every request as SigV4 specifies. */
const conformingCurl = [8, 14] as const;

async function curlVersion(): Promise<{ version: [number, number]; sigv4: boolean } | undefined> {
  const { stdout } = await run('curl', ['--version']).catch(() => ({ stdout: '' }));
  const version = /^curl (\d+)\.(\d+)/.exec(stdout);
  if (!version) return undefined;
  const { stdout: help } = await run('curl', ['--help', 'all']).catch(() => ({ stdout: '' }));
  return { version: [Number(version[1]), Number(version[2])], sigv4: help.includes('--aws-sigv4') };
}

/** `curl --aws-sigv4` as a user runs it: the status and the error code of the answer, if any. */
async function signedCurl(user: LocalIamUser, target: string): Promise<{ status: number; code?: string }> {
  const { stdout } = await run('curl', [
    '--silent',
    '--globoff',
    '--max-time',
    '20',
    '--aws-sigv4',
    'aws:amz:eu-west-1:execute-api',
    '--user',
    `${user.accessKeyId}:${user.secretAccessKey}`,
    '--write-out',
    '\n%{http_code}',
    `${baseUrl()}${target}`,
  ]);
  const lines = stdout.split('\n');
  const status = Number(lines.pop());
  const body = lines.join('\n');
  const code = body.startsWith('{') ? (JSON.parse(body) as { error?: { code?: string } }).error?.code : undefined;
  return { status, ...(code === undefined ? {} : { code }) };
}

const served = (answer: { status: number; code?: string }) =>
  answer.status === 200 || (answer.status === 404 && answer.code === 'kv.notFound');

describe('curl --aws-sigv4 against the local gateway', () => {
  let user: LocalIamUser;
  let curl: Awaited<ReturnType<typeof curlVersion>>;

  beforeAll(async () => {
    curl = await curlVersion();
    const home = process.env.RINGSTORE_IT_HOME;
    if (!home) throw new Error('RINGSTORE_IT_HOME is not set: integration tests run through jest global setup');
    const tenant = await freshNamespace('curl');
    user = await ensureLocalIamUser(home, `curl-${process.pid}-${Date.now().toString(36)}`);
    await new RingstoreClient({ endpoint: baseUrl(), apiKey: adminKey() }).createPrincipalMapping({
      principalArn: user.arn,
      namespace: tenant.namespace,
    });
  });

  it("is served for the listing and key shapes curl signs as SigV4 specifies, whatever curl's version", async () => {
    if (!curl?.sigv4) throw new Error('this machine has no curl with --aws-sigv4 (curl 7.75 or later)');

    // Act: a listing with its query sorted by name and a slash escaped, a key with nothing to escape.
    const answers = {
      sortedQuery: await signedCurl(user, '/v1/kv?limit=2&prefix=dr'),
      escapedSlashInQuery: await signedCurl(user, '/v1/kv?prefix=dr%2F'),
      plainKey: await signedCurl(user, '/v1/kv/dr-plain'),
    };

    // Assess
    expect(Object.entries(answers).filter(([, answer]) => !served(answer))).toEqual([]);
  });

  it('is served for a query in any order, a slash in a value, and keys with %2F or é, by a curl that canonicalizes them', async () => {
    if (!curl?.sigv4) throw new Error('this machine has no curl with --aws-sigv4 (curl 7.75 or later)');
    const [major, minor] = curl.version;
    const conforming = major > conformingCurl[0] || (major === conformingCurl[0] && minor >= conformingCurl[1]);

    // Act
    const answers = {
      unsortedQuery: await signedCurl(user, '/v1/kv?prefix=dr&limit=2'),
      slashInQuery: await signedCurl(user, '/v1/kv?prefix=dr/'),
      escapedSlashInKey: await signedCurl(user, '/v1/kv/dr%2Fa'),
      accentInKey: await signedCurl(user, '/v1/kv/caf%C3%A9'),
    };

    // Assess: a conforming curl is served every shape. An older one signs the query as written and the path
    // as sent (curl 7.88 of Debian 12): refused, as API Gateway refuses it, with the reason.
    if (conforming) {
      expect(Object.entries(answers).filter(([, answer]) => !served(answer))).toEqual([]);
    } else {
      expect(Object.values(answers)).toEqual(Object.values(answers).map(() => ({ status: 403, code: 'auth.invalidSignature' })));
    }
  });
});
