// `connect` and `disconnect`: the saved connection later commands use.

import type { Command } from 'commander';
import type { RingstoreClient } from '../client';
import { CommandFailure } from './arguments';
import type { CommandGroupContext } from './command-group';
import { ENV, removeSavedConnection, saveConnection, type Connection } from './connection';

/** Adds `connect` and `disconnect` to `program`; `clientOf` builds the client a new connection is checked with. */
export function addConnectionCommands(
  program: Command,
  context: CommandGroupContext,
  clientOf: (connection: Connection) => RingstoreClient,
): void {
  const { call, out, session } = context;
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
      const ringstore = clientOf(connection);
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
