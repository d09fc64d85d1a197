// The audit trail of admin operations (docs/security.md, "Audit"): who did what, when, and how it ended.

/** One admin operation as the audit trail keeps it. */
export interface AuditEntry {
  /** When the operation was answered (ISO). */
  at: string;
  /** The request's id (API Gateway's), unique per operation. */
  requestId: string;
  /** Who: the API key and its namespace and role. */
  actor: { keyId: string; namespace: string; role: string };
  /** What: the route's operationId, its path parameters, and the request's body (bounded). */
  operation: string;
  target: Record<string, string>;
  request?: string;
  /** How it ended: the answer's status, and the error's code when it failed. */
  outcome: 'succeeded' | 'failed';
  status: number;
  errorCode?: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  cursor?: string;
}

export interface AuditLog {
  record(entry: AuditEntry): Promise<void>;
  /** Newest first, `limit` at a time; `cursor` continues after the previous page. */
  list(query: { limit: number; cursor?: string }): Promise<AuditPage>;
}
