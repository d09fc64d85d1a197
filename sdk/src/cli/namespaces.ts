// `ringstore namespace …`: an admin's view of a namespace's settings (docs/security.md, "Quotas"; docs/consistency.md):
// its default consistency, request rate and storage quota, and its usage.

import { type Command, InvalidArgumentError } from 'commander';
import type { SetNamespaceSettingsCommandInput } from '../commands';
import { parseInteger } from './arguments';
import type { CommandGroupContext } from './command-group';
import { formatNamespace } from './format';

/** A request rate: a positive decimal number (0.5 is one request every two seconds). */
function parseRate(raw: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) <= 0) throw new InvalidArgumentError('expected a positive number of requests per second');
  return Number(raw);
}

interface NamespaceSetOptions {
  read?: string;
  write?: string;
  rate?: number;
  burst?: number;
  defaultRate?: boolean;
  keysMax?: number;
  bytesMax?: number;
  /** commander's `--no-storage-quota`: false when given. */
  storageQuota: boolean;
}

/** The settings `ringstore namespace set` changes; a half-given rate or a contradiction is refused before any request. */
function namespacePatchOf(options: NamespaceSetOptions): Omit<SetNamespaceSettingsCommandInput, 'namespace'> {
  if ((options.rate === undefined) !== (options.burst === undefined)) throw new InvalidArgumentError('give --rate and --burst together');
  if (options.defaultRate === true && options.rate !== undefined) throw new InvalidArgumentError('--rate and --default-rate contradict');
  const bounded = options.keysMax !== undefined || options.bytesMax !== undefined;
  if (!options.storageQuota && bounded) throw new InvalidArgumentError('--no-storage-quota and a storage bound contradict');
  const consistency = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (value !== 'eventual' && value !== 'strong') throw new InvalidArgumentError(`${flag} must be eventual or strong`);
    return value;
  };
  const readConsistency = consistency('--read', options.read);
  const writeConsistency = consistency('--write', options.write);
  return {
    ...(readConsistency ? { readConsistency } : {}),
    ...(writeConsistency ? { writeConsistency } : {}),
    ...(options.rate !== undefined && options.burst !== undefined
      ? { rate: { requestsPerSecond: options.rate, burst: options.burst } }
      : {}),
    ...(options.defaultRate === true ? { rate: null } : {}),
    ...(bounded
      ? {
          storage: {
            ...(options.keysMax === undefined ? {} : { keysMax: options.keysMax }),
            ...(options.bytesMax === undefined ? {} : { bytesMax: options.bytesMax }),
          },
        }
      : {}),
    ...(options.storageQuota ? {} : { storage: null }),
  };
}

/**
 * Adds `namespace get|set` to `program`.
 *
 * @example
 * ```ts
 * addNamespaceCommands(program, { client, call, out, session });
 * ```
 */
export function addNamespaceCommands(program: Command, { client, call, out }: CommandGroupContext): void {
  const namespace = program
    .command('namespace')
    .description("admin: a namespace's settings: default consistency, request rate, storage quota and usage")
    .addHelpText(
      'after',
      [
        '',
        'Requests see a change within the authorizer cache TTL (60 s in AWS).',
        'Examples:',
        '  ringstore namespace get team',
        '  ringstore namespace set team --rate 50 --burst 100',
        '  ringstore namespace set team --keys-max 100000 --bytes-max 1073741824',
        '  ringstore namespace set team --default-rate --no-storage-quota',
      ].join('\n'),
    );
  namespace
    .command('get')
    .argument('<namespace>')
    .description("the namespace's settings, and its usage when it has a storage quota")
    .option('--json', 'print them as JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      const settings = await (await client()).getNamespaceSettings(name, call());
      out(options.json === true ? JSON.stringify(settings, null, 2) : formatNamespace(settings));
    });
  namespace
    .command('set')
    .argument('<namespace>')
    .description('change the settings given, keep the others')
    .option('--read <consistency>', 'default consistency of reads: eventual or strong')
    .option('--write <consistency>', 'default consistency of writes: eventual or strong')
    .option('--rate <perSecond>', 'requests per second (with --burst)', parseRate)
    .option('--burst <requests>', 'requests at once after a quiet spell (with --rate)', parseInteger(1))
    .option('--default-rate', "back to the deployment's default rate")
    .option('--keys-max <n>', 'storage quota: live keys at most', parseInteger(0))
    .option('--bytes-max <n>', 'storage quota: bytes of values at most', parseInteger(0))
    .option('--no-storage-quota', 'remove the storage quota')
    .action(async (name: string, options: NamespaceSetOptions) => {
      const settings = await (await client()).setNamespaceSettings(name, namespacePatchOf(options), call());
      out(formatNamespace(settings));
      if (settings.takesEffectWithinSeconds !== undefined) {
        out(
          `takes effect within ${settings.takesEffectWithinSeconds} s: requests keep the settings their key was authorized with until then`,
        );
      }
    });
}
