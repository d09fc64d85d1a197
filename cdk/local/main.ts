// `npm start`: the whole service on this machine. Prints the API URL and local keys; Ctrl-C stops everything.
import { resolve } from 'node:path';
import * as z from 'zod';
import { startLocalCloud } from './cloud';

const settings = z
  .object({
    RINGSTORE_PORT: z.coerce.number().int().min(0).max(65535).default(4510),
    RINGSTORE_HOME: z.string().default(resolve(__dirname, '..', '..', '.ringstore')),
    RINGSTORE_VENDOR_DIR: z.string().optional(),
    RINGSTORE_SHARD_COUNT: z.coerce.number().int().min(1).max(64).optional(),
    RINGSTORE_AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).optional(),
    RINGSTORE_FAULT_INJECTION: z.enum(['0', '1']).default('0'),
    RINGSTORE_AUTO_FAILOVER: z.enum(['0', '1']).default('1'),
    RINGSTORE_MAINTENANCE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).optional(),
  })
  .safeParse(process.env);

// The SDK's notice that its 2027 releases need Node 22 is printed on every Node 20 start; the notice
// is in the README (Lambda runs Node 22), so the local cloud does not repeat it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  if (!settings.success) {
    for (const issue of settings.error.issues) console.error(`error: ${issue.path.join('.')}: ${issue.message}`);
    process.exit(2);
  }
  const env = settings.data;
  const started = Date.now();
  const log = (line: string) => console.error(`[ringstore] ${line}`);
  const cloud = await startLocalCloud({
    home: env.RINGSTORE_HOME,
    port: env.RINGSTORE_PORT,
    ...(env.RINGSTORE_VENDOR_DIR ? { vendorDir: env.RINGSTORE_VENDOR_DIR } : {}),
    ...(env.RINGSTORE_SHARD_COUNT ? { shardCount: env.RINGSTORE_SHARD_COUNT } : {}),
    ...(env.RINGSTORE_AUTH_CACHE_TTL_SECONDS !== undefined ? { authorizerCacheTtlSeconds: env.RINGSTORE_AUTH_CACHE_TTL_SECONDS } : {}),
    ...(env.RINGSTORE_MAINTENANCE_INTERVAL_MS !== undefined ? { maintenanceIntervalMs: env.RINGSTORE_MAINTENANCE_INTERVAL_MS } : {}),
    faultInjection: env.RINGSTORE_FAULT_INJECTION === '1',
    autoFailover: env.RINGSTORE_AUTO_FAILOVER === '1',
    log,
  });
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s; data in ${env.RINGSTORE_HOME}`);
  // One fact per line, so scripts (and the integration tests) can read them.
  console.log(`API: ${cloud.url}`);
  console.log(`API key: ${cloud.apiKey}`);
  console.log(`Admin key: ${cloud.adminKey}`);
  console.log(`Docs: ${cloud.url}/docs`);
  console.log(`DynamoDB: ${cloud.engines.dynamodbEndpoint}`);
  if (cloud.engines.redisUrl) console.log(`Redis: ${cloud.engines.redisUrl}`);
  if (cloud.faultInjection) console.log(`Faults: ${cloud.url}/_faults`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    cloud.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
