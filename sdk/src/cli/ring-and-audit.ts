// `keyrange` (alias `ring`): the ring as the server holds it, and `audit`: the audit trail of admin changes.

import type { Command } from 'commander';
import { pageOf, parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatRing } from './format';

/** Adds `keyrange` to `program`. */
export function addKeyrangeCommand(program: Command, context: CommandGroupContext): void {
  const { client, call, out } = context;
  program
    .command('keyrange')
    .alias('ring')
    .description('show the ring: epoch, shards, token ranges with owners and replicas')
    .option('--json', 'print the ring as JSON')
    .action(async (options: { json?: boolean }) => {
      const ring = await (await client()).ring(call());
      out(options.json === true ? JSON.stringify(ring, null, 2) : formatRing(ring));
    });
}

/** Adds `audit` to `program`. */
export function addAuditCommand(program: Command, context: CommandGroupContext): void {
  const { client, call, out } = context;
  program
    .command('audit')
    .description('admin: the audit trail of admin changes, newest first: when, who (key id), what, outcome')
    .option('--limit <n>', 'entries per page (1 to 200, default 50)', parseInteger(1, 200))
    .option('--cursor <cursor>', 'continue after the page a previous audit showed (its "more:" line)')
    .option('--json', 'print the page as JSON')
    .action(async (options: { limit?: number; cursor?: string; json?: boolean }) => {
      const page = await (await client()).listAuditEntries(pageOf(options), call());
      if (options.json === true) {
        out(JSON.stringify(page, null, 2));
        return;
      }
      for (const entry of page.entries) {
        const target = Object.entries(entry.target)
          .map(([name, value]) => ` ${name}=${value}`)
          .join('');
        out(
          `${entry.at} ${entry.actor.keyId} (${entry.actor.role}) ${entry.operation}${target} ${entry.outcome} ${entry.status}${entry.errorCode ? ` ${entry.errorCode}` : ''}`,
        );
      }
      if (page.cursor) out(`more: ringstore audit --cursor ${page.cursor}`);
    });
}
