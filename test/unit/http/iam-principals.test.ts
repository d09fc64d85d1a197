import fc from 'fast-check';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Request } from '@middy/core';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { callerMatchArn, IamPrincipalService, parseMappedArn } from '../../../lambdas/core/iam-principals';
import { NamespaceSettingsService } from '../../../lambdas/core/namespaces';
import { iamCallers } from '../../../lambdas/http/iam-callers';
import { principalOf } from '../../../lambdas/http/request';
import type { ApiKeyRecord, NamespaceSettings, PrincipalMapping, PrincipalMappingStore } from '../../../lambdas/ports';
import { ManualClock } from '../../support/memory-ports';
import { codeOf } from '../../support/errors';

class MemoryMappings implements PrincipalMappingStore {
  readonly items = new Map<string, PrincipalMapping>();
  reads = 0;
  async find(matchArn: string) {
    this.reads += 1;
    return this.items.get(matchArn);
  }
  async create(mapping: PrincipalMapping) {
    if (this.items.has(mapping.matchArn)) return false;
    this.items.set(mapping.matchArn, mapping);
    return true;
  }
  async delete(matchArn: string) {
    const mapping = this.items.get(matchArn);
    this.items.delete(matchArn);
    return mapping;
  }
  async list(limit: number) {
    return [...this.items.values()].sort((a, b) => a.matchArn.localeCompare(b.matchArn)).slice(0, limit);
  }
}

const keyOf = (namespace: string, revokedAt?: string): ApiKeyRecord => ({
  keyId: namespace.padEnd(12, '0').slice(0, 12),
  secretHash: '00',
  namespace,
  role: 'user',
  createdAt: '2030-01-01T00:00:00.000Z',
  ...(revokedAt ? { revokedAt } : {}),
});

function setup() {
  const mappings = new MemoryMappings();
  const keys = [keyOf('team'), keyOf('gone', '2030-01-02T00:00:00.000Z')];
  const settings = new Map<string, NamespaceSettings>();
  const settingsStore = {
    settingsOf: async (namespace: string) => settings.get(namespace),
    saveSettings: async (value: NamespaceSettings) => void settings.set(value.namespace, value),
  };
  const clock = new ManualClock();
  const service = new IamPrincipalService({ mappings, keys: { list: async () => keys }, namespaces: settingsStore, clock });
  return { mappings, service, clock, settingsStore };
}

function thrownCode(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return isRingstoreError(error) ? error.code : String(error);
  }
}

const role = 'arn:aws:iam::123456789012:role/app';

describe('IAM principal ARNs', () => {
  it('maps roles and users, matching them without their path', () => {
    expect(parseMappedArn('arn:aws:iam::123456789012:role/service/app').matchArn).toBe(role);
    expect(parseMappedArn(role)).toEqual({ matchArn: role, account: '123456789012', kind: 'role', name: 'app' });
    expect(parseMappedArn('arn:aws-cn:iam::123456789012:user/ci/deployer').matchArn).toBe('arn:aws-cn:iam::123456789012:user/deployer');
  });

  it.each([
    ['not an ARN', 'app'],
    ['a short account', 'arn:aws:iam::1234:role/app'],
    ['the account root', 'arn:aws:iam::123456789012:root'],
    ['a group', 'arn:aws:iam::123456789012:group/devs'],
    ['an assumed-role session', 'arn:aws:sts::123456789012:assumed-role/app/session-1'],
    ['a name with a space', 'arn:aws:iam::123456789012:role/my app'],
    ['an unknown partition', 'arn:azure:iam::123456789012:role/app'],
  ])('refuses %s', (_why, arn) => {
    expect(thrownCode(() => parseMappedArn(arn))).toBe('request.invalid');
  });

  it('tells an admin who maps a session which role to map instead', () => {
    expect(() => parseMappedArn('arn:aws:sts::123456789012:assumed-role/app/s')).toThrow(
      /map its role instead \(arn:aws:iam::123456789012:role\/app\)/,
    );
  });

  it('matches an assumed-role session to its role, and a user to itself', () => {
    expect(callerMatchArn('arn:aws:sts::123456789012:assumed-role/app/botocore-session-1')).toBe(role);
    expect(callerMatchArn('arn:aws:iam::123456789012:user/ci/deployer')).toBe('arn:aws:iam::123456789012:user/deployer');
    expect(callerMatchArn('arn:aws:sts::123456789012:federated-user/bob')).toBeUndefined();
    expect(callerMatchArn('arn:aws:iam::123456789012:root')).toBeUndefined();
    expect(callerMatchArn('arn:aws:sts::123456789012:assumed-role/app')).toBeUndefined();
  });

  it('matches every session of a mapped role, whatever its path and session name', () => {
    const name = fc.stringMatching(/^[\w+=,.@-]{1,64}$/);
    fc.assert(
      fc.property(
        name,
        fc.array(name, { maxLength: 3 }),
        name,
        fc.constantFrom('aws', 'aws-us-gov'),
        (roleName, path, session, partition) => {
          const mapped = parseMappedArn(`arn:${partition}:iam::123456789012:role/${[...path, roleName].join('/')}`);
          expect(callerMatchArn(`arn:${partition}:sts::123456789012:assumed-role/${roleName}/${session}`)).toBe(mapped.matchArn);
        },
      ),
    );
  });
});

describe('IamPrincipalService', () => {
  it('creates, lists and deletes mappings of known namespaces', async () => {
    const { service } = setup();
    const created = await service.create({ principalArn: 'arn:aws:iam::123456789012:role/x/app', namespace: 'team', role: 'user' });
    expect(created).toMatchObject({
      matchArn: role,
      principalArn: 'arn:aws:iam::123456789012:role/x/app',
      createdAt: '2023-11-14T22:13:20.000Z',
    });
    expect(await service.list()).toEqual([created]);
    // Deleted by the ARN with or without its path.
    expect(await service.delete(role)).toEqual(created);
    expect(await codeOf(service.delete(role))).toBe('admin.principalNotFound');
  });

  it('refuses a duplicate (even under another path), an unknown namespace, a revoked-only namespace and a bad ARN', async () => {
    const { service, settingsStore } = setup();
    await service.create({ principalArn: role, namespace: 'team', role: 'admin' });
    expect(await codeOf(service.create({ principalArn: 'arn:aws:iam::123456789012:role/p/app', namespace: 'team', role: 'user' }))).toBe(
      'admin.principalExists',
    );
    const other = 'arn:aws:iam::123456789012:user/u';
    expect(await codeOf(service.create({ principalArn: other, namespace: 'nobody', role: 'user' }))).toBe('admin.namespaceUnknown');
    expect(await codeOf(service.create({ principalArn: other, namespace: 'gone', role: 'user' }))).toBe('admin.namespaceUnknown');
    expect(await codeOf(service.create({ principalArn: other, namespace: 'has#hash', role: 'user' }))).toBe('request.invalid');
    expect(await codeOf(service.create({ principalArn: 'arn:aws:iam::123456789012:root', namespace: 'team', role: 'user' }))).toBe(
      'request.invalid',
    );
    // A namespace with settings only (an IAM-only tenant) is known.
    await settingsStore.saveSettings({ namespace: 'iam-only', readConsistency: 'eventual', writeConsistency: 'eventual' });
    expect(await service.create({ principalArn: other, namespace: 'iam-only', role: 'user' })).toMatchObject({ namespace: 'iam-only' });
  });

  it("lets the operator's bootstrap map a namespace nothing uses yet (an IAM-only deployment)", async () => {
    const { service } = setup();
    const mapping = await service.create({ principalArn: role, namespace: 'ops', role: 'admin' }, { newNamespace: true });
    expect(mapping).toMatchObject({ namespace: 'ops', role: 'admin' });
  });

  it('authenticates a session of a mapped role as its namespace and role, keyed by the caller ARN', async () => {
    const { service } = setup();
    await service.create({ principalArn: role, namespace: 'team', role: 'user' });
    const caller = 'arn:aws:sts::123456789012:assumed-role/app/s1';
    expect(await service.authenticate(caller)).toEqual({ keyId: caller, namespace: 'team', role: 'user' });
    expect(await codeOf(service.authenticate('arn:aws:sts::123456789012:assumed-role/other/s1'))).toBe('auth.principalUnmapped');
    expect(await codeOf(service.authenticate('arn:aws:sts::999999999999:assumed-role/app/s1'))).toBe('auth.principalUnmapped');
    expect(await codeOf(service.authenticate('garbage'))).toBe('auth.principalUnmapped');
  });
});

describe('iamCallers middleware', () => {
  const eventOf = (requestContext: Record<string, unknown>) =>
    ({ httpMethod: 'GET', resource: '/v1/ring', requestContext }) as unknown as APIGatewayProxyEvent;
  const requestOf = (event: APIGatewayProxyEvent) => ({ event }) as Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

  function middlewareSetup(ttlSeconds = 60) {
    const base = setup();
    const namespaces = new NamespaceSettingsService(base.settingsStore, { requestsPerSecond: 100, burst: 200 });
    const middleware = iamCallers({ principals: base.service, namespaces, clock: base.clock, ttlSeconds });
    return { ...base, before: middleware.before! };
  }

  it('gives a mapped caller the context an API key of its namespace and role would get', async () => {
    const { service, before } = middlewareSetup();
    await service.create({ principalArn: role, namespace: 'team', role: 'admin' });
    const request = requestOf(eventOf({ identity: { userArn: 'arn:aws:sts::123456789012:assumed-role/app/s' } }));
    await before(request);
    expect(principalOf(request.event)).toMatchObject({
      namespace: 'team',
      role: 'admin',
      keyId: 'arn:aws:sts::123456789012:assumed-role/app/s',
      rate: { requestsPerSecond: 100, burst: 200 },
    });
  });

  it('refuses an unmapped caller with auth.principalUnmapped, and leaves API-key and anonymous requests alone', async () => {
    const { before } = middlewareSetup();
    await expect(before(requestOf(eventOf({ identity: { userArn: 'arn:aws:iam::123456789012:user/nobody' } })))).rejects.toMatchObject({
      code: 'auth.principalUnmapped',
    });
    const keyed = requestOf(eventOf({ authorizer: { namespace: 'team', role: 'user', keyId: 'k' }, identity: { userArn: role } }));
    await before(keyed);
    expect(principalOf(keyed.event).keyId).toBe('k');
    const anonymous = requestOf(eventOf({ identity: { userArn: null } }));
    await before(anonymous);
    expect(thrownCode(() => principalOf(anonymous.event))).toBe('auth.missingKey');
  });

  it('keeps an answer for the TTL: a deleted mapping works until it ends, then is refused', async () => {
    const { service, mappings, clock, before } = middlewareSetup(60);
    await service.create({ principalArn: role, namespace: 'team', role: 'user' });
    const caller = { identity: { userArn: 'arn:aws:sts::123456789012:assumed-role/app/s' } };
    await before(requestOf(eventOf(caller)));
    await service.delete(role);
    const readsBefore = mappings.reads;
    await before(requestOf(eventOf(caller)));
    expect(mappings.reads).toBe(readsBefore);
    clock.advanceSeconds(61);
    await expect(before(requestOf(eventOf(caller)))).rejects.toMatchObject({ code: 'auth.principalUnmapped' });
  });
});
