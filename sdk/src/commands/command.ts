// What every command shares: the base class `RingstoreClient.send` runs, the context it passes in,
// and the checks of the input fields several commands take (consistency, conditional writes).

import { assertInteger } from '../encoding';
import { ValidationError } from '../errors';
import type { Transport } from '../transport';

/**
 * Read and write consistency level. `eventual` may be served from a cache or a replica;
 * `strong` reads the owner (linearizable per key) and acknowledges writes after every live
 * replica has them.
 *
 * @example
 * ```ts
 * await client.get('k', { consistency: 'strong' });
 * ```
 */
export type Consistency = 'eventual' | 'strong';

/**
 * What a command gets from the client to run: the transport and the caller's abort signal.
 *
 * @example
 * ```ts
 * // Only RingstoreClient.send builds this; custom commands receive it in `execute`.
 * const context: CommandContext = { transport };
 * ```
 */
export interface CommandContext {
  transport: Transport;
  signal?: AbortSignal;
}

/**
 * Base class of all commands. Build one with its input and pass it to
 * {@link RingstoreClient.send}.
 *
 * @example
 * ```ts
 * const command = new GetCommand({ key: 'greeting' });
 * command.input.key; // 'greeting'
 * const output = await client.send(command);
 * ```
 */
export abstract class RingstoreCommand<Input extends object, Output> {
  constructor(readonly input: Input) {}

  /**
   * Runs the command; called by `RingstoreClient.send`, not meant to be called directly.
   *
   * @example
   * ```ts
   * // A custom command reuses the client's transport, retries and errors:
   * class DocsCommand extends RingstoreCommand<Record<string, never>, string> {
   *   async execute({ transport, signal }: CommandContext): Promise<string> {
   *     const res = await transport.send({ method: 'GET', path: '/openapi.json', authenticated: false }, signal);
   *     return new TextDecoder().decode(res.body);
   *   }
   * }
   * const openapi = await client.send(new DocsCommand({}));
   * ```
   */
  abstract execute(context: CommandContext): Promise<Output>;
}

/**
 * The error for input the server would refuse, thrown before any request.
 *
 * @example
 * ```ts
 * throw invalidInput('a transaction needs at least one op');
 * ```
 */
export function invalidInput(message: string): ValidationError {
  return new ValidationError({ code: 'client.invalidInput', message, status: 0, retryable: false });
}

// A whole key `rs_<keyId>_<secret>` given for its id (an easy mistake): only the id is sent, so the secret
// reaches no URL, access log or audit entry.
const keyIdOrKey = /^(?:([0-9a-f]{12})|rs_([0-9a-f]{12})_[A-Za-z0-9_-]+)$/;

/**
 * The key id a command sends for `keyId`: a key id as it is, the id of a whole API key; anything else is refused.
 *
 * @example
 * ```ts
 * keyIdOfInput('rs_3f9c0a1b2c3d_s3cr3t'); // '3f9c0a1b2c3d'
 * ```
 */
export function keyIdOfInput(keyId: unknown): string {
  const match = typeof keyId === 'string' ? keyIdOrKey.exec(keyId) : null;
  if (!match) {
    throw invalidInput('keyId must be a key id (the 12 hex digits after rs_ in an API key rs_<keyId>_<secret>) or a whole API key');
  }
  return (match[1] ?? match[2])!;
}

/**
 * Refuses a consistency other than `eventual` or `strong` (JavaScript callers are not type-checked).
 *
 * @example
 * ```ts
 * assertConsistency(input.consistency);
 * ```
 */
export function assertConsistency(consistency: Consistency | undefined): void {
  if (consistency !== undefined && consistency !== 'eventual' && consistency !== 'strong') {
    throw invalidInput(`consistency must be 'eventual' or 'strong', got ${String(consistency)}`);
  }
}

/**
 * The `if-match` / `if-none-match` headers of a conditional write, checked.
 *
 * @example
 * ```ts
 * conditionHeaders({ ifMatch: 3 }); // { 'if-match': '"3"' }
 * ```
 */
export function conditionHeaders(input: { ifMatch?: number; ifNoneMatch?: '*' }): Record<string, string> {
  const headers: Record<string, string> = {};
  if (input.ifMatch !== undefined) {
    assertInteger('ifMatch', input.ifMatch, 0);
    headers['if-match'] = `"${input.ifMatch}"`;
  }
  if (input.ifNoneMatch !== undefined) {
    if (input.ifNoneMatch !== '*') throw invalidInput("ifNoneMatch must be '*'");
    headers['if-none-match'] = '*';
  }
  return headers;
}
