// The CLI's commands, declared once with commander and used both for `ringstore get k` and for
// each line of the interactive or piped session.

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { RingstoreClient } from '../client';
import type { Consistency } from '../commands';
import { NotFoundError } from '../errors';
import {
  ENV,
  loadSavedConnection,
  removeSavedConnection,
  resolveConnection,
  saveConnection,
  type CliEnv,
  type Connection,
} from './connection';
import { debugFetch, secretsOf } from './debug';
import { describeError, formatRing, isTextual, showKey } from './format';
import { outputFormatOf, outputOption, valueJson, type OutputFormat } from './format-json';
import { CommandFailure, consistencyOption, pageOf, parseInteger, valueArgument } from './arguments';
import type { CommandGroupContext, Session } from './command-group';
import { AWS_ENV, iamCredentials } from './credentials';
import { addDrCommands } from './dr';
import { addFailoverCommands } from './failover';
import { addKeyCommands } from './keys';
import { addIncrCommand } from './incr';
import { addListCommand } from './list';
import { addMgetCommand } from './mget';
import { addNamespaceCommands } from './namespaces';
import { addPrincipalCommands } from './principals';
import { addRebalanceCommands } from './rebalance';
import { addTxnCommands } from './txn';

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

/**
 * The endpoint a `connect` argument names: a URL as given (without a trailing slash), or a bare `host:port`
 * with a scheme added, `http://` on this machine (the local cloud) and `https://` anywhere else.
 */
function endpointOf(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return trimmed;
  const host = trimmed.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const local = host === 'localhost' || host === '::1' || /^127\./.test(host);
  return `${local ? 'http' : 'https'}://${trimmed}`;
}

/** A key of the form the server issues (`rs_<key id>_<secret>`), standing for the one `npm start` prints. */
export const EXAMPLE_API_KEY = 'rs_0123456789ab_the-admin-key-npm-start-printed-0000';

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
    .addHelpText(
      'after',
      [
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
      ].join('\n'),
    );

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
  const withKey = async <T>(key: string, action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (err) {
      if (err instanceof NotFoundError) throw new CommandFailure(describeError(err, key));
      throw err;
    }
  };

  program
    .command('connect')
    .description('save the endpoint and API key for later commands, after checking them')
    .argument('<url>', 'REST API endpoint, e.g. http://127.0.0.1:4510 (the local cloud)')
    .argument('[apiKey]', `API key (else --api-key or $${ENV.apiKey})`)
    .option('--no-verify', 'save without calling the server first')
    .action(async (url: string, apiKey: string | undefined, options: { verify: boolean }) => {
      const key = apiKey ?? program.opts<{ apiKey?: string }>().apiKey ?? session.flags.apiKey ?? (session.env[ENV.apiKey] || undefined);
      if (key === undefined) throw new CommandFailure(`an API key is needed: connect <url> <apiKey>, or set ${ENV.apiKey}`);
      const connection = { endpoint: endpointOf(url), apiKey: key };
      const ringstore = clientFor(connection, debug);
      let detail = '';
      if (options.verify) {
        const ring = await ringstore.ring(call());
        detail = ` (ring epoch ${ring.epoch}, ${ring.shards.length} ${ring.shards.length === 1 ? 'shard' : 'shards'})`;
      }
      const file = await saveConnection(session.env, connection);
      session.connected = connection;
      out(`connected to ${connection.endpoint}${detail}; saved in ${file}`);
    });

  program
    .command('disconnect')
    .description('forget the saved connection')
    .action(async () => {
      const removed = await removeSavedConnection(session.env);
      delete session.connected;
      let text = removed ? 'disconnected' : 'not connected (no saved connection)';
      if (session.env[ENV.endpoint]) text += `; note: $${ENV.endpoint} is still set`;
      out(text);
    });

  program
    .command('put')
    .description('store a value: text, @path to read a file, @- to read standard input (@@text stores "@text")')
    .argument('<key>', 'the key')
    .argument('<value>', 'the value as text, or @file')
    .option('--ttl <seconds>', 'expire after this many seconds', parseInteger(1))
    .option('--content-type <type>', 'content type to store (default: text/plain for text, by extension or octet-stream for files)')
    .option('--if-match <version>', 'write only if the current version is this one', parseInteger(0))
    .option('--if-absent', 'write only if the key does not exist (If-None-Match: *)')
    .addOption(consistencyOption())
    .action(
      async (
        key: string,
        value: string,
        options: {
          ttl?: number;
          contentType?: string;
          ifMatch?: number;
          ifAbsent?: boolean;
          consistency?: Consistency;
        },
      ) => {
        const read = await valueArgument(value, session.stdin);
        const body = read.body;
        const contentType = options.contentType ?? read.contentType;
        const ringstore = await client();
        const result = await ringstore.put(key, body, {
          ...call(),
          ...(contentType === undefined ? {} : { contentType }),
          ...(options.ttl === undefined ? {} : { ttlSeconds: options.ttl }),
          ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
          ...(options.ifAbsent === true ? { ifNoneMatch: '*' as const } : {}),
          ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
        });
        out(`stored ${showKey(result.key)} (version ${result.version}${copiesNote(result)})`);
      },
    );

  program
    .command('get')
    .description('print a value (text, or with its metadata as JSON with --json), or write it to a file with --out')
    .argument('<key>', 'the key')
    .option('--out <file>', 'write the value to this file instead of printing it')
    .option('--json', 'print the value and its metadata as one JSON object (the value as text, or base64 when it is not text)')
    .addOption(outputOption())
    .addOption(consistencyOption())
    .action(async (key: string, options: { out?: string; json?: boolean; output?: OutputFormat; consistency?: Consistency }) => {
      const format = outputFormatOf(options);
      if (format === 'json' && options.out !== undefined) {
        throw new CommandFailure('--out writes the value to a file, --json prints it: give one');
      }
      const ringstore = await client();
      const item = await withKey(key, () =>
        ringstore.get(key, { ...call(), ...(options.consistency === undefined ? {} : { consistency: options.consistency }) }),
      );
      if (options.out !== undefined) {
        await writeFile(options.out, item.value);
        out(`wrote ${item.value.byteLength} bytes to ${options.out} (${item.contentType}, version ${item.version})`);
        return;
      }
      if (format === 'json') {
        out(JSON.stringify(valueJson(item), null, 2));
        return;
      }
      if (!isTextual(item.contentType, item.value)) {
        throw new CommandFailure(
          `${showKey(key)} holds ${item.value.byteLength} bytes of ${item.contentType}; use --out <file> to save it`,
        );
      }
      const text = item.text();
      session.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    });

  program
    .command('head')
    .description("show a value's metadata: version, size, content type, expiry")
    .argument('<key>', 'the key')
    .action(async (key: string) => {
      const ringstore = await client();
      const meta = await withKey(key, () => ringstore.head(key, call()));
      out(
        [
          `key           ${showKey(meta.key)}`,
          `version       ${meta.version}`,
          `size          ${meta.size === undefined ? '?' : `${meta.size} bytes`}`,
          `content-type  ${meta.contentType}`,
          `expires       ${meta.expiresAt ?? '-'}`,
        ].join('\n'),
      );
    });

  program
    .command('delete')
    .alias('del')
    .description('delete a key')
    .argument('<key>', 'the key')
    .option('--if-match <version>', 'delete only if the current version is this one', parseInteger(0))
    .addOption(consistencyOption())
    .action(async (key: string, options: { ifMatch?: number; consistency?: Consistency }) => {
      const ringstore = await client();
      const result = await withKey(key, () =>
        ringstore.delete(key, {
          ...call(),
          ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
          ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
        }),
      );
      out(`deleted ${showKey(result.key)} (version ${result.version}${copiesNote(result)})`);
    });

  addListCommand(program, context);
  addMgetCommand(program, context);
  addIncrCommand(program, context);

  program
    .command('keyrange')
    .alias('ring')
    .description('show the ring: epoch, shards, token ranges with owners and replicas')
    .option('--json', 'print the ring as JSON')
    .action(async (options: { json?: boolean }) => {
      const ring = await (await client()).ring(call());
      out(options.json === true ? JSON.stringify(ring, null, 2) : formatRing(ring));
    });

  addFailoverCommands(program, context);

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

/** Strong writes say how many shards held the version when acknowledged. */
function copiesNote(result: { consistency: Consistency; copies?: number }): string {
  return result.consistency === 'strong' && result.copies !== undefined ? `; strong, on ${result.copies} shards` : '';
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
