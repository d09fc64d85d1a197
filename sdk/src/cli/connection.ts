// Where the CLI's endpoint and API key come from: flags, then the environment, then the file
// that `connect` saved. The file holds a secret, so it is written owner-only.

import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * An endpoint and the API key to use with it.
 *
 * @example
 * ```ts
 * const connection: Connection = { endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' };
 * ```
 */
export interface Connection {
  endpoint: string;
  apiKey?: string;
}

/**
 * Environment variables the CLI reads.
 *
 * @example
 * ```ts
 * process.env[ENV.endpoint]; // RINGSTORE_ENDPOINT
 * ```
 */
export const ENV = {
  endpoint: 'RINGSTORE_ENDPOINT',
  apiKey: 'RINGSTORE_API_KEY',
  configDir: 'RINGSTORE_CONFIG_DIR',
} as const;

/**
 * The environment as the CLI sees it (a plain record, so tests can pass their own).
 *
 * @example
 * ```ts
 * const env: CliEnv = { RINGSTORE_ENDPOINT: 'http://127.0.0.1:4510' };
 * ```
 */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/**
 * Path of the file `connect` writes: `$RINGSTORE_CONFIG_DIR/cli.json`, else
 * `~/.config/ringstore/cli.json`.
 *
 * @example
 * ```ts
 * configFilePath({ RINGSTORE_CONFIG_DIR: '/tmp/rs' }); // '/tmp/rs/cli.json'
 * ```
 */
export function configFilePath(env: CliEnv): string {
  const dir = env[ENV.configDir] || join(homedir(), '.config', 'ringstore');
  return join(dir, 'cli.json');
}

/**
 * Reads the saved connection; undefined when there is none. A corrupt file is an error that
 * names the file, so the user knows what to remove.
 *
 * @example
 * ```ts
 * const saved = await loadSavedConnection(process.env);
 * ```
 */
export async function loadSavedConnection(env: CliEnv): Promise<Connection | undefined> {
  const file = configFilePath(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON; run "disconnect" to remove it`);
  }
  const record = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof record.endpoint !== 'string') throw new Error(`${file} has no endpoint; run "disconnect" to remove it`);
  return typeof record.apiKey === 'string' ? { endpoint: record.endpoint, apiKey: record.apiKey } : { endpoint: record.endpoint };
}

/**
 * Saves the connection for later runs (mode 0600; written to a temporary file then renamed, so
 * a crash never leaves half a file).
 *
 * @example
 * ```ts
 * await saveConnection(process.env, { endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' });
 * ```
 */
export async function saveConnection(env: CliEnv, connection: Connection): Promise<string> {
  const file = configFilePath(env);
  const dir = join(file, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(connection, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
  return file;
}

/**
 * Removes the saved connection; resolves to whether there was one.
 *
 * @example
 * ```ts
 * if (await removeSavedConnection(process.env)) console.log('disconnected');
 * ```
 */
export async function removeSavedConnection(env: CliEnv): Promise<boolean> {
  const file = configFilePath(env);
  try {
    await rm(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The sources a connection can come from, highest priority first.
 *
 * @example
 * ```ts
 * const sources: ConnectionSources = { flags: { endpoint: 'http://x' }, env: process.env };
 * ```
 */
export interface ConnectionSources {
  /** Made by `connect` in this interactive session; beats everything else. */
  session?: Connection;
  flags: { endpoint?: string; apiKey?: string };
  env: CliEnv;
  saved?: Connection;
}

/**
 * Picks the endpoint from the first source that has one (session, flags, environment, saved
 * file). The API key comes from `--api-key`, else from the same source as the endpoint, else
 * from `RINGSTORE_API_KEY`: a key saved for one endpoint is never sent to another.
 *
 * @example
 * ```ts
 * resolveConnection({ flags: {}, env: { RINGSTORE_ENDPOINT: 'http://x', RINGSTORE_API_KEY: 'k' } });
 * // { endpoint: 'http://x', apiKey: 'k' }
 * ```
 */
export function resolveConnection(sources: ConnectionSources): Connection | undefined {
  const { session, flags, env, saved } = sources;
  const envKey = env[ENV.apiKey] || undefined;
  const envEndpoint = env[ENV.endpoint] || undefined;
  let chosen: Connection | undefined;
  if (session !== undefined) chosen = session;
  else if (flags.endpoint !== undefined) chosen = { endpoint: flags.endpoint };
  else if (envEndpoint !== undefined) chosen = { endpoint: envEndpoint };
  else if (saved !== undefined) chosen = saved;
  if (chosen === undefined) return undefined;
  const apiKey = flags.apiKey ?? chosen.apiKey ?? envKey;
  return apiKey === undefined ? { endpoint: chosen.endpoint } : { endpoint: chosen.endpoint, apiKey };
}
