// `ringstore rebalance …`: an admin's handle on rebalancing (docs/rebalancing.md): add or remove shards online,
// follow the rebalance (rebalance-watch.ts), pause, resume or cancel it, change its copy rate.

import { type Command, Option } from 'commander';
import type { RingstoreClient } from '../client';
import type { Rebalance } from '../commands';
import { CommandFailure, parseInteger } from './arguments';
import type { CommandGroupContext, Session } from './command-group';
import { formatRebalance, rebalanceChange } from './format';
import { watchRebalance, type WatchOptions } from './rebalance-watch';

const rateOption = () =>
  new Option('--rate <keysPerSecond>', "the copy's ceiling in keys per second (0: none; default: the server's)").argParser(parseInteger(0));
const rateOf = (rate: number | undefined) => (rate === undefined ? {} : { rateKeysPerSecond: rate });

/** Follows a rebalance until it settles or Ctrl-C; the session's Ctrl-C when interactive, SIGINT's otherwise. */
async function follow(session: Session, admin: RingstoreClient, first: Rebalance): Promise<void> {
  const interrupt: Pick<WatchOptions, 'signal' | 'onInterrupt'> =
    session.signal === undefined
      ? {
          onInterrupt: (stop) => {
            process.once('SIGINT', stop);
            return () => void process.off('SIGINT', stop);
          },
        }
      : { signal: session.signal };
  await watchRebalance(first, {
    read: (signal) => admin.describeRebalance({}, { abortSignal: signal }),
    out: session.stdout,
    ...interrupt,
  });
}

/** Says a rebalance started, then follows it unless told not to. */
async function started(context: CommandGroupContext, admin: RingstoreClient, rebalance: Rebalance, watch: boolean): Promise<void> {
  const { out, session } = context;
  out(`rebalance ${rebalance.id} started: ${rebalanceChange(rebalance.change)}, ${rebalance.ranges.total} ranges to move`);
  if (watch) await follow(session, admin, rebalance);
  else out('follow it with: ringstore rebalance status --watch');
}

/** The id given, else the current rebalance's. */
async function rebalanceId({ call }: CommandGroupContext, admin: RingstoreClient, id: string | undefined): Promise<string> {
  return id ?? (await admin.describeRebalance({}, call())).id;
}

/** `rebalance add|remove`: start one. */
function addStartCommands(rebalanceCommand: Command, context: CommandGroupContext): void {
  const { client, call } = context;
  rebalanceCommand
    .command('add')
    .description('add shards, online: they get the ids after the highest on the ring')
    .option('--count <n>', 'how many shards to add', parseInteger(1), 1)
    .addOption(rateOption())
    .option('--no-watch', 'start it and return, without following it')
    .action(async (options: { count: number; rate?: number; watch: boolean }) => {
      const admin = await client();
      const rebalance = await admin.startRebalance({ add: options.count, ...rateOf(options.rate) }, call());
      await started(context, admin, rebalance, options.watch);
    });
  rebalanceCommand
    .command('remove')
    .description('remove shards, online: their ranges go to the shards that follow them on the ring')
    .argument('<shard...>', 'ids of the shards to remove (see keyrange)')
    .addOption(rateOption())
    .option('--no-watch', 'start it and return, without following it')
    .action(async (words: string[], options: { rate?: number; watch: boolean }) => {
      // commander's parser of a variadic argument keeps only its last value: each id is checked here.
      const shards = words.map((word) => {
        try {
          return parseInteger(0)(word);
        } catch (err) {
          throw new CommandFailure(`shard ${JSON.stringify(word)}: ${(err as Error).message}`);
        }
      });
      const admin = await client();
      const rebalance = await admin.startRebalance({ remove: shards, ...rateOf(options.rate) }, call());
      await started(context, admin, rebalance, options.watch);
    });
}

/** `rebalance status`: the current (or last) one, once or followed. */
function addStatusCommand(rebalanceCommand: Command, { client, call, out, session }: CommandGroupContext): void {
  rebalanceCommand
    .command('status')
    .description('the current (or last) rebalance: status, ranges moved, keys copied, keys/s, progress and ETA')
    .option('--watch', 'follow it with a progress bar until it is done, cancelled or paused (Ctrl-C stops watching only)')
    .option('--ranges', 'list every moving range with its stage')
    .option('--json', 'print the status as JSON')
    .action(async (options: { watch?: boolean; ranges?: boolean; json?: boolean }) => {
      const admin = await client();
      const rebalance = await admin.describeRebalance({ ranges: options.ranges === true }, call());
      if (options.watch === true) await follow(session, admin, rebalance);
      else out(options.json === true ? JSON.stringify(rebalance, null, 2) : formatRebalance(rebalance));
    });
}

/** `rebalance pause|resume|cancel|rate`: act on a running one. */
function addControlCommands(rebalanceCommand: Command, context: CommandGroupContext): void {
  const { client, call, out, session } = context;
  rebalanceCommand
    .command('pause')
    .description('pause the rebalance after its current step; resume goes on from there')
    .argument('[id]', 'the rebalance (default: the current one)')
    .action(async (id: string | undefined) => {
      const admin = await client();
      const paused = await admin.pauseRebalance(await rebalanceId(context, admin, id), call());
      out(`pause of rebalance ${paused.id} requested: it stops after its current step (ringstore rebalance status)`);
    });
  rebalanceCommand
    .command('resume')
    .description('resume a paused rebalance from where it stopped')
    .argument('[id]', 'the rebalance (default: the current one)')
    .option('--no-watch', 'resume it and return, without following it')
    .action(async (id: string | undefined, options: { watch: boolean }) => {
      const admin = await client();
      const resumed = await admin.resumeRebalance(await rebalanceId(context, admin, id), call());
      out(`rebalance ${resumed.id} resumed`);
      if (options.watch) await follow(session, admin, resumed);
    });
  rebalanceCommand
    .command('cancel')
    .description('cancel the rebalance: the ranges that moved are moved back, and the ring ends as it began')
    .argument('[id]', 'the rebalance (default: the current one)')
    .action(async (id: string | undefined) => {
      const admin = await client();
      const cancelled = await admin.cancelRebalance(await rebalanceId(context, admin, id), call());
      out(`cancel of rebalance ${cancelled.id} requested: what moved is moved back (ringstore rebalance status --watch)`);
    });
  rebalanceCommand
    .command('rate')
    .description("change the copy's ceiling of the rebalance; it applies from the next page copied")
    .argument('<keysPerSecond>', 'keys per second over the whole rebalance (0: no ceiling)', parseInteger(0))
    .option('--id <id>', 'the rebalance (default: the current one)')
    .action(async (rate: number, options: { id?: string }) => {
      const admin = await client();
      const changed = await admin.setRebalanceRate(await rebalanceId(context, admin, options.id), rate, call());
      out(
        changed.rateKeysPerSecond === 0
          ? `rebalance ${changed.id} copies with no ceiling now`
          : `rebalance ${changed.id} copies at most ${changed.rateKeysPerSecond.toLocaleString('en-US')} keys/s now`,
      );
    });
}

/**
 * Adds `rebalance add|remove|status|pause|resume|cancel|rate` to `program`.
 *
 * @example
 * ```ts
 * addRebalanceCommands(program, { client, call, out, session });
 * ```
 */
export function addRebalanceCommands(program: Command, context: CommandGroupContext): void {
  const rebalanceCommand = program
    .command('rebalance')
    .description('admin: add or remove shards online, follow the rebalance, pause, resume or cancel it, change its copy rate')
    .addHelpText(
      'after',
      [
        '',
        'add, remove and resume follow the rebalance with a progress bar (ranges moved, keys copied, keys/s, ETA),',
        'as status --watch does, until it is done, cancelled or paused; one line per change when the output is no',
        'terminal. Ctrl-C stops watching, not the rebalance: it goes on (pause or cancel stop it).',
        'pause, resume, cancel and rate act on the current rebalance unless given its id.',
        '',
        'Examples:',
        '  ringstore rebalance add --count 2 --rate 5000',
        '  ringstore rebalance status --watch',
        '  ringstore rebalance rate 20000',
        '  ringstore rebalance remove 3 --no-watch',
      ].join('\n'),
    );
  addStartCommands(rebalanceCommand, context);
  addStatusCommand(rebalanceCommand, context);
  addControlCommands(rebalanceCommand, context);
}
