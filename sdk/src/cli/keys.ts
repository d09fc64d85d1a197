// `ringstore keys …`: an admin's API keys (docs/security.md, "API keys"): create one for a namespace, list them
// (never with a secret), rotate a key's secret, revoke a key.

import { type Command, Option } from 'commander';
import type { ApiKeyDescription } from '../commands';
import { parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';

const KEY_ID_ARGUMENT =
  'the key id (the 12 hex digits after rs_ in rs_<keyId>_<secret>); a whole key is taken for its id, its secret is not sent';

/** One line per key: id, namespace, role, and what an admin looks for (revoked, expiring, last used). */
function keyLine(key: ApiKeyDescription): string {
  const facts = [
    `created ${key.createdAt}`,
    ...(key.revokedAt ? [`revoked ${key.revokedAt}`] : []),
    ...(key.expiresAt ? [`expires ${key.expiresAt}`] : []),
    ...(key.lastUsedAt ? [`last used ${key.lastUsedAt}`] : []),
    ...(key.description ? [`"${key.description}"`] : []),
  ];
  return `${key.keyId}  ${key.namespace}  ${key.role}  ${facts.join(', ')}`;
}

/**
 * Adds `keys create|list|rotate|revoke` to `program`.
 *
 * @example
 * ```ts
 * addKeyCommands(program, { client, call, out, session });
 * ```
 */
export function addKeyCommands(program: Command, { client, call, out }: CommandGroupContext): void {
  const keys = program.command('keys').description('admin: API keys');
  keys
    .command('create')
    .description('a new API key for a namespace; its secret is shown once')
    .argument('<namespace>', 'the namespace its requests act as')
    .addOption(new Option('--role <role>', 'user (default) or admin').choices(['user', 'admin']))
    .option('--description <text>', 'kept with the key (never a secret)')
    .option('--expires-at <time>', 'when the key stops working (ISO 8601)')
    .action(async (namespace: string, options: { role?: 'user' | 'admin'; description?: string; expiresAt?: string }) => {
      const created = await (
        await client()
      ).createApiKey(
        {
          namespace,
          ...(options.role === undefined ? {} : { role: options.role }),
          ...(options.description === undefined ? {} : { description: options.description }),
          ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
        },
        call(),
      );
      out(`key ${created.keyId} for ${created.namespace} (${created.role})\nsecret key (shown once): ${created.apiKey}`);
    });
  keys
    .command('list')
    .description('every API key, never with its secret')
    .option('--json', 'print the keys as JSON')
    .action(async (options: { json?: boolean }) => {
      const { keys: found } = await (await client()).listApiKeys(call());
      if (options.json === true) out(JSON.stringify(found, null, 2));
      else if (found.length === 0) out('no API key');
      else for (const key of found) out(keyLine(key));
    });
  keys
    .command('rotate')
    .argument('<keyId>', KEY_ID_ARGUMENT)
    .description('a new secret for the key; the current one keeps working for the grace period')
    .option('--grace <seconds>', 'how long the current secret keeps working (default 3600, at most a week)', parseInteger(0, 7 * 24 * 3600))
    .option('--expires-at <time>', 'a new expiry for the key (ISO 8601)')
    .action(async (keyId: string, options: { grace?: number; expiresAt?: string }) => {
      const rotated = await (
        await client()
      ).rotateApiKey(
        keyId,
        {
          ...(options.grace === undefined ? {} : { graceSeconds: options.grace }),
          ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
        },
        call(),
      );
      out(`new secret (shown once): ${rotated.apiKey}\nthe previous secret works until ${rotated.previousSecretExpiresAt}`);
    });
  keys
    .command('revoke')
    .argument('<keyId>', KEY_ID_ARGUMENT)
    .description('the key stops working (within the authorizer cache TTL); its record stays, revoked')
    .action(async (keyId: string) => {
      const revoked = await (await client()).revokeApiKey(keyId, call());
      out(`revoked ${revoked.keyId} at ${revoked.revokedAt}`);
    });
}
