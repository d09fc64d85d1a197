// The CLI's commands, declared once with commander and used both for `ringstore get k` and for
// each line of the interactive or piped session.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { RingstoreClient } from '../client';
import { ENV, loadSavedConnection, resolveConnection, type CliEnv, type Connection } from './connection';
import { debugFetch, secretsOf } from './debug';
import { describeError } from './format';
import { CommandFailure } from './arguments';
import type { CommandGroupContext, Session } from './command-group';
import { AWS_ENV, iamCredentials } from './credentials';
import { addConnectionCommands } from './connect';
import { addDrCommands } from './dr';
import { addFailoverCommands } from './failover';
import { addKeyCommands } from './keys';
import { addKvCommands } from './kv-commands';
import { addIncrCommand } from './incr';
import { addListCommand } from './list';
import { addMgetCommand } from './mget';
import { addNamespaceCommands } from './namespaces';
import { addPrincipalCommands } from './principals';
import { addRebalanceCommands } from './rebalance';
import { addAuditCommand, addKeyrangeCommand } from './ring-and-audit';
import { addTxnCommands } from './txn';
import { addVolumeCommands } from './volumes';
import { addWatchCommand } from './watch';

export type { CliOutput, Session } from './command-group';

// src/cli and dist/cjs/cli sit two and three levels under the package root.
const PACKAGE_JSON_DEPTH_MAX = 4;

/** The version in the SDK's package.json, found upwards from this file (src/cli, or dist/cjs/cli when built). */
function packageVersion(): string {
  for (let dir = __dirname, depth = 0; depth < PACKAGE_JSON_DEPTH_MAX; dir = dirname(dir), depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === '@ringstore/sdk') return typeof pkg.version === 'string' ? pkg.version : 'unknown';
    } catch {
      // no package.json here: look one level up
    }
  }
  return 'unknown';
}

/** A key of the form the server issues (`rs_<key id>_<secret>`), standing for the one `npm start` prints. */
export const EXAMPLE_API_KEY = 'rs_0123456789ab_the-admin-key-npm-start-printed-0000';

/** The examples `ringstore --help` ends with (sdk/test/examples.test.ts runs them against the local cloud). */
const helpExamples = [
  '',
  `Examples (the local cloud of \`npm start\`, which prints its keys; sdk/test/examples.test.ts runs them):`,
  `  ringstore connect http://127.0.0.1:4510 ${EXAMPLE_API_KEY}`,
  '  ringstore put greeting "hello world" --ttl 3600',
  '  ringstore put photo.png @./photo.png',
  '  ringstore get greeting',
  '  ringstore get photo.png --out ./copy.png',
  '  ringstore get greeting --json',
  '  ringstore mget greeting photo.png missing',
  '  ringstore incr visits 5',
  '  ringstore list --limit 10',
  '  ringstore list --values',
  '  ringstore --debug keyrange',
  '  ringstore keyrange',
  '  ringstore txn get greeting put counter 1 if 0 delete photo.png',
  '',
  'Run with no command for an interactive session (or pipe commands, one per line).',
  `The saved connection lives in $${ENV.configDir}/cli.json (default ~/.config/ringstore/cli.json).`,
].join('\n');

/** The options every command takes, before or after its name. */
interface GlobalOptions {
  endpoint?: string;
  apiKey?: string;
  iam?: boolean;
  region?: string;
  debug?: boolean;
}

const NOT_CONNECTED = `not connected: run "connect <url> <apiKey>", pass --endpoint/--api-key, or set ${ENV.endpoint}/${ENV.apiKey}`;

async function currentConnection(session: Session, perLine: { endpoint?: string; apiKey?: string }): Promise<Connection | undefined> {
  const flags = { ...session.flags, ...perLine };
  // A connection made by `connect` in this session wins, unless this very line names another.
  const sources = {
    flags,
    env: session.env,
    ...(session.connected !== undefined && perLine.endpoint === undefined ? { session: session.connected } : {}),
  };
  const resolvedWithoutFile = resolveConnection(sources);
  if (resolvedWithoutFile !== undefined) return resolvedWithoutFile;
  const saved = await loadSavedConnection(session.env);
  return resolveConnection({ ...sources, ...(saved === undefined ? {} : { saved }) });
}

/** With --debug, the fetch that shows each exchange on stderr, given the secrets it must never show. */
type DebugFetchFor = (secrets: readonly string[]) => { fetch?: typeof fetch };

function clientFor(connection: Connection, debug: DebugFetchFor): RingstoreClient {
  if (connection.apiKey === undefined) {
    throw new CommandFailure(`no API key for ${connection.endpoint}: pass --api-key, set ${ENV.apiKey}, or run "connect <url> <apiKey>"`);
  }
  return new RingstoreClient({ endpoint: connection.endpoint, apiKey: connection.apiKey, ...debug(secretsOf(connection.apiKey)) });
}

/** A client that signs with AWS credentials (`--iam`) instead of sending an API key. */
async function iamClientFor(env: CliEnv, endpoint: string, region: string | undefined, debug: DebugFetchFor): Promise<RingstoreClient> {
  const credentials = await iamCredentials(env);
  if (credentials === undefined) {
    throw new CommandFailure(
      `--iam needs AWS credentials: set ${AWS_ENV.accessKeyId} and ${AWS_ENV.secretAccessKey} (and ${AWS_ENV.sessionToken}), ` +
        'or install @aws-sdk/credential-provider-node beside the CLI for profiles, SSO and roles',
    );
  }
  const signingRegion = region ?? (env[AWS_ENV.region] || undefined);
  return new RingstoreClient({
    endpoint,
    credentials,
    ...(signingRegion === undefined ? {} : { region: signingRegion }),
    ...debug(typeof credentials === 'function' ? [] : secretsOf(credentials.secretAccessKey, credentials.sessionToken)),
  });
}

/**
 * Builds the commander program for one invocation. Actions write to the session's outputs and
 * throw on failure; `runCommandLine` turns throws into `error: ...` lines and exit codes.
 *
 * @example
 * ```ts
 * await buildProgram(session).parseAsync(['get', 'greeting'], { from: 'user' });
 * ```
 */
export function buildProgram(session: Session): Command {
  const out = (text: string): void => void session.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const program = new Command('ringstore');
  program
    .description('Command-line client of Ringstore, a serverless key-value store')
    .option('--endpoint <url>', `REST API endpoint (else $${ENV.endpoint}, else the saved connection)`)
    .option('--api-key <key>', `API key (else $${ENV.apiKey}, else the saved connection)`)
    .option(
      '--iam',
      `sign requests with AWS credentials (SigV4) instead of an API key: $${AWS_ENV.accessKeyId}/$${AWS_ENV.secretAccessKey}/$${AWS_ENV.sessionToken}, else the default AWS chain`,
    )
    .option('--region <region>', `the region --iam signs for (else $${AWS_ENV.region}, else the endpoint's)`)
    .option('--debug', 'print each HTTP request and response on stderr, credentials redacted')
    .version(packageVersion(), '-V, --version', 'print the CLI version')
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (text) => void session.stdout.write(text),
      writeErr: (text) => void session.stderr.write(text),
    })
    .addHelpText('after', helpExamples);

  const debug: DebugFetchFor = (secrets) =>
    program.opts<{ debug?: boolean }>().debug === true || session.flags.debug === true
      ? { fetch: debugFetch((text) => session.stderr.write(text), secrets) }
      : {};
  const client = async (): Promise<RingstoreClient> => {
    const { iam, region, debug: _debug, ...flags } = program.opts<GlobalOptions>();
    const connection = await currentConnection(session, flags);
    if (connection === undefined) throw new CommandFailure(NOT_CONNECTED);
    return iam === true ? iamClientFor(session.env, connection.endpoint, region, debug) : clientFor(connection, debug);
  };
  const call = () => (session.signal === undefined ? {} : { abortSignal: session.signal });
  const context: CommandGroupContext = { client, call, out, session };

  addConnectionCommands(program, context, (connection) => clientFor(connection, debug));

  addKvCommands(program, context);
  addListCommand(program, context);
  addMgetCommand(program, context);
  addIncrCommand(program, context);
  addWatchCommand(program, context);
  addVolumeCommands(program, context);

  addKeyrangeCommand(program, context);
  addFailoverCommands(program, context);

  addAuditCommand(program, context);
  addPrincipalCommands(program, context);
  addKeyCommands(program, context);
  addNamespaceCommands(program, context);
  addDrCommands(program, context);
  addRebalanceCommands(program, context);
  addTxnCommands(program, context);

  program
    .command('quit')
    .alias('exit')
    .description('leave the interactive session')
    .action(() => {
      session.quit = true;
    });

  return program;
}

/**
 * Runs one command (already split into words) and reports failures on stderr as
 * `error: <message>`. Resolves to the exit code: 0 on success, 1 on error.
 *
 * @example
 * ```ts
 * const code = await runCommandLine(session, ['get', 'greeting']);
 * ```
 */
export async function runCommandLine(session: Session, words: readonly string[]): Promise<number> {
  try {
    await buildProgram(session).parseAsync([...words], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 1; // commander already printed it
    session.stderr.write(`error: ${describeError(err)}\n`);
    return 1;
  }
}

/**
 * Names of the commands and their aliases, for tab completion: read off the program, so a new command is
 * completed without a list to keep.
 *
 * @example
 * ```ts
 * commandNames(buildProgram(session)).includes('keyrange'); // true
 * ```
 */
export function commandNames(program: Command): string[] {
  return [...new Set([...program.commands.flatMap((command) => [command.name(), ...command.aliases()]), 'help'])].sort();
}
