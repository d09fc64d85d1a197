// GET /v1/admin/audit: the audit trail of admin operations that change something, newest first.

import { type CommandContext, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';

/**
 * One admin operation as the audit trail keeps it: who (the key), what (the operation, its path
 * parameters and its body), when, and how it ended.
 *
 * @example
 * ```ts
 * const entry: AuditEntry = {
 *   at: '2030-01-01T00:00:00.000Z',
 *   requestId: 'c0ffee',
 *   actor: { keyId: '3f9c0a1b2c3d', namespace: 'ops', role: 'admin' },
 *   operation: 'rotateApiKey',
 *   target: { keyId: '0a1b2c3d4e5f' },
 *   outcome: 'succeeded',
 *   status: 200,
 * };
 * ```
 */
export interface AuditEntry {
  at: string;
  requestId: string;
  actor: { keyId: string; namespace: string; role: string };
  operation: string;
  target: Record<string, string>;
  request?: string;
  outcome: 'succeeded' | 'failed';
  status: number;
  errorCode?: string;
}

/**
 * Input of {@link ListAuditEntriesCommand}: a page size (1 to 200, default 50) and the previous page's cursor.
 *
 * @example
 * ```ts
 * const input: ListAuditEntriesCommandInput = { limit: 20 };
 * ```
 */
export interface ListAuditEntriesCommandInput {
  limit?: number;
  cursor?: string;
}

/**
 * Reader of a page of the audit trail (`AuditPage` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const page: AuditPageWire = readJson(response, auditPageWire);
 * ```
 */
export const auditPageWire = wire.object({
  entries: wire.array(
    wire.object({
      at: wire.string,
      requestId: wire.string,
      actor: wire.object({ keyId: wire.string, namespace: wire.string, role: wire.string }),
      operation: wire.string,
      target: wire.record(wire.string),
      request: wire.optional(wire.string),
      outcome: wire.literal('succeeded', 'failed'),
      status: wire.number,
      errorCode: wire.optional(wire.string),
    }),
  ),
  cursor: wire.optional(wire.string),
});

/**
 * A page of the audit trail as the SDK reads it off the wire; `cursor` is absent on the last page.
 *
 * @example
 * ```ts
 * const page: AuditPageWire = { entries: [] };
 * ```
 */
export type AuditPageWire = WireOf<typeof auditPageWire>;

/**
 * Reads the audit trail, newest first (`GET /v1/admin/audit`); needs an admin key.
 *
 * @example
 * ```ts
 * const { entries, cursor } = await admin.send(new ListAuditEntriesCommand({ limit: 20 }));
 * ```
 */
export class ListAuditEntriesCommand extends RingstoreCommand<ListAuditEntriesCommandInput, AuditPageWire> {
  override async execute({ transport, signal }: CommandContext): Promise<AuditPageWire> {
    const query = new URLSearchParams();
    if (this.input.limit !== undefined) query.set('limit', String(this.input.limit));
    if (this.input.cursor !== undefined) query.set('cursor', this.input.cursor);
    const path = `/v1/admin/audit${query.size > 0 ? `?${query.toString()}` : ''}`;
    return readJson(await transport.send({ method: 'GET', path, authenticated: true }, signal), auditPageWire);
  }
}
