// /v1/admin/principals: which IAM roles and users act as which namespace and role when they sign requests.

import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { apiKeyRoleWire, type ApiKeyRole } from './CreateApiKeyCommand';
import { readJson, wire, type WireOf } from './response';

/**
 * Reader of one mapping (`PrincipalMapping` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const mapping: PrincipalMapping = readJson(response, principalMappingWire);
 * ```
 */
export const principalMappingWire = wire.object({
  principalArn: wire.string,
  matchArn: wire.string,
  namespace: wire.string,
  role: apiKeyRoleWire,
  createdAt: wire.string,
  description: wire.optional(wire.string),
});

/**
 * An IAM role or user mapped to a namespace: its SigV4-signed requests act as that namespace with
 * `role`. `matchArn` is what callers match: the ARN without its path, so every session of a role matches.
 *
 * @example
 * ```ts
 * const { principals } = await admin.listPrincipalMappings();
 * const mapping: PrincipalMapping | undefined = principals.find((p) => p.namespace === 'team-a');
 * ```
 */
export type PrincipalMapping = WireOf<typeof principalMappingWire>;

/**
 * Reader of the listing (`PrincipalMappingList` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { principals }: PrincipalMappingListWire = readJson(response, principalMappingListWire);
 * ```
 */
export const principalMappingListWire = wire.object({ principals: wire.array(principalMappingWire) });

/**
 * The listing as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const listing: PrincipalMappingListWire = { principals: [] };
 * ```
 */
export type PrincipalMappingListWire = WireOf<typeof principalMappingListWire>;

/**
 * Input of {@link CreatePrincipalMappingCommand}.
 *
 * @example
 * ```ts
 * const input: CreatePrincipalMappingCommandInput = { principalArn: 'arn:aws:iam::123456789012:role/app', namespace: 'team-a' };
 * ```
 */
export interface CreatePrincipalMappingCommandInput {
  /** A role or user ARN (`arn:aws:iam::<account>:role/<name>` or `user/<name>`), never a session or the root. */
  principalArn: string;
  namespace: string;
  /** `user` (default) or `admin`. */
  role?: ApiKeyRole;
  description?: string;
}

/**
 * Maps an IAM role or user to a namespace (`POST /v1/admin/principals`); needs an admin key or principal.
 *
 * @example
 * ```ts
 * await admin.send(new CreatePrincipalMappingCommand({ principalArn: 'arn:aws:iam::123456789012:role/app', namespace: 'team-a' }));
 * ```
 */
export class CreatePrincipalMappingCommand extends RingstoreCommand<CreatePrincipalMappingCommandInput, PrincipalMapping> {
  override async execute({ transport, signal }: CommandContext): Promise<PrincipalMapping> {
    const { principalArn, namespace, role, description } = this.input;
    if (typeof principalArn !== 'string' || !principalArn.startsWith('arn:')) throw invalidInput('principalArn must be an IAM ARN');
    if (typeof namespace !== 'string' || namespace === '') throw invalidInput('namespace must be a non-empty string');
    const body = {
      principalArn,
      namespace,
      ...(role === undefined ? {} : { role }),
      ...(description === undefined ? {} : { description }),
    };
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/principals',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        authenticated: true,
      },
      signal,
    );
    return readJson(response, principalMappingWire);
  }
}

/**
 * Lists the IAM principals mapped to namespaces (`GET /v1/admin/principals`); needs an admin key or principal.
 *
 * @example
 * ```ts
 * const { principals } = await admin.send(new ListPrincipalMappingsCommand());
 * ```
 */
export class ListPrincipalMappingsCommand extends RingstoreCommand<Record<string, never>, PrincipalMappingListWire> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<PrincipalMappingListWire> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/principals', authenticated: true }, signal);
    return readJson(response, principalMappingListWire);
  }
}

/**
 * Deletes a principal's mapping (`DELETE /v1/admin/principals/{principalArn}`); its requests are refused
 * within the handlers' cache TTL. Needs an admin key or principal.
 *
 * @example
 * ```ts
 * await admin.send(new DeletePrincipalMappingCommand({ principalArn: 'arn:aws:iam::123456789012:role/app' }));
 * ```
 */
export class DeletePrincipalMappingCommand extends RingstoreCommand<{ principalArn: string }, PrincipalMapping> {
  override async execute({ transport, signal }: CommandContext): Promise<PrincipalMapping> {
    const { principalArn } = this.input;
    if (typeof principalArn !== 'string' || !principalArn.startsWith('arn:')) throw invalidInput('principalArn must be an IAM ARN');
    const response = await transport.send(
      { method: 'DELETE', path: `/v1/admin/principals/${encodeURIComponent(principalArn)}`, authenticated: true },
      signal,
    );
    return readJson(response, principalMappingWire);
  }
}
