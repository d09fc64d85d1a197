// The CLI's commands, declared once with commander and used both for `ringstore get k` and for
// each line of the interactive or piped session.

import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { RingstoreClient } from '../client';
import type { Consistency, ListItem, Rebalance, SetNamespaceSettingsCommandInput, TransactOp } from '../commands';
import { NotFoundError, TransactionAbortedError } from '../errors';
import { LIST_ALL_PAGES_MAX, LIST_LIMIT_MAX, TXN_CONFLICT_RETRIES_MAX, TXN_TIMEOUT_MS_MAX, TXN_TIMEOUT_MS_MIN } from '../limits';
import {
  ENV,
  loadSavedConnection,
  removeSavedConnection,
  resolveConnection,
  saveConnection,
  type CliEnv,
  type Connection,
} from './connection';
import {
  describeError,
  formatDrStatus,
  formatFailovers,
  formatNamespace,
  formatList,
  formatLostKeys,
  formatOffer,
  formatOfferStep,
  formatPromotionReport,
  formatRebalance,
  formatRing,
  isTextual,
  rebalanceChange,
  showKey,
} from './format';
import { parseInteger } from './arguments';
import { AWS_ENV, iamCredentials } from './credentials';
import { addKeyCommands } from './keys';
import { watchRebalance, type WatchOptions } from './rebalance-watch';
import { formatTransaction, parseTxnFile, parseTxnWords, transactionJson, TXN_GRAMMAR } from './txn-ops';

/**
 * Where the CLI writes; process streams in production, buffers in tests.
 *
 * @example
 * ```ts
 * const output: CliOutput = { write: (text) => process.stdout.write(text) };
 * ```
 */
export interface CliOutput {
  write(chunk: string | Uint8Array): unknown;
}

/**
 * State shared by the commands of one CLI run (one command, or a whole interactive session).
 *
 * @example
 * ```ts
 * const session: Session = { env: process.env, flags: {}, stdout: process.stdout, stderr: process.stderr, quit: false };
 * ```
 */
export interface Session {
  env: CliEnv;
  /** `--endpoint` / `--api-key` given when the CLI started. */
  flags: { endpoint?: string; apiKey?: string };
  /** Set by `connect` during this run; beats flags, environment and file. */
  connected?: Connection;
  stdout: CliOutput;
  stderr: CliOutput;
  /** Set by `quit`/`exit`. */
  quit: boolean;
  /** Aborts the command in flight (Ctrl-C in the interactive session). */
  signal?: AbortSignal;
  /** Standard input, when a command may read it (`txn --file -`); absent when stdin carries the commands. */
  stdin?: NodeJS.ReadableStream;
}

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

/** A failure the CLI reports as `error: <message>` without a code (usage, local files). */
class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/** A key of the form the server issues (`rs_<key id>_<secret>`), standing for the one `npm start` prints. */
export const EXAMPLE_API_KEY = 'rs_0123456789ab_the-admin-key-npm-start-printed-0000';

const NOT_CONNECTED = `not connected: run "connect <url> <apiKey>", pass --endpoint/--api-key, or set ${ENV.endpoint}/${ENV.apiKey}`;

// A small table is enough: the content type only matters for how `get` shows the value later.
const contentTypeByExtension: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
};

/**
 * A value argument: text, `@path` (the file's bytes, typed by extension), `@-` (standard input's bytes, as
 * `redis-cli -x` takes them) or `@@text` (the text `@text`).
 */
async function valueArgument(value: string, stdin?: NodeJS.ReadableStream): Promise<{ body: Uint8Array | string; contentType?: string }> {
  if (value.startsWith('@@')) return { body: value.slice(1) };
  if (!value.startsWith('@')) return { body: value };
  if (value === '@-') {
    if (stdin === undefined) throw new CommandFailure('@- reads the value from standard input, which carries the commands here');
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return { body: new Uint8Array(Buffer.concat(chunks)), contentType: 'application/octet-stream' };
  }
  const path = value.slice(1);
  try {
    return { body: await readFile(path), contentType: contentTypeByExtension[extname(path).toLowerCase()] ?? 'application/octet-stream' };
  } catch (err) {
    throw new CommandFailure(`cannot read ${path}: ${(err as Error).message}`);
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

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

/** The page a paged listing's --limit and --cursor ask for. */
function pageOf(options: { limit?: number; cursor?: string }): { limit?: number; cursor?: string } {
  return {
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  };
}

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

function clientFor(connection: Connection): RingstoreClient {
  if (connection.apiKey === undefined) {
    throw new CommandFailure(`no API key for ${connection.endpoint}: pass --api-key, set ${ENV.apiKey}, or run "connect <url> <apiKey>"`);
  }
  return new RingstoreClient({ endpoint: connection.endpoint, apiKey: connection.apiKey });
}

/** A client that signs with AWS credentials (`--iam`) instead of sending an API key. */
async function iamClientFor(env: CliEnv, endpoint: string, region: string | undefined): Promise<RingstoreClient> {
  const credentials = await iamCredentials(env);
  if (credentials === undefined) {
    throw new CommandFailure(
      `--iam needs AWS credentials: set ${AWS_ENV.accessKeyId} and ${AWS_ENV.secretAccessKey} (and ${AWS_ENV.sessionToken}), ` +
        'or install @aws-sdk/credential-provider-node beside the CLI for profiles, SSO and roles',
    );
  }
  const signingRegion = region ?? (env[AWS_ENV.region] || undefined);
  return new RingstoreClient({ endpoint, credentials, ...(signingRegion === undefined ? {} : { region: signingRegion }) });
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
        '  ringstore list --limit 10',
        '  ringstore keyrange',
        '  ringstore txn get greeting put counter 1 if 0 delete photo.png',
        '',
        'Run with no command for an interactive session (or pipe commands, one per line).',
        `The saved connection lives in $${ENV.configDir}/cli.json (default ~/.config/ringstore/cli.json).`,
      ].join('\n'),
    );

  const client = async (): Promise<RingstoreClient> => {
    const { iam, region, ...flags } = program.opts<{ endpoint?: string; apiKey?: string; iam?: boolean; region?: string }>();
    const connection = await currentConnection(session, flags);
    if (connection === undefined) throw new CommandFailure(NOT_CONNECTED);
    return iam === true ? iamClientFor(session.env, connection.endpoint, region) : clientFor(connection);
  };
  const call = () => (session.signal === undefined ? {} : { abortSignal: session.signal });
  const withKey = async <T>(key: string, action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (err) {
      if (err instanceof NotFoundError) throw new CommandFailure(describeError(err, key));
      throw err;
    }
  };
  const readOpsFile = async (file: string): Promise<string> => {
    if (file !== '-') {
      try {
        return await readFile(file, 'utf8');
      } catch (err) {
        throw new CommandFailure(`cannot read ${file}: ${(err as Error).message}`);
      }
    }
    if (session.stdin === undefined) throw new CommandFailure('--file - reads stdin, which is busy with commands here: give a file');
    return readAll(session.stdin);
  };

  const consistencyOption = () => new Option('--consistency <level>', 'read/write consistency').choices(['eventual', 'strong']);

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
      const ringstore = clientFor(connection);
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
    .description('print a value (text), or write it to a file with --out')
    .argument('<key>', 'the key')
    .option('--out <file>', 'write the value to this file instead of printing it')
    .addOption(consistencyOption())
    .action(async (key: string, options: { out?: string; consistency?: Consistency }) => {
      const ringstore = await client();
      const item = await withKey(key, () =>
        ringstore.get(key, { ...call(), ...(options.consistency === undefined ? {} : { consistency: options.consistency }) }),
      );
      if (options.out !== undefined) {
        await writeFile(options.out, item.value);
        out(`wrote ${item.value.byteLength} bytes to ${options.out} (${item.contentType}, version ${item.version})`);
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

  program
    .command('list')
    .alias('ls')
    .description('list keys, optionally under a prefix; with --limit, a "more:" line gives the command for the next keys')
    .argument('[prefix]', 'only keys starting with this')
    .option('--limit <n>', 'show at most n keys', parseInteger(1))
    .option('--cursor <cursor>', 'continue after the keys a previous list showed (its "more:" line)')
    .option('--json', 'print the items as JSON (the "more:" line goes to stderr)')
    .action(async (prefix: string | undefined, options: { limit?: number; cursor?: string; json?: boolean }) => {
      const ringstore = await client();
      const items: ListItem[] = [];
      // Each page asks for no more than is still wanted, so the last page's cursor is the next key to show.
      let cursor = options.cursor;
      for (let pages = 0; pages < LIST_ALL_PAGES_MAX; pages++) {
        const limit = Math.min((options.limit ?? Number.MAX_SAFE_INTEGER) - items.length, LIST_LIMIT_MAX);
        const page = await ringstore.list({
          ...call(),
          limit,
          ...(prefix === undefined ? {} : { prefix }),
          ...(cursor === undefined ? {} : { cursor }),
        });
        items.push(...page.items);
        cursor = page.cursor;
        if (cursor === undefined || (options.limit !== undefined && items.length >= options.limit)) break;
      }
      const more =
        cursor === undefined
          ? undefined
          : [
              'more: ringstore list',
              ...(prefix === undefined ? [] : [shellWord(prefix)]),
              ...(options.limit === undefined ? [] : ['--limit', String(options.limit)]),
              '--cursor',
              shellWord(cursor),
            ].join(' ');
      if (options.json === true) {
        out(JSON.stringify(items, null, 2));
        if (more !== undefined) session.stderr.write(`${more}\n`);
      } else out(more === undefined ? formatList(items) : `${formatList(items)}\n${more}`);
    });

  program
    .command('keyrange')
    .alias('ring')
    .description('show the ring: epoch, shards, token ranges with owners and replicas')
    .option('--json', 'print the ring as JSON')
    .action(async (options: { json?: boolean }) => {
      const ring = await (await client()).ring(call());
      out(options.json === true ? JSON.stringify(ring, null, 2) : formatRing(ring));
    });

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

  addKeyCommands(program, { client, call, out });

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

  const dr = program
    .command('dr')
    .description('admin: cross-region disaster recovery: status, promote a backup region, its report, reconcile lost keys');
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
  dr.command('restore')
    .description(
      "in the promoted region: write a lost key's offered value as a new write of the key (refused if the key was written since)",
    )
    .argument('<namespace>')
    .argument('<key>')
    .argument('<version>', 'the lost version (see dr lost)', parseInteger(1))
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
    .argument('<version>', 'the lost version (see dr lost)', parseInteger(1))
    .action(async (namespace: string, key: string, version: number) => {
      const outcome = await (await client()).reconcile({ namespace, key, version, action: 'discard' }, call());
      out(`discarded version ${version} of ${namespace} ${showKey(key)}; it reads at version ${outcome.currentVersion} here`);
    });
  dr.command('report')
    .description('the newest promotion: its status, its steps, the keys whose value never arrived')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await (await client()).promotionReport(call());
      out(options.json === true ? JSON.stringify(report, null, 2) : formatPromotionReport(report));
    });

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
  const rateOption = () =>
    new Option('--rate <keysPerSecond>', "the copy's ceiling in keys per second (0: none; default: the server's)").argParser(
      parseInteger(0),
    );
  const rateOf = (rate: number | undefined) => (rate === undefined ? {} : { rateKeysPerSecond: rate });
  /** Follows a rebalance until it settles or Ctrl-C; the session's Ctrl-C when interactive, SIGINT's otherwise. */
  const follow = async (admin: RingstoreClient, first: Rebalance): Promise<void> => {
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
  };
  const started = async (admin: RingstoreClient, rebalance: Rebalance, watch: boolean): Promise<void> => {
    out(`rebalance ${rebalance.id} started: ${rebalanceChange(rebalance.change)}, ${rebalance.ranges.total} ranges to move`);
    if (watch) await follow(admin, rebalance);
    else out('follow it with: ringstore rebalance status --watch');
  };
  /** The id given, else the current rebalance's. */
  const rebalanceId = async (admin: RingstoreClient, id: string | undefined): Promise<string> =>
    id ?? (await admin.describeRebalance({}, call())).id;

  rebalanceCommand
    .command('add')
    .description('add shards, online: they get the ids after the highest on the ring')
    .option('--count <n>', 'how many shards to add', parseInteger(1), 1)
    .addOption(rateOption())
    .option('--no-watch', 'start it and return, without following it')
    .action(async (options: { count: number; rate?: number; watch: boolean }) => {
      const admin = await client();
      await started(admin, await admin.startRebalance({ add: options.count, ...rateOf(options.rate) }, call()), options.watch);
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
      await started(admin, await admin.startRebalance({ remove: shards, ...rateOf(options.rate) }, call()), options.watch);
    });
  rebalanceCommand
    .command('status')
    .description('the current (or last) rebalance: status, ranges moved, keys copied, keys/s, progress and ETA')
    .option('--watch', 'follow it with a progress bar until it is done, cancelled or paused (Ctrl-C stops watching only)')
    .option('--ranges', 'list every moving range with its stage')
    .option('--json', 'print the status as JSON')
    .action(async (options: { watch?: boolean; ranges?: boolean; json?: boolean }) => {
      const admin = await client();
      const rebalance = await admin.describeRebalance({ ranges: options.ranges === true }, call());
      if (options.watch === true) await follow(admin, rebalance);
      else out(options.json === true ? JSON.stringify(rebalance, null, 2) : formatRebalance(rebalance));
    });
  rebalanceCommand
    .command('pause')
    .description('pause the rebalance after its current step; resume goes on from there')
    .argument('[id]', 'the rebalance (default: the current one)')
    .action(async (id: string | undefined) => {
      const admin = await client();
      const paused = await admin.pauseRebalance(await rebalanceId(admin, id), call());
      out(`pause of rebalance ${paused.id} requested: it stops after its current step (ringstore rebalance status)`);
    });
  rebalanceCommand
    .command('resume')
    .description('resume a paused rebalance from where it stopped')
    .argument('[id]', 'the rebalance (default: the current one)')
    .option('--no-watch', 'resume it and return, without following it')
    .action(async (id: string | undefined, options: { watch: boolean }) => {
      const admin = await client();
      const resumed = await admin.resumeRebalance(await rebalanceId(admin, id), call());
      out(`rebalance ${resumed.id} resumed`);
      if (options.watch) await follow(admin, resumed);
    });
  rebalanceCommand
    .command('cancel')
    .description('cancel the rebalance: the ranges that moved are moved back, and the ring ends as it began')
    .argument('[id]', 'the rebalance (default: the current one)')
    .action(async (id: string | undefined) => {
      const admin = await client();
      const cancelled = await admin.cancelRebalance(await rebalanceId(admin, id), call());
      out(`cancel of rebalance ${cancelled.id} requested: what moved is moved back (ringstore rebalance status --watch)`);
    });
  rebalanceCommand
    .command('rate')
    .description("change the copy's ceiling of the rebalance; it applies from the next page copied")
    .argument('<keysPerSecond>', 'keys per second over the whole rebalance (0: no ceiling)', parseInteger(0))
    .option('--id <id>', 'the rebalance (default: the current one)')
    .action(async (rate: number, options: { id?: string }) => {
      const admin = await client();
      const changed = await admin.setRebalanceRate(await rebalanceId(admin, options.id), rate, call());
      out(
        changed.rateKeysPerSecond === 0
          ? `rebalance ${changed.id} copies with no ceiling now`
          : `rebalance ${changed.id} copies at most ${changed.rateKeysPerSecond.toLocaleString('en-US')} keys/s now`,
      );
    });

  program
    .command('txn')
    .description('run ops atomically: all commit or none does')
    .argument('[ops...]', TXN_GRAMMAR.join(' | '))
    .option('--file <path>', 'read the ops from a JSON file ("-": stdin): {"ops": [...]} as the REST API takes it, or just the array')
    .option(
      '--timeout <ms>',
      `deadline of the transaction (${TXN_TIMEOUT_MS_MIN}..${TXN_TIMEOUT_MS_MAX} ms; server default 5000)`,
      parseInteger(TXN_TIMEOUT_MS_MIN, TXN_TIMEOUT_MS_MAX),
    )
    .option(
      '--conflict-retries <n>',
      `run again up to n times after an abort by conflict (0..${TXN_CONFLICT_RETRIES_MAX})`,
      parseInteger(0, TXN_CONFLICT_RETRIES_MAX),
    )
    .addOption(consistencyOption())
    .option('--json', 'print the outcome as JSON, as the REST API answers it (values base64)')
    .addHelpText(
      'after',
      [
        '',
        'Ops are words: get <key> | put <key> <value> [if <version>] | delete <key> [if <version>] | check <key> <version>.',
        '"if <version>" and check require the key to be at that version before the transaction (0: absent).',
        "A put value is text, @path for a file's bytes, or @@text for text starting with @. Quote keys and values",
        'with spaces; put "--" before the ops if a value starts with "-".',
        '',
        'Examples:',
        '  ringstore txn put a 1 put b hello',
        '  ringstore txn get a put b world if 1 delete a check c 0',
        '  ringstore txn put balance/a 90 if 0 put balance/b 110 if 0 --timeout 2000',
        '  ringstore txn --file ops.json --json',
        '  echo \'[{"op":"get","key":"b"}]\' | ringstore txn --file -',
        '',
        'On an abort nothing is written; the error names the reason and the key, and the exit code is 1.',
      ].join('\n'),
    )
    .action(
      async (
        words: string[],
        options: {
          file?: string;
          timeout?: number;
          conflictRetries?: number;
          consistency?: Consistency;
          json?: boolean;
        },
      ) => {
        let ops: TransactOp[];
        let timeoutMs = options.timeout;
        if (options.file !== undefined) {
          if (words.length > 0) throw new CommandFailure('give the ops either as words or with --file, not both');
          const text = await readOpsFile(options.file);
          const parsed = txnInput(() => parseTxnFile(text));
          ops = parsed.ops;
          timeoutMs ??= parsed.timeoutMs;
        } else {
          if (words.length === 0) throw new CommandFailure(`no ops: ${TXN_GRAMMAR.join(' | ')} (or --file)`);
          ops = await Promise.all(
            txnInput(() => parseTxnWords(words)).map(async (op) => {
              if (op.op !== 'put' || typeof op.value !== 'string') return op;
              const read = await valueArgument(op.value, session.stdin);
              const contentType = read.contentType === undefined ? {} : { contentType: read.contentType };
              return { ...op, value: read.body, ...contentType };
            }),
          );
        }
        const ringstore = await client();
        try {
          const output = await ringstore.transact(ops, {
            ...call(),
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
            ...(options.conflictRetries === undefined ? {} : { conflictRetries: options.conflictRetries }),
            ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
          });
          out(options.json === true ? JSON.stringify(transactionJson(output), null, 2) : formatTransaction(output, ops));
        } catch (err) {
          if (options.json === true && err instanceof TransactionAbortedError) {
            out(
              JSON.stringify(
                { status: 'aborted', reason: err.reason, key: err.key, txid: err.txid, code: err.code, message: err.message },
                null,
                2,
              ),
            );
          }
          throw err;
        }
      },
    );

  program
    .command('quit')
    .alias('exit')
    .description('leave the interactive session')
    .action(() => {
      session.quit = true;
    });

  return program;
}

/** A word as a POSIX shell reads it back: as is when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Ops the user wrote wrong are a usage error, reported without a stack or a code. */
function txnInput<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new CommandFailure((err as Error).message);
  }
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
