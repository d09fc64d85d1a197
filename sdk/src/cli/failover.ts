// `ringstore failover …`: an admin's handle on failover (docs/failover.md): fail a shard over by hand, move its
// ranges back once it has returned, list the recent failovers and move-backs.

import type { Command } from 'commander';
import { parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatFailovers } from './format';

/**
 * Adds `failover start|move-back|list` to `program`.
 *
 * @example
 * ```ts
 * addFailoverCommands(program, { client, call, out, session });
 * ```
 */
export function addFailoverCommands(program: Command, { client, call, out }: CommandGroupContext): void {
  const failover = program
    .command('failover')
    .description("admin: move a failed shard's token ranges to their replicas, follow failovers, move ranges back");
  failover
    .command('start')
    .description('fail over a shard by hand (the workflow first probes it: one that answers keeps its ranges)')
    .argument('<shard>', 'the shard id (see keyrange)', parseInteger(0))
    .option('--reason <text>', 'kept in the failover record')
    .action(async (shard: number, options: { reason?: string }) => {
      const started = await (
        await client()
      ).startFailover({ shard, ...(options.reason === undefined ? {} : { reason: options.reason }) }, call());
      out(
        started.started
          ? `failover ${started.id} started; follow it with: ringstore failover list`
          : `failover ${started.id} was started before`,
      );
    });
  failover
    .command('move-back')
    .description('give a returned, rejoined shard back the ranges a failover took from it')
    .argument('<shard>', 'the shard id', parseInteger(0))
    .option('--reason <text>', 'kept in the record')
    .action(async (shard: number, options: { reason?: string }) => {
      const started = await (
        await client()
      ).startFailover({ shard, action: 'moveBack', ...(options.reason === undefined ? {} : { reason: options.reason }) }, call());
      out(
        started.started
          ? `move-back ${started.id} started; follow it with: ringstore failover list`
          : `move-back ${started.id} was started before`,
      );
    });
  failover
    .command('list')
    .description('the recent failovers and move-backs, newest first')
    .option('--json', 'print the records as JSON, with their whole reports')
    .action(async (options: { json?: boolean }) => {
      const { failovers } = await (await client()).listFailovers(call());
      out(options.json === true ? JSON.stringify(failovers, null, 2) : formatFailovers(failovers));
    });
}
