// IAM principals as callers: a mapping from a role or user ARN to a namespace and role, and the rule that
// matches a caller's ARN (an assumed-role session included) to its mapping.
import { iamPrincipalsMax, namespacePattern } from '../../schemas/topology';
import { RingstoreError } from './errors';
import { validateNamespace } from './validation';
import type { ApiKeyStore, Clock, NamespaceSettingsStore, PrincipalMapping, PrincipalMappingStore, Role } from '../ports';
import type { Principal } from './auth';

const partitions = '(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b)';
const arnPattern = new RegExp(`^arn:${partitions}:(iam|sts)::(\\d{12}):(.+)$`);
/** IAM's own rules for user and role names and path segments. */
const namePattern = /^[\w+=,.@-]{1,64}$/;
const pathSegmentPattern = /^[\w+=,.@-]{1,512}$/;

export interface ParsedPrincipal {
  /** `arn:<partition>:iam::<account>:<role|user>/<name>`: a role's or user's name is unique in its account, whatever its path. */
  matchArn: string;
  account: string;
  kind: 'role' | 'user';
  name: string;
}

function invalidArn(principalArn: string, why: string): RingstoreError {
  return new RingstoreError('request.invalid', `principalArn ${JSON.stringify(principalArn)}: ${why}`, {
    details: { field: 'principalArn' },
  });
}

/**
 * The role or user an admin maps, as `arn:aws:iam::<account>:role/<path/><name>` or `...:user/<path/><name>`.
 * Anything else (the account root, a group, an assumed-role session, an STS federated user) is refused
 * with the reason: a mapping names a long-lived identity, never one session of it.
 */
export function parseMappedArn(principalArn: string): ParsedPrincipal {
  const match = arnPattern.exec(principalArn);
  if (!match) throw invalidArn(principalArn, 'not an IAM ARN (arn:aws:iam::<12-digit account>:role/<name> or user/<name>)');
  const [, partition, service, account, resource] = match as unknown as [string, string, string, string, string];
  if (service === 'sts') {
    throw invalidArn(
      principalArn,
      resource.startsWith('assumed-role/')
        ? `an assumed-role session; map its role instead (arn:${partition}:iam::${account}:role/${resource.split('/')[1] ?? '<name>'})`
        : 'an STS identity; map a role or user',
    );
  }
  if (resource === 'root') throw invalidArn(principalArn, 'the account root is never mapped; map a role or user');
  const [kind, ...segments] = resource.split('/');
  if (kind !== 'role' && kind !== 'user') throw invalidArn(principalArn, `a ${kind ?? 'resource'}; only roles and users are mapped`);
  const name = segments.at(-1) ?? '';
  if (!namePattern.test(name) || !segments.slice(0, -1).every((segment) => pathSegmentPattern.test(segment))) {
    throw invalidArn(principalArn, `not a valid ${kind} name or path`);
  }
  return { matchArn: `arn:${partition}:iam::${account}:${kind}/${name}`, account, kind, name };
}

/**
 * The match ARN of a caller as API Gateway reports it (`requestContext.identity.userArn`): an IAM user as
 * itself, an assumed-role session (`arn:aws:sts::<account>:assumed-role/<role>/<session>`) as its role.
 * The session ARN carries the role's name but not its path, hence mappings match without paths.
 * Undefined for any other caller (root, federated users): no mapping can name them.
 */
export function callerMatchArn(callerArn: string): string | undefined {
  const match = arnPattern.exec(callerArn);
  if (!match) return undefined;
  const [, partition, service, account, resource] = match as unknown as [string, string, string, string, string];
  const segments = resource.split('/');
  if (service === 'sts') {
    if (segments[0] !== 'assumed-role' || segments.length !== 3 || !namePattern.test(segments[1]!)) return undefined;
    return `arn:${partition}:iam::${account}:role/${segments[1]}`;
  }
  const kind = segments[0];
  const name = segments.at(-1) ?? '';
  if ((kind !== 'user' && kind !== 'role') || segments.length < 2 || !namePattern.test(name)) return undefined;
  return `arn:${partition}:iam::${account}:${kind}/${name}`;
}

export class IamPrincipalService {
  constructor(
    private readonly deps: {
      mappings: PrincipalMappingStore;
      /** To tell a namespace in use from a typo: its API keys and its settings. */
      keys: Pick<ApiKeyStore, 'list'>;
      namespaces: Pick<NamespaceSettingsStore, 'settingsOf'>;
      clock: Clock;
    },
  ) {}

  /**
   * The principal a signed caller acts as: its mapping's namespace and role, `keyId` the caller's own ARN
   * (what the audit trail records). `auth.principalUnmapped` when no mapping names it.
   */
  async authenticate(callerArn: string): Promise<Principal> {
    const matchArn = callerMatchArn(callerArn);
    const mapping = matchArn === undefined ? undefined : await this.deps.mappings.find(matchArn);
    if (!mapping) {
      throw new RingstoreError(
        'auth.principalUnmapped',
        `IAM principal ${callerArn} is not mapped to a namespace (an admin maps its role or user: POST /v1/admin/principals)`,
        { details: { principalArn: callerArn, ...(matchArn === undefined ? {} : { matchArn }) } },
      );
    }
    return { keyId: callerArn, namespace: mapping.namespace, role: mapping.role };
  }

  /**
   * Maps a role or user. The namespace must be in use (an API key, settings or another mapping name it),
   * unless `newNamespace`: the operator's bootstrap of an IAM-only deployment (scripts/map-principal.ts).
   */
  async create(
    input: { principalArn: string; namespace: string; role: Role; description?: string },
    options: { newNamespace?: boolean } = {},
  ): Promise<PrincipalMapping> {
    const { matchArn } = parseMappedArn(input.principalArn);
    validateNamespace(input.namespace);
    const existing = await this.deps.mappings.list(iamPrincipalsMax);
    if (existing.length >= iamPrincipalsMax) {
      throw new RingstoreError('request.invalid', `a deployment maps at most ${iamPrincipalsMax} IAM principals; delete one first`);
    }
    if (options.newNamespace !== true && !(await this.namespaceKnown(input.namespace, existing))) {
      throw new RingstoreError(
        'admin.namespaceUnknown',
        `namespace ${input.namespace} has no API key, settings or mapping yet: create its settings first (PUT /v1/admin/namespaces/${input.namespace})`,
        { details: { field: 'namespace', pattern: namespacePattern.source } },
      );
    }
    const mapping: PrincipalMapping = {
      principalArn: input.principalArn,
      matchArn,
      namespace: input.namespace,
      role: input.role,
      createdAt: new Date(this.deps.clock.nowMs()).toISOString(),
      ...(input.description ? { description: input.description } : {}),
    };
    if (!(await this.deps.mappings.create(mapping))) {
      const current = await this.deps.mappings.find(matchArn);
      throw new RingstoreError(
        'admin.principalExists',
        `${matchArn} is mapped already${current ? ` (to ${current.namespace} as ${current.role}, as ${current.principalArn})` : ''}: delete it first`,
        { details: { matchArn } },
      );
    }
    return mapping;
  }

  /** Deletes the mapping of a role or user (given with or without its path); takes effect within the handlers' cache TTL. */
  async delete(principalArn: string): Promise<PrincipalMapping> {
    const { matchArn } = parseMappedArn(principalArn);
    const deleted = await this.deps.mappings.delete(matchArn);
    if (!deleted) throw new RingstoreError('admin.principalNotFound', `no mapping of ${matchArn}`, { details: { matchArn } });
    return deleted;
  }

  list(): Promise<PrincipalMapping[]> {
    return this.deps.mappings.list(iamPrincipalsMax);
  }

  private async namespaceKnown(namespace: string, mappings: readonly PrincipalMapping[]): Promise<boolean> {
    if (mappings.some((mapping) => mapping.namespace === namespace)) return true;
    if ((await this.deps.namespaces.settingsOf(namespace)) !== undefined) return true;
    return (await this.deps.keys.list()).some((key) => key.namespace === namespace && key.revokedAt === undefined);
  }
}
