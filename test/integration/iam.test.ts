// IAM authentication end to end: local IAM users sign with the SDK, the local gateway verifies SigV4, the
// handlers map the caller to its namespace and role (docs/security.md, "IAM authentication").
import { ensureLocalIamUser, localIamUserName, type LocalIamUser } from '../../cdk/local/local-iam';
import { ForbiddenError, NotFoundError, RingstoreClient, RingstoreError, SigV4Signer } from '../../sdk/src';
import { adminKey, baseUrl, call, errorOf, freshNamespace, kvPath, sleep } from './support';

const home = () => {
  const value = process.env.RINGSTORE_IT_HOME;
  if (!value) throw new Error('RINGSTORE_IT_HOME is not set: integration tests run through jest global setup');
  return value;
};
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const signedClient = (user: LocalIamUser) => new RingstoreClient({ endpoint: baseUrl(), credentials: user, sleep: async () => {} });
const admin = () => new RingstoreClient({ endpoint: baseUrl(), apiKey: adminKey() });

async function refusal(action: Promise<unknown>): Promise<RingstoreError> {
  const error = await action.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof RingstoreError)) throw new Error(`expected a RingstoreError, got ${String(error)}`);
  return error;
}

describe('IAM principals', () => {
  let teamA: Awaited<ReturnType<typeof freshNamespace>>;
  let teamB: Awaited<ReturnType<typeof freshNamespace>>;
  let alice: LocalIamUser;
  let bob: LocalIamUser;

  beforeAll(async () => {
    teamA = await freshNamespace('iam-a');
    teamB = await freshNamespace('iam-b');
    alice = await ensureLocalIamUser(home(), `alice-${suffix}`);
    bob = await ensureLocalIamUser(home(), `bob-${suffix}`);
    await admin().createPrincipalMapping({ principalArn: alice.arn, namespace: teamA.namespace });
    await admin().createPrincipalMapping({ principalArn: bob.arn, namespace: teamB.namespace, role: 'user' });
  });

  it('serves PUT, GET and transactions to a signed caller, in its mapped namespace', async () => {
    // Prepare
    const client = signedClient(alice);

    // Act
    const put = await client.put('greeting', 'hello from IAM');
    const got = await client.get('greeting', { consistency: 'strong' });
    const txn = await client.transact([
      { op: 'check', key: 'greeting', ifVersion: put.version },
      { op: 'put', key: 'counter', value: '1' },
    ]);

    // Assess
    expect(got.text()).toBe('hello from IAM');
    expect(txn.writes).toEqual([{ key: 'counter', version: 1 }]);
    // The same namespace as team A's API key: the key reads what the principal wrote.
    expect(await (await call(`${kvPath('counter')}?consistency=strong`, { key: teamA.key })).text()).toBe('1');
  });

  it("keeps a principal out of another namespace's keys", async () => {
    await call(kvPath('b-only'), { method: 'PUT', key: teamB.key, body: 'secret of B' });
    await expect(signedClient(alice).get('b-only', { consistency: 'strong' })).rejects.toBeInstanceOf(NotFoundError);
    expect((await signedClient(bob).get('b-only', { consistency: 'strong' })).text()).toBe('secret of B');
    const { items } = await signedClient(alice).list();
    expect(items.map((item) => item.key)).not.toContain('b-only');
  });

  it('refuses an unmapped principal with 403 auth.principalUnmapped', async () => {
    const carol = await ensureLocalIamUser(home(), `carol-${suffix}`);
    const error = await refusal(signedClient(carol).get('greeting'));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ status: 403, code: 'auth.principalUnmapped' });
  });

  it('keeps admin routes from a user principal, and lets an admin principal manage mappings (audited)', async () => {
    expect(await refusal(signedClient(alice).listPrincipalMappings())).toMatchObject({ status: 403, code: 'auth.forbidden' });
    expect(await refusal(signedClient(alice).createApiKey({ namespace: teamA.namespace }))).toMatchObject({ code: 'auth.forbidden' });

    const dave = await ensureLocalIamUser(home(), `dave-${suffix}`);
    await admin().createPrincipalMapping({ principalArn: dave.arn, namespace: teamA.namespace, role: 'admin' });
    const { principals } = await signedClient(dave).listPrincipalMappings();
    expect(principals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ principalArn: alice.arn, namespace: teamA.namespace, role: 'user' }),
        expect.objectContaining({ principalArn: `arn:aws:iam::000000000000:user/${localIamUserName}`, namespace: 'local' }),
      ]),
    );

    // Prepare a mapping the admin principal creates; its change is in the audit trail under its ARN.
    const erin = await ensureLocalIamUser(home(), `erin-${suffix}`);
    await signedClient(dave).createPrincipalMapping({ principalArn: erin.arn, namespace: teamB.namespace });
    const { entries } = await admin().listAuditEntries({ limit: 50 });
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          operation: 'createPrincipalMapping',
          outcome: 'succeeded',
          actor: expect.objectContaining({ keyId: dave.arn }),
        }),
        expect.objectContaining({
          operation: 'createApiKey',
          outcome: 'failed',
          errorCode: 'auth.forbidden',
          actor: expect.objectContaining({ keyId: alice.arn }),
        }),
      ]),
    );
  });

  it('answers bad mappings with clear 4xx: bad ARN, session ARN, unknown namespace, duplicate, unknown on delete', async () => {
    const post = (body: unknown) =>
      call('/v1/admin/principals', {
        method: 'POST',
        key: adminKey(),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(await errorOf(await post({ principalArn: 'arn:aws:iam::12:role/x', namespace: teamA.namespace }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
    expect(
      await errorOf(await post({ principalArn: 'arn:aws:sts::123456789012:assumed-role/app/s', namespace: teamA.namespace })),
    ).toMatchObject({
      status: 400,
      message: expect.stringContaining('map its role instead'),
    });
    expect(await errorOf(await post({ principalArn: 'arn:aws:iam::123456789012:role/app', namespace: `nobody-${suffix}` }))).toMatchObject({
      status: 400,
      code: 'admin.namespaceUnknown',
    });
    expect(
      await errorOf(await post({ principalArn: `arn:aws:iam::000000000000:user/path/${alice.name}`, namespace: teamB.namespace })),
    ).toMatchObject({
      status: 409,
      code: 'admin.principalExists',
    });
    const missing = encodeURIComponent('arn:aws:iam::123456789012:role/never-mapped');
    expect(await errorOf(await call(`/v1/admin/principals/${missing}`, { method: 'DELETE', key: adminKey() }))).toMatchObject({
      status: 404,
      code: 'admin.principalNotFound',
    });
  });

  it('stops a principal whose mapping is deleted, within the cache TTL', async () => {
    const frank = await ensureLocalIamUser(home(), `frank-${suffix}`);
    await admin().createPrincipalMapping({ principalArn: frank.arn, namespace: teamA.namespace });
    await signedClient(frank).get('greeting');
    const deleted = await admin().deletePrincipalMapping(frank.arn);
    expect(deleted).toMatchObject({ matchArn: frank.arn, namespace: teamA.namespace });
    await sleep(1500); // the suite's cache TTL is 1 s
    expect(await refusal(signedClient(frank).get('greeting'))).toMatchObject({ code: 'auth.principalUnmapped' });
  });

  it('refuses a wrong secret, an unknown access key and a stale date with 403 and a code, never 500', async () => {
    const wrongSecret = await refusal(signedClient({ ...alice, secretAccessKey: 'not-the-secret' }).get('greeting'));
    expect(wrongSecret).toMatchObject({ status: 403, code: 'auth.invalidSignature' });
    const unknown = await refusal(signedClient({ ...alice, accessKeyId: 'AKIAZZZZZZZZZZZZZZZZ' }).get('greeting'));
    expect(unknown).toMatchObject({ status: 403, code: 'auth.unknownAccessKey' });

    const stale = await new SigV4Signer({ credentials: alice, region: 'us-east-1', now: () => Date.now() - 6 * 60_000 }).sign({
      method: 'GET',
      url: `${baseUrl()}/v1/ring`,
      headers: {},
    });
    expect(await errorOf(await call('/v1/ring', { key: null, headers: stale }))).toMatchObject({
      status: 403,
      code: 'auth.signatureExpired',
    });

    const fresh = await new SigV4Signer({ credentials: alice, region: 'us-east-1' }).sign({
      method: 'PUT',
      url: `${baseUrl()}${kvPath('x')}`,
      headers: {},
      body: 'signed',
    });
    const tampered = await call(kvPath('x'), { method: 'PUT', key: null, headers: fresh, body: 'tampered' });
    expect(await errorOf(tampered)).toMatchObject({ status: 403, code: 'auth.invalidSignature' });
  });
});
