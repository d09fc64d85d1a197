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

export interface StartedEngine {
  name: 'dynamodb' | 'sqs' | 's3' | 'redis';
  endpoint: string;
  /** Stops the engine; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}
