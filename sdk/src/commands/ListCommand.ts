// GET /v1/kv: one page of a namespace's keys in key order, with the cursor of the next page.

import { assertInteger } from '../encoding';
import { LIST_LIMIT_MAX } from '../limits';
import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * Input of {@link ListCommand}: an optional key prefix, a page size (1..1000, server default
 * 100) and the cursor of the previous page.
 *
 * @example
 * ```ts
 * const input: ListCommandInput = { prefix: 'users/', limit: 50 };
 * ```
 */
export interface ListCommandInput {
  prefix?: string;
  limit?: number;
  cursor?: string;
}

/**
 * One key of a listing.
 *
 * @example
 * ```ts
 * const item: ListItem = { key: 'users/42', version: 3, size: 120, contentType: 'application/json' };
 * ```
 */
export interface ListItem {
  key: string;
  version: number;
  size: number;
  contentType: string;
  expiresAt?: string;
}

/**
 * One page of a listing; `cursor` is absent on the last page.
 *
 * @example
 * ```ts
 * const page: ListCommandOutput = await client.list({ prefix: 'users/' });
 * if (page.cursor) await client.list({ prefix: 'users/', cursor: page.cursor });
 * ```
 */
export interface ListCommandOutput {
  items: ListItem[];
  cursor?: string;
}

/**
 * Reader of a listing page (`ListKeysResponse` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const page: ListKeysWire = readJson(response, listKeysWire);
 * ```
 */
export const listKeysWire = wire.object({
  items: wire.array(
    wire.object({
      key: wire.string,
      version: wire.number,
      size: wire.number,
      contentType: wire.fallback(wire.string, 'application/octet-stream'),
      expiresAt: wire.optional(wire.string),
    }),
  ),
  cursor: wire.optional(wire.string),
});

/**
 * A listing page as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const page: ListKeysWire = { items: [], cursor: 'abc' };
 * ```
 */
export type ListKeysWire = WireOf<typeof listKeysWire>;

/**
 * Lists keys in key order, one page per call (`GET /v1/kv`). See
 * {@link RingstoreClient.listAll} to walk every page.
 *
 * @example
 * ```ts
 * const { items, cursor } = await client.send(new ListCommand({ prefix: 'users/', limit: 100 }));
 * ```
 */
export class ListCommand extends RingstoreCommand<ListCommandInput, ListCommandOutput> {
  constructor(input: ListCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListCommandOutput> {
    const { prefix, limit, cursor } = this.input;
    if (limit !== undefined) assertInteger('limit', limit, 1, LIST_LIMIT_MAX);
    const response = await transport.send({ method: 'GET', path: '/v1/kv', query: { prefix, limit, cursor }, authenticated: true }, signal);
    const page = readJson(response, listKeysWire);
    // An empty cursor cannot be followed (the server refuses one): it marks the last page too.
    return page.cursor === undefined || page.cursor === '' ? { items: page.items } : { items: page.items, cursor: page.cursor };
  }
}
