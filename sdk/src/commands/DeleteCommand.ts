// DELETE /v1/kv/{key}: deletes a key, optionally only at a given version; answers like a write.

import { encodeKey } from '../encoding';
import { assertConsistency, type CommandContext, conditionHeaders, type Consistency, RingstoreCommand } from './command';
import { writeAckWire, type WriteOutput } from './PutCommand';
import { readJson } from './response';

/**
 * Input of {@link DeleteCommand}.
 *
 * @example
 * ```ts
 * const input: DeleteCommandInput = { key: 'users/42', ifMatch: 7 };
 * ```
 */
export interface DeleteCommandInput {
  key: string;
  /** Delete only if the current version is this one. */
  ifMatch?: number;
  consistency?: Consistency;
}

/**
 * Result of a delete: the key and the version of its tombstone.
 *
 * @example
 * ```ts
 * const { version }: DeleteCommandOutput = await client.delete('users/42');
 * ```
 */
export type DeleteCommandOutput = WriteOutput;

/**
 * Deletes a key (`DELETE /v1/kv/{key}`). Throws {@link NotFoundError} when it does not exist.
 *
 * @example
 * ```ts
 * await client.send(new DeleteCommand({ key: 'users/42' }));
 * ```
 */
export class DeleteCommand extends RingstoreCommand<DeleteCommandInput, DeleteCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<DeleteCommandOutput> {
    const path = `/v1/kv/${encodeKey(this.input.key)}`;
    const headers = conditionHeaders(this.input);
    assertConsistency(this.input.consistency);
    const query = { consistency: this.input.consistency };
    const response = await transport.send({ method: 'DELETE', path, headers, query, authenticated: true }, signal);
    return readJson(response, writeAckWire);
  }
}
