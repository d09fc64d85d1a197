// `ringstore dr …`: an admin's handle on cross-region disaster recovery (docs/dr.md): a region's DR status,
// promoting a backup region and its report, and reconciling the keys a promotion marked lost.

import type { Command } from 'commander';
import { pageOf, parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatDrStatus, formatLostKeys, formatOffer, formatOfferStep, formatPromotionReport } from './format-dr';
import { showKey } from './format';

/** `dr status|promote|sync`: the region's DR role, and moving it on. */
function addRoleCommands(dr: Command, { client, call, out }: CommandGroupContext): void {
  dr.command('status')
    .description("this region's DR role; a backup's state, pending and lost keys; a primary's view of its backup")
    .option('--json', 'print the status as JSON')
    .action(async (options: { json?: boolean }) => {
      const status = await (await client()).describeDr(call());
      out(options.json === true ? JSON.stringify(status, null, 2) : formatDrStatus(status));
    });
  dr.command('promote')
    .description('promote this backup region: fence the primary, drain, mark undelivered keys lost, open for writes')
    .option('--reason <text>', 'kept in the promotion report')
    .action(async (options: { reason?: string }) => {
      const started = await (await client()).promote(options.reason === undefined ? {} : { reason: options.reason }, call());
      out(
        started.started
          ? `promotion ${started.id} started; follow it with: ringstore dr report`
          : `promotion ${started.id} was started before; follow it with: ringstore dr report`,
      );
    });
  dr.command('sync')
    .description('DR primary: ship the data written before DR to the backup once (maintenance does it, range by range)')
    .action(async () => {
      const progress = await (await client()).startDrSync(call());
      out(
        `initial sync ${progress.status}: ${progress.nextRange} of ${progress.ranges} ranges, ${progress.keys} keys shipped; follow it with: ringstore dr status`,
      );
    });
}

/** `dr offer|lost`: the old primary offers back the values of lost keys; the promoted region lists its lost keys. */
function addLostKeyCommands(dr: Command, { client, call, out }: CommandGroupContext): void {
  dr.command('offer')
    .description(
      'in the old, demoted primary: offer back the values it holds of the keys its backup lost (never applied there by themselves)',
    )
    .option('--json', 'print the totals as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await (
        await client()
      ).offerLostValues(
        { onProgress: (step) => (options.json === true || step.next === undefined ? undefined : out(formatOfferStep(step))) },
        call(),
      );
      out(options.json === true ? JSON.stringify(report, null, 2) : formatOffer(report));
    });
  dr.command('lost')
    .description('in the promoted region: the keys a promotion marked lost, whether their value was offered back, the version held now')
    .option('--limit <n>', 'keys per page (1 to 100)', parseInteger(1, 100))
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print the page as JSON, with its cursor')
    .action(async (options: { limit?: number; cursor?: string; json?: boolean }) => {
      const page = await (await client()).lostKeys(pageOf(options), call());
      if (options.json === true) {
        out(JSON.stringify(page, null, 2));
        return;
      }
      out(formatLostKeys(page.entries));
      if (page.cursor !== undefined) out(`more: ringstore dr lost --cursor ${page.cursor}`);
    });
}

/** `dr restore|discard`: settling one lost key. */
function addReconcileCommands(dr: Command, { client, call, out }: CommandGroupContext): void {
  dr.command('restore')
    .description(
      "in the promoted region: write a lost key's offered value as a new write of the key (refused if the key was written since)",
    )
    .argument('<namespace>')
    .argument('<key>')
    .argument('<version>', 'the lost version (see dr lost; 0: a lost notice, a write never numbered)', parseInteger(0))
    .option(
      '--expect-version <n>',
      'the version the key must hold now (dr lost shows it); default: any older than the lost one',
      parseInteger(0),
    )
    .action(async (namespace: string, key: string, version: number, options: { expectVersion?: number }) => {
      const outcome = await (
        await client()
      ).reconcile(
        {
          namespace,
          key,
          version,
          action: 'restore',
          ...(options.expectVersion === undefined ? {} : { expectVersion: options.expectVersion }),
        },
        call(),
      );
      out(`restored ${namespace} ${showKey(key)}: the lost version ${version} is now version ${outcome.currentVersion}`);
    });
  dr.command('discard')
    .description('in the promoted region: forget a lost write; the key reads at what this region holds')
    .argument('<namespace>')
    .argument('<key>')
    .argument('<version>', 'the lost version (see dr lost; 0: a lost notice, a write never numbered)', parseInteger(0))
    .action(async (namespace: string, key: string, version: number) => {
      const outcome = await (await client()).reconcile({ namespace, key, version, action: 'discard' }, call());
      out(`discarded version ${version} of ${namespace} ${showKey(key)}; it reads at version ${outcome.currentVersion} here`);
    });
}

/** `dr report`: the newest promotion, step by step. */
function addReportCommand(dr: Command, { client, call, out }: CommandGroupContext): void {
  dr.command('report')
    .description('the newest promotion: its status, its steps, the keys whose value never arrived')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await (await client()).promotionReport(call());
      out(options.json === true ? JSON.stringify(report, null, 2) : formatPromotionReport(report));
    });
}

/**
 * Adds `dr status|promote|sync|offer|lost|restore|discard|report` to `program`.
 *
 * @example
 * ```ts
 * addDrCommands(program, { client, call, out, session });
 * ```
 */
export function addDrCommands(program: Command, context: CommandGroupContext): void {
  const dr = program
    .command('dr')
    .description('admin: cross-region disaster recovery: status, promote a backup region, its report, reconcile lost keys');
  addRoleCommands(dr, context);
  addLostKeyCommands(dr, context);
  addReconcileCommands(dr, context);
  addReportCommand(dr, context);
}
