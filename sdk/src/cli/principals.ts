// `ringstore principals …`: the IAM roles and users mapped to a namespace (docs/security.md, "IAM
// authentication"): list the mappings, map a principal, remove a mapping.

import { type Command, Option } from 'commander';
import type { CommandGroupContext } from './command-group';

/**
 * Adds `principals list|add|remove` to `program`.
 *
 * @example
 * ```ts
 * addPrincipalCommands(program, { client, call, out, session });
 * ```
 */
export function addPrincipalCommands(program: Command, { client, call, out }: CommandGroupContext): void {
  const principals = program
    .command('principals')
    .description('admin: IAM roles and users that act as a namespace when they sign requests (docs/security.md)');
  principals
    .command('list')
    .description('every mapped IAM principal')
    .option('--json', 'print the mappings as JSON')
    .action(async (options: { json?: boolean }) => {
      const { principals: mappings } = await (await client()).listPrincipalMappings(call());
      if (options.json === true) out(JSON.stringify(mappings, null, 2));
      else if (mappings.length === 0) out('no IAM principal is mapped');
      else for (const mapping of mappings) out(`${mapping.principalArn} -> ${mapping.namespace} (${mapping.role})`);
    });
  principals
    .command('add')
    .description('map an IAM role or user to a namespace; its sessions match a role too')
    .argument('<principalArn>', 'arn:aws:iam::<account>:role/<name> or user/<name>')
    .argument('<namespace>', 'the namespace its requests act as')
    .addOption(new Option('--role <role>', 'user (default) or admin').choices(['user', 'admin']))
    .option('--description <text>', 'kept with the mapping')
    .action(async (principalArn: string, namespaceName: string, options: { role?: 'user' | 'admin'; description?: string }) => {
      const mapping = await (
        await client()
      ).createPrincipalMapping(
        {
          principalArn,
          namespace: namespaceName,
          ...(options.role === undefined ? {} : { role: options.role }),
          ...(options.description === undefined ? {} : { description: options.description }),
        },
        call(),
      );
      out(`mapped ${mapping.matchArn} -> ${mapping.namespace} (${mapping.role})`);
    });
  principals
    .command('remove')
    .description("delete a principal's mapping; its requests are refused within the cache TTL")
    .argument('<principalArn>', 'the ARN mapped (with or without its path)')
    .action(async (principalArn: string) => {
      const mapping = await (await client()).deletePrincipalMapping(principalArn, call());
      out(`removed ${mapping.matchArn} (was ${mapping.namespace}, ${mapping.role})`);
    });
}
