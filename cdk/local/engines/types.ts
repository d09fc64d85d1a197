// What every engine starter takes and returns.

export interface EngineStartOptions {
  /** Vendor directory for fetched jars (Java engines only). */
  vendorDir: string;
  /** This engine's own data directory. */
  dataDir: string;
  port: number;
  log: (line: string) => void;
  timeoutMs?: number;
}

/**
 * DynamoDB Local's journal: `rollback`, the rollback journal the engine makes its databases with (the
 * default: every benchmark of record ran on it); `wal`, SQLite's write-ahead log, about 1.8 times as fast for
 * writes (dynamodb-local-database.ts). Set on every start.
 */
export type DynamoDbJournal = 'wal' | 'rollback';

export interface StartedEngine {
  name: 'dynamodb' | 'sqs' | 's3' | 'redis';
  endpoint: string;
  /** Stops the engine; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}
